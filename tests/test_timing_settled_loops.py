"""Settled loops (simgpu/timing/model.py, issue 26 item 2): loops longer than 16 iterations are
first simulated cut to 4, 6 and 8 iterations and, where the SM's cycles per iteration are the
same over 4..6 and 6..8 (`model.settled`), extrapolated from 6 and 8; else simulated as before.
And the trace recorder takes a straight-line run's tail in one call (`TraceRecorder.inst_tail`).

Differential, on small kernels: the prediction with settled loops within 2 % of the simulation
as before (``model.SETTLED_LOOPS = False``) where the probe is kept; bit for bit where it is
given up; every count and every output the same either way (only the timing model's own
metrics may move); the recorder's one-call tail the same entries as one call per instruction."""
from __future__ import annotations

import numpy as np
import pytest
from numba import cuda

import simgpu
from simgpu.sass.toolchain import compiled_path_available
from simgpu.timing import model as timing_model
from simgpu.timing.sim import CYCLES, TOTALS

from test_ptx_blocks import VCASES, _numbers, collatz
from test_timing_model import fma_loop as fma_rows   # four FMA chains a thread: compute-bound, uniform

needs_ptx = pytest.mark.skipif(not compiled_path_available()[0], reason="needs numba-cuda and ptxas")

# the timing model's own metrics (analysis.fill_report); every other metric is a count
TIMING = ("gpu__time_duration", "sm__cycles_elapsed", "sm__warps_active", "simgpu__warp_", "simgpu__utilisation_",
          "simgpu__achieved_", "simgpu__timing_")


def nested(x, out, outer, inner):
    """An outer loop of `outer` iterations around an inner one of `inner`."""
    i = cuda.grid(1)
    a = x[i]
    b = a + np.float32(1.0)
    for j in range(outer):
        for k in range(inner):
            a = a * np.float32(0.999) + b
        b = b * np.float32(0.5) + a
    out[i] = a + b


def two_loops(x, out, n1, n2):
    """A uniform on-chip loop of n1 iterations, then a loop of n2 with a global load in it."""
    i = cuda.grid(1)
    a = x[i]
    for k in range(n1):
        a = a * np.float32(0.999) + np.float32(0.001)
    for k in range(n2):
        a = a * np.float32(0.5) + x[(i + k) % x.size]
    out[i] = a


def _launch(kernel, grid, block, host, settled_loops=True, tol=None, **kw):
    args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in host)
    old = timing_model.SETTLED_LOOPS, timing_model.SETTLE_TOL
    timing_model.SETTLED_LOOPS = settled_loops
    if tol is not None:
        timing_model.SETTLE_TOL = tol
    try:
        rep = simgpu.launch(kernel, grid, block, args, executor="ptx", memory=True, timing=True, **kw)
    finally:
        timing_model.SETTLED_LOOPS, timing_model.SETTLE_TOL = old
    return rep, args


def _counts(rep):
    return {k: v for k, v in _numbers(rep.metrics).items() if not k.startswith(TIMING)}


def _compare(kernel, grid, block, host, **kw):
    """(as before, settled loops): their reports; asserts the counts and outputs are equal."""
    before, out0 = _launch(kernel, grid, block, host, settled_loops=False, **kw)
    after, out1 = _launch(kernel, grid, block, host, settled_loops=True, **kw)
    assert _counts(before) == _counts(after)
    for x, y in zip(out0, out1):
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y)
    return before.extras["timing"], after.extras["timing"]


def test_settled_rule():
    """`settled` compares the cycles per iteration over K0..K1 and K1..K2 of three simulations."""
    def vec(cycles):
        v = np.zeros(len(TOTALS))
        v[CYCLES] = cycles
        return v
    assert timing_model.settled(vec(1000), vec(1200), vec(1400), 4, 0.01)       # 200 cycles both halves
    assert timing_model.settled(vec(1000), vec(1200), vec(1401), 4, 0.01)       # within 1 %
    assert not timing_model.settled(vec(1000), vec(1200), vec(1380), 4, 0.01)   # speeding up 10 %
    assert not timing_model.settled(vec(1000), vec(1150), vec(1400), 4, 0.01)   # slowing down
    assert timing_model.settled(vec(1000), vec(1000), vec(1000), 4, 0.01)       # the loop costs nothing
    # the work K2 adds must fit the cycles it adds: 800 issue cycles over 4 schedulers in 200
    # cycles fit, 880 do not (the late warps of a ramp did theirs later)
    issued = TOTALS.index("issued")
    top = vec(1400)
    top[issued] = 800
    assert timing_model.settled(vec(1000), vec(1200), top, 4, 0.01)
    top[issued] = 880
    assert not timing_model.settled(vec(1000), vec(1200), top, 4, 0.01)
    dram = TOTALS.index("dram")
    top[issued], top[dram] = 0, 250                  # DRAM share busier than the window's cycles
    assert not timing_model.settled(vec(1000), vec(1200), top, 4, 0.01)


@needs_ptx
def test_uniform_loop_kept_within_two_percent():
    """A uniform compute loop of 200 iterations (4 warps): the probe is kept, the prediction
    within 2 % of the simulation as before, with loops cut to 6/8 instead of 16/32.  With 8
    warps a block the SM's cycles per iteration still change by 1.7 % between iterations 4..6
    and 6..8 (they settle at the 6th): that window is given up, the next (6..8, 8..10) kept,
    with one simulation more than the first (the others are the first window's)."""
    n = 128
    host = (np.random.default_rng(0).random(n, dtype=np.float32), np.zeros(n, np.float32), np.int32(200))
    before, after = _compare(cuda.jit(fma_rows), (1,), (128,), host)
    assert after.settled_loops is True and (after.loop_k1, after.loop_k2) == (timing_model.PROBE_K1, timing_model.PROBE_K2)
    assert before.settled_loops is None and before.loop_k1 == 16
    assert after.time_s == pytest.approx(before.time_s, rel=0.02)
    assert after.totals["issued"] == pytest.approx(before.totals["issued"], rel=0.02)
    n = 8 * 256
    host = (np.random.default_rng(0).random(n, dtype=np.float32), np.zeros(n, np.float32), np.int32(200))
    before, after = _compare(cuda.jit(fma_rows), (8,), (256,), host)
    assert after.settled_loops is True and (after.loop_k1, after.loop_k2) == (8, 10)
    assert after.discarded_sims == 3 and after.n_sims <= after.discarded_sims + 2
    assert after.time_s == pytest.approx(before.time_s, rel=0.02)


@needs_ptx
def test_nested_loops_within_two_percent():
    """An outer loop of 40 iterations around an inner one of 6: the outer loop is the one cut
    (the inner instances inside its kept iterations are simulated whole)."""
    n = 256
    host = (np.random.default_rng(1).random(n, dtype=np.float32), np.zeros(n, np.float32), np.int32(40), np.int32(6))
    before, after = _compare(cuda.jit(nested), (2,), (128,), host)
    assert after.settled_loops is True
    assert after.time_s == pytest.approx(before.time_s, rel=0.02)


@needs_ptx
def test_loop_recorded_in_part_and_not_probed_keeps_the_simulation_as_before():
    """A loop the probe does not cut (global loads) but whose recording stops at 32 iterations
    would lose its later iterations in the probe's simulations: no probe, the prediction as
    before bit for bit.  With that loop short (recorded whole), the on-chip loop is probed."""
    n = 128
    k = cuda.jit(two_loops)
    host = (np.random.default_rng(4).random(n, dtype=np.float32), np.zeros(n, np.float32), np.int32(100), np.int32(400))
    before, after = _compare(k, (1,), (128,), host)
    assert after.settled_loops is None and after.time_s == before.time_s and after.n_sims == before.n_sims
    host = host[:3] + (np.int32(3),)
    before, after = _compare(k, (1,), (128,), host)
    assert after.settled_loops is True
    assert after.time_s == pytest.approx(before.time_s, rel=0.02)


@needs_ptx
def test_probe_given_up_is_the_simulation_as_before():
    """Where the probe is given up (here: a tolerance no loop meets) the prediction is the one
    as before, bit for bit in every metric, its n_sims counting the probe's simulations."""
    n = 256
    host = (np.random.default_rng(2).random(n, dtype=np.float32), np.zeros(n, np.float32), np.int32(100))
    k = cuda.jit(fma_rows)
    before, _ = _launch(k, (2,), (128,), host, settled_loops=False)
    after, _ = _launch(k, (2,), (128,), host, settled_loops=True, tol=-1.0)
    rb, ra = before.extras["timing"], after.extras["timing"]
    assert ra.settled_loops is False and ra.discarded_sims >= 3          # the K0, K1 and K2 simulations,
    assert ra.discarded_sims <= 3 + len(timing_model.PROBE_SHIFTS) - 1   # then one more a window
    assert ra.n_sims == rb.n_sims + ra.discarded_sims
    assert _numbers(before.metrics) == _numbers(after.metrics)


@needs_ptx
def test_full_detail_does_not_probe():
    n = 128
    host = (np.random.default_rng(3).random(n, dtype=np.float32), np.zeros(n, np.float32), np.int32(40))
    rep, _ = _launch(cuda.jit(fma_rows), (1,), (128,), host, timing_detail="full")
    r = rep.extras["timing"]
    assert r.settled_loops is None and not r.loop_factors


@needs_ptx
@pytest.mark.parametrize("name", [c for c in ("nbody_forces_n512", "softmax_rows_5x700_f32", "matmul_tiled_n32",
                                              "spmv_csr_scalar_f32", "collatz_steps") if c in VCASES])
def test_validation_kernels_counts_same_and_time_close(name):
    """Suite and holdout kernels at their test sizes: counts and outputs the same; the time within
    2 % where the probe is kept, equal where it is not."""
    c = VCASES[name]
    before, after = _compare(c["kernel"], tuple(c["grid"]), tuple(c["block"]), c["args"](np.random.default_rng(0)))
    if after.settled_loops:
        assert after.time_s == pytest.approx(before.time_s, rel=0.02)
    else:
        assert after.time_s == before.time_s


def _with_tail(kernel, grid, block, host, tail):
    """Every metric of a launch whose timing recorder takes a run's tail in one call or not."""
    args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in host)
    saved = timing_model.TimingModel.inst_tail
    if not tail:
        timing_model.TimingModel.inst_tail = None       # the emitter then sends each record alone
    try:
        rep = simgpu.launch(kernel, grid, block, args, executor="ptx", memory=True, timing=True)
    finally:
        timing_model.TimingModel.inst_tail = saved
    return _numbers(rep.metrics)


@needs_ptx
@pytest.mark.parametrize("name", [c for c in ("nbody_forces_n512", "softmax_rows_5x700_f32", "matmul_tiled_n32",
                                              "hist_shared_L2") if c in VCASES])
def test_recorder_tail_in_one_call_same(name):
    c = VCASES[name]
    host = c["args"](np.random.default_rng(0))
    a = _with_tail(c["kernel"], tuple(c["grid"]), tuple(c["block"]), host, False)
    b = _with_tail(c["kernel"], tuple(c["grid"]), tuple(c["block"]), host, True)
    assert a == b and a.get("gpu__time_duration.sum", 0) > 0


@needs_ptx
def test_recorder_tail_in_one_call_same_collatz():
    n0 = np.arange(1, 193, dtype=np.int64) * 7919 + 3
    host = (n0, np.zeros(192, np.int64))
    assert _with_tail(cuda.jit(collatz), (2,), (96,), host, False) == _with_tail(cuda.jit(collatz), (2,), (96,), host, True)
