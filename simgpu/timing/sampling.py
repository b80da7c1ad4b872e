"""Which blocks are simulated, and how their time is extrapolated to the whole launch.

Blocks go to SMs as the memory model's schedule puts them (docs/memory.md): wave w holds
blocks w*W .. w*W+W-1 (W = blocks_per_sm x sm_count) and block q of a wave goes to SM
q % sm_count.  Where every block does the same work SM 0 is the busiest SM (it gets a block of
the partial last wave first), so the kernel ends when SM 0 ends; the model simulates SM 0 with
its share of the L2 and DRAM bandwidth (1 / the number of SMs busy at the time).  Where blocks
differ in work (a causal attention's query tiles, a triangular loop bound) and the grid is at
most one wave (every block resident from the start), the kernel ends with the SM of the longest
blocks: the recorder also keeps the blocks of a few other SMs
(`candidate_sms`: the grid's corners, its last block of the first wave, a few spread over the
wave) and TimingModel.predict simulates the one whose warps issued the most, if more than SM
0's, and keeps whichever SM takes longer.  The SM simulated is the prediction's
(``TimingResult.sm``, "simulated SM k" in the report).

Sampled groups of blocks (traces recorded by `trace.TraceRecorder`):
    main   one wave of SM 0's blocks: its blocks of the first wave (of the whole grid if it is
           under one wave); with 4 or more full waves, slot s's block of the sampled full wave
           of the stratum holding its share of the waves (`stratum_waves`: the full waves cut
           into k runs, the first wave of each sampled; `slot_stratum`)
    tail   SM 0's blocks of the partial last wave, if the grid has one after full waves
    main@SMk   candidate SM k's blocks (`sm_blocks`; grids of at most one wave)
With sample=True only the chunks holding SM 0's blocks run: a candidate whose blocks are in
other chunks issues nothing and is never chosen (a grid that runs as one chunk is timed as
with sample=False).  Grids of more than one wave record no candidates: the block scheduler
gives each freed slot the next block, so a wave's imbalance between SMs does not persist, and
SM 0's main blocks stand for every full wave.  Work that varies between waves (Mandelbrot's
image rows, a stencil's boundary planes) is seen through the strata: the main wave mixes the
sampled waves' blocks, and a sampled launch's counts are scaled per stratum (`stratum_weights`:
each sampled full wave stands for its run of full waves, the partial last wave for itself).

Extrapolation (`combine_waves`, `combine_loops`):
    waves  full waves are alike: simulate q1 and q2 full waves and extrapolate linearly,
           T(F) = T(q2) + (F - q2) (T(q2) - T(q1));  the partial wave adds
           T(q2 + tail) - T(q2).  Up to `exact_waves` full waves are simulated as they are.
    loops  a loop instance longer than `max_iterations` iterations is simulated with K1 and
           K2 iterations; T = T(K1) + sum over loops (T(K2 for that loop) - T(K1)) (N - K1)/(K2 - K1).
The error these add against full detail is measured by tests/test_timing_sampling.py and
benchmarks/bench_timing.py, and reported in docs/timing.md.
"""
from __future__ import annotations

from dataclasses import dataclass

CANDIDATE_SPREAD = 4     # candidate SMs spread evenly over the first wave (besides the grid's corners)
STRATA = 4               # at most this many full waves sampled (strata of the full waves, below)


@dataclass(frozen=True)
class WavePlan:
    n_blocks: int
    sm_count: int
    blocks_per_sm: int
    full_waves: int
    tail_blocks_total: int        # blocks of the partial last wave (whole GPU)
    main_blocks: tuple            # SM 0's blocks of the first wave
    tail_blocks: tuple            # SM 0's blocks of the partial last wave
    main_active_sms: int
    tail_active_sms: int
    strata: tuple = ()            # (first block, end block) of each stratum: runs of full waves, the tail
    runs: tuple = ()              # (first block, blocks) a sampled launch executes (`sample_runs`)

    @property
    def sampled_waves(self):
        """The full waves whose blocks are sampled (the first of each full-wave stratum)."""
        W = self.wave_size
        return tuple(lo // W for lo, _ in self.strata if lo < self.full_waves * W)

    @property
    def wave_size(self):
        return self.blocks_per_sm * self.sm_count

    @property
    def waves(self):
        return self.n_blocks / self.wave_size


def plan_waves(n_blocks, blocks_per_sm, sm_count) -> WavePlan:
    """The sampled blocks of a launch.

    >>> p = plan_waves(1061, 8, 132)
    >>> p.full_waves, p.tail_blocks_total, p.main_blocks[:3], p.tail_blocks, p.tail_active_sms
    (1, 5, (0, 132, 264), (1056,), 5)
    >>> plan_waves(16, 8, 132).main_blocks, plan_waves(16, 8, 132).main_active_sms
    ((0,), 16)
    """
    W = blocks_per_sm * sm_count
    full, r = divmod(n_blocks, W)
    if full == 0:
        return WavePlan(n_blocks, sm_count, blocks_per_sm, 0, r, tuple(range(0, r, sm_count)), (),
                        min(sm_count, r), 0, runs=((0, n_blocks),))
    waves = stratum_waves(full, blocks_per_sm)
    slots = [slot_stratum(waves, full, blocks_per_sm, slot) for slot in range(blocks_per_sm)]
    main = tuple(waves[j] * W + slot * sm_count for slot, j in enumerate(slots))
    tail = tuple(full * W + q for q in range(0, r, sm_count))
    strata = tuple((w * W, (waves[j + 1] if j + 1 < len(waves) else full) * W) for j, w in enumerate(waves))
    strata += ((full * W, n_blocks),) if r else ()
    return WavePlan(n_blocks, sm_count, blocks_per_sm, full, r, main, tail, sm_count, min(sm_count, r), strata,
                    sample_runs(waves, slots, W, sm_count, full, r))


def stratum_waves(full_waves, blocks_per_sm, strata=STRATA):
    """The full waves sampled: the full waves are cut into k = min(blocks_per_sm, strata,
    full_waves) runs of (nearly) equal length and the first wave of each is sampled; SM 0's
    slots take their blocks from the runs (`slot_stratum`), so the "main" group -- one wave of
    SM 0, simulated for every full wave -- is a stratified sample of the grid's full waves, not
    its first wave alone (a grid whose work varies by position: Mandelbrot's image rows, a
    stencil's boundary planes).  The first wave is always sampled; k = 1 (one full wave, or
    one block per SM) keeps the first wave only, as before strata.  A sampled launch runs one
    wave's worth of blocks whatever k is (`sample_runs`).

    >>> stratum_waves(7, 8), stratum_waves(74, 2), stratum_waves(3, 8), stratum_waves(9, 1)
    ((0, 1, 3, 5), (0, 37), (0, 1, 2), (0,))
    """
    k = max(1, min(blocks_per_sm, strata, full_waves))
    return tuple(j * full_waves // k for j in range(k))


def sample_runs(waves, slots, wave_size, sm_count, full_waves, tail_total):
    """The blocks a sampled launch executes, as (first block, blocks) runs: for each sampled
    wave, the slots its stratum fills (``slots[s]``: slot s's stratum, `slot_stratum`) on every
    SM -- slots a..b of wave w are its blocks w W + a S .. w W + b S, the round-robin order
    putting block q on SM q % S in slot q // S -- and the partial last wave.  The strata's
    slices add up to one wave (W blocks) for any number of strata, so a sampled launch costs
    one wave and the tail, as with the first wave alone, wherever the sampled waves lie.

    >>> sample_runs((0, 2, 4), [0, 0, 1, 1, 1, 2, 2, 2], 1056, 132, 7, 5)
    ((0, 264), (2376, 396), (4884, 396), (7392, 5))
    >>> sample_runs((0,), [0] * 8, 1056, 132, 3, 0)
    ((0, 1056),)
    """
    runs = []
    for j, w in enumerate(waves):
        mine = [s for s, js in enumerate(slots) if js == j]
        if mine:                    # contiguous: slot_stratum grows with the slot
            runs.append((w * wave_size + mine[0] * sm_count, len(mine) * sm_count))
    if tail_total:
        runs.append((full_waves * wave_size, tail_total))
    merged = []
    for first, n in runs:           # adjacent runs as one (fewer, larger chunks)
        if merged and merged[-1][0] + merged[-1][1] == first:
            merged[-1] = (merged[-1][0], merged[-1][1] + n)
        else:
            merged.append((first, n))
    return tuple(merged)


def slot_stratum(waves, full_waves, blocks_per_sm, slot):
    """The stratum SM 0's slot ``slot`` takes its block from: the one holding the full wave at
    the slot's share of the full waves, (slot + 1/2) full_waves / blocks_per_sm, so that each
    stratum fills about as many slots as it has waves (strata of unequal length: 7 full waves
    in runs of 2, 2 and 3 take 2, 3 and 3 of 8 slots).

    >>> [slot_stratum((0, 2, 4), 7, 8, s) for s in range(8)]
    [0, 0, 1, 1, 1, 2, 2, 2]
    """
    at = (2 * slot + 1) * full_waves // (2 * blocks_per_sm)
    return max(j for j, w in enumerate(waves) if w <= at)


def stratum_weights(plan: WavePlan, chunks):
    """How many blocks each executed block of a chunk stands for, per chunk: within each
    stratum (plan.strata) the executed blocks stand for all of its blocks, so the partial last
    wave counts for its own blocks and each sampled full wave for its run of full waves (one
    scale for all blocks, all / executed, gives the tail -- an unaligned grid's idle edge -- the
    weight of a full wave).  chunks: [(first block, blocks)] executed.  None where a stratum
    holds no executed block (then all / executed is the only estimate).

    >>> p = plan_waves(1061, 8, 132)           # 1 full wave (one stratum) and 5 blocks
    >>> stratum_weights(p, [(0, 1056), (1056, 5)])
    [1.0, 1.0]
    >>> p = plan_waves(4 * 264 + 10, 2, 132)   # 4 full waves, sampled waves 0 and 2, 10 blocks
    >>> stratum_weights(p, [(0, 264), (528, 264), (1056, 10)])
    [2.0, 2.0, 1.0]
    """
    if not plan.strata:
        return None
    ran = [0] * len(plan.strata)
    for first, n in chunks:
        for i, (lo, hi) in enumerate(plan.strata):
            ran[i] += max(0, min(hi, first + n) - max(lo, first))
    if any(r == 0 for r in ran):
        return None
    per_block = [(hi - lo) / r for (lo, hi), r in zip(plan.strata, ran)]
    out = []
    for first, n in chunks:
        w = sum(pb * max(0, min(hi, first + n) - max(lo, first)) for (lo, hi), pb in zip(plan.strata, per_block))
        out.append(w / n if n else 0.0)
    return out


def sm_blocks(plan: WavePlan, sm: int):
    """SM ``sm``'s blocks as plan_waves places them: (its blocks of the first wave -- of the
    whole grid if it is under one wave --, its blocks of the partial last wave).  SM 0's are
    ``plan.main_blocks`` and ``plan.tail_blocks``.

    >>> p = plan_waves(1061, 8, 132)
    >>> sm_blocks(p, 3)[0][:3], sm_blocks(p, 3)[1], sm_blocks(p, 7)[1]
    ((3, 135, 267), (1059,), ())
    """
    W = plan.wave_size
    if plan.full_waves == 0:
        return tuple(range(sm, plan.n_blocks, plan.sm_count)), ()
    main = tuple(slot * plan.sm_count + sm for slot in range(plan.blocks_per_sm))
    tail = tuple(plan.full_waves * W + q for q in range(sm, plan.tail_blocks_total, plan.sm_count))
    return main, tail


def candidate_sms(plan: WavePlan, grid, spread=CANDIDATE_SPREAD):
    """The SMs besides SM 0 whose blocks the trace recorder also keeps, so that a grid whose
    blocks differ in work is timed by its busiest SM, not by SM 0 (TimingModel.predict).

    Blocks differ in work along the grid's axes (a causal attention's query tile, a triangular
    loop bound over a row index, the boundary tiles of an unaligned shape), so the candidates
    are the SMs holding the first wave's blocks at the grid's corners (each coordinate at 0 or
    at its last value: block ``x + gx (y + gy z)``), its last block, and ``spread`` more SMs
    evenly over the wave; SM 0 itself is never one.  Sorted, each once.

    >>> p = plan_waves(128, 1, 132)            # a causal FA-2 grid (8, 16): 8 query tiles x 16 heads
    >>> candidate_sms(p, (8, 16, 1))
    (7, 25, 51, 76, 102, 120, 127)
    """
    gx, gy, gz = (tuple(grid) + (1, 1, 1))[:3]
    first = min(plan.n_blocks, plan.wave_size)          # the blocks of the first wave
    blocks = {x + gx * (y + gy * z) for x in {0, gx - 1} for y in {0, gy - 1} for z in {0, gz - 1}}
    blocks.add(first - 1)
    blocks.update(first * (i + 1) // (spread + 1) for i in range(spread))
    sms = {b % plan.sm_count for b in blocks if 0 <= b < first}
    sms.discard(0)
    return tuple(sorted(sms))


def combine_loops(t_base, t_loop, factors):
    """T(K1) plus each long loop's extra iterations at the per-iteration cost measured
    between K1 and K2 (factors: (N - K1) / (K2 - K1) per loop)."""
    return t_base + sum((t - t_base) * f for t, f in zip(t_loop, factors))


def combine_waves(full_waves, t_q1, t_q2, q1, q2, t_tail_extra=0.0):
    """Time of `full_waves` full waves from simulations of q1 < q2 waves, plus the tail."""
    if full_waves <= q2:
        raise ValueError("simulate the waves directly when there are few")
    per_wave = (t_q2 - t_q1) / (q2 - q1)
    return t_q2 + (full_waves - q2) * per_wave + t_tail_extra


__all__ = ["WavePlan", "plan_waves", "stratum_waves", "slot_stratum", "sample_runs", "stratum_weights", "sm_blocks", "candidate_sms", "combine_loops", "combine_waves"]
