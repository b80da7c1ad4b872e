"""Hypothesis strategies for property tests of kernels run on simgpu.

Each returns a hypothesis strategy; combine them with ``@given``:

    from hypothesis import given
    from simgpu.testing import strides, dtypes

    @given(strides(), dtypes())
    def test_strided_copy(stride, dtype): ...
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

# dtypes simgpu kernels accept (numba's numeric types)
FLOAT_DTYPES = (np.float16, np.float32, np.float64)
INT_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


def dtypes(kinds="fi", exclude=()):
    """numpy dtypes: kinds 'f' (float16/32/64) and/or 'i' (signed and unsigned ints)."""
    pool = [d for k, group in (("f", FLOAT_DTYPES), ("i", INT_DTYPES)) if k in kinds for d in group]
    pool = [np.dtype(d) for d in pool if np.dtype(d) not in {np.dtype(e) for e in exclude}]
    return st.sampled_from(pool)


def block_sizes(max_threads=1024, multiple_of=1, min_threads=1):
    """Threads per 1-d block: multiples of `multiple_of` (32 gives whole warps)."""
    lo = -(-min_threads // multiple_of)
    return st.integers(lo, max_threads // multiple_of).map(lambda k: k * multiple_of)


@st.composite
def launch_shapes(draw, dims=1, max_threads_per_block=1024, max_blocks=64, max_block_dim=(1024, 1024, 64)):
    """(grid, block) pairs of `dims` dimensions within CUDA's limits, at most `max_blocks`
    blocks in all (keep simulations small)."""
    block, left = [], max_threads_per_block
    for d in range(dims):
        b = draw(st.integers(1, max(1, min(left, max_block_dim[d]))))
        block.append(b)
        left //= b
    grid, left = [], max_blocks
    for d in range(dims):
        g = draw(st.integers(1, max(1, left)))
        grid.append(g)
        left //= g
    return tuple(grid), tuple(block)


def matrix_shapes(min_side=1, max_side=96, square=False, ndim=2):
    """Matrix shapes (m, n) (or (n, n) when square; ndim 3 gives (m, n, k) for matmuls)."""
    side = st.integers(min_side, max_side)
    if square:
        return side.map(lambda n: (n,) * ndim)
    return st.tuples(*([side] * ndim))


def tile_sizes(choices=(4, 8, 16, 32)):
    """Tile edges for shared-memory tiling (a tile x tile block must fit in 1024 threads)."""
    return st.sampled_from(tuple(choices))


def strides(max_stride=64):
    """Element strides >= 1."""
    return st.integers(1, max_stride)


def offsets(max_offset=64):
    """Element offsets >= 0 (misalignment of a start address)."""
    return st.integers(0, max_offset)


def problem_sizes(max_elements=1 << 16):
    """Element counts of 1-d problems (often not a multiple of the block size)."""
    return st.integers(1, max_elements)
