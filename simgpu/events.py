"""The one event vocabulary between an executor and whatever watches it.

Both executors (the PTX executor of the compiled code, the default, and simgpu's IR
interpreter) report what they do with these records, through one :class:`Observer` contract:

    launch_begin(launch)
    for each chunk of whole blocks:
        chunk_begin(chunk)
        inst(InstrEvent) | branch(BranchEvent) | mem(MemEvent) | barrier(BarrierEvent) ...
        chunk_end(chunk)
    launch_end(launch)

in that order; within a chunk in execution order, and on both executors per instruction its
``inst`` first, then the records it made: its ``barrier``, its ``mem`` records (one per access;
a TMA copy makes several), its ``branch`` (a PTX ``bra``).  The IR's decisions (an If, a loop
test, break/continue/return) are ``branch`` records of their own, not after an ``inst``;
``barrier_divergence`` is a question asked while the executor checks a barrier (the IR
interpreter: before that barrier's ``inst``).  Masks are over the chunk's lanes (blocks padded to whole
warps: lane l is warp l // 32); every record has ``line`` (the user's source line, 0 where the
compiler gave none) and ``ins`` (the executor's own instruction: an ``ir.nodes.Instr`` or a
compiled-path ``PtxInst``, whose ``loc``, ``op`` and ``id`` are common).

A user's observer subclasses :class:`Observer`, overrides the hooks it wants, and is passed as
``simgpu.launch(..., observers=[obs])``; it works unchanged on both executors
(examples/observer_line_efficiency.py).  The memory, timing and sanitizer models are observers
like any user's.  This module is at the bottom of the layers: it imports numpy only.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

WARP = 32
POISON = 0xFF          # the byte never-written shared/local/scratch memory holds (NaN floats, -1 ints)


class SourceLoc(Protocol):
    file: str
    line: int


class Instruction(Protocol):
    """What every executor's instruction offers an observer (ir.nodes.Instr, PtxInst)."""
    id: int
    loc: SourceLoc
    op: str


@dataclass
class Chunk:
    """`n_blocks` consecutive blocks (linear ids first_block...), lanes padded to whole warps."""
    first_block: int
    n_blocks: int
    block_dim: tuple
    grid_dim: tuple
    index: int = 0                          # which chunk of the launch

    def __post_init__(self):
        bx, by, bz = self.block_dim
        self.tpb = bx * by * bz
        self.wpb = -(-self.tpb // WARP)
        self.lanes_per_block = self.wpb * WARP
        self.n_lanes = self.n_blocks * self.lanes_per_block
        self.n_warps = self.n_blocks * self.wpb
        geo = _geometry(self.n_blocks, tuple(self.block_dim))
        self.lane_block, self.lane_tid, self.valid, self._tid = geo
        self.all_valid = self.tpb == self.lanes_per_block
        self.block_ids = np.arange(self.first_block, self.first_block + self.n_blocks, dtype=np.int64)
        self._cache = {}
        self.valid_warps = int(self.n_blocks * self.wpb)

    def sreg(self, name):
        """tid.x ... per lane (int32 arrays); ntid/nctaid uniform."""
        v = self._cache.get(name)
        if v is not None:
            return v
        bx, by, bz = self.block_dim
        gx, gy, gz = self.grid_dim
        kind, _, c = name.partition(".")
        if kind == "tid":
            v = self._tid[c]
        elif kind == "ctaid":
            b = self.lane_block.astype(np.int32) + np.int32(self.first_block)
            if c == "x":
                v = b if gx * 1 == gx * gy * gz else b % np.int32(gx)
            elif c == "y":
                v = (b // np.int32(gx)) % np.int32(gy)
            else:
                v = b // np.int32(gx * gy)
        elif kind == "ntid":
            v = np.int32({"x": bx, "y": by, "z": bz}[c])
        elif kind == "nctaid":
            v = np.int32({"x": gx, "y": gy, "z": gz}[c])
        elif name == "laneid":
            v = (self.lane_tid % WARP).astype(np.int32)
        else:
            raise KeyError(name)
        self._cache[name] = v
        return v

    def thread_of(self, lane):
        bx, by, _ = self.block_dim
        t = int(self.lane_tid[lane])
        return (t % bx, (t // bx) % by, t // (bx * by))

    def block_of(self, lane):
        gx, gy, _ = self.grid_dim
        b = int(self.block_ids[self.lane_block[lane]])
        return (b % gx, (b // gx) % gy, b // (gx * gy))


_GEOMETRY: dict[tuple, tuple] = {}


def _geometry(n_blocks, block_dim):
    """Per-lane block/thread geometry of a chunk shape, shared by all chunks of that shape."""
    key = (n_blocks, block_dim)
    g = _GEOMETRY.get(key)
    if g is None:
        bx, by, bz = block_dim
        tpb = bx * by * bz
        lpb = -(-tpb // WARP) * WARP
        lane = np.arange(n_blocks * lpb, dtype=np.int64)
        lane_block = lane // lpb
        lane_tid = lane - lane_block * lpb
        t32 = lane_tid.astype(np.int32)
        tid = {"x": t32 % np.int32(bx) if (by * bz > 1 or lpb != tpb) else t32,
               "y": (t32 // np.int32(bx)) % np.int32(by), "z": t32 // np.int32(bx * by)}
        for a in (lane_block, lane_tid, *tid.values()):
            a.flags.writeable = False
        g = (lane_block, lane_tid, lane_tid < tpb, tid)
        if len(_GEOMETRY) > 8:
            _GEOMETRY.clear()
        _GEOMETRY[key] = g
    return g


def warps_any(arr):
    """Per warp, whether any of its lanes is set in the bool lane array `arr` (whole warps):
    ``arr.reshape(-1, WARP).any(axis=1)``, read as four 8-byte words per warp (10x faster)."""
    if arr.dtype == np.bool_ and arr.ndim == 1 and arr.flags.c_contiguous and WARP == 32:
        v = arr.view(np.uint64).reshape(-1, 4)
        return (v[:, 0] | v[:, 1] | v[:, 2] | v[:, 3]) != 0
    return arr.reshape(-1, WARP).any(axis=1)


class Mask:
    """The active-lane mask of a chunk, with its warp-level counts computed once."""
    __slots__ = ("arr", "chunk", "full", "_any", "_warp_any", "_n_threads", "_n_warps")

    def __init__(self, arr, chunk, full=None, n_threads=None, n_warps=None):
        """n_threads / n_warps: the counts, where the caller knows them (else computed when
        first asked for)."""
        self.arr = arr
        self.chunk = chunk
        self.full = bool(arr.all()) if full is None else full
        self._any = None if n_threads is None else n_threads > 0
        self._warp_any = None
        self._n_threads = n_threads
        self._n_warps = n_warps

    @classmethod
    def all_valid(cls, chunk):
        return cls(chunk.valid, chunk, full=True, n_threads=chunk.n_blocks * chunk.tpb,
                   n_warps=chunk.valid_warps)

    @classmethod
    def of_lanes(cls, lanes, chunk):
        """The mask of the chunk lanes ``lanes`` (an index array, no lane twice)."""
        arr = np.zeros(chunk.n_lanes, bool)
        arr[lanes] = True
        return cls(arr, chunk, full=len(lanes) == chunk.n_lanes)

    def any(self):
        if self._any is None:
            self._any = bool(self.arr.any())
        return self._any

    @property
    def warp_any(self):
        if self._warp_any is None:
            self._warp_any = warps_any(self.arr)
        return self._warp_any

    @property
    def n_threads(self):
        if self._n_threads is None:
            self._n_threads = int(np.count_nonzero(self.arr))
        return self._n_threads

    @property
    def n_warps(self):
        if self._n_warps is None:
            self._n_warps = int(np.count_nonzero(self.warp_any))
        return self._n_warps

    def sub(self, cond_arr):
        """mask & cond (cond a bool array or numpy bool scalar)."""
        if isinstance(cond_arr, (bool, np.bool_)):
            return self if cond_arr else Mask(np.zeros_like(self.arr), self.chunk, full=False)
        return Mask(self.arr & cond_arr, self.chunk)

    def minus(self, other_arr):
        return Mask(self.arr & ~other_arr, self.chunk)

    def first_lane(self, arr=None):
        a = self.arr if arr is None else arr
        return int(np.argmax(a))


@dataclass
class ArrayHandle:
    """An array the kernel can index: the data, its element layout and its address."""
    name: str
    space: str                  # global | shared | local | const
    shape: tuple
    dtype: np.dtype
    data: np.ndarray            # flat working buffer (shared: (n_blocks, size); local: (n_lanes, size))
    base_addr: int = 0          # global/const: byte address; shared: byte offset in the block's window
    elem_strides: tuple = field(default=())
    # a global argument: the host array it was bound from, the user's object (that array, or a
    # device array), the array the launch works on (host itself, or a copy) -- copied back
    host: np.ndarray | None = None
    orig: object = None
    work: np.ndarray | None = None
    record: bool = False        # a record (structured scalar) argument, passed by pointer

    def __post_init__(self):
        self.itemsize = self.dtype.itemsize
        self.size = int(np.prod(self.shape)) if self.shape else 1
        if not self.elem_strides:
            st, acc = [], 1
            for s in reversed(self.shape):
                st.append(acc)
                acc *= s
            self.elem_strides = tuple(reversed(st))


@dataclass
class MemEvent:
    """One warp-level memory instruction executed by a chunk (all its warps at once).

    addr: byte address per lane (int64, shape (n_lanes,)); only lanes in `mask` are real.
    For shared memory the address is the offset inside the block's shared window; for local
    memory it is the per-thread offset (the hardware interleaves local memory per lane)."""
    inst: object
    space: str
    kind: str                   # 'ld' | 'st' | 'atom'
    addr: np.ndarray
    mask: Mask
    size: int
    array: ArrayHandle
    chunk: Chunk
    pc: int | None = None       # PTX path: the instruction's program counter (InstrEvent.pc)
    rows_alike: bool | None = None  # every block's row of lanes repeats block 0's (the same lanes
    #                                 at the same addresses), where the executor knows it; None: unknown


@dataclass(eq=False)
class InstrEvent:
    """One instruction executed by a chunk's warps at one step (all of them together)."""
    ins: Instruction            # ir.nodes.Instr | PtxInst: .loc (file, line), .op, .id
    chunk: Chunk
    lanes: np.ndarray | None = None     # executing lanes (PTX path); the mask is made when asked
    _mask: Mask | None = None
    pc: int | None = None               # the compiled code's program counter (its index in the
    #                                     linked program, which ptxas' SASS costs are keyed by); IR: None
    warps: int | None = None            # warps with an executing lane, where the executor knows
    state: object = None                # the executor's state, for observers that show values (the
    #                                     stepper); read it during the call.  PTX path: the chunk
    #                                     executor: .regs {(function, register): per-lane array, or one
    #                                     scalar when uniform}, .im.linked (the program).  IR: the
    #                                     interpreter: .env {variable: value}, .stack (If/Loop, entry Mask)

    @property
    def mask(self) -> Mask:
        """The lanes that executed it (guard-false lanes of a predicated PTX instruction count
        as executing, as in Nsight Compute's smsp__thread_inst_executed)."""
        if self._mask is None:
            self._mask = Mask.of_lanes(self.lanes, self.chunk)
        return self._mask

    @property
    def n_warps(self) -> int:
        """Warps with an executing lane."""
        return self.warps if self.warps is not None else self.mask.n_warps

    @property
    def line(self) -> int:
        return self.ins.loc.line

    @property
    def op(self) -> str:
        return self.ins.op


@dataclass(eq=False)
class BranchEvent:
    """A control-flow decision executed under ``mask``.  ``taken``: the lanes that take the
    branch (an If's then-side, a PTX ``bra``'s target), None for loop tests and for uniform
    jumps.  ``kind``: 'if' | 'loop' (IR path), 'bra' (PTX path)."""
    node: Instruction           # ir.nodes.If/Loop | PtxInst of the bra
    mask: Mask
    taken: Mask | None
    kind: str
    state: object = None        # IR: the interpreter (as InstrEvent.state); PTX path: None

    @property
    def line(self) -> int:
        return self.node.loc.line

    @property
    def divergent_warps(self) -> int:
        """Warps in which some lanes take the branch and others do not."""
        if self.taken is None:
            return 0
        t = self.taken.arr
        return int(np.count_nonzero(warps_any(t) & warps_any(self.mask.arr & ~t)))


@dataclass(eq=False)
class BarrierEvent:
    """A barrier executed by the lanes of ``mask``: scope 'block' (syncthreads, bar.sync) or
    'warp' (syncwarp, bar.warp.sync)."""
    ins: Instruction
    mask: Mask
    scope: str

    @property
    def line(self) -> int:
        return self.ins.loc.line


@dataclass(eq=False)
class ProgramFacts:
    """What the program that runs says about itself, for the models (filled by the executor
    before the models are built: ``Launch.facts``).  local_frame_bytes: one thread's local
    memory frame (16-byte rounded, at least 16), by which the hardware interleaves local memory;
    reduction_ids: the ids (``ins.id``) of atomics whose result is unused (compiled to RED);
    shared_access_bytes: the narrowest access that can reach shared memory (the IR: its shared
    arrays' item sizes; the compiled code: the widths of its shared and generic ld/st/atom/red);
    shared_symbols: the compiled code's shared variables, PTX name -> byte offset in the block's
    window (the IR's events name their arrays themselves); source_lines: the compiled code's
    user source line per PTX line (an object with ``file`` and ``line``, or None where the
    compiler gave none; the IR's instructions carry their lines themselves); var_types: the
    kernel's variable types as simgpu's front end typed them (the IR path's; the compiled
    path keeps none of numba's typing: empty there)."""
    local_frame_bytes: int = 16
    reduction_ids: frozenset = frozenset()
    shared_access_bytes: int = 1
    shared_symbols: dict = field(default_factory=dict)
    source_lines: dict = field(default_factory=dict)
    var_types: dict = field(default_factory=dict)   # the kernel's variables -> their types (the
    #                                                 timing model's loop bounds; the IR's own)


@dataclass(eq=False)
class Launch:
    """Everything about one launch that observers and executors may want."""
    kernel_name: str
    fn: object                      # the specialised program (IR Function)
    gpu: object
    grid: tuple
    block: tuple
    handles: list                   # the argument arrays at their device addresses
    smem_bytes: int
    bindings: dict = field(default_factory=dict)
    smem_layout: dict = field(default_factory=dict)
    registers_per_thread: int | None = None
    max_loop_iterations: int | None = None     # deprecated per-loop cap; the budget replaces it
    budget: object = None                       # exec.budget.Budget: wall clock, instructions
    blocks_per_chunk: int = 1
    wanted_blocks: set | None = None      # sampled execution: only chunks holding these run,
    wanted_runs: tuple | None = None      # and of them only their blocks in these (first, blocks) runs
    sampled_wave_blocks: int = 0          # the blocks of one wave those runs are slices of (cache shares)
    show_progress: bool | None = False    # False: silent; True: progress shown; None: when slow
    program: object = None                # the kernel (KernelProgram): what an executor compiles
    dynamic_smem_bytes: int = 0           # kernel[grid, block, stream, N] / shared_bytes=N (PTX path)
    poison: int | None = POISON           # the byte shared/local memory start as (None: zeros)
    # filled by the PTX executor's prepare (runtime/ptx_path.py): the compiled kernel, its SASS
    # facts, counter and arguments (PtxLaunchState, with the launch's Image once it runs)
    ptx: object = None
    cooperative: bool = False             # grid.sync(): the whole grid runs in one chunk
    facts: ProgramFacts | None = None     # the program's facts for the models (prepare fills it)
    prepare_seconds: float = 0.0          # the executor's prepare(): compiling, the first time
    # the estimate and progress (runtime/progress.LaunchProgress: begin(chunk sizes), done(blocks)),
    # None: none kept
    progress: object = None

    def __post_init__(self):
        self.n_blocks = self.grid[0] * self.grid[1] * self.grid[2]
        self.threads_per_block = self.block[0] * self.block[1] * self.block[2]
        self.warps_per_block = -(-self.threads_per_block // 32)
        self._chunk_sizes = {}          # chunks(): each chunk's blocks, by index (chunk_done)

    @property
    def n_chunks(self):
        return -(-self.n_blocks // self.blocks_per_chunk)

    def chunks(self):
        """(index, first block, number of blocks) of each chunk to run; the progress begins
        (runtime/progress.py estimates the launch's time from the first chunk)."""
        todo = list(self._chunks_to_run())
        self._chunk_sizes = {c: n for c, _, n in todo}
        if self.progress is not None:
            self.progress.begin([n for _, _, n in todo])
        yield from todo

    def _chunks_to_run(self):
        """Every chunk of blocks_per_chunk blocks or, for a sampled launch, those holding a
        wanted block, each cut to its blocks in the wanted runs (a chunk's part in one run
        runs as a chunk of its own: a sampled wave's slice, not the whole wave).  Indices
        count the chunks run where runs cut them, else they are the chunks' own."""
        wanted = None if self.wanted_blocks is None else sorted(self.wanted_blocks)
        runs = None if self.cooperative else self.wanted_runs      # grid.sync(): the one chunk, whole
        index = 0
        for c in range(self.n_chunks):
            first = c * self.blocks_per_chunk
            n = min(self.blocks_per_chunk, self.n_blocks - first)
            if wanted is not None:
                k = bisect.bisect_left(wanted, first)
                if k == len(wanted) or wanted[k] >= first + n:
                    continue
            if runs is None:
                yield c, first, n
                continue
            for lo, m in runs:
                a, b = max(lo, first), min(lo + m, first + n)
                if a < b:
                    yield index, a, b - a
                    index += 1

    def chunk_done(self, index):
        """The executor ran chunk `index` (the progress: the estimate, the bar)."""
        if self.progress is not None:
            self.progress.done(self._chunk_sizes[index])


class Observer:
    """Receives what an executor does, in one order on both executors (this module's
    docstring): per chunk, in execution order, an instruction's ``inst`` and then its
    ``barrier``, ``mem`` and ``branch`` records -- an observer that keys a memory access to
    an instruction takes the last ``inst`` seen (``MemEvent.inst`` is its ``ins``).  Subclass it and
    override what you need; every hook is declared here, and an executor calls a hook only on
    the observers that override it.

    ``attach(interpreter)`` is the IR interpreter's: it is called once before the launch with
    the interpreter (``interpreter.env`` holds the values, ``interpreter.stack`` the
    reconvergence stack).  On the compiled path the records are all there is
    (simgpu/ptx/emit.py builds them); on both, ``InstrEvent.state`` carries the executor's
    state for observers that show values (the stepper's recorder reads nothing else).  A model may also offer ``chunk_blocks`` and ``fill_report`` (simgpu/runtime)."""

    def attach(self, interpreter):
        pass

    def launch_begin(self, launch):
        pass

    def chunk_begin(self, chunk):
        pass

    def inst(self, ev: InstrEvent):
        """Every executed instruction (warps with no active lane skip it)."""

    def branch(self, ev: BranchEvent):
        """Every executed control-flow decision."""

    def mem(self, ev: MemEvent):
        """Every executed memory access (global, shared, local, const)."""

    def barrier(self, ev: BarrierEvent):
        """Every executed barrier."""

    def barrier_divergence(self, ins, lane: int, other_loc, other_lane: int | None = None) -> bool:
        """A block barrier ``ins`` reached by chunk lane ``lane`` while live threads of its block
        wait at (or skipped) another barrier, at ``other_loc`` (chunk lane ``other_lane`` when
        the executor knows which).  Return True when reported (the sanitizer's synccheck).  Where
        no observer reports it, the executor's own rule applies (the IR interpreter stops with a
        KernelError naming both barriers; the compiled code waits, as the GPU would hang)."""
        return False

    def add_overruns(self, records: list):
        """Accesses past an array's end that stayed inside the driver's rounding of its
        allocation, so the GPU runs them (one record per PTX line and allocation, as
        sanitize/overrun.py words them), given once after the launch's chunks ran (compiled
        path; the IR path refuses such accesses)."""

    def chunk_end(self, chunk):
        pass

    def launch_end(self, launch):
        pass


def overrides(obs, hook: str) -> bool:
    """Whether observer ``obs`` overrides ``Observer.<hook>`` (so an executor calls it)."""
    f = getattr(type(obs), hook, None)
    return f is not None and f is not getattr(Observer, hook)
