"""`st.compare()`: one warp as written (simgpu's IR) and as compiled (the PTX the card runs),
line by line.

Rows follow the compiled code's order of visits; the k-th visit of a line as written is
paired with its k-th visit as compiled (a visit: simgpu.stepper.lines).  A line whose lanes
as compiled include lanes that do not run it as written was **if-converted**: the compiler
made the branch straight-line (predicated instructions or a select), so the whole warp
runs both sides.  Each side's SIMT efficiency is Nsight Compute's
smsp__thread_inst_executed / (32 * smsp__inst_executed) over its own instructions: as
written over the IR's instructions (weighted by the SASS each stands for, as the Report
counts), as compiled over the SASS ptxas made from each executed PTX line.
"""
from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass, field

from .lines import ENTRY, EXIT

WHY = ("Both numbers are true, of different code: as written, each side of a branch runs "
       "with only its lanes; the compiler moves work out of the sides (address arithmetic, "
       "loads before the split), may turn short sides into predicated code or a select "
       "(if-converted: all lanes run them) and makes its own number of SASS instructions per "
       "line.  The card runs the compiled code; the source describes the written one.")


def _real(path):
    return os.path.realpath(path) if path and not path.startswith("<") else path


@dataclass
class Row:
    """One visit of a line: as written (IR Visit or None) and as compiled (PTX Visit or None)."""
    line: int
    place: str
    source: str
    written: object = None
    compiled: object = None
    written_inst: int = 0      # warp instructions (SASS estimate) of the written visit
    compiled_inst: int = 0     # SASS instructions of the compiled visit
    note: str = ""
    splits_written: bool = False   # a branch on this visit splits the warp as written
    splits_compiled: bool = False  # ... as compiled

    @property
    def if_converted(self):
        """Lanes as compiled that are idle as written, or a branch that splits the warp as
        written and not as compiled: the compiler made it straight-line."""
        w, c = self.written, self.compiled
        if w is None or c is None:
            return False
        return c.mask & ~w.mask != 0 or (self.splits_written and not self.splits_compiled)


@dataclass
class Comparison:
    """The two traces of one warp; `str()` is the side-by-side table."""
    kernel_name: str
    block_idx: tuple
    warp: int
    rows: list = field(default_factory=list)
    as_written: float = 1.0
    as_compiled: float = 1.0
    written_inst: int = 0
    compiled_inst: int = 0
    valid: int = 0xFFFFFFFF

    @property
    def if_converted(self):
        """Lines the compiler if-converted (lanes as compiled include lanes idle as written)."""
        return sorted({r.line for r in self.rows if r.if_converted})

    def __str__(self):
        return render(self)

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


def _weight(st, v):
    return sum(s.weight for s in st.steps[v.start:v.end])


def _splits(st, v):
    """Whether a branch on visit `v` sends some of its lanes one way and some the other."""
    if v is None:
        return False
    return any(s.kind in ("if", "bra") and s.taken is not None and 0 < s.taken != s.mask
               for s in st.steps[v.start:v.end])


def compare(ir, ptx):
    """Comparison of the IR stepper `ir` and the PTX stepper `ptx` over the same warp."""
    src = ptx.fn.source_lines
    kf = _real(ptx.fn.loc.file)

    def key(v):
        return (_real(v.file), v.line)

    written = [v for v in ir.visits]
    by_key = {}
    for v in written:
        by_key.setdefault(key(v), []).append(v)
    seen, used, rows = {}, set(), []
    for c in ptx.visits:
        if c.place in (ENTRY, EXIT) or _real(c.file) != kf:
            w = None
        else:
            k = seen[key(c)] = seen.get(key(c), -1) + 1
            lst = by_key.get(key(c), [])
            w = lst[k] if k < len(lst) else None
        if w is not None:
            used.add(w.index)
        rows.append(Row(c.line, c.place, src.get((ptx.fn.loc.file, c.line), "").strip(), w, c,
                        _weight(ir, w) if w is not None else 0, _weight(ptx, c)))
    # written visits with no compiled visit: after the row of the written visit before them
    for w in written:
        if w.index in used:
            continue
        at = 0
        for j, r in enumerate(rows):
            if r.written is not None and r.written.index < w.index:
                at = j + 1
        rows.insert(at, Row(w.line, w.place, src.get((ptx.fn.loc.file, w.line), "").strip(), w, None,
                            _weight(ir, w), 0))
    for r in rows:
        r.splits_written, r.splits_compiled = _splits(ir, r.written), _splits(ptx, r.compiled)
        r.note = _note(r)
    eff_c, eff_w = ptx.efficiency(), ir.efficiency()
    return Comparison(ptx.kernel_name, ptx.block_idx, ptx.warp, rows, eff_w["as written"],
                      eff_c["as compiled"], int(ir._cum_w[-1]) if len(ir.steps) else 0,
                      int(ptx._cum_w[-1]) if len(ptx.steps) else 0, ptx.valid)


def _note(r):
    n = lambda m: bin(m).count("1")      # noqa: E731
    if r.place == ENTRY:
        return "the kernel's entry: parameters loaded (compiled code only)"
    if r.place == EXIT:
        return "the kernel's exit: ret (compiled code only)"
    if r.compiled is None:
        return "no instruction of its own as compiled (merged into other lines or removed)"
    if r.written is None:
        return "compiled code only (the compiler's own visit of this line)"
    if r.if_converted and r.compiled.mask & ~r.written.mask:
        return (f"if-converted: as written {n(r.written.mask)} lanes run it, as compiled "
                f"{n(r.compiled.mask)} (predicated or a select: no branch)")
    if r.if_converted:
        return ("if-converted: the branch splits the warp as written, not as compiled "
                "(a select or predicated code: every lane runs both sides)")
    if r.compiled.mask != r.written.mask:
        return "fewer lanes as compiled"
    return ""


def _strip(m, valid):
    return "".join("#" if (m >> k) & 1 else ("." if (valid >> k) & 1 else " ") for k in range(32))


def render(cmp):
    b = cmp.block_idx
    head = (f"{cmp.kernel_name}  block ({b[0]}, {b[1]}, {b[2]})  warp {cmp.warp}: as written "
            "(simgpu's IR) and as compiled (the PTX the card runs), line by line")
    width = min(28, max([len(r.source) for r in cmp.rows] + [6]))
    out = [head, f"  {'line':>5}  {'source':<{width}}  {'as written':<41}  as compiled",
           f"  {'':>5}  {'':<{width}}  {'lanes':<36} {'inst':>4}  {'lanes':<36} {'SASS':>4}"]
    for r in cmp.rows:
        where = {"entry": "entry", "exit": "exit"}.get(r.place, str(r.line))
        text = (r.source if r.place not in (ENTRY, EXIT) else "")[:width]

        def cell(v, inst):
            if v is None:
                return f"{'-':<3} {'':<32} {'':>4}"
            return f"{v.n_active:>3} {_strip(v.mask, cmp.valid)} {inst:>4}"
        row = f"  {where:>5}  {text:<{width}}  {cell(r.written, r.written_inst)}  {cell(r.compiled, r.compiled_inst)}"
        out.append(row.rstrip() + (f"   {r.note}" if r.note else ""))
    out.append("  SIMT efficiency (Nsight Compute: smsp__thread_inst_executed / (32 * smsp__inst_executed)):")
    out.append(f"    as written  {100 * cmp.as_written:5.1f} %  over {cmp.written_inst} warp instructions "
               "of simgpu's IR (SASS estimate, as the Report counts)")
    out.append(f"    as compiled {100 * cmp.as_compiled:5.1f} %  over {cmp.compiled_inst} SASS instructions "
               "ptxas made from the PTX executed")
    if cmp.if_converted:
        out.append("  if-converted by the compiler: line " + ", ".join(map(str, cmp.if_converted)) +
                   " (all its lanes run it as compiled; only some as written)")
    out.extend(textwrap.wrap(WHY, 100, initial_indent="  ", subsequent_indent="  "))
    return "\n".join(out)
