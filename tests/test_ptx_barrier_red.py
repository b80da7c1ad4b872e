"""simgpu.ptx: bar.red (cuda.syncthreads_count / _and / _or) and PTX's WARP_SZ constant."""
import numpy as np

from simgpu._compat import patch_numpy_for_numba

patch_numpy_for_numba()
from numba import cuda  # noqa: E402

from simgpu.ptx.runner import launch_numba  # noqa: E402


def reductions(x, out):
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    i = cuda.grid(1)
    if i >= x.size:                 # these threads exit: they take no part in the reduction
        return
    c = cuda.syncthreads_count(1 if x[i] > 0 else 0)
    a = cuda.syncthreads_and(1 if x[i] > 0 else 0)
    o = cuda.syncthreads_or(1 if x[i] > 5 else 0)
    out[i, 0] = c
    out[i, 1] = a
    out[i, 2] = o
    out[i, 3] = cuda.warpsize + b * 0 + t * 0


def test_barrier_reductions_per_block():
    tpb, n = 64, 64 * 3 - 10                          # the last block is partly exited
    rng = np.random.default_rng(3)
    x = rng.integers(-3, 5, n).astype(np.int32)
    x[:tpb] = 1                                       # block 0: all positive
    x[tpb + 7] = 9                                    # block 1: one above 5
    out = np.zeros((n, 4), np.int32)
    launch_numba(reductions, 3, tpb, (x, out))
    for b in range(3):
        xs = x[b * tpb:(b + 1) * tpb]
        rows = out[b * tpb:(b + 1) * tpb]
        assert (rows[:, 0] == np.count_nonzero(xs > 0)).all()
        assert (rows[:, 1] == int((xs > 0).all())).all()
        assert (rows[:, 2] == int((xs > 5).any())).all()
    assert (out[:, 3] == 32).all()
    assert out[0, 1] == 1 and out[tpb, 2] == 1 and out[2 * tpb, 2] == 0


def divergent_count(x, out):
    """Threads reach the same bar.red from both sides of a branch (two arrival steps)."""
    t = cuda.threadIdx.x
    if t % 3 == 0:
        v = x[t] * 2
    else:
        v = x[t] - 1
    out[t] = cuda.syncthreads_count(1 if v > 0 else 0)


def test_barrier_count_after_divergence():
    x = np.arange(-20, 44, dtype=np.int32)
    out = np.zeros(64, np.int32)
    launch_numba(divergent_count, 1, 64, (x, out))
    t = np.arange(64)
    v = np.where(t % 3 == 0, x * 2, x - 1)
    assert (out == np.count_nonzero(v > 0)).all()


def matches(x, out):
    t = cuda.threadIdx.x
    out[t, 0] = cuda.match_any_sync(0xFFFFFFFF, x[t])
    m, p = cuda.match_all_sync(0xFFFFFFFF, x[t])
    out[t, 1] = m
    out[t, 2] = p


def test_match_any_and_all():
    x = (np.arange(64) % 5).astype(np.int32)
    x[32:] = 7                                        # warp 1: all equal
    out = np.zeros((64, 3), np.int64)
    launch_numba(matches, 1, 64, (x, out))
    out[:, :2] &= 0xFFFFFFFF                          # numba returns the masks as int32
    lanes = np.arange(32)
    for t in range(32):
        assert out[t, 0] == sum(1 << int(j) for j in lanes[x[:32] == x[t]])
    assert (out[32:, 0] == 0xFFFFFFFF).all()
    assert (out[:32, 1] == 0).all() and (out[:32, 2] == 0).all()           # warp 0: values differ
    assert (out[32:, 1] == 0xFFFFFFFF).all() and (out[32:, 2] == 1).all()  # warp 1: all 7
