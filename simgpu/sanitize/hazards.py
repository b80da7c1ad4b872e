"""The default launch's light shared-memory hazard check (issue 25 item 2).

Not racecheck: per barrier interval, which warp last wrote and which warp(s) read each shared
word (one int16 writer, one int16 reader and one int32 epoch per word per block; -2: several
warps), updated per executed shared access by one numba-compiled pass over the lanes (``_update``:
the state packed in one int64 per word, so an access reads and writes one word of state).  A read of a
word another warp wrote in the same barrier interval (RAW), a write of a word another warp read
(WAR) or wrote (WAW) is a hazard.  Only hazards between different warps of a block are seen,
accesses in one instruction are not compared with each other, atomics are not checked, and a
barrier a lane passes starts its new interval (named barriers included).  A TMA copy's landing
in shared memory (``cp.async.bulk``) is not an access of a warp: the mbarrier its readers wait
on orders it (so a copy overwriting a buffer other warps still read is not seen either).  It observes the
compiled path's memory records (``mem``) and barrier records like any observer; the IR path is
not checked.  ``settings.race_check`` (SIMGPU_RACE_CHECK=0) turns it off; ``check=True`` runs the
full racecheck instead.  Cost: benchmarks/bench_race_check.py.

While the blocks of a chunk have done the same (every shared access by the same threads of each
block at the same offsets, every barrier passed by the same threads of each), their states are
the same: the check keeps block 0's row only, checks block 0's lanes and counts each finding
once per block, which is what the check per block finds (tests/test_race_default.py compares
both).  Whether an access is alike is one compiled pass over its offsets (``rows_repeat``), or
the executor's ``MemEvent.rows_alike`` where it knows (a shared [reg+off] access); the
first that is not copies the row to every block.  A 16x16 tiled matmul's 1,088 shared accesses
over 262,144 lanes cost 1.6 s without it, 0.45 s with it."""
from __future__ import annotations

import warnings

import numba
import numpy as np

from ..errors import SimGPUWarning
from ..exec.state import Observer
from ..ptx.memory import rows_repeat

NONE, MANY = -1, -2
_ALL = np.empty(0, np.int64)      # `lanes` of an access by every lane of the chunk


class HazardCheck(Observer):
    alike_blocks = True         # one row of state while the chunk's blocks do the same (False: a row per block)

    def __init__(self, unit=4):
        self.unit = unit
        self.found = {}         # (kind, loc, other_loc) -> [block, count]
        self._src = {}

    def chunk_begin(self, chunk):
        self.c = chunk
        self.nb = chunk.n_blocks
        self.L = chunk.lanes_per_block
        # While every block of the chunk has done the same (the same shared accesses by the same
        # threads at the same offsets, the same barriers), the blocks' states are the same: one
        # row (block 0's) stands for all and each finding counts n_blocks times, as each block
        # would find it.  The first access or barrier that differs between blocks writes the row
        # out to every block (_split).
        self.uniform = self.alike_blocks and self.nb > 1
        self.rows = 1 if self.uniform else self.nb
        n = self.L if self.uniform else chunk.n_lanes
        self.bep = np.zeros(n, np.int32)
        self.warp = (chunk.lane_tid[:n] // 32).astype(np.int16)
        self.size = 0
        self._new = np.empty(0, np.int64)      # _update's scratch: the words' new states
        self._alloc(256)

    def _alloc(self, size):
        """Per block (row) and shared word: st (barrier epoch << 32 | last writer << 16 | reader(s),
        the warps as int16 bit patterns; NONE, MANY), and the lines of its last write and read."""
        old = (self.size, getattr(self, "st", None), getattr(self, "wl", None), getattr(self, "rl", None))
        n = self.rows * size
        self.st = np.full(n, _pack(-1, NONE, NONE), np.int64)
        self.wl = np.zeros(n, np.int32)
        self.rl = np.zeros(n, np.int32)
        if old[0]:
            for new, o in zip((self.st, self.wl, self.rl), old[1:]):
                new.reshape(self.rows, size)[:, :old[0]] = o.reshape(self.rows, old[0])
        self.size = size

    def _split(self):
        """The blocks start to differ: block 0's state, copied, becomes every block's."""
        self.uniform = False
        self.rows = self.nb
        self.bep = np.tile(self.bep, self.nb)
        self.warp = (self.c.lane_tid // 32).astype(np.int16)
        self.st, self.wl, self.rl = (np.tile(a, self.nb) for a in (self.st, self.wl, self.rl))

    def barrier(self, ev):
        if ev.scope == "block":
            m = ev.mask
            if self.uniform:
                if m.full or rows_repeat(m.arr, m.arr, self.L, False):
                    self.bep[m.arr[:self.L]] += 1
                    return
                self._split()
            self.bep[m.arr] += 1

    mem_spaces = ("shared",)        # (the PTX executor's compiled loads may skip the others)

    def mem(self, ev):
        if ev.space != "shared" or ev.kind not in ("ld", "st"):
            return
        if ev.kind == "st" and str((getattr(ev.inst, "attrs", None) or {}).get("ptx", "")).startswith("cp.async.bulk"):
            return      # a TMA copy landing (the async proxy): ordered by the mbarrier its readers wait on
        m = ev.mask
        w, g = int(ev.size), self.unit
        if w < g:
            return                      # narrower than a word: not checked
        full = bool(m.full)             # every lane: `lanes` unused (lane k is position k)
        addr, marr, times = ev.addr, m.arr, 1
        if self.uniform:
            alike = ev.rows_alike           # (the executor may know it)
            if alike is None:
                alike = rows_repeat(marr, addr, self.L, True)
            if alike:
                addr, marr, times = addr[:self.L], marr[:self.L], self.nb
            else:
                self._split()
        lanes = _ALL if full else np.flatnonzero(marr)
        off = addr if full else addr[lanes]
        if not len(off):
            return
        u = w // g
        bad, hi = _scan(off, g - 1, g.bit_length() - 1)
        if bad:
            return                      # not word-aligned: not checked
        if hi + u > self.size:
            self._alloc(max(hi + u, 2 * self.size))
        if len(self._new) < len(off) * u:
            self._new = np.empty(len(off) * u, np.int64)
        line = int(ev.inst.id)          # the PTX line
        found, flags, other_w, other_r, at = _update(
            full, lanes, off, self.c.lane_block, self.bep, self.warp, self.size, g.bit_length() - 1, u,
            ev.kind == "ld", line, self.st, self.wl, self.rl, self._new)
        if found:
            lanes = at if full else lanes[at]
            for bit, kind, other in ((1, "RAW", other_w), (2, "WAR", other_r), (4, "WAW", other_w)):
                hz = (flags & bit) != 0
                if hz.any():
                    self._add(kind, line, other[hz], lanes[hz], times)
        src = self._src
        if line not in src:
            loc = ev.inst.loc
            src[line] = f"{loc.file}:{loc.line}" if loc.line else ""

    def _add(self, kind, line, others, lanes, times=1):
        """Hazards of `lanes` (`times` blocks alike: the lanes of the first)."""
        for o in np.unique(others):
            key = (kind, line, int(o))
            n = int(np.count_nonzero(others == o)) * times
            f = self.found.get(key)
            if f is None:
                self.found[key] = [self.c.block_of(int(lanes[0])), n]
            else:
                f[1] += n

    def _where(self, line):
        return self._src.get(line) or f"PTX line {line}"

    def races(self):
        """[{kind, loc, other_loc, block, count}] merged per source-line pair."""
        out = {}
        for (kind, line, other), (blk, n) in self.found.items():
            key = (kind, self._where(line), self._where(other))
            r = out.setdefault(key, {"kind": kind, "loc": key[1], "other_loc": key[2],
                                     "block": tuple(int(v) for v in blk), "count": 0})
            r["count"] += n
        return list(out.values())


@numba.njit(cache=True, nogil=True)
def _pack(ep, wr, rd):
    """A word's state: barrier epoch << 32 | last writer << 16 | reader(s) (int16 bit patterns)."""
    return (np.int64(ep) << 32) | ((np.int64(wr) & 0xFFFF) << 16) | (np.int64(rd) & 0xFFFF)


@numba.njit(cache=True, nogil=True)
def _scan(off, mask, shift):
    """(any offset with bits in `mask`, i.e. not word-aligned; the highest word index)."""
    bad = 0
    hi = 0
    for i in range(off.shape[0]):
        o = np.int64(off[i])
        bad |= o & mask
        if (o >> shift) > hi:
            hi = o >> shift
    return bad != 0, hi


@numba.njit(cache=True, nogil=True, inline="always")
def _i16(v):
    return v - 65536 if v >= 32768 else v


@numba.njit(cache=True, nogil=True, inline="always")
def _hazards(s, w, e, load):
    """Flags of an access by warp `w` in barrier epoch `e` to a word in state `s`:
    1 RAW (a load of another warp's write), 2 WAR, 4 WAW (a store after another warp's read,
    write); 0 in another epoch."""
    if (s >> 32) != e:
        return 0
    old_w = _i16((s >> 16) & 0xFFFF)
    old_r = _i16(s & 0xFFFF)
    wrote = old_w != NONE and old_w != w
    if load:
        return 1 if wrote else 0
    return (2 if old_r != NONE and old_r != w else 0) | (4 if wrote else 0)


@numba.njit(cache=True, nogil=True)
def _update(full, lanes, off, lane_block, bep, warp, size, shift, u, load, line, st, wl, rl, new):
    """One shared access of the lanes (`full`: every lane of the chunk, lane k at position k;
    else `lanes`) at byte offsets `off`, `u` words each (their blocks, barrier epochs and warps
    from lane_block, bep, warp): every check against the state *before* the instruction
    (accesses of one instruction are not compared with each other), then the state updated in
    lane order (the last lane to a word wins); `new` is scratch for the words' new states.
    Returns (hazards found, and per hazard: flags 1 RAW / 2 WAR / 4 WAW, the other access's
    line -- last write, last read --, and its position among the lanes)."""
    nl = off.shape[0]
    n = nl * u
    found = 0
    for k in range(nl):
        lane = k if full else lanes[k]
        b0 = np.int64(lane_block[lane]) * size + (np.int64(off[k]) >> shift)
        w = np.int64(warp[lane])
        e = np.int64(bep[lane])
        for j in range(u):
            s = st[b0 + j]
            f = _hazards(s, w, e, load)
            found += (f & 1) + ((f >> 1) & 1) + ((f >> 2) & 1)
            valid = (s >> 32) == e
            old_w = _i16((s >> 16) & 0xFFFF)
            old_r = _i16(s & 0xFFFF) if valid else NONE
            if load:
                new[k * u + j] = _pack(e, old_w if valid else NONE, w if (old_r == NONE or old_r == w) else MANY)
            else:
                new[k * u + j] = _pack(e, w, old_r)
    flags = np.zeros(found, np.uint8)
    other_w = np.zeros(found, np.int32)
    other_r = np.zeros(found, np.int32)
    at = np.zeros(found, np.int64)
    h = 0
    for i in range(n if found else 0):      # the hazards' details (rare), before the update
        k = i // u
        lane = k if full else lanes[k]
        b = np.int64(lane_block[lane]) * size + (np.int64(off[k]) >> shift) + i % u
        f = _hazards(st[b], np.int64(warp[lane]), np.int64(bep[lane]), load)
        for bit in (1, 2, 4):
            if f & bit:
                flags[h], other_w[h], other_r[h], at[h] = bit, wl[b], rl[b], k
                h += 1
    for k in range(nl):
        lane = k if full else lanes[k]
        b0 = np.int64(lane_block[lane]) * size + (np.int64(off[k]) >> shift)
        for j in range(u):
            st[b0 + j] = new[k * u + j]
            if load:
                rl[b0 + j] = line
            else:
                wl[b0 + j] = line
    return found, flags, other_w, other_r, at


_WORDS = {"RAW": ("written at", "read at"), "WAR": ("read at", "written at"),
          "WAW": ("written at", "written again at")}


def describe(r):
    a, b = _WORDS[r["kind"]]
    return (f"shared memory {a} {r['other_loc']} and {b} {r['loc']} by other warps of block "
            f"{r['block']} with no barrier between ({r['kind']}, {r['count']} words)")


def warn(races, kernel):
    for r in races:
        warnings.warn(f"kernel {kernel!r}: possible race: {describe(r)}. The GPU's answer may differ "
                      "from simgpu's, which ran the warps in one order; run check=True (racecheck) for "
                      "the full analysis.", SimGPUWarning, stacklevel=4)
