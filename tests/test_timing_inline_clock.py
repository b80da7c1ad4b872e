"""Differential test of the SM simulation's inline clock (simgpu/timing/sim.py, issue 26).

A warp whose next step (its instruction's end, or its operands' arrival) comes before every
other scheduled simpy event moves the clock itself instead of scheduling a timeout: what
popping that timeout would have done.  Every validation and holdout kernel (tiny sizes) and
loop-heavy kernels with few warps run with it on and off (``sim.INLINE_CLOCK``); every metric
of the report (time, stalls, pipes, issue counts, memory) must be the same bit for bit."""
from __future__ import annotations

import math

import numpy as np
import pytest
from numba import cuda

import simgpu
from simgpu.sass.toolchain import compiled_path_available
from simgpu.timing import sim

from test_ptx_blocks import VCASES, _numbers, collatz

pytestmark = pytest.mark.skipif(not compiled_path_available()[0], reason="needs numba-cuda and ptxas")


def _metrics(kernel, grid, block, host, inline):
    args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in host)
    old = sim.INLINE_CLOCK
    sim.INLINE_CLOCK = inline
    try:
        rep = simgpu.launch(kernel, grid, block, args, executor="ptx", memory=True, timing=True)
    finally:
        sim.INLINE_CLOCK = old
    return _numbers(rep.metrics), args


def assert_same(kernel, grid, block, host):
    m0, a0 = _metrics(kernel, grid, block, host, False)
    m1, a1 = _metrics(kernel, grid, block, host, True)
    assert m0 == m1
    for x, y in zip(a0, a1):
        if isinstance(x, np.ndarray):
            assert x.tobytes() == y.tobytes()
    assert m1.get("gpu__time_duration.sum", 0) > 0


def test_inline_clock_is_available():
    assert sim.INLINE_CLOCK          # simpy still has the attributes it relies on


@pytest.mark.parametrize("name", sorted(VCASES))
def test_validation_kernels_same_with_inline_clock(name):
    c = VCASES[name]
    assert_same(c["kernel"], tuple(c["grid"]), tuple(c["block"]), c["args"](np.random.default_rng(0)))


def test_collatz_few_warps():
    n0 = np.arange(1, 97, dtype=np.int64) * 7919 + 3
    assert_same(cuda.jit(collatz), (1,), (96,), (n0, np.zeros(96, np.int64)))


def softmax_row(Q, K, out):
    r = cuda.grid(1)
    if r < Q.shape[0]:
        m = -1e30
        den = 0.0
        for j in range(K.shape[0]):
            s = 0.0
            for d in range(Q.shape[1]):
                s += Q[r, d] * K[j, d]
            mn = max(m, s)
            den = den * math.exp(m - mn) + math.exp(s - mn)
            m = mn
        out[r] = den





def test_online_softmax_rows_one_warp():
    rng = np.random.default_rng(1)
    Q, K = rng.random((20, 8), dtype=np.float32), rng.random((40, 8), dtype=np.float32)
    assert_same(cuda.jit(softmax_row), (1,), (32,), (Q, K, np.zeros(20, np.float32)))
