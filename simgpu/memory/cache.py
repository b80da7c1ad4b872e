"""Sectored, set-associative LRU caches as plain int64 arrays, and the compiled operations.

L1 (one per SM): row = sm * sets + set,
  ``l1tag[row, way]``  uint32: the low 32 bits of the line address (byte address >>
                       log2(line_bytes)); lines 2**32 apart (512 GiB) would alias, which the
                       address map (kernel.py, model.LOCAL_BASE) never produces.  Half the
                       bytes of an int64 tag: the tag scan is the L1's main cost.
  ``l1[row, field, way]`` with fields
  VALID    bit mask of the line's sectors whose data is present (0 when empty)
  STAMP    last use (a clock that counts L1 accesses), for LRU; empty ways have stamp 0
  WRITTEN  sectors stores wrote (in part or whole) since the line was allocated
  FILLT    the event (memory instruction instance, numbered by the L1 clock) that last
           filled sectors of the line, and
  FILLM    the sectors it filled: a later hit in the same event is a hit on data in flight
L2 (one): ``l2[set, field, way]`` with the fields every access scans,
  TAG    line address, -1 when empty
  STAMP2 last use (a clock that counts L2 accesses), for LRU; empty ways have stamp 0
and ``l2r[set, way, field]``, the record of one way,
  BYTES  (line_bytes / 64 words) which bytes of the line writes have covered
  META   valid | dirty << 16 | partial << 32 | writer << 48, where
           dirty    sectors written and not yet written back to DRAM
           partial  dirty sectors of which only some bytes were written: the L2 keeps byte
                    masks, so a partial write needs no DRAM read; reading or evicting the
                    sector does
           writer   the memory instruction (slot) that last wrote the line; its write-back
                    is charged to it.  FLUSH_WRITER: a line written before the launch (the
                    do_bench flush of flushed.AfterFlush); its write-back is charged to the
                    instruction whose access evicts it, and it is not the kernel's dirty data
                    at the end
Sector masks are 16 bits wide: at most 16 sectors per line.

Set index: ``(line + mix(line // sets)) % sets`` with mix() < sets a multiplicative hash.
Consecutive lines fill consecutive sets as with a plain modulo, and each region of `sets`
lines is rotated by a hash of the region number, so power-of-two strides do not all land in
one set (real L1s and L2s hash their index bits for the same reason; the hash is not public).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..hardware.spec import HardwareError
from .counters import DRAM_RD, DRAM_RD_BUSY, DRAM_WR, DRAM_WR_BUSY

# the parameter vector (int64) the compiled functions index: EngineParams.array()
(P_LINE_SHIFT, P_SECTOR_SHIFT, P_SPL, P_SETS1, P_WAYS1, P_SETS2, P_WAYS2, P_GRAN,
 P_SECTOR_BYTES, P_DIRTY) = range(10)
N_PARAMS = 10
VALID, STAMP, WRITTEN, FILLT, FILLM = 0, 1, 2, 3, 4      # L1 fields
N_L1_FIELDS = 5
TAG, STAMP2 = 0, 1                   # L2 fields of l2
META, BYTES = 0, 1                   # L2 fields of l2r (BYTES: line_bytes / 64 words of byte mask,
                                     # then FILLT2 and FILLM2)
EMPTY32 = np.uint32(0xFFFFFFFF)
MAX_SECTORS_PER_LINE = 16
_M16 = 0xFFFF
_MIX = np.int64(-7046029254386353131)          # 0x9E3779B97F4A7C15 (golden ratio), as int64
FLUSH_WRITER = 32767                 # writer of the lines dirty before the launch (flushed.py)




def log2_exact(n, what):
    """log2(n) for a power of two n; HardwareError otherwise (`what` names n)."""
    k = int(n).bit_length() - 1
    if 1 << k != n:
        raise HardwareError(f"the memory model needs a power-of-two {what}, not {n}")
    return k


@dataclass(frozen=True)
class EngineParams:
    """The cache geometry the compiled engine runs with; .array() is the int64 vector it
    indexes with the P_* constants.  Lines and sectors are the same size in L1 and L2."""
    line_bytes: int             # cache line (a power of two)
    sector_bytes: int           # sector (a power of two, at most 16 per line)
    l1_sets: int                # sets of each SM's L1
    l1_ways: int                # ways of each SM's L1 (what the shared-memory carve-out leaves)
    l2_sets: int
    l2_ways: int
    dram_access_sectors: int    # sectors one DRAM access reads (divides sectors_per_line)
    dirty_lines: int = 0        # the most lines the L2 keeps dirty (GPU.l2_dirty_max_bytes); 0: no limit

    def __post_init__(self):
        log2_exact(self.line_bytes, "line size")
        log2_exact(self.sector_bytes, "sector size")

    @classmethod
    def for_gpu(cls, gpu, l1_ways):
        """The H200-style geometry of `gpu`, with `l1_ways` L1 ways; the DRAM access rounded
        up to whole sectors, at most a line, and to a divisor of the sectors per line."""
        l2 = gpu.l2
        spl = l2.sectors_per_line
        gran = max(1, -(-gpu.dram.access_bytes // l2.sector_bytes))
        gran = min(gran, spl)
        while spl % gran:
            gran += 1
        return cls(line_bytes=l2.line_bytes, sector_bytes=l2.sector_bytes, l1_sets=gpu.l1.sets,
                   l1_ways=l1_ways, l2_sets=l2.sets, l2_ways=l2.ways, dram_access_sectors=gran,
                   dirty_lines=gpu.l2_dirty_max_bytes // l2.line_bytes)

    @property
    def sectors_per_line(self):
        return self.line_bytes // self.sector_bytes

    @property
    def dram_access_bytes(self):
        return self.dram_access_sectors * self.sector_bytes

    def array(self):
        """The int64 vector indexed by P_LINE_SHIFT .. P_SECTOR_BYTES."""
        prm = np.zeros(N_PARAMS, dtype=np.int64)
        prm[P_LINE_SHIFT] = log2_exact(self.line_bytes, "line size")
        prm[P_SECTOR_SHIFT] = log2_exact(self.sector_bytes, "sector size")
        prm[P_SPL] = self.sectors_per_line
        prm[P_SETS1], prm[P_WAYS1] = self.l1_sets, self.l1_ways
        prm[P_SETS2], prm[P_WAYS2] = self.l2_sets, self.l2_ways
        prm[P_GRAN] = self.dram_access_sectors
        prm[P_SECTOR_BYTES] = self.sector_bytes
        prm[P_DIRTY] = self.dirty_lines
        return prm


@njit(cache=True, inline="always", _nrt=False)
def set_index(line, sets, inv):
    """(line + mix(line // sets)) % sets, without integer division (inv = 1.0 / sets; the
    two correction steps make it exact for line < 2**52)."""
    q = np.int64(line * inv)
    r = line - q * sets
    if r < 0:
        q -= 1
        r += sets
    elif r >= sets:
        q += 1
        r -= sets
    h = ((((q * _MIX) >> 32) & 0xFFFFFFFF) * sets) >> 32
    s = r + h
    return s - sets if s >= sets else s


@njit(cache=True, inline="always", _nrt=False)
def popcount(m):
    n = 0
    while m:
        m &= m - 1
        n += 1
    return n


# -- L1 --------------------------------------------------------------------------------
@njit(cache=True, inline="always", _nrt=False)
def l1_find(l1tag, row, ways, line):
    """The way holding `line`, or -1.  (No early exit: the loop vectorises.)  An empty way
    whose tag happens to match is harmless: its sectors are all invalid."""
    key = np.uint32(line & 0xFFFFFFFF)
    f = -1
    for w in range(ways):
        if l1tag[row, w] == key:
            f = w
    return f


@njit(cache=True, inline="always", _nrt=False)
def l1_victim(l1, row, ways):
    """The least recently used way (an empty way first: its stamp is 0)."""
    m = l1[row, STAMP, 0]
    for w in range(ways):
        s = l1[row, STAMP, w]
        if s < m:
            m = s
    for w in range(ways):
        if l1[row, STAMP, w] == m:
            return w
    return 0


# -- L2 --------------------------------------------------------------------------------
@njit(cache=True, inline="always", _nrt=False)
def chunks(m, gran, spl):
    """DRAM accesses covering the sectors in `m`: (mask of sectors they cover, how many)."""
    if gran == 1:
        return m, popcount(m)
    g = (1 << gran) - 1
    out = 0
    n = 0
    for c in range(0, spl, gran):
        cm = g << c
        if m & cm:
            out |= cm
            n += 1
    return out, n


@njit(cache=True, inline="always", _nrt=False)
def _sector_full(l2r, row, w, s, sb):
    """All bytes of sector s of the line in (row, way w) written, per its byte mask."""
    if sb == 32:
        return ((l2r[row, w, BYTES + (s >> 1)] >> ((s & 1) * 32)) & 0xFFFFFFFF) == 0xFFFFFFFF
    for b in range(s * sb, s * sb + sb):
        if (l2r[row, w, BYTES + (b >> 6)] >> (b & 63)) & 1 == 0:
            return False
    return True


@njit(cache=True, inline="always", _nrt=False)
def _l2_lru(l2, row, ways):
    """The least recently used way of L2 set `row` (an empty way first: its stamp is 0)."""
    lo = l2[row, STAMP2, 0]
    for q in range(ways):
        if l2[row, STAMP2, q] < lo:
            lo = l2[row, STAMP2, q]
    w = 0
    while l2[row, STAMP2, w] != lo:
        w += 1
    return w


@njit(cache=True, inline="always", _nrt=False)
def _write_back(meta, cnt, gran, spl, sb, slot):
    """An evicted line (record `meta`) writes back its dirty sectors, 32 B each, after reading
    the partial ones from DRAM; both are charged to the instruction that last wrote it (a line
    dirty from before the launch: to `slot`, the instruction whose access writes it back)."""
    d = (meta >> 16) & _M16
    if d:
        wr = meta >> 48
        if wr == FLUSH_WRITER:
            wr = slot
        po = (meta >> 32) & _M16
        cnt[wr, DRAM_WR] += popcount(d) * sb
        cnt[wr, DRAM_RD] += popcount(po) * sb
        cnt[wr, DRAM_WR_BUSY] += chunks(d, gran, spl)[1] * gran * sb
        if po:
            cnt[wr, DRAM_RD_BUSY] += chunks(po, gran, spl)[1] * gran * sb


@njit(cache=True, inline="always", _nrt=False)
def set_dirty_cap(dcap, row, sets):
    """Set `row`'s share of `dcap` dirty lines (the shares of all sets add up to dcap)."""
    return (dcap * (row + 1)) // sets - (dcap * row) // sets


@njit(cache=True, inline="always", _nrt=False)
def _eager_write_back(l2, l2r, row, w, ways, cap, cnt, gran, spl, sb, slot):
    """Way w of set `row` has just become dirty: if the set now holds more than `cap` dirty
    lines, its least recently used other dirty line is written back (its partial sectors read
    from DRAM to merge, as on eviction) and stays in the L2, clean and valid."""
    n = 0
    lo = -1
    v = -1
    for q in range(ways):
        if l2[row, TAG, q] != -1 and (l2r[row, q, META] >> 16) & _M16:
            n += 1
            if q != w and (v < 0 or l2[row, STAMP2, q] < lo):
                lo = l2[row, STAMP2, q]
                v = q
    if n > cap and v >= 0:
        meta = l2r[row, v, META]
        _write_back(meta, cnt, gran, spl, sb, slot)
        p = (meta >> 32) & _M16
        l2r[row, v, META] = ((meta & _M16) | p) | ((meta >> 48) << 48)


@njit(cache=True, inline="always", _nrt=False)
def _l2_way(l2, l2r, row, line, ways, cnt, gran, spl, sb, slot):
    """The way of `line` in L2 set `row`; on a miss the LRU way, its line evicted (written
    back) and its record cleared for `line`."""
    w = -1
    for q in range(ways):
        if l2[row, TAG, q] == line:
            w = q
    if w < 0:
        w = _l2_lru(l2, row, ways)
        if l2[row, TAG, w] != -1:
            _write_back(l2r[row, w, META], cnt, gran, spl, sb, slot)
        l2[row, TAG, w] = line
        for f in range(l2r.shape[2]):
            l2r[row, w, f] = 0
    return w


@njit(cache=True, inline="always", _nrt=False)
def _l2_merge_bytes(l2r, row, w, m, buf, k, v, spl, sb):
    """A write of sectors m (bytes buf[k, 4:]) into the line's byte mask: returns the valid
    sectors `v` plus the written sectors now complete."""
    for f in range(BYTES, l2r.shape[2] - 2):
        l2r[row, w, f] |= buf[k, 4 + f - BYTES]
    for s in range(spl):
        if (m >> s) & 1 and not (v >> s) & 1 and _sector_full(l2r, row, w, s, sb):
            v |= np.int64(1) << s
    return v


@njit(cache=True, inline="always", _nrt=False)
def _l2_fill(l2r, row, w, need, v, ev, gran, spl, sb):
    """Read the DRAM accesses covering sectors `need` (v: the valid ones) and note them as
    filled by event `ev`: (sectors filled, DRAM bytes, DRAM bytes of the whole accesses)."""
    ft, fm = l2r.shape[2] - 2, l2r.shape[2] - 1
    fill, n = chunks(need, gran, spl)
    fill &= ~v
    if l2r[row, w, ft] != ev:
        l2r[row, w, ft] = ev
        l2r[row, w, fm] = 0
    l2r[row, w, fm] |= fill
    return fill, popcount(fill) * sb, n * gran * sb


@njit(cache=True, inline="always", _nrt=False)
def l2_access(l2, l2r, line, m, buf, k, op, slot, stamp, sets, inv, ways, gran, spl, sb, cnt, ev, dcap=0):
    """One request for sectors `m` of `line` arriving at the L2 at time `stamp`, part of the
    event (instruction instance) numbered `ev`; for a write, buf[k, 4:] holds the bytes it
    writes.  op: 0 read, 1 write, 2 atomic (read-modify-write in the L2).  Returns (sector
    hits, DRAM bytes read, read hits on sectors this event is still fetching from DRAM, DRAM
    bytes of the whole accesses those reads take).

    Calibrated on the H200 (validation/README.md, "DRAM access granularity", "partial-sector
    writes", "L2 write policy"):
      * a read miss fetches the aligned `gran` sectors around each missing sector (64 B);
      * a write allocates without reading DRAM: the L2 keeps a byte mask per line, and a
        sector becomes valid once all its bytes are written (by one request or several);
        until then it is `partial`, and reading or evicting it costs a 32-byte DRAM read;
      * an evicted line writes back its dirty sectors, 32 B each, charged to the instruction
        that last wrote it (cnt[writer, DRAM_WR]; its fill reads to cnt[writer, DRAM_RD]);
      * eager write-back (dcap > 0, GPU.l2_dirty_max_bytes): the L2 keeps at most dcap lines
        dirty, each set its share (set_dirty_cap); a line that becomes dirty beyond the share
        has the set's least recently used dirty line written back, which stays valid;
      * hits: tag and sector data present (Nsight's definition), except that every store
        sector counts as a hit, as lts__t_sector_hit_rate does on the H200."""
    row = set_index(line, sets, inv)
    w = _l2_way(l2, l2r, row, line, ways, cnt, gran, spl, sb, slot)
    l2[row, STAMP2, w] = stamp
    meta = l2r[row, w, META]
    v = meta & _M16
    d = (meta >> 16) & _M16
    p = (meta >> 32) & _M16
    wr = meta >> 48
    dram = pend = busy = 0
    if op == 1:                                          # write: byte-masked, no DRAM read
        hits = popcount(m)
        v = _l2_merge_bytes(l2r, row, w, m, buf, k, v, spl, sb)
        d |= m
        p = (p | m) & ~v
        wr = slot
    else:
        hits = popcount(m & v)
        if op == 0 and l2r[row, w, l2r.shape[2] - 2] == ev:
            pend = popcount(m & v & l2r[row, w, l2r.shape[2] - 1])
        need = m & ~v
        if need:
            fill, dram, busy = _l2_fill(l2r, row, w, need, v, ev, gran, spl, sb)
            v |= fill
            p &= ~fill
        if op == 2:
            d |= m
            wr = slot
    if wr != FLUSH_WRITER:                              # a read keeps a pre-launch writer
        wr = min(wr, FLUSH_WRITER - 1)
    l2r[row, w, META] = v | (d << 16) | (p << 32) | (wr << 48)
    if dcap > 0 and d and not (meta >> 16) & _M16:
        _eager_write_back(l2, l2r, row, w, ways, set_dirty_cap(dcap, row, sets), cnt, gran, spl, sb, slot)
    return hits, dram, pend, busy


@njit(cache=True, _nrt=False)
def dirty_bytes(l2, l2r, prm, cnt, col, whole=False):
    """Charge the bytes still dirty in the L2 to their writers' column `col`; return the total
    (lines dirty from before the launch are not the kernel's: not counted).
    whole: count whole DRAM accesses (the dirty sectors rounded up to the access granularity)."""
    sb = prm[P_SECTOR_BYTES]
    gran, spl = prm[P_GRAN], prm[P_SPL]
    total = 0
    for r in range(l2.shape[0]):
        for w in range(l2.shape[2]):
            meta = l2r[r, w, META]
            d = (meta >> 16) & _M16
            if l2[r, TAG, w] != -1 and d and (meta >> 48) != FLUSH_WRITER:
                b = chunks(d, gran, spl)[1] * gran * sb if whole else popcount(d) * sb
                cnt[meta >> 48, col] += b
                total += b
    return total


def new_l1(sets, ways, n_sms):
    """(l1tag, l1) for n_sms L1s."""
    return (np.full((sets * n_sms, ways), EMPTY32, dtype=np.uint32),
            np.zeros((sets * n_sms, N_L1_FIELDS, ways), dtype=np.int64))


def new_l2(sets, ways, line_bytes=128):
    """(l2, l2r): tags and stamps, scanned on every access; and per-way records."""
    l2 = np.zeros((sets, 2, ways), dtype=np.int64)
    l2[:, TAG, :] = -1
    return l2, np.zeros((sets, ways, BYTES + max(1, line_bytes // 64) + 2), dtype=np.int64)
