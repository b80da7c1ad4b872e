"""The stepper's text face: a warp's state as lines of text (lanes, values, source).

On the compiled path (a PtxWarpState) it shows the PTX instruction and its SASS instead of
the IR instruction, the branch decision and reconvergence, the registers the step wrote
and the variables from the side-by-side IR run, labelled as such."""
from __future__ import annotations

import numpy as np

from .record import StepError, mask_bools


class Style:
    def __init__(self, color):
        self.color = color

    def __call__(self, text, code):
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text


# -- formatting ---------------------------------------------------------------------------------
def lane_strip(mask, valid, style=Style(False)):
    on, off = ("█", "·") if style.color else ("#", ".")
    out = []
    for a, v in zip(mask_bools(mask), mask_bools(valid)):
        out.append(style(on, "32") if a else (style(off, "90") if v else " "))
    return "".join(out)


def fmt_values(v, per_row=16, assigned=None):
    """Rows of per-lane values; '-' for lanes that never assigned the variable."""
    v = np.asarray(v)
    if v.dtype == bool:
        cells = ["T" if x else "F" for x in v]
    elif v.dtype.kind == "f":
        cells = [f"{x:.4g}" for x in v]
    else:
        cells = [str(int(x)) for x in v]
    if assigned is not None:
        cells = [c if (assigned >> k) & 1 else "-" for k, c in enumerate(cells)]
    if len(set(cells)) == 1 and len(cells) > 1:
        return [f"{cells[0]} in every lane"]
    w = max(len(c) for c in cells)
    rows = []
    for k in range(0, len(cells), per_row):
        rows.append(f"[{k:>2}-{min(k + per_row, len(cells)) - 1:>2}] " +
                    " ".join(c.rjust(w) for c in cells[k:k + per_row]))
    return rows


def _header(s, st, style):
    where = "start (nothing executed yet)" if s.step == 0 else f"step {s.step} of {s.n_steps}"
    head = ""
    if st is not None:
        b = st.block_idx
        head = f"{st.kernel_name}  block ({b[0]}, {b[1]}, {b[2]})  warp {st.warp}  "
    if getattr(s, "executor", "ir") == "ptx":
        written = (f", as written {100 * s.as_written:.1f} % (simgpu's IR)"
                   if getattr(s, "as_written", None) is not None else "")
        eff = (f"   SIMT efficiency so far: as compiled {100 * s.simt_efficiency:.1f} % "
               f"({s.inst_executed} SASS instructions){written}")
    else:
        eff = (f"   SIMT efficiency so far {100 * s.simt_efficiency:.1f} %  "
               f"({s.inst_executed} warp instructions)")
    mode = f"   [{'line' if s.mode == 'line' else 'instruction'} stepping]" if st is not None else ""
    return [style(f"{head}{where}", "1") + eff + mode]


def _ptx_instruction(s):
    """The executed PTX instruction, its SASS and where its line comes from (compiled path)."""
    if not s.instruction:
        return []
    text = " ".join(s.instruction.split())
    place = getattr(s, "place", "body")
    if place == "exit":
        why = "   (the kernel's exit: ret and epilogue belong to no source line; shown at the def line)"
    elif place == "entry":
        why = "   (the kernel's entry: the prologue, at the def line)"
    elif s.no_loc:
        why = f"   (no source line from the compiler: shown under line {s.line})"
    else:
        why = ""
    first = "first of line" if (s.mode == "line" and place == "body" and s.line_steps
                                and s.line_steps[0] == s.step) else "executed "
    out = [f"  {first:<9} PTX line {s.ptx_line}: {text}{why}"]
    if s.sass:
        more = f"   (+{len(s.sass) - 3} more)" if len(s.sass) > 3 else ""
        out.append("  sass      " + " ; ".join(s.sass[:3]) + more)
    else:
        out.append("  sass      (none: ptxas made no SASS instruction from this PTX line)")
    return out


def _ptx_branch(s):
    out = []
    if s.kind == "bra" and s.taken is not None:
        nt = bin(s.taken).count("1")
        where = s.target or "the target"
        out.append(f"  branch    {nt} lane(s) jump to {where} {s.taken:#010x}, "
                   f"{s.n_active - nt} fall through" + ("  (the warp diverges)" if 0 < nt < s.n_active else ""))
    elif s.guard is not None and s.guard != s.active_mask and s.instruction.lstrip().startswith("@"):
        out.append(f"  guard     {bin(s.guard).count('1')} lane(s) {s.guard:#010x} have the predicate true: "
                   f"only they take effect")
    if s.reconverged:
        after = (" after the divergent branch at line " + ", ".join(map(str, s.rejoin_of))) if s.rejoin_of else ""
        where = "at the kernel's exit" if getattr(s, "place", "body") == "exit" else f"on line {s.line}"
        out.append(f"  rejoin    {bin(s.reconverged).count('1')} lane(s) {s.reconverged:#010x} rejoin the warp "
                   f"here, {where}: reconvergence{after}")
    return out


def _lanes_and_stack(s, style):
    out = []
    mark = "next to run" if s.step == 0 else "executed"
    ptx = getattr(s, "executor", "ir") == "ptx"
    if ptx:
        out.extend(_ptx_instruction(s))
    elif s.instruction:
        out.append(f"  {mark:<9} {s.instruction}")
    on = "█" if style.color else "#"
    if s.mode == "line" and s.line_mask is not None:
        a, b = s.line_steps
        what = {"exit": "the kernel's exit", "entry": "the kernel's entry"}.get(s.place, f"line {s.line}")
        out.append(f"  lanes     {lane_strip(s.line_mask, s.valid_mask, style)}  "
                   f"{bin(s.line_mask).count('1')}/32 run {what} on this visit  ({on} active, "
                   f"{'·' if style.color else '.'} idle)")
        out.append("            0       8       16      24    31")
        out.append(f"  visit     steps {a}-{b} ({b - a + 1} instruction(s)); "
                   f"`mode inst` steps them one by one")
    else:
        out.append(f"  lanes     {lane_strip(s.active_mask, s.valid_mask, style)}  "
                   f"{s.n_active}/32 active  ({on} active, {'·' if style.color else '.'} idle)")
        out.append("            0       8       16      24    31")
    if ptx:
        out.extend(_ptx_branch(s))
    elif s.kind == "if" and s.taken is not None:
        nt = bin(s.taken).count("1")
        out.append(f"  branch    {nt} lane(s) take the if-side {s.taken:#010x}, "
                   f"{s.n_active - nt} the else-side")
    out.append("  stack     " + ("(empty: all lanes run the kernel's top level)" if not s.stack else
                                 str(s.stack[-1])))
    for e in reversed(s.stack[:-1]):
        out.append("            " + str(e))
    return out


def _memory(s, memory):
    out = []
    mems = memory if memory is not None else ([s.memory] if s.memory is not None else [])
    if not mems:
        out.append("  memory    -")
    for k, m in enumerate(mems[:4]):
        out.append(("  memory    " if k == 0 else "            ") + str(m))
        if m.space == "shared":
            out.append("    banks   " + " ".join("." if b < 0 else str(int(b)) for b in m.banks))
    if len(mems) > 4:
        out.append(f"            ... and {len(mems) - 4} more requests")
    return out


def _variable(s, st, n):
    if n in s.values:
        return var_rows(n, s.values[n], s.assigned.get(n))
    if n in s.arrays:
        return [f"  {n} = {np.array2string(s.arrays[n], threshold=64, precision=4)}"]
    try:
        v = st.value(n, s.step) if st is not None else None
    except StepError:
        v = None
    if v is None:
        return [f"  {n}: (no value yet)"]
    if v.ndim == 1 and len(v) == 32:
        return var_rows(n, v, st.assigned(n, s.step))
    return [f"  {n} = {np.array2string(v, threshold=64, precision=4)}"]


def _variables(s, st, show):
    out = []
    names = list(show) if show else list(s.values)
    if st is not None and s.step > 0:
        dst = st.steps[s.step - 1].dst
        if dst and "%" in dst and dst not in names:
            try:
                out.extend(var_rows(f"{dst} (result; - = idle lane)", st.value(dst), s.active_mask))
            except StepError:
                pass
    for n in names:
        out.extend(_variable(s, st, n))
    return out


def _ptx_variables(s, st, show):
    """Registers the step wrote (the compiled code's values) and the variables by name (from
    the side-by-side IR run, labelled), or why there are none."""
    out = []
    if s.registers:
        out.append("  registers written by this step (the compiled code's values; - = idle lane):")
        for name, v in s.registers.items():
            out.extend(var_rows(name, v, s.active_mask if s.guard is None else s.guard))
    elif s.step > 0 and st is not None and not st.registers_read:
        out.append("  registers: none (the executor's registers could not be read)")
    names = list(show) if show else list(s.values)
    out.append(f"  variables {s.values_from}" + (f" (IR step {s.ir_step})" if s.ir_step is not None else ""))
    for n in names:
        if n.startswith("%") and st is not None:
            try:
                out.extend(var_rows(n, st.value(n, s.step), st.assigned(n, s.step)))
            except StepError:
                out.append(f"  {n}: (no value yet)")
        else:
            out.extend(_variable(s, st, n))
    return out


def format_state(s, st=None, show=None, breakpoints=(), style=Style(False), context=25, memory=None):
    """The state as text: header, source, lanes, stack, memory, variables.  `memory`: the
    requests to list (default: those of the step just executed)."""
    out = _header(s, st, style)
    if st is not None:
        out.extend(_source(st, s, breakpoints, style, context))
    else:
        out.append(f"  line {s.line}: {s.source.strip()}")
    ptx = getattr(s, "executor", "ir") == "ptx"
    out += _lanes_and_stack(s, style) + _memory(s, memory) + \
        (_ptx_variables(s, st, show) if ptx else _variables(s, st, show))
    if s.done:
        out.append(style("  the warp has finished", "1"))
    if s.error is not None:
        out.append(style(f"  the launch stopped with an error: {s.error}", "31"))
    return "\n".join(out)


def var_rows(name, v, assigned=None):
    rows = fmt_values(v, assigned=assigned)
    if len(name) > 8:
        return [f"  {name}"] + [f"  {'':<8}{r}" for r in rows]
    return [f"  {name:<8}{rows[0]}"] + [f"  {'':<8}{r}" for r in rows[1:]]


def _source(st, s, breakpoints, style, context):
    lines = sorted((ln, t) for (f, ln), t in st.fn.source_lines.items() if f == s.file)
    if len(lines) > context:
        lines = [(ln, t) for ln, t in lines if abs(ln - s.line) <= context // 2]
    out, last = [], None
    for ln, text in lines:
        if last is not None and ln > last + 1:
            out.append("        ...")
        last = ln
        cur = ln == s.line
        gutter = ("->" if s.step == 0 else "=>") if cur else "  "
        bp = "*" if ln in breakpoints else " "
        row = f"  {gutter}{bp}{ln:>4} | {text}"
        out.append(style(row, "1;33") if cur else row)
    return out


# -- the command loop --------------------------------------------------------------------------
