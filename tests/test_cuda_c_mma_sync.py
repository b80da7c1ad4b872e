"""The CUDA C mma.sync GEMM of issue 27's targets (validation/tensor_cores/cuda_c/kernels.py)
through simgpu.cuda_source: its outputs are the tensor core's, bit for bit -- the K loop's
m16n8k16 steps in order, each through ops_mma.fused_sum (the datapath measured on the H200,
validation/tensor_cores/README.md) -- and its fragments are laid out as the PTX ISA says."""

import numpy as np
import pytest

import simgpu
from simgpu.sass.toolchain import compiled_path_available

from cuda_c_kernels import C, chained_k16

pytestmark = pytest.mark.skipif(not compiled_path_available()[0], reason="needs NVRTC and ptxas (NVIDIA's wheels)")



def test_mma_sync_gemm_bit_exact():
    M, N, K = 32, 64, 48
    a, bt = C.inputs(M, N, K, seed=3)
    c = np.full((M, N), np.nan, np.float32)
    rep = simgpu.cuda_source(C.MMA_SYNC_CU, "mma_sync_gemm", arch="sm_90")[C.grid(M, N), 128](a, bt, c, M, N, K)
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in rep.extras["ptx"]["compiled"].ptx
    np.testing.assert_array_equal(c.view(np.uint32), chained_k16(a, bt).view(np.uint32))
    # not the exact product rounded once: the test can tell the tensor core's sums from numpy's
    assert not np.array_equal(c, (a.astype(np.float64) @ bt.astype(np.float64).T).astype(np.float32))
