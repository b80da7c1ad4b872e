"""The CUDA C wgmma + TMA GEMM of issue 27's targets (validation/tensor_cores/cuda_c/kernels.py,
WGMMA_TMA_CU) through simgpu.cuda_source: two host tensor maps with the 128-byte swizzle, TMA
into shared memory under an mbarrier's transaction count, m64n64k16 wgmma with both operands
from shared-memory descriptors.  Its outputs are the tensor core's, bit for bit -- the k16 steps
in order, each through ops_mma.fused_sum (the datapath measured on the H200 for mma.sync and
HGMMA, validation/tensor_cores/) -- so the descriptors, the swizzle and the D fragment layout
are read as the PTX ISA says (a wrong one moves or mixes elements)."""
import warnings

import numpy as np
import pytest

import simgpu
from simgpu.errors import SimGPUWarning
from simgpu.sass.toolchain import compiled_path_available

from cuda_c_kernels import C, chained_k16

pytestmark = pytest.mark.skipif(not compiled_path_available()[0], reason="needs NVRTC and ptxas (NVIDIA's wheels)")



def test_wgmma_tma_gemm_bit_exact():
    M, N, K = 128, 128, 128          # 2 x 2 blocks, two K steps (the mbarrier's phase flips)
    a, bt = C.inputs(M, N, K, seed=5)
    c = np.full((M, N), np.nan, np.float32)
    k = simgpu.cuda_source(C.WGMMA_TMA_CU, "wgmma_tma_gemm", arch="sm_90a")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SimGPUWarning)             # no race reported
        rep = k[C.wgmma_grid(M, N), 128](simgpu.tensor_map(a, (64, 64), swizzle=128),
                                         simgpu.tensor_map(bt, (64, 64), swizzle=128), c, M, N, K)
    ptx = rep.extras["ptx"]["compiled"].ptx
    assert "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16" in ptx
    assert "cp.async.bulk.tensor.2d" in ptx
    exact = a.astype(np.float64) @ bt.astype(np.float64).T
    assert np.allclose(c, exact, rtol=1e-3, atol=1e-3)
    np.testing.assert_array_equal(c.view(np.uint32), chained_k16(a, bt).view(np.uint32))
    # not the exact product rounded once: the test can tell the tensor core's sums from numpy's
    assert not np.array_equal(c, exact.astype(np.float32))
