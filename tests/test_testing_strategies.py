"""simgpu.testing: the strategies draw launchable shapes and supported dtypes, and the
formulas agree with brute-force counts."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numba import cuda

from simgpu.kernels import copy_strided
from simgpu.testing import (assert_traffic, block_sizes, dtypes, launch_shapes, matrix_shapes, offsets,
                            run, strided_copy_sectors, strided_sectors, strides, tile_sizes,
                            tiled_matmul_global_elements, transpose_wavefronts_per_request, warp_sectors)


def fill(x, v):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = v


@given(launch_shapes(dims=3))
def test_launch_shapes_are_within_cuda_limits(shape):
    grid, block = shape
    assert len(grid) == len(block) == 3
    assert np.prod(block) <= 1024 and block[2] <= 64 and min(block) >= 1
    assert np.prod(grid) <= 64 and min(grid) >= 1


@given(block_sizes(multiple_of=32), tile_sizes(), strides(), offsets(), matrix_shapes(max_side=50, ndim=3))
def test_scalar_strategies_respect_their_bounds(b, t, s, o, shape):
    assert b % 32 == 0 and 32 <= b <= 1024
    assert t * t <= 1024 and s >= 1 and o >= 0
    assert len(shape) == 3 and all(1 <= x <= 50 for x in shape)


@given(dtypes())
@settings(max_examples=11, deadline=None)
def test_every_drawn_dtype_runs_in_a_kernel(dt):
    x = np.zeros(40, dtype=dt)
    run(fill, 2, 32, x, dt.type(3))
    assert np.all(x == 3)


@given(st.integers(0, 300), st.integers(1, 32), st.integers(1, 80), st.sampled_from([1, 2, 4, 8, 16]))
def test_warp_sectors_equals_brute_force(first_elem, lanes, stride, size):
    """Counting distinct (byte // 32) over all bytes the lanes touch gives the formula."""
    first = first_elem * size
    brute = {b // 32 for l in range(lanes) for b in range(first + l * stride * size, first + l * stride * size + size)}
    assert warp_sectors(first, lanes, stride * size, size) == len(brute)


@given(st.integers(1, 60), st.sampled_from([4, 8, 16, 32]))
def test_tiled_matmul_formula_equals_counting_tiles(n, t):
    """Counting the in-bounds elements of every A and B tile every block loads."""
    g = -(-n // t)
    count = 0
    for by in range(g):
        for bx in range(g):
            for s in range(g):
                rows = min(t, n - by * t)
                cols = min(t, n - bx * t)
                ks = min(t, n - s * t)
                count += rows * ks + ks * cols
    assert tiled_matmul_global_elements(n, t) == count


def test_transpose_wavefront_formula():
    assert [transpose_wavefronts_per_request(32, p) for p in (False, True)] == [32, 1]
    assert transpose_wavefronts_per_request(16, False) == 8   # 16 lanes, words 16 apart: banks 0 and 16, 8 each


def test_assert_traffic_names_the_counter_that_differs():
    a, b = np.ones(256, np.float32), np.zeros(256, np.float32)
    rep = run(copy_strided, 1, 256, a, b, np.int64(1))
    assert_traffic(rep, ld_requests=8, ld_sectors=32)
    with pytest.raises(AssertionError, match="ld_sectors: simulated 32, expected 33"):
        assert_traffic(rep, ld_sectors=33)


@given(strides(max_stride=40))
@settings(max_examples=10, deadline=None)
def test_docs_example_strided_copy(s):
    """The example of docs/memory.md and simgpu.testing's docstring."""
    n = 4096
    a, b = np.ones(n, np.float32), np.zeros(n, np.float32)
    rep = run(copy_strided, -(-n // (256 * s)), 256, a, b, np.int32(s))
    assert_traffic(rep, ld_sectors=strided_copy_sectors(n, s, 4))
    assert strided_copy_sectors(n, s, 4) == strided_sectors(-(-n // s), s, 4)
