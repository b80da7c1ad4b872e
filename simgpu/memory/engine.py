"""Global and local memory, compiled: one call per executed memory instruction (all warps of
a chunk), from lane addresses to requests, sectors, L1, L2 and DRAM.

Per warp (in the schedule's order, see schedule.py):
  1. coalesce (gather): the active lanes' byte ranges [addr, addr + size) -> the distinct
     128-byte lines touched, with the mask of 32-byte sectors touched in each (and, for stores, which
     sectors are written completely).  One request per warp instruction; sectors = distinct
     sectors (what l1tex__t_requests / l1tex__t_sectors count).
  2. L1 of the warp's SM: loads allocate on miss and fill the missing sectors; stores write
     through (and allocate: see global_event); atomics bypass the L1 and invalidate the
     sectors they touch there, and are served in passes (_atomic_extra).  Steps 1 and 2
     are _l1_pass, SM by SM.
  3. L2 (cache.l2_access, in _l2_pass): L1 load misses as reads, stores as writes, atomics.
Nothing here loops over lanes in Python: lanes are visited inside numba only (and only when
a warp is not a full affine access, see gather).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .cache import (EMPTY32, FILLM, FILLT, P_DIRTY, P_GRAN, P_LINE_SHIFT, P_SECTOR_BYTES, P_SECTOR_SHIFT, P_SETS1, P_SETS2,
                    P_SPL, P_WAYS1, P_WAYS2, STAMP, VALID, WRITTEN, l1_find, l1_victim, l2_access,
                    popcount, set_index)
from .counters import (DRAM_RD, DRAM_RD_BUSY, L1_PEND, L2_PEND, GAT_BYTES, GAT_REQ, GAT_SECT, GLD_BYTES, GLD_HIT, GLD_REQ,
                       GLD_SECT, GST_BYTES, GST_HIT, GST_REQ, GST_SECT, L2_AT, L2_AT_HIT,
                       L2_AT_REQ, L2_RD, L2_RD_HIT, L2_RD_REQ, L2_WR, L2_WR_HIT, L2_WR_REQ,
                       LLD_BYTES, LLD_HIT, LLD_REQ, LLD_SECT, LST_BYTES, LST_HIT, LST_REQ,
                       LST_SECT)

LD, ST, ATOM, LOCAL_LD, LOCAL_ST = 0, 1, 2, 3, 4
KINDS = {("global", "ld"): LD, ("global", "st"): ST, ("global", "atom"): ATOM,
         ("local", "ld"): LOCAL_LD, ("local", "st"): LOCAL_ST, ("local", "atom"): LOCAL_ST}
MAX_LINES = 64          # 32 lanes x at most 2 lines each (an access of <= 16 bytes crosses one boundary)


def new_scratch(n_warps, line_bytes):
    """The work arrays global_event needs (allocated once per chunk size, outside numba)."""
    nwords = max(1, line_bytes // 64)
    return (np.zeros(MAX_LINES, np.int64), np.zeros(MAX_LINES, np.int64),
            np.zeros((MAX_LINES, nwords), np.int64), np.zeros((n_warps * MAX_LINES, 4 + nwords), np.int64),
            np.zeros(n_warps, np.int64), np.zeros(n_warps, np.int64),
            np.zeros(32, np.int64), np.zeros(32, np.int64), np.zeros((MAX_LINES, 16), np.int64),
            np.zeros(MAX_LINES, np.int64), np.full((MAX_LINES, 4), -1, np.int64))


@njit(cache=True, _nrt=False)
def _atomic_extra(addr, mask, w, ls, ss, lines, n, extra, da, dc, mx):
    """Atomics are served in passes: lanes that hit the same address go in successive passes
    (pass k serves the k-th lane of every address).  A sector is therefore accessed as many
    times as the most popular address in it has lanes.  extra[j] = sector accesses of line j
    beyond its distinct sectors.  (The H200's atomic sector counts of the suite's random
    histograms: 4 bins, 2,883,868 measured and modelled; 256 bins, -1.7 %.)"""
    nd = 0
    for l in range(32):
        i = w * 32 + l
        if not mask[i]:
            continue
        a = addr[i]
        k = 0
        while k < nd and da[k] != a:
            k += 1
        if k == nd:
            da[k] = a
            dc[k] = 0
            nd += 1
        dc[k] += 1
    for j in range(n):
        extra[j] = 0
        for s in range(16):
            mx[j, s] = 0
    lmask = (np.int64(1) << ls) - 1
    for k in range(nd):
        L = da[k] >> ls
        s = (da[k] & lmask) >> ss
        for j in range(n):
            if lines[j] == L:
                if dc[k] > mx[j, s]:
                    mx[j, s] = dc[k]
                break
    for j in range(n):
        for s in range(16):
            if mx[j, s] > 1:
                extra[j] += mx[j, s] - 1


_COUNTER_COLUMNS = np.array([      # per kind: requests, sectors, bytes, L1 hits; L2 requests, sectors, hits
    [GLD_REQ, GLD_SECT, GLD_BYTES, GLD_HIT, L2_RD_REQ, L2_RD, L2_RD_HIT],
    [GST_REQ, GST_SECT, GST_BYTES, GST_HIT, L2_WR_REQ, L2_WR, L2_WR_HIT],
    [GAT_REQ, GAT_SECT, GAT_BYTES, -1, L2_AT_REQ, L2_AT, L2_AT_HIT],
    [LLD_REQ, LLD_SECT, LLD_BYTES, LLD_HIT, L2_RD_REQ, L2_RD, L2_RD_HIT],
    [LST_REQ, LST_SECT, LST_BYTES, LST_HIT, L2_WR_REQ, L2_WR, L2_WR_HIT]], dtype=np.int64)


@njit(cache=True, inline="always", _nrt=False)
def _bits(lo, hi):
    """int64 mask with bits lo..hi (0 <= lo <= hi <= 63) set."""
    n = hi - lo + 1
    if n == 64:
        return np.int64(-1)
    return ((np.int64(1) << n) - 1) << lo


@njit(cache=True, _nrt=False)
def _mark_bytes(bm, j, lo, hi):
    b = lo
    while b <= hi:
        top = min(63, (b & 63) + hi - b)
        bm[j, b >> 6] |= _bits(b & 63, top)
        b += top - (b & 63) + 1


@njit(cache=True, _nrt=False)
def _all_bytes(bm, j, lo, hi):
    b = lo
    while b <= hi:
        top = min(63, (b & 63) + hi - b)
        want = _bits(b & 63, top)
        if bm[j, b >> 6] & want != want:
            return False
        b += top - (b & 63) + 1
    return True


@njit(cache=True, inline="always", _nrt=False)
def _slot_of(lines, smask, bm, n, L, want_bytes):
    """Index of line L in the warp's list (searched from the most recent), appending it if
    new: (index, new count)."""
    for k in range(n - 1, -1, -1):
        if lines[k] == L:
            return k, n
    lines[n] = L
    smask[n] = 0
    if want_bytes:
        for q in range(bm.shape[1]):
            bm[n, q] = 0
    return n, n + 1


@njit(cache=True, inline="always", _nrt=False)
def _affine(addr, mask8, base):
    """(d, True) if the 32 lanes from `base` are all active with addresses addr[base] + l*d;
    (d, False) otherwise.  Branch-free reductions: they vectorise."""
    a0 = addr[base]
    d = addr[base + 1] - a0
    bad = 0
    for l in range(32):
        bad |= addr[base + l] - a0 - l * d
    act = 0
    for l in range(32):
        act += mask8[base + l]
    return d, bad == 0 and act == 32


@njit(cache=True, inline="always", _nrt=False)
def _affine_n(addr, mask8, base, nl):
    """_affine() of the `nl` lanes from `base`."""
    a0 = addr[base]
    d = addr[base + 1] - a0
    bad = 0
    for l in range(nl):
        bad |= addr[base + l] - a0 - l * d
    act = 0
    for l in range(nl):
        act += mask8[base + l]
    return d, bad == 0 and act == nl


@njit(cache=True, inline="always", _nrt=False)
def _halves_alike(addr, mask8, base):
    """Whether lanes 16..31 from `base` repeat lanes 0..15 (addresses and activity): a 16-wide
    block's access that does not depend on threadIdx.y."""
    bad = 0
    for l in range(16):
        bad |= (addr[base + 16 + l] - addr[base + l]) | (mask8[base + 16 + l] ^ mask8[base + l])
    return bad == 0


@njit(cache=True, inline="always", _nrt=False)
def _gather_range(a0, d, nl, size, ls, ss, lmask, lines, smask, bm, want_bytes):
    """Lines and sectors of `nl` full lanes at a0 + lane * d, |d| <= sector size (stores:
    d in {0, size}): every sector between the lowest and highest byte, lines in the order
    the lanes first touch them, appended after none (returns the count)."""
    lo = min(a0, a0 + (nl - 1) * d)
    hi = max(a0, a0 + (nl - 1) * d) + size - 1
    n = 0
    first, last, step = lo >> ls, hi >> ls, 1
    if d < 0:                                # lines in the order lanes first touch them
        first, last, step = last, first, -1
    for L in range(first, last + step, step):
        blo = max(lo, L << ls) & lmask
        bhi = min(hi, ((L + 1) << ls) - 1) & lmask
        lines[n] = L
        smask[n] = _bits(blo >> ss, bhi >> ss)
        if want_bytes:
            for q in range(bm.shape[1]):
                bm[n, q] = 0
            _mark_bytes(bm, n, blo, bhi)
        n += 1
    return n


@njit(cache=True, inline="always", _nrt=False)
def _gather_strided(a0, d, nl, size, ls, ss, lmask, lines, smask, bm, want_bytes):
    """Lines and sectors of `nl` full lanes at a0 + lane * d, d a non-zero multiple of the
    line size and no lane's bytes crossing a line: one line per lane, in lane order, each
    with the same sectors (and bytes)."""
    o = a0 & lmask
    m = _bits(o >> ss, (o + size - 1) >> ss)
    for l in range(nl):
        lines[l] = (a0 + l * d) >> ls
        smask[l] = m
        if want_bytes:
            for q in range(bm.shape[1]):
                bm[l, q] = 0
            _mark_bytes(bm, l, o, o + size - 1)
    return nl


@njit(cache=True, _nrt=False)
def gather(addr, mask, mask8, w, size, ls, ss, sb, lines, smask, bm, want_bytes):
    """Coalesce warp `w`: the distinct lines its active lanes touch, the sectors touched in
    each (smask) and, if want_bytes, the bytes (bm).  Returns (lines, active lanes).

    Lines are listed in the order the lanes first touch them.  Fast paths (what the lanes
    one at a time give, without visiting them): a full warp with addresses a0 + lane * d,
    |d| <= sector size (and, for stores, d in {0, size} so the bytes written are one range):
    every sector between the lowest and highest byte is touched; d a multiple of the line
    size, no lane crossing a line: a line per lane.  A warp whose lanes 16..31 repeat lanes
    0..15 (a 16-wide block's access not depending on threadIdx.y) is the first half's lines,
    with twice its active lanes.  Otherwise one lane at a time (_gather_lanes)."""
    lmask = (np.int64(1) << ls) - 1
    base = w * 32
    d, affine = _affine(addr, mask8, base)
    if affine:
        n = _gather_affine(addr[base], d, 32, size, ls, ss, sb, lmask, lines, smask, bm, want_bytes)
        if n >= 0:
            return n, 32
    d, affine = _affine_n(addr, mask8, base, 16)
    if _halves_alike(addr, mask8, base):
        if affine:
            n = _gather_affine(addr[base], d, 16, size, ls, ss, sb, lmask, lines, smask, bm, want_bytes)
            if n >= 0:
                return n, 32
        n, active = _gather_lanes(addr, mask, w, size, ls, ss, lines, smask, bm, want_bytes, 16)
        return n, 2 * active
    if affine and abs(d) <= sb and (not want_bytes or d == 0 or d == size):
        d2, affine2 = _affine_n(addr, mask8, base + 16, 16)
        if affine2 and abs(d2) <= sb and (not want_bytes or d2 == 0 or d2 == size):
            n = _gather_range(addr[base], d, 16, size, ls, ss, lmask, lines, smask, bm, want_bytes)
            n = _merge_range(addr[base + 16], d2, 16, size, ls, ss, lmask, lines, smask, bm, want_bytes, n)
            return n, 32
    return _gather_lanes(addr, mask, w, size, ls, ss, lines, smask, bm, want_bytes, 32)


@njit(cache=True, inline="always", _nrt=False)
def _merge_range(a0, d, nl, size, ls, ss, lmask, lines, smask, bm, want_bytes, n):
    """_gather_range() of `nl` more lanes, merged into the `n` lines listed (new lines
    appended in the order the lanes first touch them); returns the new count."""
    lo = min(a0, a0 + (nl - 1) * d)
    hi = max(a0, a0 + (nl - 1) * d) + size - 1
    first, last, step = lo >> ls, hi >> ls, 1
    if d < 0:
        first, last, step = last, first, -1
    for L in range(first, last + step, step):
        blo = max(lo, L << ls) & lmask
        bhi = min(hi, ((L + 1) << ls) - 1) & lmask
        j, n = _slot_of(lines, smask, bm, n, L, want_bytes)
        smask[j] |= _bits(blo >> ss, bhi >> ss)
        if want_bytes:
            _mark_bytes(bm, j, blo, bhi)
    return n


@njit(cache=True, inline="always", _nrt=False)
def _gather_affine(a0, d, nl, size, ls, ss, sb, lmask, lines, smask, bm, want_bytes):
    """gather() of `nl` full lanes at a0 + lane * d where a fast path applies: the lines'
    count, or -1 (none applies)."""
    if abs(d) <= sb and (not want_bytes or d == 0 or d == size):
        return _gather_range(a0, d, nl, size, ls, ss, lmask, lines, smask, bm, want_bytes)
    if d != 0 and (d & lmask) == 0 and (a0 & lmask) + size - 1 <= lmask:
        return _gather_strided(a0, d, nl, size, ls, ss, lmask, lines, smask, bm, want_bytes)
    return -1


@njit(cache=True, _nrt=False)
def _gather_lanes(addr, mask, w, size, ls, ss, lines, smask, bm, want_bytes, nl=32):
    """gather(), one lane at a time, of the first `nl` lanes (kept out of line: inlining it
    slows the fast path)."""
    n = 0
    active = 0
    last = -1
    j = 0
    cur = 0                        # sectors of line `last` not yet stored in smask[j]
    lmask = (np.int64(1) << ls) - 1
    fs = min(ss, 6)                # within one sector and one 64-bit word of the byte mask
    for l in range(nl):
        i = w * 32 + l
        if not mask[i]:
            continue
        active += 1
        a = addr[i]
        e = a + size - 1
        if (a ^ e) >> fs == 0:                   # fast path: inside one sector
            L = a >> ls
            if L != last:
                if last != -1:
                    smask[j] |= cur
                j, n = _slot_of(lines, smask, bm, n, L, want_bytes)
                last = L
                cur = 0
            o = a & lmask
            cur |= np.int64(1) << (o >> ss)
            if want_bytes:
                bm[j, o >> 6] |= ((np.int64(1) << size) - 1) << (o & 63)
            continue
        L = a >> ls
        while L <= e >> ls:                       # crosses sectors (misaligned or wide)
            if L != last:
                if last != -1:
                    smask[j] |= cur
                j, n = _slot_of(lines, smask, bm, n, L, want_bytes)
                last = L
                cur = 0
            lo = max(a, L << ls) & lmask
            hi = min(e, ((L + 1) << ls) - 1) & lmask
            cur |= _bits(lo >> ss, hi >> ss)
            if want_bytes:
                _mark_bytes(bm, j, lo, hi)
            L += 1
    if last != -1:
        smask[j] |= cur
    return n, active


@njit(cache=True, inline="always", _nrt=False)
def _full_sectors(bm, j, m, spl, sb):
    """Sectors of mask m whose bytes are all written."""
    full = 0
    for s in range(spl):
        if (m >> s) & 1:
            if sb == 32:
                ok = ((bm[j, s >> 1] >> ((s & 1) * 32)) & 0xFFFFFFFF) == 0xFFFFFFFF
            else:
                ok = _all_bytes(bm, j, s * sb, s * sb + sb - 1)
            if ok:
                full |= np.int64(1) << s
    return full


# -- pass 1: coalescing and each SM's L1 -------------------------------------------------
@njit(cache=True, inline="always", _nrt=False)
def _l1_way(l1tag, l1, row, ways, L, t):
    """The way of line L in L1 set `row`, allocated on a miss (the LRU way, emptied);
    stamped with the L1 clock t."""
    way = l1_find(l1tag, row, ways, L)
    if way < 0:
        way = l1_victim(l1, row, ways)
        l1tag[row, way] = np.uint32(L & 0xFFFFFFFF)
        l1[row, VALID, way] = 0
        l1[row, WRITTEN, way] = 0
        l1[row, FILLT, way] = 0
    l1[row, STAMP, way] = t
    return way


@njit(cache=True, inline="always", _nrt=False)
def _l1_load(l1, row, way, m, ev):
    """Load sectors m of the line in (row, way): (hits, hits on sectors event `ev` is still
    filling, the missed sectors).  The missed sectors are filled, by event ev."""
    h = m & l1[row, VALID, way]
    pend = 0
    if l1[row, FILLT, way] == ev:
        pend = popcount(h & l1[row, FILLM, way])
    m &= ~h
    if m != 0:
        l1[row, VALID, way] |= m
        if l1[row, FILLT, way] != ev:
            l1[row, FILLT, way] = ev
            l1[row, FILLM, way] = 0
        l1[row, FILLM, way] |= m
    return popcount(h), pend, m


@njit(cache=True, inline="always", _nrt=False)
def _l1_store(l1, row, way, m, full):
    """Write sectors m through the line in (row, way), `full` of them completely: returns the
    hits (sectors valid or written before).  Completely written sectors become valid."""
    hits = popcount(m & (l1[row, VALID, way] | l1[row, WRITTEN, way]))
    l1[row, VALID, way] |= full
    l1[row, WRITTEN, way] |= m
    return hits


@njit(cache=True, inline="always", _nrt=False)
def _l1_invalidate(l1tag, l1, row, ways, L, m):
    """An atomic on sectors m of line L: they run in the L2, so the L1 drops its copies."""
    way = l1_find(l1tag, row, ways, L)
    if way >= 0:
        l1[row, VALID, way] &= ~m
        l1[row, WRITTEN, way] &= ~m


@njit(cache=True, inline="always", _nrt=False)
def _enqueue(buf, pos, L, m, full, ex, bm, j, store):
    """Queue a request for the L2 in buf[pos]: line, sectors, fully written sectors, extra
    atomic passes and, for a store, the bytes it writes (bm[j])."""
    buf[pos, 0] = L
    buf[pos, 1] = m
    buf[pos, 2] = full
    buf[pos, 3] = ex
    if store:
        for q in range(bm.shape[1]):
            buf[pos, 4 + q] = bm[j, q]


@njit(cache=True, _nrt=False)
def _l1_pass(addr, mask, mask8, size, kind, sm_order, warp_sm, l1tag, l1, prm, clk, scratch):
    """Pass 1 of global_event, SM by SM (`sm_order`): coalesce each warp and run its lines
    through its SM's L1, queueing what goes on to the L2 per warp (scratch's buf, from
    wstart[w], wcount[w] entries).  Returns (requests, sectors, bytes asked for, L1 hits,
    L1 hits in flight); advances the L1 clock clk[0]."""
    ls, ss, spl, sb = prm[P_LINE_SHIFT], prm[P_SECTOR_SHIFT], prm[P_SPL], prm[P_SECTOR_BYTES]
    sets1, ways1 = prm[P_SETS1], prm[P_WAYS1]
    inv1 = 1.0 / sets1
    lines, smask, bm, buf, wstart, wcount, da, dc, mx, extra, hint = scratch
    for j in range(hint.shape[0]):                      # hints hold within one event
        hint[j, 0] = -1
    load = kind == LD or kind == LOCAL_LD
    store = kind == ST or kind == LOCAL_ST
    atom = kind == ATOM
    t = clk[0]
    ev1 = t + 1                                         # this event's number in L1 stamps
    req = sect = nbytes = l1hit = l1pend = 0
    pos = 0
    for oi in range(sm_order.shape[0]):
        w = sm_order[oi]
        wstart[w] = pos
        n, active = gather(addr, mask, mask8, w, size, ls, ss, sb, lines, smask, bm, store)
        if active == 0:
            wcount[w] = 0
            continue
        if atom:
            _atomic_extra(addr, mask, w, ls, ss, lines, n, extra, da, dc, mx)
        req += 1
        nbytes += active * size
        base = warp_sm[w] * sets1
        for j in range(n):
            L, m = lines[j], smask[j]
            ex = extra[j] if atom else 0
            sect += popcount(m) + ex
            # hint[j]: (line, SM's first row, row, way) of the j-th line of the last warp: warps
            # of a block often touch the same lines (its row and way are then known: a way
            # whose tag is the line's is the one l1_find finds, tags being unique in a row)
            same = hint[j, 0] == L and hint[j, 1] == base
            row = hint[j, 2] if same else base + set_index(L, sets1, inv1)
            full = 0
            if atom:
                _l1_invalidate(l1tag, l1, row, ways1, L, m)
                hint[j, 0], hint[j, 1], hint[j, 2], hint[j, 3] = L, base, row, -1
            else:
                t += 1
                key = np.uint32(L & 0xFFFFFFFF)
                hw = hint[j, 3]
                if same and hw >= 0 and key != EMPTY32 and l1tag[row, hw] == key:
                    way = hw
                    l1[row, STAMP, way] = t
                else:
                    way = _l1_way(l1tag, l1, row, ways1, L, t)
                    hint[j, 0], hint[j, 1], hint[j, 2], hint[j, 3] = L, base, row, way
                if load:
                    h, pd, m = _l1_load(l1, row, way, m, ev1)
                    l1hit += h
                    l1pend += pd
                    if m == 0:
                        continue
                else:       # local memory is the thread's own: what it stores is what it reads
                    full = m if kind == LOCAL_ST else _full_sectors(bm, j, m, spl, sb)
                    l1hit += _l1_store(l1, row, way, m, full)
            _enqueue(buf, pos, L, m, full, ex, bm, j, store)
            pos += 1
        wcount[w] = pos - wstart[w]
    clk[0] = t
    return req, sect, nbytes, l1hit, l1pend


# -- pass 2: the L2 -------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def _l2_pass(order, op, slot, cnt, l2, l2r, prm, clk, scratch):
    """Pass 2 of global_event: the queued requests through the L2, warps in the schedule's
    interleaved order.  op: 0 read, 1 write, 2 atomic.  Returns (requests, sectors, hits,
    DRAM bytes read, hits in flight, DRAM busy bytes); advances the L2 clock clk[1]."""
    sets2, ways2, gran = prm[P_SETS2], prm[P_WAYS2], prm[P_GRAN]
    spl, sb, dcap = prm[P_SPL], prm[P_SECTOR_BYTES], prm[P_DIRTY]
    inv2 = 1.0 / sets2
    buf, wstart, wcount = scratch[3], scratch[4], scratch[5]
    t2 = clk[1]
    ev2 = t2 + 1
    l2req = l2sect = l2hit = dram = l2pend = busy = 0
    for oi in range(order.shape[0]):
        w = order[oi]
        for k in range(wstart[w], wstart[w] + wcount[w]):
            m = buf[k, 1]
            t2 += 1
            h2, d, pd, bz = l2_access(l2, l2r, buf[k, 0], m, buf, k, op, slot, t2, sets2, inv2, ways2,
                                      gran, spl, sb, cnt, ev2, dcap)
            l2pend += pd
            busy += bz
            l2req += 1
            l2sect += popcount(m) + buf[k, 3]
            l2hit += h2 + buf[k, 3]
            dram += d
    clk[1] = t2
    return l2req, l2sect, l2hit, dram, l2pend, busy


@njit(cache=True, _nrt=False)
def global_event(addr, mask, mask8, size, kind, order, sm_order, warp_sm, slot, cnt, l1tag, l1,
                 l2, l2r, prm, clk, scratch):
    """Run one warp-level global/local memory instruction for every warp of a chunk and add
    its counts to row `slot` of `cnt`.  Returns the number of sectors looked up in L1.

    mask8 is `mask` viewed as uint8 and `scratch` the work arrays of new_scratch(): numba
    compiles this without reference counting (_nrt=False), which would cost more than the
    work, so nothing here may allocate.

    Pass 1 (_l1_pass) goes SM by SM (`sm_order`): coalescing and each SM's L1, which sees its
    own warps in schedule order; what goes on to the L2 is queued per warp (line, sectors,
    fully written sectors, extra atomic passes, bytes written).  Pass 2 (_l2_pass) replays
    the queues in the schedule's interleaved order (`order`) through the L2.  The L1s are
    private, so this gives the same result as one pass in `order`, with one L1 at a time in
    the host's caches.

    L1 policy: loads allocate on a miss and fill the missing sectors; stores write through
    to the L2, allocate the line too (the H200 counts repeated partial stores to a sector
    as L1 hits) and make fully written sectors valid; atomics bypass the L1 and invalidate
    what they touch.

    Hits on data in flight: a load sector that hits an L1 line whose sectors another warp's
    miss in this same event brought in, or an L2 line this event is fetching from DRAM, is
    counted as a hit (as Nsight does) and also in L1_PEND / L2_PEND, which the timing model
    reads: such a hit waits for the miss it merged with."""
    req, sect, nbytes, l1hit, l1pend = _l1_pass(addr, mask, mask8, size, kind, sm_order, warp_sm,
                                                l1tag, l1, prm, clk, scratch)
    op = 0 if (kind == LD or kind == LOCAL_LD) else (1 if (kind == ST or kind == LOCAL_ST) else 2)
    l2req, l2sect, l2hit, dram, l2pend, busy = _l2_pass(order, op, slot, cnt, l2, l2r, prm, clk, scratch)
    c = _COUNTER_COLUMNS[kind]
    cnt[slot, c[0]] += req
    cnt[slot, c[1]] += sect
    cnt[slot, c[2]] += nbytes
    if c[3] >= 0:
        cnt[slot, c[3]] += l1hit
    cnt[slot, c[4]] += l2req
    cnt[slot, c[5]] += l2sect
    cnt[slot, c[6]] += l2hit
    cnt[slot, DRAM_RD] += dram
    cnt[slot, L1_PEND] += l1pend
    cnt[slot, L2_PEND] += l2pend
    cnt[slot, DRAM_RD_BUSY] += busy
    return sect
