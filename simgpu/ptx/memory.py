"""Address spaces of the PTX executor: device (global) memory, shared, local, const.

Device memory is a list of allocations, each a writable uint8 view of a numpy buffer placed
at a device address (the first at ``GLOBAL_BASE`` = 1<<40), aligned and rounded as the CUDA
driver's cuMemAlloc rounds them (:func:`driver_span`, measured on an H200:
validation/allocation/).  An access past an allocation's end but inside its rounding lands in
the allocation's padding (``pads``: poison bytes until written, as on the card the bytes are
whatever is there) and is recorded in ``overruns`` for memcheck's report; past the rounding it
faults.
Shared memory is one uint8 row per block of the chunk, local memory one row per lane; the
state-space address of a shared/local byte is its offset in the row.  Generic addresses put
shared, local and const into windows (``SHARED_WINDOW`` etc., 4 GiB each) that no device
allocation overlaps; ``cvta`` adds or removes the window base.

Every access goes through :meth:`Space.resolve`, which turns per-lane addresses into
(typed numpy view, element indices, lane positions) groups, checking bounds and alignment.
A bad access raises :class:`MemFault` with the position of the first bad lane; the executor
turns it into a ``KernelError`` naming that lane's thread and block and the source line.
"""
from __future__ import annotations

import bisect

import numba
import numpy as np

GLOBAL_BASE = 1 << 40
ALIGN = 512
# cuMemAlloc on the H200 (driver 580.159, CUDA 13.0; validation/allocation/alloc.json): up to
# 1 MiB an allocation takes its size rounded up to 512 B (at least 512) and 512-byte alignment;
# above 1 MiB its size rounded up to 2 MiB, aligned to 2 MiB.
SMALL_ALLOC_MAX = 1 << 20
SMALL_GRANULE = 512
LARGE_GRANULE = 2 << 20
SHARED_WINDOW = 1 << 48
LOCAL_WINDOW = 1 << 49
CONST_WINDOW = 1 << 50
PARAM_WINDOW = 1 << 51        # kernel parameters' generic addresses (cvta.param; ops_tma.py)
WINDOW_SIZE = 1 << 32
# Shared and local memory start as this byte (every float width NaN, every integer -1): never
# silent zeros, so a read before any write shows (simgpu.launch(poison=...); the IR path's
# exec/state.py POISON is the same value).
POISON = 0xFF


def driver_span(nbytes):
    """The bytes cuMemAlloc(nbytes) reserves on the H200: its size rounded up to the driver's
    granularity (512 B up to 1 MiB, then 2 MiB; measured)."""
    n = max(int(nbytes), 1)
    g = SMALL_GRANULE if n <= SMALL_ALLOC_MAX else LARGE_GRANULE
    return -(-n // g) * g


def driver_align(nbytes):
    """The alignment of cuMemAlloc(nbytes)'s address (512 B up to 1 MiB, then 2 MiB)."""
    return SMALL_GRANULE if max(int(nbytes), 1) <= SMALL_ALLOC_MAX else LARGE_GRANULE


def next_place(end, nbytes):
    """Where simgpu places an allocation of nbytes after the address ``end``: aligned as the
    driver aligns it, one granule (512 B) past ``end`` -- the card packs allocations with no
    gap; the gap keeps an access past an allocation's rounding a fault here."""
    a = driver_align(nbytes)
    return -(-(end + ALIGN) // a) * a


class MemFault(Exception):
    """An access out of bounds or misaligned; ``pos`` indexes the executing lanes."""

    def __init__(self, msg, pos):
        super().__init__(msg)
        self.msg, self.pos = msg, int(pos)


def _typed(buf, dtype, cache):
    key = (id(buf), dtype)
    v = cache.get(key)
    if v is None:
        n = buf.size - buf.size % dtype.itemsize
        v = cache[key] = buf[:n].view(dtype)
    return v


@numba.njit(cache=True, nogil=True)
def _span(addrs):
    """(OR, smallest, largest) of a non-empty uint64 address array, in one pass."""
    o = lo = hi = addrs[0]
    for i in range(1, addrs.shape[0]):
        a = addrs[i]
        o |= a
        if a < lo:
            lo = a
        elif a > hi:
            hi = a
    return o, lo, hi


@numba.njit(cache=True, nogil=True)
def rows_repeat(mask, off, L, check_off):
    """Whether every block's row of `L` lanes repeats block 0's: the same lanes in `mask` and,
    with `check_off`, the same offsets in `off` at those lanes."""
    for r in range(L, mask.shape[0], L):
        for t in range(L):
            if mask[r + t] != mask[t] or (check_off and mask[t] and off[r + t] != off[t]):
                return False
    return True


@numba.njit(cache=True, nogil=True)
def offsets_repeat(off, L):
    """Whether every block's row of `L` offsets repeats block 0's (every lane executing)."""
    for r in range(L, off.shape[0], L):
        for t in range(L):
            if off[r + t] != off[t]:
                return False
    return True


def _check_align(addrs, w, space, orv=None):
    # one pass: the OR of all addresses has a low bit set iff some address has (orv: that OR)
    if orv is None and w > 1:
        orv = np.bitwise_or.reduce(addrs, axis=None)
    if w > 1 and int(orv) & (w - 1):
        bad = (addrs & np.uint64(w - 1)) != 0
        if bad.any():
            pos = int(np.argmax(bad))
            raise MemFault(f"misaligned {w}-byte {space} access at address "
                           f"{int(addrs[pos]):#x}", pos)


class DeviceMemory:
    """Global memory: allocations at device addresses."""

    space = "global"

    def __init__(self, places=()):
        """``places``: [(address, name)] for the first allocations, in order (a launch places
        its argument arrays where its binding gave them addresses, named after their
        parameters); later allocations follow the last one after a gap, as the arrays are
        placed, so an access just past an array faults instead of landing in the next."""
        self.bases, self.bufs, self.names = [], [], []
        self.next = GLOBAL_BASE
        self.places = list(places)
        self._views = {}
        self._bases_arr = np.zeros(0, np.uint64)
        self.pads = {}          # base -> uint8 padding after the allocation (made on first use)
        self.overruns = []      # (position in the access, address, allocation index, kind?) new

    def alloc(self, buf, name=""):
        """Place a writable uint8 buffer; returns its device address."""
        if self.places:
            base, name = self.places.pop(0)
            return self.add(base, buf, name)
        return self.add(-(-self.next // driver_align(buf.size)) * driver_align(buf.size), buf, name)

    def place_global(self, name, init):
        """Place the module's ``.global`` variable `name` (its initial bytes `init`) for a
        launch; returns its address.  Here a fresh copy per launch; simgpu.host's memory keeps
        a kernel's variables from launch to launch, as a module loaded on a GPU keeps them."""
        return self.alloc(init.copy(), name=name)

    def add(self, base, buf, name=""):
        """Map the writable uint8 buffer `buf` at device address `base` (e.g. memory the
        program allocated before the launch, which the compiled code reaches by address)."""
        k = bisect.bisect(self.bases, base)
        self.bases.insert(k, base)
        self.bufs.insert(k, buf)
        self.names.insert(k, name)
        self.next = max(self.next, base + driver_span(buf.size) + ALIGN)
        self._bases_arr = np.array(self.bases, np.uint64)
        return base

    def pad(self, a):
        """The padding of allocation ``a`` (index): the bytes from its end to its rounding,
        poison until written (a buffer given in ``pads`` beforehand is kept: simgpu.host's
        device arrays keep theirs from launch to launch)."""
        base = self.bases[a]
        p = self.pads.get(base)
        if p is None:
            p = self.pads[base] = np.full(driver_span(self.bufs[a].size) - self.bufs[a].size,
                                          POISON, np.uint8)
        return p

    def resolve(self, addrs, w, dtype, lane_ids=None):
        addrs = np.asarray(addrs, np.uint64)
        span = _span(addrs) if addrs.ndim == 1 and addrs.size else None
        _check_align(addrs, w, "global", span[0] if span is not None else None)
        if not self.bases:
            raise MemFault(f"global access at address {int(addrs[0]):#x} with no memory", 0)
        one = self._one_allocation(addrs, w, dtype, span)
        if one is not None:
            return one
        k = np.searchsorted(self._bases_arr, addrs, side="right") - 1
        k0 = int(k[0]) if k.size else 0
        uniform = k.size and (k == k0).all()
        groups = [(k0, slice(None))] if uniform else \
            [(int(a), np.flatnonzero(k == a)) for a in np.unique(k)]
        out = []
        for a, pos in groups:
            sel = addrs[pos]
            if a < 0:
                p = np.flatnonzero(k < 0)[0]
                raise MemFault(f"global access at unmapped address {int(addrs[p]):#x}", p)
            off = sel - np.uint64(self.bases[a])
            buf = self.bufs[a]
            bad = off + np.uint64(w) > np.uint64(buf.size)
            if bad.any():
                span = driver_span(buf.size)
                p_all = np.arange(len(addrs))[pos]
                inside = bad & (off + np.uint64(w) <= np.uint64(span)) & (off >= np.uint64(buf.size))
                if buf.size % w:                # the padding is not in whole elements
                    inside[:] = False
                beyond = bad & ~inside
                if beyond.any():
                    p = int(p_all[np.flatnonzero(beyond)[0]])
                    what = f" ({self.names[a]})" if self.names[a] else ""
                    raise MemFault(f"out-of-bounds global access: address {int(addrs[p]):#x} is "
                                   f"{int(addrs[p]) - self.bases[a]} bytes into a {buf.size}-byte "
                                   f"allocation{what}, past its rounding ({span} bytes: "
                                   "cuMemAlloc's granularity)", p)
                k = np.flatnonzero(inside)
                pad_pos = p_all[k]
                self.overruns.append((pad_pos, addrs[pad_pos], a))
                padv = _typed(self.pad(a), dtype, self._views)
                out.append((padv, ((off[k] - np.uint64(buf.size)) // np.uint64(w)).astype(np.int64),
                            pad_pos))
                keep = np.flatnonzero(~bad)
                if not len(keep):
                    continue
                off, pos = off[keep], p_all[keep]
            out.append((_typed(buf, dtype, self._views), (off // np.uint64(w)).astype(np.int64),
                        pos))
        return out


    def _one_allocation(self, addrs, w, dtype, span):
        """The groups when every address lies in bounds of one allocation (the common case:
        found from the smallest and largest address, no per-lane search), else None.
        span: _span(addrs), None for no or a non-flat address array."""
        if span is None:
            return None
        lo, hi = int(span[1]), int(span[2])
        a = bisect.bisect_right(self.bases, lo) - 1
        if a < 0 or hi + w > self.bases[a] + self.bufs[a].size:
            return None
        off = (addrs - np.uint64(self.bases[a])).view(np.int64)
        idx = off >> _SHIFT[w] if w in _SHIFT else off // w
        return [(_typed(self.bufs[a], dtype, self._views), idx, slice(None))]


_SHIFT = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4}


class RowMemory:
    """Shared (one row per block) or local (one row per lane) memory, or const (one row)."""

    def __init__(self, space, rows, size, fill=None):
        self.space = space
        self.size = (size + 15) // 16 * 16
        self.buf = np.zeros(rows * self.size, np.uint8) if fill is None else \
            np.full(rows * self.size, fill, np.uint8)
        self._views = {}

    def typed(self, dtype):
        """The buffer viewed as dtype (cached)."""
        return _typed(self.buf, dtype, self._views)

    def resolve(self, addrs, w, dtype, rows=None, row_off=None):
        """``rows``: row per lane, or ``row_off``: row * self.size per lane (int64)."""
        addrs = np.asarray(addrs, np.uint64)
        span = _span(addrs) if addrs.ndim == 1 and addrs.size else None
        _check_align(addrs, w, self.space, span[0] if span is not None else None)
        hi = int(span[2]) if span is not None else (int(addrs.max()) if addrs.size else 0)
        if addrs.size and hi + w > self.size:
            p = int(np.argmax(addrs > np.uint64(self.size - w)))
            raise MemFault(f"out-of-bounds {self.space} access: address {int(addrs[p]):#x}, "
                           f"{self.space} size {self.size} bytes", p)
        if row_off is None:
            row_off = rows.astype(np.int64) * self.size
        flat = row_off + addrs.view(np.int64)            # in bounds: < 2**63
        return [(_typed(self.buf, dtype, self._views), flat >> _SHIFT[w] if w in _SHIFT
                 else flat // w, slice(None))]


def load(groups, n, dtype):
    """Gather the resolved groups into one array of n values."""
    if len(groups) == 1 and isinstance(groups[0][2], slice):
        view, idx, _ = groups[0]
        return view.take(idx, mode="clip")      # idx checked by resolve: clip never clips
    out = np.empty(n, dtype)
    for view, idx, pos in groups:
        out[pos] = view[idx]
    return out


def store(groups, values):
    """Scatter values (one per lane; later lanes win on equal addresses)."""
    values = np.broadcast_to(values, (max(_count(groups), 1),)) if np.ndim(values) == 0 \
        else values
    for view, idx, pos in groups:
        view[idx] = values[pos]


def _count(groups):
    return sum(len(g[1]) for g in groups)


def classify_generic(addrs):
    """Masks (shared, local, const) for generic addresses; the rest is global."""
    win = addrs & np.uint64(~(WINDOW_SIZE - 1) & 0xFFFFFFFFFFFFFFFF)
    return (win == np.uint64(SHARED_WINDOW), win == np.uint64(LOCAL_WINDOW),
            win == np.uint64(CONST_WINDOW))
