"""The SASS a PTX line runs, following the SASS's own control flow inside the line.

ptxas expands some single PTX instructions into a fast path and a slow path behind a
predicated branch: ``div.rn.f32`` (``FCHK`` decides), ``sqrt.rn.f32``, ``rcp.rn.f64``,
``div.rn.f64`` ... The slow path calls an out-of-line ``$__internal_*`` subroutine (tens to
a hundred SASS instructions) and is taken only for awkward operands (zero, denormal, infinite
or NaN inputs, quotients near the ends of the exponent range).  Counting every SASS
instruction ptxas made from the line, subroutine included, on every execution over-counts such
a line by up to 10x (a float32 division: 117 SASS instructions listed, 10 executed).

`line_paths` finds that shape in one function's SASS -- exactly one predicated forward ``BRA``
of the line that jumps over a ``CALL`` to a ``$__internal_`` subroutine, inside the line's own
code -- and walks the line's instructions twice, the branch taken (the fast path) and not
taken (the slow path): unconditional branches are followed, a call adds the subroutine's
instructions, other predicated branches fall through.  Lines without the shape run all their
instructions, as before.

The walk is the SASS's control flow; which warps take the slow path is not decided here.  The
counters and the timing model charge the fast path (docs/design.md: a warp whose lanes take a
slow path is under-counted by the slow path's length).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_TARGET = re.compile(r"`\(([^)]+)\)")


@dataclass(frozen=True)
class LinePath:
    """One PTX line's SASS opcodes on its fast path and, where it has one, its slow path."""
    fast: tuple
    slow: tuple | None = None       # None: the line has no slow path
    subroutine: str | None = None   # the slow path's out-of-line subroutine


def label_index(code):
    """{label: index} of the SASS ``code`` (an instruction may carry several labels)."""
    return {name: i for i, ins in enumerate(code) for name in filter(None, ins.label.split(","))}


def branch_target(ins):
    m = _TARGET.search(ins.operands)
    return m.group(1) if m else None


def line_paths(instructions, subroutines):
    """{PTX line: LinePath} for one function's own SASS ``instructions`` (in address order)
    and its ``subroutines`` ({name: [SassInstr]})."""
    code = list(instructions)
    at = label_index(code)
    lines = {}
    for i, ins in enumerate(code):
        if ins.ptx_line is not None:
            lines.setdefault(ins.ptx_line, []).append(i)
    out = {}
    for line, idx in lines.items():
        lo, hi = idx[0], idx[-1]
        decision = _slow_path_branch(code, at, line, lo, hi)
        if decision is None:
            ops = []
            for i in idx:
                ops.append(code[i].opcode)
                ops.extend(_called(code[i], subroutines))
            out[line] = LinePath(tuple(ops))
            continue
        fast = _walk(code, at, subroutines, line, lo, hi, decision, taken=True)
        slow = _walk(code, at, subroutines, line, lo, hi, decision, taken=False)
        sub = next(t for j in range(decision + 1, at[branch_target(code[decision])])
                   if code[j].base == "CALL" and (t := branch_target(code[j])))
        out[line] = LinePath(tuple(fast), tuple(slow), sub)
    return out


def _called(ins, subroutines):
    if ins.base == "CALL" and (t := branch_target(ins)) is not None:
        return [s.opcode for s in subroutines.get(t, ())]
    return []


def skips_slow_call(code, line, i, t):
    """Whether a branch at ``i`` to ``t`` jumps over a CALL that ``line`` made to a
    ``$__internal_`` subroutine (ptxas' slow path of an IEEE division, sqrt, ...)."""
    return any(code[j].base == "CALL" and code[j].ptx_line == line
               and (branch_target(code[j]) or "").startswith("$__internal_") for j in range(i + 1, t))


def _slow_path_branch(code, at, line, lo, hi):
    """The index of the line's one predicated forward BRA that jumps over a CALL to a
    ``$__internal_`` subroutine made by the same line (None: no such branch, or several)."""
    found = []
    for i in range(lo, hi + 1):
        ins = code[i]
        if ins.ptx_line != line or ins.base != "BRA" or not ins.predicate:
            continue
        t = at.get(branch_target(ins))
        if t is None or not (i < t <= hi + 1):
            continue
        if skips_slow_call(code, line, i, t):
            found.append(i)
    return found[0] if len(found) == 1 else None


def _walk(code, at, subroutines, line, lo, hi, decision, taken):
    """The line's opcodes executed from its first instruction until control leaves it."""
    ops, pos, steps = [], lo, 0
    while lo <= pos <= hi and steps <= 4 * (hi - lo + 2):
        steps += 1
        ins = code[pos]
        if ins.ptx_line == line:
            ops.append(ins.opcode)
            ops.extend(_called(ins, subroutines))
        if ins.base == "BRA" and (pos == decision or not ins.predicate):
            if pos == decision and not taken:
                pos += 1
                continue
            t = at.get(branch_target(ins))
            if t is None:
                break
            pos = t
            continue
        if ins.base in ("EXIT", "RET") and not ins.predicate:
            break
        pos += 1
    return ops
