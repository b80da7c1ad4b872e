"""Per-warp facts of one memory instruction, for the sampled warps only (numpy, no lane loops).

    global/local  sectors and 128-byte lines touched (one L1 wavefront per line)
    global atom   also `serial`: the atomic operations queued at the hottest address this warp
                  touches while the whole wave runs (lanes of the wave at that address,
                  shared out over the sampled SM's lanes there), and `unit_load`: per L2
                  atomic unit (`unit_bytes` of contiguous addresses) the warp touches,
                  (unit, its passes there x the wave's passes at the unit per pass of the
                  sampled SM's) -- the unit serves them all; a warp's request to a line
                  takes as many passes as the most lanes it has on one address there
    shared        wavefronts (the bank holding most distinct words; atomics: the most lanes
                  on one word, since atomic updates of one word serialise)
    const         distinct addresses (the constant cache serves one per pass)

The cache outcome (L1 hit, L2 hit, DRAM) is not decided here: it comes per instruction from
the memory model (see `memstats.py`).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

WARP = 32


class MemFacts(NamedTuple):
    """One warp's request of a global or local memory instruction (sim.SM.memory reads it)."""
    sectors: int                  # 32-byte sectors touched
    lines: int                    # 128-byte lines touched (one L1 wavefront each)
    serial: float = 0.0           # atomics: lane operations queued at the hottest address
    hot: int = -1                 # atomics: the hottest address, or -1 (none known)
    instance: object = None       # the executed instruction instance (trace entry) the
                                  # group's warps share: hits on data in flight wait for its first
    unit_passes: tuple = ()       # atomics: ((L2 atomic unit, passes there), ...)
    l1_wavefronts: int = 0        # L1 data-path cycles (l1_cycles); 0: one per line


class OnChipFacts(NamedTuple):
    """One warp's request of a shared-memory or constant-cache instruction."""
    wavefronts: int               # passes through the L1 / shared data path


NO_FACTS = MemFacts(sectors=4, lines=1)     # a global request nothing was recorded for


def _distinct(v, mk):
    """Distinct values per row of v (W, 32) among lanes mk; rows sorted in place."""
    w = np.where(mk, v, -1)
    w.sort(axis=1)
    new = np.ones(w.shape, dtype=bool)
    new[:, 1:] = w[:, 1:] != w[:, :-1]
    new &= w >= 0
    return w, new


def distinct_count(v, mk):
    """Distinct non-negative values per row of v (W, 32) among lanes mk."""
    if _compiled_rows(v, mk):
        return _distinct_count_rows(v, mk)
    return _distinct_count_numpy(v, mk)


def _distinct_count_numpy(v, mk):
    _, new = _distinct(v, mk)
    return new.sum(axis=1)


def _compiled_rows(v, mk):
    """Whether the compiled per-row counts take (v, mk): int64 values, bool lanes, 2-d alike
    (the sampled warps' rows; anything else goes the numpy way, the same answer)."""
    return (isinstance(v, np.ndarray) and isinstance(mk, np.ndarray) and v.dtype == np.int64
            and mk.dtype == np.bool_ and v.ndim == 2 and v.shape == mk.shape)


def _power_of_two(n):
    return isinstance(n, int) and n > 0 and n & (n - 1) == 0


def _lane_arrays(addr, m, lanes):
    """Whether a compiled per-row count can read (addr, mask) per lane through `lanes`."""
    return (isinstance(addr, np.ndarray) and isinstance(m, np.ndarray) and isinstance(lanes, np.ndarray)
            and addr.ndim == 1 and m.ndim == 1 and lanes.ndim == 2 and addr.dtype == np.int64
            and m.dtype == np.bool_ and lanes.dtype == np.int64 and len(addr) == len(m))


@njit(cache=True)
def _distinct_count_rows(v, mk):
    """distinct_count, compiled: per row, a list of the values seen (searched from the most
    recent: a coalesced access has a few, in order)."""
    rows, cols = v.shape
    out = np.zeros(rows, np.int64)
    seen = np.empty(cols, np.int64)
    for r in range(rows):
        n = 0
        for l in range(cols):
            x = v[r, l]
            if not mk[r, l] or x < 0:
                continue
            k = n - 1
            while k >= 0 and seen[k] != x:
                k -= 1
            if k < 0:
                seen[n] = x
                n += 1
        out[r] = n
    return out


def max_run(v, mk):
    """Per row: the most active lanes sharing one value, and that value."""
    w, new = _distinct(v, mk)
    rows, cols = w.shape
    run = np.cumsum(new, axis=1)
    valid = w >= 0
    key = np.arange(rows)[:, None] * (cols + 1) + run
    cnt = np.bincount(key[valid], minlength=rows * (cols + 1)).reshape(rows, cols + 1)
    best = cnt.argmax(axis=1)
    hot = np.full(rows, -1, dtype=np.int64)
    for r in range(rows):
        j = np.nonzero((run[r] == best[r]) & valid[r])[0]
        if len(j):
            hot[r] = w[r, j[0]]
    return cnt.max(axis=1), hot


def bank_wavefronts(addr, mk, size, banks=32, bank_bytes=4):
    """Wavefronts per warp for a shared-memory access (distinct words per bank, max)."""
    ideal = max(1, (size * WARP) // (banks * bank_bytes))      # 8-byte: 2, 16-byte: 4
    if _compiled_rows(addr, mk) and _power_of_two(banks) and _power_of_two(bank_bytes):
        return _bank_wavefronts_rows(addr.ravel(), mk.ravel(), np.arange(addr.size).reshape(addr.shape),
                                     bank_bytes.bit_length() - 1, banks, ideal)[0]
    return _bank_wavefronts_numpy(addr, mk, bank_bytes, banks, ideal)


def _bank_wavefronts_numpy(addr, mk, bank_bytes, banks, ideal):
    word = addr // bank_bytes
    w, new = _distinct(word, mk)
    rows = w.shape[0]
    bank = np.where(w >= 0, w % banks, 0)
    r = np.broadcast_to(np.arange(rows)[:, None] * banks, w.shape)
    cnt = np.bincount((r + bank)[new], minlength=rows * banks).reshape(rows, banks)
    wf = cnt.max(axis=1)
    return np.maximum(wf, np.where(mk.any(axis=1), ideal, 0))


@njit(cache=True)
def _bank_wavefronts_rows(addr, mk, lanes, bank_shift, banks, ideal):
    """(bank_wavefronts, active lanes) per row of `lanes` (indices into the 1-d addr and mk),
    compiled: per row, the distinct words of each bank (a word is compared with its bank's
    words only: one each without conflicts), the most in a bank, and at least `ideal` where a
    lane is active.  Banks of 2**bank_shift bytes, `banks` a power of two."""
    rows, cols = lanes.shape
    out = np.zeros(rows, np.int64)
    act = np.zeros(rows, np.int64)
    words = np.empty((banks, cols), np.int64)
    cnt = np.zeros(banks, np.int64)
    for r in range(rows):
        cnt[:] = 0
        n = 0
        for l in range(cols):
            i = lanes[r, l]
            if not mk[i]:
                continue
            n += 1
            w = addr[i] >> bank_shift              # floor division, as numpy's
            if w < 0:
                continue
            b = w & (banks - 1)
            k = cnt[b]
            j = k - 1
            while j >= 0 and words[b, j] != w:
                j -= 1
            if j < 0:
                words[b, k] = w
                cnt[b] = k + 1
        wf = 0
        for b in range(banks):
            if cnt[b] > wf:
                wf = cnt[b]
        out[r] = max(wf, ideal) if n else wf
        act[r] = n
    return out, act


def l1_cycles(a, mk, sectors, lines, line_cycles=1.0, tag_banks=1):
    """Cycles a global request holds the L1 data path, per warp: its data (128 bytes a cycle:
    sectors / 4), its tag look-ups (`line_cycles` a line), and the lines of its busiest tag bank
    (line index mod `tag_banks`), one a cycle -- the most of the three ([MB] l1_lines: 32 lines
    3000 B apart 12.6 cycles, 1024 B apart 32).  line_cycles = tag_banks = 1: one per line."""
    base = np.maximum(-(-sectors // 4), np.rint(lines * line_cycles).astype(np.int64))
    if tag_banks <= 1:
        return np.maximum(base, lines)
    w, new = _distinct(a // 128, mk)
    rows = w.shape[0]
    cnt = np.zeros((rows, tag_banks), dtype=np.int64)
    r = np.broadcast_to(np.arange(rows)[:, None], w.shape)
    np.add.at(cnt, (r[new], (w[new] % tag_banks)), 1)
    return np.maximum(base, cnt.max(axis=1))


def memory_info(ev, lanes, act, wave_fraction=1.0, unit_bytes=512, line_cycles=1.0, tag_banks=1):
    """dict of per-warp arrays (one row per sampled warp in `lanes`)."""
    if ev.space == "shared" and ev.kind != "atom" and _lane_arrays(ev.addr, ev.mask.arr, lanes):
        # compiled, without gathering the rows first: bank_wavefronts' rule (which gives
        # _uniform_info's answer for one address)
        wf, active = _bank_wavefronts_rows(ev.addr, ev.mask.arr, lanes, 2, 32, max(1, (ev.size * WARP) // (32 * 4)))
        return {"wavefronts": wf, "active": active}
    mk = ev.mask.arr[lanes]
    active = mk.sum(axis=1)
    if not np.ndim(ev.addr) and ev.space != "local" and ev.kind != "atom":
        return _uniform_info(ev, active, line_cycles, tag_banks)
    a = np.asarray(ev.addr)[lanes] if np.ndim(ev.addr) else np.full(lanes.shape, int(ev.addr))
    if ev.space != "local" and ev.kind != "atom" and a.size and (a == a.flat[0]).all():
        return _uniform_info(ev, active, line_cycles, tag_banks)    # one address for all (an array of it)
    if ev.space == "shared":
        if ev.kind == "atom":
            wf, _ = max_run(a, mk)
        else:
            wf = bank_wavefronts(a, mk, ev.size)
        return {"wavefronts": wf.astype(np.int64), "active": active}
    if ev.space == "const":
        return {"wavefronts": distinct_count(a, mk), "active": active}
    if ev.space == "local":
        nbytes = active * max(4, ev.size)
        sect = -(-nbytes // 32)
        return {"sectors": sect, "lines": -(-nbytes // 128), "active": active}
    sectors = distinct_count(a // 32, mk)
    lines = distinct_count(a // 128, mk)
    info = {"sectors": sectors, "lines": lines, "active": active}
    if line_cycles != 1.0 or tag_banks > 1:
        info["l1"] = l1_cycles(a, mk, sectors, lines, line_cycles, tag_banks)
    if ev.kind == "atom":
        info["serial"], info["hot"] = _contention(ev, a, mk, wave_fraction)
        info["unit_load"] = _unit_contention(ev, a, mk, wave_fraction, unit_bytes)
    return info


def _uniform_info(ev, active, line_cycles=1.0, tag_banks=1):
    """memory_info of an access at one address for every lane (a uniform address: a scalar,
    or an array of one value), not an atomic: one word, one sector, one line per warp that
    has an active lane (what the general rules give for 32 equal addresses; l1_cycles' tag
    bank count is that one line)."""
    one = (active > 0).astype(np.int64)
    if ev.space == "shared":
        ideal = max(1, (ev.size * WARP) // (32 * 4))          # bank_wavefronts' floor
        return {"wavefronts": one * ideal, "active": active}
    if ev.space == "const":
        return {"wavefronts": one, "active": active}
    info = {"sectors": one, "lines": one.copy(), "active": active}
    if line_cycles != 1.0 or tag_banks > 1:
        info["l1"] = l1_cycles(None, None, one, one, line_cycles, 1)
    return info


def line_passes(addr, mk, line_bytes=128, rows=None):
    """(row, line, passes) for every line each row's active lanes touch: passes = the most
    lanes of the row on one address in that line.  addr, mk: (rows, 32), or 1-d with `rows`
    giving each lane's row (warp)."""
    if rows is None:
        rows = np.broadcast_to(np.arange(addr.shape[0])[:, None], addr.shape)
    rows = np.asarray(rows)[mk].astype(np.int64)
    av = np.asarray(addr)[mk].astype(np.int64)
    if av.size == 0:
        return rows, av, av
    ua, ainv = np.unique(av, return_inverse=True)
    key = rows * len(ua) + ainv.ravel()            # sorted: by row, then address
    k, cnt = np.unique(key, return_counts=True)
    r, line = k // len(ua), ua[k % len(ua)] // line_bytes
    new = np.ones(len(k), dtype=bool)               # (row, line) groups are contiguous
    new[1:] = (r[1:] != r[:-1]) | (line[1:] != line[:-1])
    start = np.nonzero(new)[0]
    return r[start], line[start], np.maximum.reduceat(cnt, start)


def _unit_contention(ev, a, mk, wave_fraction, unit_bytes):
    """Per sampled warp: ((unit, passes), ...): for each L2 atomic unit the warp's lanes use,
    its passes there times the wave's passes at the unit per pass of the sampled warps there
    (>= 1) -- the unit's time this warp's request stands for."""
    m = ev.mask.arr
    alla = np.broadcast_to(np.asarray(ev.addr), m.shape)
    per = max(1, unit_bytes // 128)
    c = ev.chunk
    _, wl, wp = line_passes(alla, m, rows=c.lane_block * c.wpb + c.lane_tid // 32)
    u, inv = np.unique(wl // per, return_inverse=True)
    wave_units = dict(zip(u.tolist(), (np.bincount(inv.ravel(), weights=wp) * wave_fraction).tolist()))
    rr, sl, sp = line_passes(a, mk)
    su = sl // per
    mine = {}
    for x, p in zip(su.tolist(), sp.tolist()):
        mine[x] = mine.get(x, 0) + p
    share = {x: max(1.0, wave_units.get(x, p) / p) for x, p in mine.items()}
    out = [{} for _ in range(a.shape[0])]
    for r, x, p in zip(rr.tolist(), su.tolist(), sp.tolist()):
        out[r][x] = out[r].get(x, 0.0) + p * share[x]
    return [tuple(d.items()) for d in out]


def _contention(ev, a, mk, wave_fraction):
    """Atomic operations at each warp's hottest address during one wave, per sampled lane."""
    lanes_at, hot = max_run(a, mk)
    m = ev.mask.arr
    alla = np.broadcast_to(np.asarray(ev.addr), m.shape)[m]
    u, c = np.unique(alla, return_counts=True)
    su, sc = np.unique(a[mk], return_counts=True)
    out = np.zeros(len(hot), dtype=np.float64)
    for r, h in enumerate(hot):
        if h < 0:
            continue
        wave = c[np.searchsorted(u, h)] * wave_fraction
        mine = sc[np.searchsorted(su, h)]
        out[r] = lanes_at[r] * max(1.0, wave / mine)
    return out, hot


__all__ = ["MemFacts", "OnChipFacts", "NO_FACTS", "memory_info", "bank_wavefronts", "distinct_count", "max_run"]
