"""Pretty printer: the IR with the source line each instruction came from."""
from __future__ import annotations

from .nodes import Break, Call, Const, Continue, If, Instr, Loop, Return


def value_text(a):
    return repr(a.value) if isinstance(a, Const) else str(a)


def instr_text(ins):
    attrs = ", ".join(f"{k}={v}" for k, v in ins.attrs.items() if k not in ("dtype",))
    if "dtype" in ins.attrs:
        attrs = (attrs + ", " if attrs else "") + f"dtype={ins.attrs['dtype']}"
    args = ", ".join(value_text(a) for a in ins.args)
    call = f"{ins.op}({args}{'; ' + attrs if attrs else ''})"
    ty = f" : {ins.ty}" if ins.ty is not None else ""
    return f"{ins.dst} = {call}{ty}" if ins.dst else call


def format_function(fn):
    out = [f"kernel {fn.name}({', '.join(fn.params)})"]
    for name, t in fn.var_types.items():
        if name in fn.params:
            out.append(f"  # {name}: {t}")
    last = [None]

    def emit(st, depth):
        pad = "  " * depth
        loc = getattr(st, "loc", None)
        if loc is not None and (loc.file, loc.line) != last[0]:
            last[0] = (loc.file, loc.line)
            src = fn.source_lines.get((loc.file, loc.line), "").strip()
            out.append(f"{pad}# line {loc.line}: {src}")
        if isinstance(st, Instr):
            out.append(pad + instr_text(st))
        elif isinstance(st, If):
            out.append(f"{pad}if {value_text(st.cond)}:")
            for s in st.then:
                emit(s, depth + 1)
            if st.orelse:
                out.append(f"{pad}else:")
                for s in st.orelse:
                    emit(s, depth + 1)
            out.append(f"{pad}endif  # reconverge")
        elif isinstance(st, Loop):
            if st.range_var:
                out.append(f"{pad}for {st.range_var} in range({', '.join(value_text(a) for a in st.range_args)}):")
            else:
                for s in st.cond_body:
                    emit(s, depth + 1)
                out.append(f"{pad}while {value_text(st.cond) if st.cond is not None else 'True'}:")
            for s in st.body:
                emit(s, depth + 1)
            out.append(f"{pad}endloop  # reconverge")
        elif isinstance(st, Break):
            out.append(pad + "break")
        elif isinstance(st, Continue):
            out.append(pad + "continue")
        elif isinstance(st, Return):
            out.append(pad + ("return " + value_text(st.value) if st.value is not None else "return"))
        elif isinstance(st, Call):
            out.append(f"{pad}inline {st.name} -> {st.ret}:")
            for s in st.body:
                emit(s, depth + 1)
    for st in fn.body:
        emit(st, 1)
    return "\n".join(out)
