"""Kernels written for numba.cuda run unchanged and compute what the GPU computes."""
import math

import numpy as np
import pytest

import simgpu
from numba import cuda, float32
from simgpu.kernels import histogram16, tree_reduce, vadd, warp_sum
from simgpu.kernels import matmul_tiled_shape as matmul_tiled
from kernels_core import grid2d, loops_and_control, math_mix, typing_f64, use_device_fn, votes

rng = np.random.default_rng(1234)


def test_vector_add_matches_numpy():
    """Elementwise float32 add is exact."""
    a, b = rng.random(1000, dtype=np.float32), rng.random(1000, dtype=np.float32)
    out = np.zeros_like(a)
    simgpu.launch(vadd, 4, 256, (a, b, out))
    assert np.array_equal(out, a + b)


def test_jit_decorator_and_indexing_syntax():
    """simgpu.jit(f)[grid, block](...) is the numba.cuda launch syntax."""
    a, b = rng.random(64, dtype=np.float32), rng.random(64, dtype=np.float32)
    out = np.zeros_like(a)
    rep = simgpu.jit(vadd)[2, 32](a, b, out)
    assert np.array_equal(out, a + b)
    assert isinstance(rep, simgpu.Report)
    assert "vadd" in str(rep)


def test_numba_cuda_dispatcher_is_accepted():
    """A function already decorated with numba.cuda.jit runs too (its py_func is used)."""
    from numba import cuda
    k = cuda.jit(vadd)
    a, b = rng.random(64, dtype=np.float32), rng.random(64, dtype=np.float32)
    out = np.zeros_like(a)
    simgpu.launch(k, 1, 64, (a, b, out))
    assert np.array_equal(out, a + b)


def test_tree_reduction_with_barriers():
    x = rng.random(1000, dtype=np.float32)
    p = np.zeros(8, np.float32)
    simgpu.launch(tree_reduce, 8, 128, (x, p))
    ref = np.zeros(8, np.float32)
    for b in range(8):
        s = np.zeros(128, np.float32)
        seg = x[b * 128:(b + 1) * 128]
        s[:len(seg)] = seg
        stride = 64
        while stride > 0:
            s[:stride] += s[stride:2 * stride]
            stride //= 2
        ref[b] = s[0]
    assert np.array_equal(p, ref)          # same association order as the GPU: bit-exact


@pytest.mark.parametrize("n", [32, 40, 47])
def test_tiled_matmul_including_partial_tiles(n):
    A = rng.random((n, n), dtype=np.float32)
    B = rng.random((n, n), dtype=np.float32)
    C = np.zeros((n, n), np.float32)
    g = (n + 15) // 16
    simgpu.launch(matmul_tiled, (g, g), (16, 16), (A, B, C))
    ref = np.zeros((n, n), np.float32)
    for k in range(n):          # float32 accumulation in k order, acc += a*b fused (fma.rn.f32)
        ref = (A[:, k:k + 1].astype(np.float64) * B[k:k + 1, :] + ref).astype(np.float32)
    assert np.array_equal(C, ref)


def test_warp_shuffle_reduction_and_atomic():
    x = rng.random(256, dtype=np.float32)
    out = np.zeros(1, np.float32)
    simgpu.launch(warp_sum, 2, 128, (x, out))
    assert out[0] == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5)


def test_shared_atomics_histogram():
    d = rng.integers(0, 1000, 5000).astype(np.int32)
    bins = np.zeros(16, np.int32)
    simgpu.launch(histogram16, 40, 128, (d, bins))
    assert np.array_equal(bins, np.bincount(d % 16, minlength=16))


def test_device_function_with_early_returns():
    x = (rng.random(300, dtype=np.float32) - 0.5) * 3
    out = np.zeros_like(x)
    simgpu.launch(use_device_fn, 3, 128, (x, out))
    assert np.array_equal(out, np.clip(x, np.float32(-0.5), np.float32(0.5)))


def test_while_break_continue_and_per_lane_loops():
    n_arr = rng.integers(0, 20, 100).astype(np.int64)
    out = np.zeros(100, np.int64)
    simgpu.launch(loops_and_control, 1, 128, (n_arr, out))

    def ref(nv, i):
        total, k = 0, 0
        while True:
            k += 1
            if k % 3 == 0:
                continue
            if k > nv:
                break
            total += k
        for j in range(i % 5):
            total += j * 2 if j % 2 == 0 else -j
        return total
    assert [int(v) for v in out] == [ref(int(n_arr[i]), i) for i in range(100)]


def test_float32_math_stays_float32():
    """math.sin(float32) is float32 in numba.cuda; 0.5 * v is float64 (a Python float literal)."""
    x = (rng.random(100, dtype=np.float32) * 4 - 2)
    out = np.zeros_like(x)
    simgpu.launch(math_mix, 1, 128, (x, out))
    f = np.float32
    ref = (np.sin(x) * np.exp(x * f(0.1)) + np.sqrt(np.abs(x)) - np.floor(x)).astype(np.float32)
    ref = (ref.astype(np.float64) + 0.5 * x.astype(np.float64)).astype(np.float32)
    assert np.allclose(out, ref, rtol=2e-6, atol=1e-6)


def test_numba_unification_makes_accumulator_float64():
    """acc = 0; acc += float32 * 1.1 types acc as float64, exactly as numba does."""
    x = rng.random(100, dtype=np.float32)
    out = np.zeros(100, np.float32)
    simgpu.launch(typing_f64, 1, 128, (x, out))
    assert np.array_equal(out, (x.astype(np.float64) * 1.1).astype(np.float32))


def test_2d_grid_and_tuple_unpacking():
    out = np.zeros((20, 30), np.int64)
    simgpu.launch(grid2d, (4, 3), (8, 8), (out,))
    yy, xx = np.mgrid[0:20, 0:30]
    assert np.array_equal(out, yy * 1000 + xx)


def test_votes_and_popc():
    x = rng.random(64, dtype=np.float32) - 0.5
    ob, oa = np.zeros(64, np.int32), np.zeros(64, np.int32)
    simgpu.launch(votes, 1, 64, (x, ob, oa))
    assert ob[0] == (x[:32] > 0).sum() and ob[40] == (x[32:] > 0).sum()
    assert oa[0] == int((x[:32] > 0).any())


def test_gpu_preset_by_name():
    a, b = rng.random(64, dtype=np.float32), rng.random(64, dtype=np.float32)
    out = np.zeros_like(a)
    rep = simgpu.launch(vadd, 1, 64, (a, b, out), gpu="H100")
    assert rep.gpu.name == "H100 SXM"


def test_ir_printer_shows_source_lines():
    k = simgpu.jit(vadd)
    text = k.ir
    assert "out[i] = a[i] + b[i]" in text and "ld(a, i)" in text


def test_instruction_counts_follow_active_warps():
    """A branch taken by lanes of only one warp costs the other warps nothing."""
    from simgpu import cuda

    def one_warp(x):
        i = cuda.grid(1)
        if i < 32:
            x[i] = x[i] * 2.0
    x = np.ones(128, np.float32)
    rep = simgpu.launch(one_warp, 1, 128, (x,))
    assert np.array_equal(x[:32], np.full(32, 2, np.float32)) and np.all(x[32:] == 1)
    rows = {r["line"]: r for r in rep.by_line()}
    line = [ln for ln, r in rows.items() if "x[i] * 2.0" in r["source"]][0]
    assert rows[line]["thread_inst_executed"] == 32 * (rows[line]["inst_executed"] // 1)


TILE_T = 32


def transpose_padded_expr(a, out):
    tile = cuda.shared.array((TILE_T, TILE_T + 1), float32)
    x = cuda.blockIdx.x * TILE_T + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE_T + cuda.threadIdx.y
    tile[cuda.threadIdx.y, cuda.threadIdx.x] = a[y, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE_T + cuda.threadIdx.x
    y = cuda.blockIdx.x * TILE_T + cuda.threadIdx.y
    out[y, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y]


def test_shared_shape_may_be_a_constant_expression():
    """simgpu's IR path folds (TILE, TILE + 1) at compile time; numba-cuda 0.30 does not (the
    shape's second entry types as int64, not a literal) and its TypingError reaches the user
    on the compiled path, as on a GPU."""
    a = rng.random((64, 64), dtype=np.float32)
    out = np.zeros_like(a)
    simgpu.launch(transpose_padded_expr, (2, 2), (32, 32), (a, out), executor="ir")
    assert np.array_equal(out, a.T)
    with pytest.raises(Exception, match="No implementation of function") as e:
        simgpu.launch(transpose_padded_expr, (2, 2), (32, 32), (a, out), executor="ptx")
    assert type(e.value).__module__.startswith("numba")
