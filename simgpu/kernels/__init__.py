"""The kernel library: classic numba.cuda kernels, written once and used by the demo, the tests,
the benchmarks and the examples.  Each module's kernels run unchanged under numba.cuda
(`from .. import cuda` is simgpu's stand-in; validate/runner.py swaps in numba.cuda's names).

    elementwise     saxpy, vadd, ReLU (if, mask, float16), the sin/cos chain
    copies          coalesced, strided, misaligned, grid-stride copies
    compute         FMA / sin / exp / int / fp64 loops, divergent vs uniform branches
    matmul          naive, uncoalesced, tiled, tiled with bounds checks
    reduction       interleaved, sequential and shuffle trees; tree_reduce, reduce_sum, warp_sum
    transpose       naive, tiled, padded tiles
    histogram       shared and global atomics
    bank_conflicts  strided shared-memory accesses
    demo            the launches `simgpu demo` runs

The validation suite (validation/kernels/*.py) runs on a GPU machine without simgpu, so it keeps
its own copies of the kernels marked (suite) in these modules; tests/test_kernel_library.py
checks that every suite kernel is here with the same source.
"""
from .bank_conflicts import smem_stride
from .compute import divergent_lane, exp_f32, fp32_fma, fp64_fma, int32_mad, sin_f32, sin_loop, uniform_branch
from .copies import copy, copy_gridstride, copy_offset, copy_strided
from .elementwise import (add_k, cos_k, relu_branch, relu_f16, relu_if, relu_mask, saxpy, saxpy_inplace, sin_k,
                          sincos_fused, square_k, vadd)
from .histogram import hist_global, hist_shared, histogram16
from .matmul import (matmul_coalesced, matmul_naive, matmul_tiled, matmul_tiled_bounds, matmul_tiled_shape,
                     matmul_uncoalesced)
from .reduction import reduce_interleaved, reduce_sequential, reduce_shuffle, reduce_sum, tree_reduce, warp_sum
from .transpose import (transpose_naive, transpose_padded_checked, transpose_tiled, transpose_tiled_32x32,
                        transpose_tiled_padded)
