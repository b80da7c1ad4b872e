"""What the warp stepper records: one warp's steps, taken from the executor's events.

`Recorder` is an executor observer that keeps, for one warp of one block (32 lanes), each
executed warp-instruction and branch decision with its active mask, the reconvergence
stack, the values written, shared/local array snapshots and the memory request seen from
that warp (sectors for global memory, banks for shared memory).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SimGPUError
from ..exec.state import WARP, ArrayHandle, Observer
from ..ir.nodes import Call, If, Loop, walk
from ..sass.costs import sass_count
from ..ir.printer import instr_text, value_text

_BITS = np.left_shift(np.uint64(1), np.arange(WARP, dtype=np.uint64))


class StepError(SimGPUError, ValueError):
    """A request the stepper cannot honour: a block, warp, line or variable that is not there."""


def mask_int(a):
    """32 bools -> int with bit i set when lane i is active."""
    return int((np.asarray(a, dtype=np.uint64) * _BITS).sum())


def mask_bools(m):
    return [(m >> i) & 1 == 1 for i in range(WARP)]


# -- records ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class StackEntry:
    """One reconvergence-stack entry: lanes that entered an if/loop and rejoin after it."""
    kind: str                 # 'if' | 'loop'
    line: int                 # line of the if / loop statement
    mask: int                 # lanes that entered it (bit i = lane i) and rejoin after it
    rejoin_line: object       # first line run after it (None: the end of the kernel)

    def __str__(self):
        where = f"line {self.rejoin_line}" if self.rejoin_line is not None else "the end of the kernel"
        return (f"{self.kind:<4} at line {self.line:<4} mask {self.mask:#010x} "
                f"({bin(self.mask).count('1'):>2} lanes)  rejoin at {where}")


@dataclass
class MemAccess:
    """The memory request one warp-instruction made, seen from the chosen warp."""
    space: str                # global | shared | local | const
    kind: str                 # ld | st | atom
    array: str
    size: int                 # bytes per lane
    addresses: np.ndarray     # (32,) int64 byte address per lane; -1 for idle lanes
    n_lanes: int
    sectors: tuple = ()       # global/local/const: 32-byte sectors touched (sector numbers)
    ideal_sectors: int = 0    # sectors if the distinct bytes were perfectly packed
    lines: int = 0            # 128-byte lines touched
    banks: np.ndarray = None  # shared: bank per lane (-1 idle)
    wavefronts: int = 0       # shared: passes through the 32 banks
    conflicts: int = 0        # shared: wavefronts beyond the ideal

    @property
    def requests(self):
        return 1

    def __str__(self):
        head = f"{self.kind} {self.space} {self.array} ({self.size} B x {self.n_lanes} lanes)"
        act = self.addresses[self.addresses >= 0]
        if len(act):
            d = np.diff(act)
            stride = f", stride {int(d[0])} B" if len(d) and (d == d[0]).all() else ""
            head += f" addr {int(act[0]):#x}..{int(act[-1]):#x}{stride}"
        if self.space == "shared":
            return (f"{head}: 1 request, {self.wavefronts} wavefront(s), "
                    f"{self.conflicts} bank conflict(s)")
        return (f"{head}: 1 request, {len(self.sectors)} sector(s) of 32 B in {self.lines} line(s) "
                f"of 128 B (ideal {self.ideal_sectors})")


def _mem_access(ev, lo, name):
    m = np.asarray(ev.mask.arr[lo:lo + WARP])
    addr = np.where(m, np.asarray(ev.addr[lo:lo + WARP], dtype=np.int64), -1)
    return warp_access(ev.space, ev.kind, name, ev.size, addr, m)


def warp_access(space, kind, name, size, addr, m):
    """The MemAccess of one warp: `addr` (32,) byte addresses (-1 idle), `m` (32,) active."""
    a = addr[m]
    acc = MemAccess(space, kind, name, size, addr, int(m.sum()))
    if space == "shared":
        # 32 banks of 4 B; one wavefront serves one distinct word per bank (same word:
        # broadcast).  8-byte accesses go by half-warp, 16-byte ones by quarter-warp, as in
        # simgpu.memory.banks; conflicts = wavefronts - one per group with an active lane.
        acc.banks = np.where(m, (addr // 4) % 32, -1)
        group = 32 if size <= 4 else max(1, 128 // size)
        for g in range(0, WARP, group):
            ga = addr[g:g + group][m[g:g + group]]
            if len(ga):
                words = np.unique(np.concatenate([ga // 4 + k for k in range(max(1, size // 4))]))
                acc.wavefronts += int(np.bincount(words % 32, minlength=32).max())
                acc.conflicts -= 1
        acc.conflicts += acc.wavefronts
        return acc
    if space == "local":          # local memory is interleaved: word w of lane l sits at (w*32+l)*4
        lane = np.flatnonzero(m)
        a = (a // 4) * 4 * WARP + lane * 4 + a % 4
    sec = np.unique(np.concatenate([a // 32, (a + size - 1) // 32]))
    acc.sectors = tuple(int(s) for s in sec)
    acc.ideal_sectors = -(-len(np.unique(a)) * size // 32)
    acc.lines = len(np.unique(sec // 4))
    return acc


@dataclass
class Step:
    """One warp-instruction the chosen warp executed (an IR instruction or a branch)."""
    index: int
    kind: str                 # 'inst' | 'if' (branch decision) | 'loop' (loop test) | 'return' ...
    file: str
    line: int
    mask: int                 # active lanes
    text: str                 # the instruction, as the IR printer writes it
    weight: int               # SASS instructions it stands for (as the Report counts)
    dst: object = None
    taken: object = None      # 'if': lanes that take the then-side
    memory: object = None
    stack: tuple = ()         # ((kind, node, mask), ...) outermost first
    place: str = "body"       # 'entry' (prologue) | 'body' | 'exit' (ret, epilogue): see lines.py


# -- recording -----------------------------------------------------------------------------------
class Recorder(Observer):
    """Executor observer that keeps what one warp of one block does."""

    def __init__(self, block_linear, warp):
        self.block, self.warp = block_linear, warp
        self.steps, self.history = [], {}   # name -> [(step, (32,) array, lanes assigned so far)]
        self.arrays = {}                            # name -> [(step, array)]
        self.on = False
        self.last = None                # (ins, its Step or None) of the last inst record
        self.handle_names = {}

    def attach(self, interp):
        self.it = interp

    def chunk_begin(self, chunk):
        self.on = chunk.first_block <= self.block < chunk.first_block + chunk.n_blocks
        if not self.on:
            return
        self.local_block = self.block - chunk.first_block
        self.lo = self.local_block * chunk.lanes_per_block + self.warp * WARP
        self.valid = mask_int(chunk.valid[self.lo:self.lo + WARP])
        for name, v in self.it.env.items():
            if not isinstance(v, ArrayHandle) and "%" not in name:
                self._keep(name, v, -1, self.valid)

    def chunk_end(self, chunk):
        self.on = False

    def _lanes(self, m):
        return m.arr[self.lo:self.lo + WARP]

    def _keep(self, name, v, idx, mask):
        if isinstance(v, np.ndarray) and v.ndim == 1:
            v = v[self.lo:self.lo + WARP].copy()
        elif isinstance(v, ArrayHandle):
            return
        else:
            v = np.full(WARP, v)
        h = self.history.setdefault(name, [])
        h.append((idx, v, (h[-1][2] if h else 0) | mask))

    def _append(self, kind, node, m, text, weight, **kw):
        stack = tuple((k, n, mask_int(self._lanes(e))) for k, n, e in self.it.stack)
        s = Step(len(self.steps), kind, node.loc.file, node.loc.line, m, text, weight, stack=stack, **kw)
        self.steps.append(s)
        return s

    def mem(self, ev):
        """The memory access of the instruction just recorded (events.py: after its inst)."""
        if not self.on or self.last is None or self.last[0] is not ev.inst:
            return
        step = self.last[1]
        if step is not None and self._lanes(ev.mask).any():
            step.memory = _mem_access(ev, self.lo, self._array_name(ev.array))
        if ev.kind != "ld" and ev.space in ("shared", "local"):
            lanes = (self.it.chunk.lane_block == self.local_block) if ev.space == "shared" else None
            hit = ev.mask.arr[lanes].any() if lanes is not None else self._lanes(ev.mask).any()
            if hit:
                self._snapshot(ev.array, len(self.steps) - 1 if step is not None else len(self.steps))

    def inst(self, ev):
        if not self.on:
            return
        ins, m = ev.ins, ev.mask
        lanes = self._lanes(m)
        s = None
        if lanes.any():
            s = self._append("inst", ins, mask_int(lanes), instr_text(ins), sass_count(ins), dst=ins.dst)
            if ins.dst is not None and ins.dst in self.it.env:
                self._keep(ins.dst, self.it.env[ins.dst], s.index, s.mask)
            self._keep_range_vars(s.index, s.mask)
        self.last = (ins, s)

    def branch(self, ev):
        if not self.on:
            return
        node, m, taken, kind = ev.node, ev.mask, ev.taken, ev.kind
        lanes = self._lanes(m)
        if not lanes.any():
            return
        if kind == "if":
            t = mask_int(self._lanes(taken)) if taken is not None else None
            self._append("if", node, mask_int(lanes), f"if {value_text(node.cond)}  (branch)", 1, taken=t)
        elif kind == "loop":
            cond = "range" if node.range_var else (value_text(node.cond) if node.cond is not None else "True")
            self._append("loop", node, mask_int(lanes), f"loop test: {cond}  (branch)", 1)
        else:                           # return / break / continue, should the executor report them
            self._append(kind, node, mask_int(lanes), f"{kind}  (branch)", 1)

    def _keep_range_vars(self, idx, mask):
        for kind, node, _ in self.it.stack:
            rv = getattr(node, "range_var", None)
            if kind == "loop" and rv and rv in self.it.env:
                v = self.it.env[rv]
                v = v[self.lo:self.lo + WARP] if isinstance(v, np.ndarray) and v.ndim == 1 else np.full(WARP, v)
                h = self.history.get(rv)
                if not h or not np.array_equal(h[-1][1], v) or h[-1][2] | mask != h[-1][2]:
                    self._keep(rv, v.copy(), idx, mask)

    def _array_name(self, handle):
        n = self.handle_names.get(id(handle))
        if n is None:
            names = [k for k, v in self.it.env.items() if v is handle and "%" not in k]
            n = names[0] if names else handle.name
            self.handle_names[id(handle)] = n
        return n

    def _snapshot(self, handle, idx):
        if handle.space == "shared":
            data = handle.data[self.local_block].reshape(handle.shape).copy()
        else:
            data = handle.data[self.lo:self.lo + WARP].reshape((WARP,) + tuple(handle.shape)).copy()
        self.arrays.setdefault(self._array_name(handle), []).append((idx, data))


def rejoin_lines(fn):
    """node id -> the first line run after that if/loop (None: the kernel's end)."""
    parent = {}

    def visit(stmts, owner):
        for i, s in enumerate(stmts):
            parent[s.id if hasattr(s, "id") else id(s)] = (stmts, i, owner)
            if isinstance(s, If):
                visit(s.then, s)
                visit(s.orelse, s)
            elif isinstance(s, Loop):
                visit(s.cond_body, s)
                visit(s.body, s)
            elif isinstance(s, Call):
                visit(s.body, s)
    visit(fn.body, None)

    def first_line(s):
        if isinstance(s, Call) and s.body:
            return first_line(s.body[0])
        return s.loc.line

    def succ(s):
        stmts, i, owner = parent[s.id if hasattr(s, "id") else id(s)]
        if i + 1 < len(stmts):
            return first_line(stmts[i + 1])
        if owner is None:
            return None
        if isinstance(owner, Loop):
            return owner.loc.line
        return succ(owner)
    return {s.id: succ(s) for s in walk(fn.body) if isinstance(s, (If, Loop))}
