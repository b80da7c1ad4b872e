"""What the warp stepper records: one warp's steps, taken from the executor's records.

`Recorder` is the stepper's one recorder, on both executors: an Observer of the records of
simgpu/events.py (InstrEvent, MemEvent, BranchEvent) that keeps, for one warp of one block
(32 lanes), each executed warp-instruction and branch decision with its active mask, the
values written (`history`), shared/local array snapshots and the memory request seen from
that warp (sectors for global memory, banks for shared memory).

What differs per executor is a small view given to it: `IrView` here (simgpu's IR: values by
variable name from the interpreter's environment, the If/Loop reconvergence stack, the IR
printer's text; both read from ``InstrEvent.state`` / ``BranchEvent.state``), `ptxrec.PtxView`
on the compiled code (PTX registers from the chunk executor's register file, SASS per PTX
line, reconvergence from the masks).  A view offers: ``chunk_begin(rec)``, ``step(rec, ev,
index, mask)`` -> Step, ``values(rec, ev, step)``, ``branch(rec, ev, mask)`` -> Step or None,
``array_name(handle, state)``, ``flush(rec)``, ``finish(rec)`` and ``arrays`` (whether the
recorder snapshots the arrays the warp's block stores into).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SimGPUError
from ..events import WARP, ArrayHandle, Observer
from ..ir.nodes import Call, If, Loop, walk
from ..sass.costs import sass_count
from ..ir.printer import instr_text, value_text

_BITS = np.left_shift(np.uint64(1), np.arange(WARP, dtype=np.uint64))


class StepError(SimGPUError, ValueError):
    """A request the stepper cannot honour: a block, warp, line or variable that is not there."""


def mask_int(a):
    """32 bools -> int with bit i set when lane i is active."""
    return int((np.asarray(a, dtype=np.uint64) * _BITS).sum())


def lane_mask(lanes):
    """Sorted warp lane numbers (0..31) -> 32-bit mask."""
    return int(np.left_shift(np.uint64(1), np.asarray(lanes, np.uint64)).sum())


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
    """The executor observer that keeps what one warp of one block does (see the module doc);
    `view` is IrView() or ptxrec.PtxView()."""

    def __init__(self, block_linear, warp, view):
        self.block, self.warp, self.view = block_linear, warp, view
        self.steps, self.history = [], {}   # name -> [(step, (32,) array, lanes assigned so far)]
        self.arrays = {}                    # name -> [(step, array)]
        self.rejoin = {}                    # reconvergence node id -> rejoin line (finish())
        self.launch, self.on, self.valid = None, False, 0
        # the last InstrEvent's instruction, pc and state, and whether it made a step: its
        # MemEvents follow it (events.py's order)
        self.last_ins = self.last_pc = self.last_state = None
        self.last_made_step = False

    def launch_begin(self, launch):
        self.launch = launch

    def chunk_begin(self, chunk):
        self.on = chunk.first_block <= self.block < chunk.first_block + chunk.n_blocks
        if not self.on:
            return
        self.local_block = self.block - chunk.first_block
        self.lo = self.local_block * chunk.lanes_per_block + self.warp * WARP
        self.valid = mask_int(chunk.valid[self.lo:self.lo + WARP])
        self.view.chunk_begin(self)

    def chunk_end(self, chunk):
        if self.on:
            self.view.flush(self)
        self.on = False

    def finish(self):
        """After the launch (or its fault): the view completes the steps and `rejoin`."""
        self.view.flush(self)
        self.view.finish(self)
        return self

    def warp_mask(self, m):
        """The chosen warp's lanes of a chunk Mask, as 32 bools."""
        return np.asarray(m.arr[self.lo:self.lo + WARP], bool)

    def _ran(self, ev):
        """The chosen warp's lanes that execute an InstrEvent (bit i = lane i)."""
        if ev.lanes is not None:         # the executing lanes, sorted (compiled path)
            a, b = np.searchsorted(ev.lanes, (self.lo, self.lo + WARP))
            return lane_mask(ev.lanes[a:b] - self.lo)
        return mask_int(self.warp_mask(ev.mask))

    def keep(self, name, v, idx, mask):
        """Value `v` ((32,) per lane) of `name` after step `idx`, written by the lanes of `mask`."""
        h = self.history.setdefault(name, [])
        h.append((idx, v, (h[-1][2] if h else 0) | mask))

    def access(self, ev, name):
        """The MemAccess of the chosen warp's lanes of a MemEvent."""
        m = self.warp_mask(ev.mask)
        addr = np.where(m, np.asarray(ev.addr[self.lo:self.lo + WARP], np.int64), -1)
        return warp_access(ev.space, ev.kind, name, int(ev.size), addr, m & (addr >= 0))

    def inst(self, ev):
        if not self.on:
            return
        mask = self._ran(ev)
        self.last_ins, self.last_pc, self.last_state = ev.ins, ev.pc, ev.state
        self.last_made_step = bool(mask)
        if mask:
            self.view.flush(self)
            s = self.view.step(self, ev, len(self.steps), mask)
            self.steps.append(s)
            self.view.values(self, ev, s)

    def mem(self, ev):
        """The access of the instruction just recorded (it follows its InstrEvent)."""
        if not self.on:
            return
        mine = ev.pc == self.last_pc if ev.pc is not None else ev.inst is self.last_ins
        if not mine:
            return
        ran = self.warp_mask(ev.mask).any()
        if ran and self.last_made_step:
            self.steps[-1].memory = self.access(ev, self.view.array_name(ev.array, self.last_state))
        if self.view.arrays and ev.kind != "ld" and ev.space in ("shared", "local"):
            if ev.space == "shared":
                hit = ev.mask.arr[ev.chunk.lane_block == self.local_block].any()
            else:
                hit = ran
            if hit:
                idx = len(self.steps) - 1 if self.last_made_step else len(self.steps)
                self._snapshot(ev.array, idx, self.last_state)

    def branch(self, ev):
        if not self.on:
            return
        mask = mask_int(self.warp_mask(ev.mask))
        if mask:
            s = self.view.branch(self, ev, mask)
            if s is not None:
                self.steps.append(s)

    def _snapshot(self, handle, idx, state):
        if handle.space == "shared":
            data = handle.data[self.local_block].reshape(handle.shape).copy()
        else:
            data = handle.data[self.lo:self.lo + WARP].reshape((WARP,) + tuple(handle.shape)).copy()
        self.arrays.setdefault(self.view.array_name(handle, state), []).append((idx, data))


class IrView:
    """simgpu's IR as the Recorder sees it: the interpreter (``InstrEvent.state``,
    ``BranchEvent.state``) holds the values by variable name (``.env``) and the structured
    If/Loop reconvergence stack (``.stack``); an instruction shows as the IR printer writes it
    and weighs the SASS instructions it stands for (as the Report counts)."""

    arrays = True                # the recorder keeps the shared/local arrays the block stores into

    def __init__(self):
        self.handle_names = {}

    def chunk_begin(self, rec):
        """The parameters' values before the first step (the interpreter starts from the
        launch's bindings)."""
        for name, v in rec.launch.bindings.items():
            if not isinstance(v, ArrayHandle) and "%" not in name:
                self._keep(rec, name, v, -1, rec.valid)

    def _keep(self, rec, name, v, idx, mask):
        if isinstance(v, np.ndarray) and v.ndim == 1:
            v = v[rec.lo:rec.lo + WARP].copy()
        elif isinstance(v, ArrayHandle):
            return
        else:
            v = np.full(WARP, v)
        rec.keep(name, v, idx, mask)

    def _stack(self, rec, state):
        return tuple((k, n, mask_int(rec.warp_mask(e))) for k, n, e in state.stack)

    def step(self, rec, ev, index, mask):
        ins = ev.ins
        return Step(index, "inst", ins.loc.file, ins.loc.line, mask, instr_text(ins), sass_count(ins),
                    dst=ins.dst, stack=self._stack(rec, ev.state))

    def values(self, rec, ev, s):
        """The variable the instruction wrote, and the loop variables that moved on."""
        env, ins = ev.state.env, ev.ins
        if ins.dst is not None and ins.dst in env:
            self._keep(rec, ins.dst, env[ins.dst], s.index, s.mask)
        for kind, node, _ in ev.state.stack:
            rv = getattr(node, "range_var", None)
            if kind == "loop" and rv and rv in env:
                v = env[rv]
                v = v[rec.lo:rec.lo + WARP] if isinstance(v, np.ndarray) and v.ndim == 1 else np.full(WARP, v)
                h = rec.history.get(rv)
                if not h or not np.array_equal(h[-1][1], v) or h[-1][2] | s.mask != h[-1][2]:
                    self._keep(rec, rv, v.copy(), s.index, s.mask)

    def branch(self, rec, ev, mask):
        node, kind = ev.node, ev.kind
        if kind == "if":
            t = mask_int(rec.warp_mask(ev.taken)) if ev.taken is not None else None
            text, kw = f"if {value_text(node.cond)}  (branch)", {"taken": t}
        elif kind == "loop":
            cond = "range" if node.range_var else (value_text(node.cond) if node.cond is not None else "True")
            text, kw = f"loop test: {cond}  (branch)", {}
        else:                           # return / break / continue
            text, kw = f"{kind}  (branch)", {}
        return Step(len(rec.steps), kind, node.loc.file, node.loc.line, mask, text, 1,
                    stack=self._stack(rec, ev.state), **kw)

    def array_name(self, handle, state):
        """The kernel's name for an array (the interpreter's variable bound to it)."""
        n = self.handle_names.get(id(handle))
        if n is None:
            names = [k for k, v in state.env.items() if v is handle and "%" not in k]
            n = names[0] if names else handle.name
            self.handle_names[id(handle)] = n
        return n

    def flush(self, rec):
        pass

    def finish(self, rec):
        rec.rejoin = rejoin_lines(rec.launch.fn)


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
