"""The stepper on the compiled path: `PtxView`, the view the one Recorder (record.py) takes there.

With a `PtxView`, the Recorder keeps for the chosen warp of the chosen block (32 lanes of a
chunk: lane = block_in_chunk * padded_block + thread_linear) every executed PTX instruction
(an InstrEvent with its ``pc``) with its pc, text, PTX line, the user's line from the PTX
``.loc``, the warp's active mask, the branch decision (lanes whose guard predicate sends
them to the branch target), the memory request of those lanes (the ``MemEvent`` of the same
pc) and the registers the instruction wrote (values per lane): registers and guard
predicates are read from the chunk executor's register file, which the PTX path's
`InstrEvent.state` carries.

`build_steps` (the view's ``finish``) completes the `PtxStep`s: SASS per PTX line from ptxas
(the compiled kernel's facts), the reconvergence stack (a divergent branch opens an entry; it
closes at the first later step whose active mask holds all its lanes again: that step is
where the lanes reconverge) and source lines for instructions the compiler gave none
(``.loc`` line 0: shown under the previous line, marked ``no_loc``).  ``ret``/``exit`` is
the kernel's exit (``place="exit"``, shown at the ``def`` line), the ``def`` line's first
instructions its entry (``place="entry"``): neither belongs to a line of the body.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..events import WARP
from ..ir.nodes import Loc
from ..ptx.executor import Executor as PtxChunkExecutor
from ..ptx.executor import convert_read
from .record import Step, lane_mask

NO_DST = ("st", "red", "bra", "bar", "barrier", "ret", "exit", "call", "membar", "fence",
          "prefetch", "trap", "brkpt", "nanosleep", "cp")


@dataclass
class PtxStep(Step):
    """One PTX instruction the chosen warp executed (`text` is the PTX as written)."""
    pc: int = 0               # index in the linked program
    ptx_line: int = 0         # line in the compiled kernel's PTX
    opcode: str = ""
    sass: tuple = ()          # SASS instructions ptxas made from this PTX line
    regs: dict = field(default_factory=dict)   # register -> (32,) value per lane after the step
    target: object = None     # branch: the label it jumps to
    guard: object = None      # lanes whose guard predicate held (@%p ...): they took effect
    reconverged: int = 0      # lanes that rejoin the warp at this step (0: none)
    rejoin_of: tuple = ()     # source lines of the divergent branches whose lanes all rejoin here
    no_loc: bool = False      # the compiler gave no source line (.loc line 0): shown under the previous


@dataclass(frozen=True)
class Divergence:
    """A divergent branch, as a reconvergence-stack node (the IR stepper's If/Loop role)."""
    id: int                   # the branch step's index
    loc: Loc


def _find_executor(ev):
    """The PTX chunk executor whose instruction this is (the record carries it), or None."""
    return ev.state if isinstance(ev.state, PtxChunkExecutor) else None


class PtxView:
    """The compiled code as the Recorder sees it (see the module doc): PTX registers and guard
    predicates from the chunk executor (``InstrEvent.state``), read once the instruction has
    run (the record comes before it: ``flush``); SASS, lines and reconvergence in ``finish``."""

    arrays = False               # shared/local arrays: the side-by-side IR run's (compiled.py)

    def __init__(self):
        self.ex, self.pending, self.registers_read, self.source_locs = None, None, None, []

    def chunk_begin(self, rec):
        self.ex = None

    def step(self, rec, ev, index, mask):
        if self.ex is None:
            self.ex = _find_executor(ev)
            self.registers_read = self.ex is not None
        ins, loc = ev.ins, ev.ins.loc
        s = PtxStep(index, "inst", loc.file if loc.line else "", loc.line or 0, mask, ins.attrs["ptx"], 0,
                    pc=ev.pc, ptx_line=ins.id, opcode=ins.attrs["opcode"])
        if self.ex is not None:
            self._decode(rec, s)
        return s

    def values(self, rec, ev, s):
        pass                         # read in flush(), once the instruction has run

    def branch(self, rec, ev, mask):
        return None                  # a bra is an instruction step (its decision: _decode)

    def array_name(self, handle, state):
        return handle.name

    def _guard(self, rec, ins, func, mask):
        """Lanes of `mask` whose guard predicate holds (all of them without a guard; None if
        the predicate register cannot be read)."""
        if ins.guard is None:
            return mask
        p = self.ex.regs.get((func, ins.guard[0]))
        if p is None:
            return None
        bits = np.asarray(p[rec.lo:rec.lo + WARP], bool) ^ bool(ins.guard[1])
        return mask & lane_mask(np.flatnonzero(bits))

    def _decode(self, rec, s):
        """Branch target and decision (from the guard predicate), registers to read later."""
        lk = self.ex.im.linked
        ins, func = lk.code[s.pc], lk.func_of[s.pc]
        s.guard = self._guard(rec, ins, func, s.mask)
        if ins.opcode == "bra":
            s.target = ins.operands[0][1] if ins.operands and ins.operands[0][0] == "sym" else None
            s.taken = s.guard
        elif ins.opcode not in NO_DST and ins.operands:
            keys = [(func, reg) for reg in _dst_regs(ins.operands[0])]
            self.pending = (s, keys, ins.types[0] if ins.types else None)

    def flush(self, rec):
        """Read the registers the warp's previous instruction wrote (it has run by now)."""
        if self.pending is None or self.ex is None:
            self.pending = None
            return
        s, keys, t = self.pending
        self.pending = None
        for key in keys:
            a = self.ex.regs.get(key)
            if a is not None:       # a uniform value is kept as one scalar for all lanes
                a = np.full(WARP, a) if np.ndim(a) == 0 else a[rec.lo:rec.lo + WARP].copy()
                v = s.regs[key[1]] = _typed(a, t)
                rec.keep(key[1], v, s.index, s.mask if s.guard is None else s.guard)
                if s.dst is None:
                    s.dst = key[1]

    def finish(self, rec):
        """Lines, SASS, reconvergence; file names spelt as the kernel's source lines spell them."""
        fn = rec.launch.fn
        compiled = getattr(getattr(rec.launch, "ptx", None), "compiled", None)
        src = compiled.ptx_source if compiled is not None else {}
        self.source_locs = [SourceLine(same_file(s.file, fn), s.line) for s in src.values() if s is not None]
        rec.rejoin = build_steps(rec.steps, compiled, fn.loc.file, fn.loc.line)
        for s in rec.steps:
            s.file = same_file(s.file, fn)


@dataclass(frozen=True)
class SourceLine:
    file: str
    line: int


@lru_cache(maxsize=256)
def real_path(path):
    return os.path.realpath(path) if path and not path.startswith("<") else path


def same_file(path, fn):
    """The PTX .loc's path, spelt as the kernel's source lines spell it (the .loc path is
    normalised: 'tests/../examples/x.py' is '/.../examples/x.py' there)."""
    if path != fn.loc.file and real_path(path) == real_path(fn.loc.file):
        return fn.loc.file
    return path


def _dst_regs(op):
    if op[0] == "reg":
        return [op[1]]
    if op[0] == "vec":
        return [o[1] for o in op[1] if o[0] == "reg"]
    if op[0] == "pair":
        return _dst_regs(op[1]) + _dst_regs(op[2])
    return []


def _typed(a, t):
    """Register bits -> values of the instruction's PTX type (b32 as unsigned)."""
    if a.dtype == np.bool_ or not t:
        return a
    t = "u" + t[1:] if t[0] == "b" else t
    try:
        return convert_read(a, t)
    except (TypeError, ValueError, KeyError):
        return a


# -- from the raw record to steps ---------------------------------------------------------------
def _kind(opcode):
    if opcode == "bra":
        return "bra"
    if opcode in ("ret", "exit"):
        return "exit"
    if opcode in ("bar", "barrier"):
        return "bar"
    return "inst"


def sass_by_line(compiled):
    """PTX line -> ('OPCODE operands', ...) ptxas made from it (all functions of the module)."""
    out = {}
    for ks in compiled.facts.kernels.values():
        for ins in ks.instructions:
            if ins.ptx_line is not None:
                text = f"{ins.predicate + ' ' if ins.predicate else ''}{ins.opcode} {ins.operands}".strip()
                out.setdefault(ins.ptx_line, []).append(text)
    return {k: tuple(v) for k, v in out.items()}


def _same_path(a, b):
    return a == b or (bool(a) and bool(b) and os.path.realpath(a) == os.path.realpath(b))


def build_steps(steps, compiled, kernel_file, first_line):
    """Complete the recorded PtxSteps: SASS, the kernel's entry and exit, lines for steps
    the compiler gave none (line 0), reconvergence and the stack; returns {divergence id:
    rejoin line or None}."""
    sass = sass_by_line(compiled) if compiled is not None else {}
    prev = None
    for s in steps:
        if not s.line:              # no .loc: the previous step's line
            s.no_loc = True
            s.file, s.line = (prev.file, prev.line) if prev is not None else (kernel_file, first_line)
        s.kind = _kind(s.opcode)
        if s.kind == "exit":        # ret/exit: the kernel's exit, not the last line the warp ran
            s.file, s.line, s.place = kernel_file, first_line, "exit"
        elif prev is None or prev.place == "entry":
            s.place = "entry" if (s.line == first_line and _same_path(s.file, kernel_file)) else "body"
        s.sass = sass.get(s.ptx_line, ())
        s.weight = len(s.sass)
        prev = s
    return reconvergence(steps)


def _divergent(steps, i):
    s = steps[i]
    if s.kind != "bra":
        return False
    if s.taken is not None:
        return 0 < s.taken != s.mask
    nxt = steps[i + 1].mask if i + 1 < len(steps) else s.mask
    return nxt != s.mask and nxt & ~s.mask == 0


def reconvergence(steps):
    """Fill each step's `stack`, `reconverged` and `rejoin_of`; return {node id: rejoin line}."""
    open_, rejoin, prev = [], {}, None
    for i, s in enumerate(steps):
        if prev is not None and s.mask != prev.mask and prev.mask & ~s.mask == 0:
            s.reconverged = s.mask & ~prev.mask         # the mask grows (not: the other side runs)
        keep = []
        for node, m in open_:
            if m & ~s.mask == 0:
                at_end = s.kind == "exit"
                rejoin[node.id] = None if at_end else s.line
                s.rejoin_of += (node.loc.line,)
            else:
                keep.append((node, m))
        open_ = keep
        if _divergent(steps, i):
            open_.append((Divergence(i, Loc(s.file, s.line)), s.mask))
        s.stack = tuple(("branch", n, m) for n, m in open_)
        prev = s
    for node, _ in open_:
        rejoin[node.id] = None
    return rejoin
