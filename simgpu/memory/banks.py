"""Shared-memory banks and the constant cache, compiled.

Shared memory has `banks` banks of `bank_bytes` bytes (32 x 4 B): word k lives in bank
k % 32.  One wavefront serves at most one distinct word per bank; lanes reading the same word
share it (broadcast), for loads and for stores alike.  So a warp instruction takes, per
group of lanes, as many wavefronts as the bank holding the most distinct words.  Accesses of
4 bytes or less are served for the whole warp at once; 8-byte accesses per half-warp and
16-byte accesses per quarter-warp (each group moves at most 128 bytes), so their ideal is 2
and 4 wavefronts.  Nsight Compute's bank-conflict counter is wavefronts - ideal wavefronts,
the ideal being one wavefront per group that has an active lane.

The constant cache serves one address per cycle: a warp whose active lanes read k distinct
addresses is served in k passes.
"""
from __future__ import annotations

import numpy as np
from numba import njit


def new_scratch(banks):
    """Work arrays for shared_event (allocated outside numba)."""
    return np.zeros((banks, 128), np.int64), np.zeros(banks, np.int64), np.zeros(banks, np.int64)


@njit(cache=True, _nrt=False)
def _group_wavefronts(addr, mask, base, group, size, bank_shift, bank_mask, seen, cnt):
    """Wavefronts for lanes base .. base+group-1: the largest number of distinct words any
    bank must deliver."""
    cnt[:] = 0
    wf = 0
    for i in range(base, base + group):
        if not mask[i]:
            continue
        a = addr[i]
        for word in range(a >> bank_shift, ((a + size - 1) >> bank_shift) + 1):
            b = word & bank_mask
            c = cnt[b]
            dup = False
            for k in range(c):
                if seen[b, k] == word:
                    dup = True
                    break
            if not dup:
                seen[b, c] = word
                cnt[b] = c + 1
                if c + 1 > wf:
                    wf = c + 1
    return wf


@njit(cache=True, _nrt=False)
def blocks_repeat(addr, mask8, lanes_per_block):
    """True when every block has the same lane addresses and mask as the first block (shared
    addresses usually depend on the thread index only).  Plain reductions without an early
    exit, which numba vectorises."""
    n = addr.shape[0]
    diff = 0
    for i in range(n - lanes_per_block):
        diff |= addr[i + lanes_per_block] ^ addr[i]
    mdiff = 0
    for i in range(n - lanes_per_block):
        mdiff |= mask8[i + lanes_per_block] ^ mask8[i]
    return diff == 0 and mdiff == 0


@njit(cache=True, inline="always", _nrt=False)
def _bank_conflict_scan(addr, mask, base, group, size, bank_shift, bank_mask, first):
    """The fast path for lanes base .. base+group-1: (active lanes, conflict), conflict being
    whether some bank must deliver a second distinct word (then _group_wavefronts counts the
    group exactly; else it takes one wavefront).  first[b]: the word bank b delivers."""
    g_active = 0
    used = np.int64(0)
    conflict = False
    for i in range(base, base + group):
        if not mask[i]:
            continue
        g_active += 1
        if conflict:
            continue
        a = addr[i]
        word = a >> bank_shift
        last = (a + size - 1) >> bank_shift
        while word <= last:
            b = word & bank_mask
            bit = np.int64(1) << b
            if used & bit == 0:
                used |= bit
                first[b] = word
            elif first[b] != word:
                conflict = True
            word += 1
    return g_active, conflict


@njit(cache=True, _nrt=False)
def shared_event(addr, mask, mask8, size, n_warps, bank_shift, bank_mask, warps_per_block, scratch, alike=-1):
    """(requests, wavefronts, ideal wavefronts, bytes) for one shared-memory instruction
    executed by `n_warps` warps (lanes w*32 .. w*32+31 of `addr`/`mask`).  Banks are
    2**bank_shift bytes wide and there are bank_mask + 1 (at most 64) of them.  When all
    blocks repeat the first block's pattern, the first block is counted and multiplied.
    mask8 is `mask` viewed as uint8, scratch = new_scratch(banks): compiled without
    reference counting, nothing here allocates.  alike: whether the blocks repeat the first
    block's pattern where the caller knows it (1 yes, 0 no; -1: unknown, compared here).

    Fast path per group: while every bank sees at most one distinct word, one wavefront;
    at the first bank holding a second word, the group is counted exactly by
    _group_wavefronts."""
    times = 1
    seen, first, cnt = scratch
    if n_warps > warps_per_block and (alike == 1 or alike < 0 and blocks_repeat(addr, mask8, warps_per_block * 32)):
        times = n_warps // warps_per_block
        n_warps = warps_per_block
    banks = bank_mask + 1
    group = 32
    if size > (1 << bank_shift):
        group = max(1, (banks << bank_shift) // size)
    requests = wavefronts = ideal = nbytes = 0
    for w in range(n_warps):
        active = 0
        for g0 in range(0, 32, group):
            base = w * 32 + g0
            g_active, conflict = _bank_conflict_scan(addr, mask, base, group, size, bank_shift, bank_mask, first)
            if g_active == 0:
                continue
            if conflict:
                wavefronts += _group_wavefronts(addr, mask, base, group, size, bank_shift,
                                                bank_mask, seen, cnt)
            else:
                wavefronts += 1
            ideal += 1
            active += g_active
        if active:
            requests += 1
            nbytes += active * size
    return requests * times, wavefronts * times, ideal * times, nbytes * times


@njit(cache=True, _nrt=False)
def const_event(addr, mask, size, n_warps, seen):
    """(requests, distinct addresses summed over warps, bytes) for one constant load;
    seen: 32 int64 of scratch."""
    requests = passes = nbytes = 0
    for w in range(n_warps):
        n = 0
        active = 0
        for l in range(32):
            i = w * 32 + l
            if not mask[i]:
                continue
            active += 1
            a = addr[i]
            dup = False
            for k in range(n):
                if seen[k] == a:
                    dup = True
                    break
            if not dup:
                seen[n] = a
                n += 1
        if active:
            requests += 1
            passes += n
            nbytes += active * size
    return requests, passes, nbytes
