"""What the stepper records on the compiled path: one warp's PTX instructions.

`PtxRecorder` is an observer of the PTX executor's records (simgpu/ptx/emit.py): for the chosen
warp of the chosen block (32 lanes of a chunk: lane = block_in_chunk * padded_block +
thread_linear) it keeps every executed PTX instruction with its pc, text, PTX line, the
user's line from the PTX ``.loc``, the warp's active mask, the branch decision (lanes whose
guard predicate sends them to the branch target), the memory request of those lanes and the
registers the instruction wrote (values per lane).

It is an Observer of the records both executors give (simgpu/events.py): registers and guard
predicates are read from the chunk executor's register file, which the PTX path's
`InstrEvent.state` carries; the memory request is the `MemEvent` of the same pc.

`build_steps` turns the raw record into `PtxStep`s: SASS per PTX line from ptxas (the
compiled kernel's facts), the reconvergence stack (a divergent branch opens an entry; it
closes at the first later step whose active mask holds all its lanes again: that step is
where the lanes reconverge) and source lines for instructions the compiler gave none
(``.loc`` line 0: shown under the previous line, marked ``no_loc``).  ``ret``/``exit`` is
the kernel's exit (``place="exit"``, shown at the ``def`` line), the ``def`` line's first
instructions its entry (``place="entry"``): neither belongs to a line of the body.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from ..events import Observer
from ..exec.state import WARP
from ..ir.nodes import Loc
from ..ptx.executor import Executor as PtxChunkExecutor
from ..ptx.executor import convert_read
from .record import Step, warp_access

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


@dataclass
class _Raw:
    pc: int
    ptx_line: int
    loc: object
    text: str
    opcode: str
    mask: int
    taken: object = None
    guard: object = None
    target: object = None
    regs: dict = field(default_factory=dict)
    memory: object = None


def lane_mask(lanes):
    """Sorted warp lane numbers (0..31) -> 32-bit mask."""
    return int(np.left_shift(np.uint64(1), np.asarray(lanes, np.uint64)).sum())


def _find_executor(ev):
    """The PTX chunk executor whose instruction this is (the record carries it), or None."""
    return ev.state if isinstance(ev.state, PtxChunkExecutor) else None


class PtxRecorder(Observer):
    """An Observer (simgpu/events.py) of the records that keeps what one warp of one block
    executes: the instruction records (`InstrEvent.pc`, the executing lanes and the chunk
    executor's registers in `InstrEvent.state`) and the memory records of the same pc."""

    def __init__(self, block_linear, warp):
        self.block, self.warp = block_linear, warp
        self.raw, self.valid, self.handles = [], 0, []
        self.on, self.ex, self.pending, self.registers_read = False, None, None, None

    def launch_begin(self, launch):
        self.launch, self.handles = launch, list(launch.handles)

    def launch_end(self, launch):
        pass

    def chunk_begin(self, chunk):
        self.on = chunk.first_block <= self.block < chunk.first_block + chunk.n_blocks
        if self.on:
            self.lo = (self.block - chunk.first_block) * chunk.lanes_per_block + self.warp * WARP
            self.valid = lane_mask(np.flatnonzero(chunk.valid[self.lo:self.lo + WARP]))
            self.ex = None

    def chunk_end(self, chunk):
        if self.on:
            self.flush()
        self.on = False

    def _mine(self, lanes):
        a, b = np.searchsorted(lanes, (self.lo, self.lo + WARP))
        return a, b

    def inst(self, ev):
        if not self.on or ev.pc is None:
            return
        a, b = self._mine(ev.lanes)
        if a == b:
            return
        self.flush()
        if self.ex is None:
            self.ex = _find_executor(ev)
            self.registers_read = self.ex is not None
        ins, loc = ev.ins, ev.ins.loc
        r = _Raw(ev.pc, ins.id, f"{loc.file}:{loc.line}" if loc.line else "", ins.attrs["ptx"],
                 ins.attrs["opcode"], lane_mask(ev.lanes[a:b] - self.lo))
        if self.ex is not None:
            self._decode(r)
        self.raw.append(r)

    def _guard(self, ins, func, mask):
        """Lanes of `mask` whose guard predicate holds (all of them without a guard; None if
        the predicate register cannot be read)."""
        if ins.guard is None:
            return mask
        p = self.ex.regs.get((func, ins.guard[0]))
        if p is None:
            return None
        bits = np.asarray(p[self.lo:self.lo + WARP], bool) ^ bool(ins.guard[1])
        return mask & lane_mask(np.flatnonzero(bits))

    def _decode(self, r):
        """Branch target and decision (from the guard predicate), registers to read later."""
        lk = self.ex.im.linked
        ins, func = lk.code[r.pc], lk.func_of[r.pc]
        r.guard = self._guard(ins, func, r.mask)
        if ins.opcode == "bra":
            r.target = ins.operands[0][1] if ins.operands and ins.operands[0][0] == "sym" else None
            r.taken = r.guard
        elif ins.opcode not in NO_DST and ins.operands:
            keys = [(func, reg) for reg in _dst_regs(ins.operands[0])]
            self.pending = (r, keys, ins.types[0] if ins.types else None)

    def flush(self):
        """Read the registers the warp's previous instruction wrote (it has run by now)."""
        if self.pending is None or self.ex is None:
            self.pending = None
            return
        r, keys, t = self.pending
        self.pending = None
        for key in keys:
            a = self.ex.regs.get(key)
            if a is not None:       # a uniform value is kept as one scalar for all lanes
                a = np.full(WARP, a) if np.ndim(a) == 0 else a[self.lo:self.lo + WARP].copy()
                r.regs[key[1]] = _typed(a, t)

    def mem(self, ev):
        if not self.on or not self.raw or self.raw[-1].pc != ev.pc:
            return
        m = np.asarray(ev.mask.arr[self.lo:self.lo + WARP], bool)
        if not m.any():
            return
        addr = np.where(m, np.asarray(ev.addr[self.lo:self.lo + WARP], np.int64), -1)
        self.raw[-1].memory = warp_access(ev.space, ev.kind, ev.array.name, int(ev.size), addr, addr >= 0)


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
def _where(r, prev, kernel_file, first_line):
    """(file, line, no_loc) for a raw step: its .loc, else the previous step's line."""
    if r.loc:
        f, _, ln = r.loc.rpartition(":")
        return f, int(ln), False
    if prev is not None:
        return prev.file, prev.line, True
    return kernel_file, first_line, True


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


def build_steps(raw, compiled, kernel_file, first_line):
    """PtxSteps from the raw record, with SASS, reconvergence and the stack filled in;
    returns (steps, {divergence id: rejoin line or None})."""
    sass = sass_by_line(compiled) if compiled is not None else {}
    steps, prev = [], None
    for i, r in enumerate(raw):
        f, ln, no_loc = _where(r, prev, kernel_file, first_line)
        kind, place = _kind(r.opcode), "body"
        if kind == "exit":          # ret/exit: the kernel's exit, not the last line the warp ran
            f, ln, place = kernel_file, first_line, "exit"
        elif prev is None or prev.place == "entry":
            place = "entry" if (ln == first_line and _same_path(f, kernel_file)) else "body"
        ops = sass.get(r.ptx_line, ())
        s = PtxStep(i, kind, f, ln, r.mask, r.text, len(ops), taken=r.taken, place=place,
                    memory=r.memory, pc=r.pc, ptx_line=r.ptx_line, opcode=r.opcode, sass=ops,
                    regs=r.regs, target=r.target, guard=r.guard, no_loc=no_loc,
                    dst=next(iter(r.regs), None))
        steps.append(s)
        prev = s
    return steps, reconvergence(steps)


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
