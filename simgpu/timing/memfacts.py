"""Per-warp facts of one memory instruction, for the sampled warps only (numpy, no lane loops).

    global/local  sectors and 128-byte lines touched (one L1 wavefront per line)
    global atom   also `serial`: the atomic operations queued at the hottest address this warp
                  touches while the whole wave runs (lanes of the wave at that address,
                  shared out over the sampled SM's lanes there)
    shared        wavefronts (the bank holding most distinct words; atomics: the most lanes
                  on one word, since atomic updates of one word serialise)
    const         distinct addresses (the constant cache serves one per pass)

The cache outcome (L1 hit, L2 hit, DRAM) is not decided here: it comes per instruction from
the memory model (see `memstats.py`).
"""
from __future__ import annotations

import numpy as np

WARP = 32


def _distinct(v, mk):
    """Distinct values per row of v (W, 32) among lanes mk; rows sorted in place."""
    w = np.where(mk, v, -1)
    w.sort(axis=1)
    new = np.ones(w.shape, dtype=bool)
    new[:, 1:] = w[:, 1:] != w[:, :-1]
    new &= w >= 0
    return w, new


def distinct_count(v, mk):
    _, new = _distinct(v, mk)
    return new.sum(axis=1)


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
    word = addr // bank_bytes
    w, new = _distinct(word, mk)
    rows = w.shape[0]
    bank = np.where(w >= 0, w % banks, 0)
    cnt = np.zeros((rows, banks), dtype=np.int64)
    r = np.broadcast_to(np.arange(rows)[:, None], w.shape)
    np.add.at(cnt, (r[new], bank[new]), 1)
    wf = cnt.max(axis=1)
    ideal = max(1, (size * WARP) // (banks * bank_bytes))      # 8-byte: 2, 16-byte: 4
    return np.maximum(wf, np.where(mk.any(axis=1), ideal, 0))


def memory_info(ev, lanes, act, wave_fraction=1.0):
    """dict of per-warp arrays (one row per sampled warp in `lanes`)."""
    mk = ev.mask.arr[lanes]
    a = np.asarray(ev.addr)[lanes] if np.ndim(ev.addr) else np.full(lanes.shape, int(ev.addr))
    active = mk.sum(axis=1)
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
    if ev.kind == "atom":
        info["serial"], info["hot"] = _contention(ev, a, mk, wave_fraction)
    return info


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


__all__ = ["memory_info", "bank_wavefronts", "distinct_count", "max_run"]
