"""Shadow memory: per entry, who last wrote and read it, in which barrier interval.

Everything is a numpy array indexed by entry (shared: one row per block of the chunk; local:
one row per lane, per byte; global: one array per argument allocation).  An entry is as wide
as the narrowest access that can reach that memory (observer.py decides; bytes if unsure), so
it is exact: every access is aligned to its width.  Every access is checked for all its lanes
with a few gathers and scatters -- no Python loop over threads.

Ordering.  Each lane counts the block barriers it has arrived at (``bep``) and the warp
barriers (``syncwarp``; block barriers count too: ``wep``).  Two accesses to a byte by
different threads of a block are ordered iff they lie in different block-barrier intervals,
or the threads are in the same warp and in different warp-barrier intervals.  Nothing else
orders them: lanes of a warp are not assumed to run in lock-step (independent thread
scheduling, Volta and later), so ``sh[t] = x; y = sh[t ^ 1]`` in one warp is a hazard, as
compute-sanitizer's racecheck reports it.
"""
from __future__ import annotations

import numpy as np

NONE, MANY = -1, -2


def expand(idx, w):
    """Byte indices of w-byte accesses starting at idx (n,) -> (n * w,)."""
    if w == 1:
        return idx
    return (idx[:, None] + np.arange(w, dtype=np.int64)).reshape(-1)


def rep(a, w):
    return a if w == 1 else np.repeat(a, w)


class BlockShadow:
    """Shared memory of a chunk's blocks: row b is block b's shared window."""

    def __init__(self, nblocks, size):
        self.nblocks, self.size = nblocks, max(int(size), 16)
        n = self.nblocks * self.size
        self.w_tid = np.full(n, NONE, np.int16)      # last writer (thread linear id in block)
        self.w_bep = np.zeros(n, np.int32)
        self.w_wep = np.zeros(n, np.int32)
        self.w_loc = np.zeros(n, np.int32)
        self.w_atom = np.zeros(n, bool)
        self.r_tid = np.full(n, NONE, np.int16)      # last reader(s) in r_bep's interval (MANY)
        self.r_warp = np.zeros(n, np.int8)           # their warp (MANY: several warps)
        self.r_bep = np.full(n, -1, np.int32)
        self.r_wep = np.zeros(n, np.int32)
        self.r_loc = np.zeros(n, np.int32)

    def grow(self, size):
        """Make rows at least `size` bytes (dynamic shared memory seen late)."""
        if size <= self.size:
            return
        new = BlockShadow(self.nblocks, size)
        for k, v in self.__dict__.items():
            if isinstance(v, np.ndarray):
                getattr(new, k).reshape(self.nblocks, new.size)[:, :self.size] = \
                    v.reshape(self.nblocks, self.size)
        self.__dict__.update(new.__dict__)

    def access(self, kind, idx, tid, warp, bep, wep, loc):
        """One access of bytes `idx` (flattened, one entry per byte) by threads `tid` (same
        shape) -> dict of hazard/uninit bool arrays over the entries, and the previous
        writer/reader arrays to name the other side."""
        out = {}
        wt = self.w_tid[idx]
        out["uninit"] = wt == NONE
        out["w_tid"], out["w_loc"] = wt, self.w_loc[idx]
        same_w = (wt >= 0) & (wt != tid) & (self.w_bep[idx] == bep) & \
            (((wt >> 5) != warp) | (self.w_wep[idx] == wep))
        if kind == "atom":
            same_w &= ~self.w_atom[idx]
        if kind == "ld":
            out["RAW"] = same_w
        else:
            out["WAW"] = same_w
            rt = self.r_tid[idx]
            out["r_tid"], out["r_loc"] = rt, self.r_loc[idx]
            out["WAR"] = (rt != NONE) & (rt != tid) & (self.r_bep[idx] == bep) & \
                ((self.r_warp[idx] != warp) | (self.r_wep[idx] == wep))
        if kind == "ld":
            self._read(idx, tid, warp, bep, wep, loc)
        else:
            self.w_tid[idx] = tid
            back = self.w_tid[idx]
            if kind == "st":
                dup = back != tid                   # another lane wrote it in this instruction
                if dup.any():
                    out["WAW"] = out["WAW"] | dup
                    out["w_tid"] = np.where(dup, back, out["w_tid"])
                    out["w_loc"] = np.where(dup, loc, out["w_loc"])
            self.w_bep[idx] = bep
            self.w_wep[idx] = wep
            self.w_loc[idx] = loc
            self.w_atom[idx] = kind == "atom"
        return out

    def _read(self, idx, tid, warp, bep, wep, loc):
        pt = self.r_tid[idx]
        same = (self.r_bep[idx] == bep) & (pt != NONE)
        new_t = np.where(same & (pt != tid), MANY, tid).astype(np.int16)
        new_w = np.where(same & (self.r_warp[idx] != warp), MANY, warp).astype(np.int8)
        self.r_tid[idx] = new_t
        back = self.r_tid[idx]
        dup = back != new_t                         # several lanes read it in this instruction
        if dup.any():
            self.r_tid[idx[dup]] = MANY
        self.r_warp[idx] = new_w
        backw = self.r_warp[idx]
        dupw = backw != new_w
        if dupw.any():
            self.r_warp[idx[dupw]] = MANY
        self.r_bep[idx] = bep
        self.r_wep[idx] = wep
        self.r_loc[idx] = loc


class RowInit:
    """Initialised-byte flags per row (local memory: one row per lane)."""

    def __init__(self, rows, size):
        self.rows, self.size = rows, max(int(size), 16)
        self.init = np.zeros(rows * self.size, bool)

    def grow(self, size):
        if size <= self.size:
            return
        new = np.zeros((self.rows, size), bool)
        new[:, :self.size] = self.init.reshape(self.rows, self.size)
        self.size, self.init = size, new.reshape(-1)


class GlobalShadow:
    """One global allocation, for the whole launch: the last writing block and the reading
    block(s) of each byte (hazards between blocks: nothing orders two blocks of one launch)."""

    def __init__(self, nbytes, name, unit=1):
        self.name, self.unit = name, unit           # bytes per entry: the array's item size
        n = max(-(-int(nbytes) // unit), 1)
        self.w_blk = np.full(n, NONE, np.int32)
        self.w_loc = np.zeros(n, np.int32)
        self.r_blk = np.full(n, NONE, np.int32)
        self.r_loc = np.zeros(n, np.int32)

    def regrain(self):
        """Per byte from now on (an access narrower than an item)."""
        for k in ("w_blk", "w_loc", "r_blk", "r_loc"):
            setattr(self, k, np.repeat(getattr(self, k), self.unit))
        self.unit = 1

    def access(self, kind, idx, blk, loc, fenced):
        out = {}
        wb = self.w_blk[idx]
        out["w_blk"], out["w_loc"] = wb, self.w_loc[idx]
        pub = fenced[np.maximum(wb, 0)]             # the writer fenced: published (see docs)
        other_w = (wb >= 0) & (wb != blk) & ~pub
        if kind == "ld":
            out["RAW"] = other_w
            pr = self.r_blk[idx]
            new = np.where((pr != NONE) & (pr != blk), MANY, blk).astype(np.int32)
            self.r_blk[idx] = new
            back = self.r_blk[idx]
            dup = back != new
            if dup.any():
                self.r_blk[idx[dup]] = MANY
            self.r_loc[idx] = loc
            return out
        out["WAW"] = other_w
        rb = self.r_blk[idx]
        out["r_blk"], out["r_loc"] = rb, self.r_loc[idx]
        out["WAR"] = (rb != NONE) & (rb != blk)
        self.w_blk[idx] = blk
        back = self.w_blk[idx]
        dup = back != blk
        if dup.any():
            out["WAW"] = out["WAW"] | dup
            out["w_blk"] = np.where(dup, back, out["w_blk"])
            out["w_loc"] = np.where(dup, loc, out["w_loc"])
        self.w_loc[idx] = loc
        return out
