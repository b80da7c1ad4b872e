"""Property testing of kernels on simgpu: hypothesis strategies, traffic formulas, helpers.

    from hypothesis import given, settings
    from simgpu.testing import strides, run, assert_traffic, strided_copy_sectors

    @given(strides(max_stride=40))
    @settings(max_examples=20, deadline=None)
    def test_strided_copy_sectors(s):
        n = 4096
        a, b = np.ones(n, np.float32), np.zeros(n, np.float32)
        rep = run(copy_strided, -(-n // (256 * s)), 256, a, b, np.int32(s))
        assert_traffic(rep, ld_sectors=strided_copy_sectors(n, s, 4))

See docs/memory.md ("Property testing").
"""
from .formulas import (naive_matmul_global_elements, requests, strided_copy_sectors, strided_sectors,
                       tiled_matmul_global_elements, transpose_wavefronts_per_request, warp_sectors)
from .helpers import SHORT, assert_traffic, global_elements_loaded, run, traffic
from .strategies import (block_sizes, dtypes, launch_shapes, matrix_shapes, offsets, problem_sizes,
                         strides, tile_sizes)

__all__ = ["block_sizes", "dtypes", "launch_shapes", "matrix_shapes", "offsets", "problem_sizes",
           "strides", "tile_sizes", "warp_sectors", "strided_sectors", "strided_copy_sectors",
           "requests", "tiled_matmul_global_elements", "naive_matmul_global_elements",
           "transpose_wavefronts_per_request", "run", "traffic", "assert_traffic",
           "global_elements_loaded", "SHORT"]
