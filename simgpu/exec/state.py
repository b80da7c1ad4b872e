"""Run-time state of one chunk of blocks: lanes as arrays, masks, arrays, events."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

WARP = 32
# Shared and local memory start as this byte in every position (launch(poison=...)): 0xFF
# makes every float width NaN (f16/f32/f64) and every integer -1 (or its unsigned maximum),
# so a read before any write gives visibly wrong output, as the hardware's leftovers do.
# The PTX executor uses the same value (simgpu/ptx/memory.py POISON).
POISON = 0xFF


def poisoned(shape, dtype, poison=POISON):
    """An array of `shape` whose every byte is `poison` (None: zeros)."""
    if poison is None:
        return np.zeros(shape, dtype=dtype)
    a = np.empty(shape, dtype=dtype)
    a.view(np.uint8).fill(poison)
    return a


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


_GEOMETRY = {}


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


class Mask:
    """The active-lane mask of a chunk, with its warp-level counts computed once."""
    __slots__ = ("arr", "chunk", "full", "_any", "_warp_any", "_n_threads", "_n_warps")

    def __init__(self, arr, chunk, full=None):
        self.arr = arr
        self.chunk = chunk
        self.full = bool(arr.all()) if full is None else full
        self._any = None
        self._warp_any = None
        self._n_threads = None
        self._n_warps = None

    @classmethod
    def all_valid(cls, chunk):
        m = cls(chunk.valid, chunk, full=True)
        m._any = True
        m._n_threads = chunk.n_blocks * chunk.tpb
        m._n_warps = chunk.valid_warps
        return m

    def any(self):
        if self._any is None:
            self._any = bool(self.arr.any())
        return self._any

    @property
    def warp_any(self):
        if self._warp_any is None:
            self._warp_any = self.arr.reshape(-1, WARP).any(axis=1)
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
    user_array: object = None   # the user's array (global) to copy results back to
    elem_strides: tuple = field(default=())

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


class Observer:
    """Receives what the executor does.  Subclass and override what you need.

    Order of calls: attach(interpreter) once, launch_begin, then per chunk: chunk_begin,
    inst/branch/mem/barrier as instructions execute, chunk_end; finally launch_end.
    `inst` is called after the instruction's result is stored, so an observer that kept
    the interpreter from `attach` can read `interpreter.env[ins.dst]`; `interpreter.stack`
    is the reconvergence stack of (kind, node, entry Mask) at that point.
    """

    def attach(self, interpreter):
        pass

    def launch_begin(self, launch):
        pass

    def chunk_begin(self, chunk):
        pass

    def inst(self, ins, mask):
        """Every executed IR instruction (warps with no active lane skip it)."""

    def branch(self, node, mask, taken, kind):
        """A control-flow decision executed under `mask`; for an If, `taken` is the mask of
        lanes that take the then-side (None for loop tests)."""

    def mem(self, ev: MemEvent):
        pass

    def barrier(self, ins, mask):
        pass

    def chunk_end(self, chunk):
        pass

    def launch_end(self, launch):
        pass
