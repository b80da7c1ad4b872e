"""Sampling against full detail: cutting long loops, extrapolating over waves and running only
the sampled waves change the prediction by little, and the bounds here are the ones
docs/timing.md reports."""
import numpy as np
from numba import cuda
import pytest

import simgpu
from simgpu.hardware import H200
from simgpu import predict
from simgpu.timing import TimingModel
from simgpu.timing.analysis import section
from simgpu.timing.sampling import combine_loops, combine_waves, plan_waves

from test_timing_model import _f32, copy, divergent, fma_loop


def _cycles(kernel, grid, block, args, **kw):
    tm = TimingModel(H200, **kw)
    simgpu.launch(kernel, grid, block, args, observers=(tm,), timing=False)
    return tm.predict()


def test_plan_samples_sm0_of_first_and_last_wave():
    p = plan_waves(1061, 8, 132)
    assert p.main_blocks == tuple(range(0, 1056, 132))
    assert p.tail_blocks == (1056,) and p.tail_active_sms == 5
    q = plan_waves(300, 8, 132)
    assert q.full_waves == 0 and q.main_blocks == (0, 132, 264) and q.main_active_sms == 132


def test_extrapolation_formulas():
    assert combine_loops(100.0, [140.0, 110.0], [3.0, 2.0]) == 100 + 120 + 20
    assert combine_waves(10, 200.0, 300.0, 2, 3, 50.0) == 300 + 7 * 100 + 50


@pytest.mark.parametrize("kernel,iters", [(fma_loop, 256), (divergent, 256)])
def test_loop_cutting_error_is_small(kernel, iters):
    """Loops of 256 iterations simulated with 16 and 32 and extrapolated: within 3 % of
    simulating every iteration."""
    n = 132 * 8 * 256
    args = (_f32(n), np.zeros(n, np.float32), np.int32(iters))
    full = _cycles(kernel, (n // 256,), (256,), args, detail="full")
    auto = _cycles(kernel, (n // 256,), (256,), args)
    assert auto.loop_factors and not full.loop_factors
    assert auto.cycles == pytest.approx(full.cycles, rel=0.03)


def uneven_loop(x, out, iters):
    i = cuda.grid(1)
    a = x[i]
    n = iters * (1 + (i // 32) % 8) // 8         # a warp's trip count: iters / 8 .. iters
    for it in range(n):
        a = a * np.float32(0.999) + np.float32(0.001)
    out[i] = a


def test_loop_cutting_follows_the_warps_left_in_the_loop():
    """A loop whose trip count differs between warps (32 .. 256 iterations): cut at 16 and 32
    and extrapolated with the warps each iteration still runs (model.loop_factor), within 5 %
    of simulating every iteration (0.975); the rule before (every warp for the longest trip) 1.31x."""
    n = 132 * 8 * 256
    args = (_f32(n), np.zeros(n, np.float32), np.int32(256))
    full = _cycles(uneven_loop, (n // 256,), (256,), args, detail="full")
    auto = _cycles(uneven_loop, (n // 256,), (256,), args)
    assert auto.loop_factors and not full.loop_factors
    assert auto.cycles == pytest.approx(full.cycles, rel=0.05)


def test_loop_factor_rule():
    """loop_factor: every warp in every iteration is (N - K1) / (K2 - K1); warps leaving scale the
    late iterations down, but no lower than the warps' own-latency share of the window's time."""
    from simgpu.timing.model import loop_factor, own_latency_share
    from simgpu.timing.sim import TOTAL_INDEX, TOTALS
    from simgpu.timing.trace import LoopInstance

    def inst(active):
        li = LoopInstance(0, None)
        li.active, li.count = list(active), len(active)
        return li

    assert loop_factor([inst([8] * 100)], 16, 32, 0.1) == pytest.approx((100 - 16) / 16)
    # 8 warps to iteration 32, then 2 to iteration 100: 68 iterations at a quarter of the window's
    assert loop_factor([inst([8] * 32 + [2] * 68)], 16, 32, 0.1) == pytest.approx((16 + 68 / 4) / 16)
    assert loop_factor([inst([8] * 32 + [2] * 68)], 16, 32, 0.5) == pytest.approx((16 + 68 / 2) / 16)
    bare = LoopInstance(0, None)
    bare.count = 100                               # no per-iteration counts: the rule before
    assert loop_factor([bare], 16, 32, 0.1) == pytest.approx(84 / 16)
    d = np.zeros(len(TOTALS))
    d[TOTAL_INDEX["issued"]], d[TOTAL_INDEX["stall_dependency"]], d[TOTAL_INDEX["stall_pipe"]] = 10, 30, 60
    assert own_latency_share(d) == pytest.approx(0.4)
    assert own_latency_share(np.zeros(len(TOTALS))) == 1.0


def test_wave_extrapolation_error_is_small():
    """Eight waves of a copy from two and three simulated waves: within 3 % of all eight."""
    n = 132 * 8 * 256 * 8
    args = (_f32(n), np.zeros(n, np.float32))
    full = _cycles(copy, (n // 256,), (256,), args, detail="full")
    auto = _cycles(copy, (n // 256,), (256,), args)
    assert auto.waves_simulated == (2, 3) and full.waves_simulated == (8,)
    assert auto.cycles == pytest.approx(full.cycles, rel=0.03)


def test_sampled_execution_matches_full_launch():
    """predict(sample=True) runs one wave's worth of the 6 waves of an FMA loop, in slices of
    the sampled waves 0, 1, 3, 4 (sampling.stratum_waves, sample_runs): the predicted time is
    within 2 % of running them all, and only those blocks' outputs are computed."""
    n = 132 * 8 * 256 * 6
    x = _f32(n)
    full = predict(fma_loop, (n // 256,), (256,), (x, np.zeros(n, np.float32), np.int32(64)))
    out = np.zeros(n, np.float32)
    samp = predict(fma_loop, (n // 256,), (256,), (x, out, np.int32(64)), sample=True)
    assert samp.extras["sampled_execution"]["executed_blocks"] == 1056
    assert samp.metrics["gpu__time_duration.sum"] == pytest.approx(full.metrics["gpu__time_duration.sum"], rel=0.02)
    assert np.count_nonzero(out) == 1056 * 256
    blocks = np.flatnonzero(out.reshape(-1, 256).any(axis=1))
    slices = [(0, 1), (1, 3), (3, 1), (4, 3)]      # (wave, slots): SM 0's slots 0 | 1-3 | 4 | 5-7
    want, slot = [], 0
    for w, k in slices:
        want += range(w * 1056 + slot * 132, w * 1056 + (slot + k) * 132)
        slot += k
    assert list(blocks) == want


def test_plan_spreads_sm0_blocks_over_the_full_waves():
    """SM 0's "main" blocks come from the first wave of each stratum of full waves; a sampled
    launch runs the slots each stratum fills on every SM -- one wave in all, whatever the grid
    -- and the tail, its own stratum; a chunk's blocks stand for their stratum's blocks."""
    from simgpu.timing.sampling import stratum_weights
    p = plan_waves(8 * 1056 + 100, 8, 132)
    assert p.sampled_waves == (0, 2, 4, 6)
    assert p.main_blocks == tuple(w * 1056 + s * 132 for s, w in enumerate((0, 0, 2, 2, 4, 4, 6, 6)))
    assert p.strata == ((0, 2112), (2112, 4224), (4224, 6336), (6336, 8448), (8448, 8548))
    assert p.runs == ((0, 264), (2 * 1056 + 264, 264), (4 * 1056 + 528, 264), (6 * 1056 + 792, 264), (8448, 100))
    assert stratum_weights(p, p.runs) == [8.0] * 4 + [1.0]
    assert stratum_weights(p, [(w * 1056, 1056) for w in (0, 2, 4, 6)] + [(8448, 100)]) == [2.0] * 4 + [1.0]
    assert stratum_weights(p, [(0, 1056), (8448, 100)]) is None      # a stratum never ran
    assert plan_waves(1056, 8, 132).main_blocks == tuple(range(0, 1056, 132))   # one wave: as before
    for n in (2 * 1056, 7 * 1056 + 5, 993 * 1056 + 17, 74 * 264 + 246):     # one wave's worth run, any grid
        q = plan_waves(n, 8 if n % 264 != 246 else 2, 132)
        assert sum(k for _, k in q.runs) == q.wave_size + q.tail_blocks_total
        assert {b for lo, k in q.runs for b in range(lo, lo + k)} >= set(q.main_blocks) | set(q.tail_blocks)


def _rows_differ(x, out, iters):
    """Blocks of the middle half of the grid (the image's middle rows) loop; the others (the
    first and last waves) only copy -- Mandelbrot's escape counts, in steps."""
    i = cuda.grid(1)
    acc = x[i]
    nb = cuda.gridDim.x
    if nb // 4 <= cuda.blockIdx.x < 3 * nb // 4:
        for _ in range(iters):
            acc = acc * np.float32(0.999) + np.float32(0.001)
    out[i] = acc


def test_sampled_launch_of_a_grid_whose_work_varies_by_row():
    """8 waves, only the middle four loop: the first and last waves, the sample before strata,
    do none of the loop's work (sampled count 0.22 of the full launch's, and the time of a
    launch without the loop, sampled or not).  Slices of the sampled waves (0, 2, 4, 6), one
    wave's worth of blocks, give the warp instructions within 2 % and the time within 5 % of
    running every block."""
    n = 132 * 8 * 256 * 8
    args = lambda: (_f32(n), np.zeros(n, np.float32), np.int32(64))         # noqa: E731
    full = predict(_rows_differ, (n // 256,), (256,), args(), gpu=H200)
    samp = predict(_rows_differ, (n // 256,), (256,), args(), gpu=H200, sample=True)
    key = "smsp__inst_executed.sum"
    scale = samp.extras["sampled_execution"]["scale"]
    assert samp.extras["sampled_execution"]["executed_blocks"] == 1056
    assert samp.metrics[key] * scale == pytest.approx(full.metrics[key], rel=0.02)
    counted = simgpu.launch(_rows_differ, (n // 256,), (256,), args(), gpu=H200, memory=False, timing=False,
                            sample=True)
    assert counted.metrics[key] == pytest.approx(full.metrics[key], rel=0.02)
    t = "gpu__time_duration.sum"
    assert samp.metrics[t] == pytest.approx(full.metrics[t], rel=0.05)
    # the loop's half of the grid is in the time: the first wave alone (no loop) gave the time
    # of a launch where no block loops, for the full launch too (SM 0's first wave stood for all)
    idle = predict(_rows_differ, (n // 256,), (256,), (_f32(n), np.zeros(n, np.float32), np.int32(0)), gpu=H200,
                   sample=True)
    assert samp.metrics[t] > 1.5 * idle.metrics[t] and full.metrics[t] > 1.5 * idle.metrics[t]


@pytest.mark.parametrize("waves,iters", [(1, 8), (1, 64), (4, 64)])
def test_report_timeline_is_recorded_by_a_simulation_the_prediction_runs(monkeypatch, waves, iters):
    """The simulation whose timeline the report shows records it the first time it runs:
    every SM simulation of a prediction is a different one (it used to run once more, only to
    record the timeline), and the timeline is the same as recording it on its own."""
    from simgpu.timing import model as timing_model
    calls = []
    real = timing_model.simulate_sm

    def counted(*a, **kw):
        calls.append(kw.get("timeline") is not None)
        return real(*a, **kw)
    monkeypatch.setattr(timing_model, "simulate_sm", counted)
    n = 132 * 8 * 256 * waves
    res = _cycles(fma_loop, (n // 256,), (256,), (_f32(n), np.zeros(n, np.float32), np.int32(iters)))
    assert len(calls) == res.n_sims and calls.count(True) == 1
    monkeypatch.setattr(timing_model, "simulate_sm", real)
    again = _cycles(fma_loop, (n // 256,), (256,), (_f32(n), np.zeros(n, np.float32), np.int32(iters)))
    assert res.cycles == again.cycles
    assert res.timeline.blocks == again.timeline.blocks and res.timeline.warps == again.timeline.warps


def test_extrapolated_launch_with_a_tail_runs_only_the_extrapolations_simulations():
    """Two full waves and a partial one, a loop cut and extrapolated: the main waves and the
    tail, each at K1 and K2 iterations (four simulations); the report's timeline is the main
    waves' at K1 (the tail is not simulated once more only for it)."""
    n = (132 * 8 * 2 + 5) * 256
    res = _cycles(fma_loop, (n // 256,), (256,), (_f32(n), np.zeros(n, np.float32), np.int32(512)))
    assert res.loop_factors and res.plan.tail_blocks
    assert res.n_sims - res.discarded_sims == 4       # (a probe of settled loops given up: model.settled)
    assert len(res.timeline.blocks) == 2 * 8        # SM 0's blocks of the two full waves
    assert res.tail_cycles > 0


@cuda.jit
def _last_block_loops(x, n):
    """Every block copies; only the grid's last block also runs a dependent loop of n FMAs."""
    i = cuda.grid(1)
    acc = x[i]
    if cuda.blockIdx.x == cuda.gridDim.x - 1:
        for _ in range(n):
            acc = acc * np.float32(0.999) + np.float32(0.001)
    x[i] = acc


def test_grid_of_uneven_blocks_is_timed_by_its_busiest_sm():
    """16 blocks, one an SM: SM 0's block only copies, SM 15's also loops.  The kernel ends with
    SM 15, so the time grows with its loop (it did not while only SM 0 was simulated)."""
    t = {}
    for n in (300, 600):
        rep = simgpu.launch(_last_block_loops, 16, 128, (_f32(16 * 128), np.int32(n)), gpu=H200)
        r = rep.extras["timing"]
        assert r.sm == 15 and r.sms_recorded > 1
        t[n] = r.cycles
        s = predict(_last_block_loops, 16, 128, (_f32(16 * 128), np.int32(n)), gpu=H200, sample=True)
        assert s.extras["timing"].sm == 15 and s.extras["timing"].cycles == pytest.approx(r.cycles, rel=0.02)
    assert t[600] > 1.6 * t[300]
    assert "simulated SM 15 (" in section(rep)


def test_balanced_grid_is_timed_by_sm0_as_before():
    """Every block does the same work: no recorded SM issues more than SM 0, so SM 0 is the one
    simulated, once (the prediction it had before other SMs were recorded)."""
    tm = TimingModel(H200)
    simgpu.launch(fma_loop, 1061, 128, (_f32(1061 * 128), np.zeros(1061 * 128, np.float32), np.int32(40)),
                  observers=(tm,), timing=False)
    assert tm.candidates and tm.busiest_candidate() is None
    per_block = {sum(g.work for g in gs) / sum(len(g.blocks) for g in gs) for _, gs in tm.candidates}
    assert per_block == {sum(g.work for g in tm.groups) / sum(len(g.blocks) for g in tm.groups)}
    r = tm.predict()
    assert r.sm == 0
    tm2 = TimingModel(H200)
    simgpu.launch(fma_loop, 1061, 128, (_f32(1061 * 128), np.zeros(1061 * 128, np.float32), np.int32(40)),
                  observers=(tm2,), timing=False)
    tm2.candidates = []
    assert tm2.predict().cycles == r.cycles


def _sampled_launch(p, sample=True):
    """A Launch of plan p's grid as runtime/launch.plan_chunks sets a sampled one up."""
    from simgpu.events import Launch
    info = Launch("k", None, H200, (p.n_blocks, 1, 1), (256, 1, 1), [], 0)
    if sample:
        info.wanted_blocks = set(p.main_blocks) | set(p.tail_blocks)
        info.wanted_runs, info.sampled_wave_blocks = p.runs, p.wave_size
    return info


def test_a_sampled_launch_runs_its_slices_cut_at_the_chunks():
    """Launch.chunks: the chunks holding a wanted block, each cut to its part in the wanted runs
    (a slice of a wave runs as a chunk of its own, the rest of the wave not run)."""
    p = plan_waves(8 * 1056 + 100, 8, 132)
    info = _sampled_launch(p)
    info.blocks_per_chunk = 1056
    got = [(first, n) for _, first, n in info.chunks()]
    assert got == list(p.runs)
    info.blocks_per_chunk = 200     # small chunks: those holding SM 0's blocks, cut to the runs
    got = [(first, n) for _, first, n in info.chunks()]
    assert got[:3] == [(0, 200), (2376, 24), (2400, 200)]
    ran = {b for first, n in got for b in range(first, first + n)}
    assert ran >= set(p.main_blocks) | set(p.tail_blocks)
    assert ran <= {b for first, n in p.runs for b in range(first, first + n)}


def test_a_slice_of_a_wave_gets_its_share_of_the_caches():
    """The memory model gives a sampled slice of a wave its share of each L1's and the L2's
    ways (the rest of its wave would share them); whole waves and the tail get every way."""
    from simgpu.events import Chunk
    from simgpu.memory import MemoryModel
    from simgpu.memory.cache import P_WAYS1, P_WAYS2
    p = plan_waves(8 * 1056 + 100, 8, 132)
    mm = MemoryModel(H200, _sampled_launch(p))
    w1, w2 = mm.params.l1_ways, mm.params.l2_ways
    mm.chunk_begin(Chunk(0, 264, (256, 1, 1), (p.n_blocks, 1, 1)))          # 2 of 8 slots
    assert (mm.prm[P_WAYS1], mm.prm[P_WAYS2]) == (round(w1 / 4), round(w2 / 4))
    mm.chunk_begin(Chunk(8448, 100, (256, 1, 1), (p.n_blocks, 1, 1)))        # the tail: all of it
    assert (mm.prm[P_WAYS1], mm.prm[P_WAYS2]) == (w1, w2)
    full = MemoryModel(H200, _sampled_launch(p, sample=False))               # every block runs
    full.chunk_begin(Chunk(0, 264, (256, 1, 1), (p.n_blocks, 1, 1)))
    assert (full.prm[P_WAYS1], full.prm[P_WAYS2]) == (w1, w2)
