"""The IR verifier: checks that a lowered function is well formed, so a frontend bug shows up
as a clear message at the instruction, not as a wrong result later.

    verify(fn)          raises IRError listing every problem found; returns fn

Checked: every op is registered (ir/ops.py) and carries the attributes its interpreters
read; operands are names or Consts; every name read is a parameter, a shared/local/const
array key or written somewhere in the function; Break/Continue sit inside a Loop; loop
conditions and If conditions are values; after type inference (fn.var_types filled) every
instruction with a destination has a type.
"""
from __future__ import annotations

from ..errors import SimGPUError
from .nodes import Break, Call, Const, Continue, Function, If, Instr, Loop, Return, walk
from .ops import ALL

# op -> attributes its type rule, semantics or cost read
REQUIRED_ATTRS = {
    "shared_array": ("key", "shape", "dtype"), "local_array": ("key", "shape", "dtype"),
    "const_array": ("key",), "sreg": ("name",), "grid": ("dim",), "gridsize": ("dim",),
    "cast": ("to",), "math": ("fn",), "atomic": ("fn", "nidx"), "shfl": ("mode",), "vote": ("mode",),
    "fence": ("scope",),
}


class IRError(SimGPUError):
    """The IR is malformed: a bug in simgpu's frontend, never the user's."""


def _defined_names(fn: Function):
    names = set(fn.params) | set(fn.shared) | set(fn.local) | set(fn.consts)
    for s in walk(fn.body):
        if isinstance(s, Instr) and s.dst is not None:
            names.add(s.dst)
        elif isinstance(s, Call) and s.ret is not None:
            names.add(s.ret)
        elif isinstance(s, Loop) and s.range_var is not None:
            names.add(s.range_var)
    return names


def _check_value(v, names, where, problems):
    if isinstance(v, Const):
        return
    if not isinstance(v, str):
        problems.append(f"{where}: operand {v!r} is neither a name nor a Const")
    elif v not in names:
        problems.append(f"{where}: reads {v!r}, which nothing defines")


def _check_instr(ins, names, typed, problems):
    where = f"{ins.loc}: {ins.op}"
    if ins.op not in ALL:
        problems.append(f"{where}: unknown op (not in simgpu/ir/ops.py)")
        return
    for a in REQUIRED_ATTRS.get(ins.op, ()):
        if a not in ins.attrs:
            problems.append(f"{where}: missing attribute {a!r}")
    for a in ins.args:
        _check_value(a, names, where, problems)
    if typed and ins.dst is not None and ins.ty is None and ins.op not in ("syncthreads",):
        problems.append(f"{where}: {ins.dst} has no type after inference")


def _check_body(stmts, names, typed, in_loop, problems):
    for s in stmts:
        if isinstance(s, Instr):
            _check_instr(s, names, typed, problems)
        elif isinstance(s, If):
            _check_value(s.cond, names, f"{s.loc}: if", problems)
            _check_body(s.then, names, typed, in_loop, problems)
            _check_body(s.orelse, names, typed, in_loop, problems)
        elif isinstance(s, Loop):
            _check_body(s.cond_body, names, typed, in_loop, problems)
            if s.cond is not None:
                _check_value(s.cond, names, f"{s.loc}: loop condition", problems)
            _check_body(s.body, names, typed, True, problems)
        elif isinstance(s, (Break, Continue)):
            if not in_loop:
                problems.append(f"{s.loc}: {type(s).__name__.lower()} outside a loop")
        elif isinstance(s, Return):
            if s.value is not None:
                _check_value(s.value, names, f"{s.loc}: return", problems)
        elif isinstance(s, Call):
            _check_body(s.body, names, typed, False, problems)
        else:
            problems.append(f"statement {s!r} is not an IR node")


def verify(fn: Function) -> Function:
    """Raise IRError if `fn` is malformed; return it otherwise."""
    problems = []
    typed = bool(fn.var_types)
    _check_body(fn.body, _defined_names(fn), typed, False, problems)
    if problems:
        raise IRError(f"malformed IR for {fn.name!r} ({len(problems)} problem(s)):\n  " + "\n  ".join(problems[:20]))
    return fn
