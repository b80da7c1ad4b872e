"""The CUDA C mma.sync GEMM of issue 27's targets (validation/tensor_cores/cuda_c/kernels.py)
through simgpu.cuda_source: its outputs are the tensor core's, bit for bit -- the K loop's
m16n8k16 steps in order, each through ops_mma.fused_sum (the datapath measured on the H200,
validation/tensor_cores/README.md) -- and its fragments are laid out as the PTX ISA says."""
import importlib.util
import os

import numpy as np
import pytest

import simgpu
from simgpu.ptx import ops_mma
from simgpu.sass.toolchain import compiled_path_available

pytestmark = pytest.mark.skipif(not compiled_path_available()[0], reason="needs NVRTC and ptxas (NVIDIA's wheels)")

_PATH = os.path.join(os.path.dirname(__file__), "..", "validation", "tensor_cores", "cuda_c", "kernels.py")
_spec = importlib.util.spec_from_file_location("cuda_c_kernels", _PATH)
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)


def _chained_k16(a, bt):
    a, b = a.astype(np.float64), bt.astype(np.float64).T
    ea, eb = ops_mma.exponents("f16", a), ops_mma.exponents("f16", b)
    acc = np.zeros((a.shape[0], b.shape[1]))
    for s in range(0, a.shape[1], 16):
        acc = ops_mma.fused_sum(acc, a[:, None, s:s + 16] * b[s:s + 16].T[None],
                                ea[:, None, s:s + 16] + eb[s:s + 16].T[None])
    return acc.astype(np.float32)


def test_mma_sync_gemm_bit_exact():
    M, N, K = 32, 64, 48
    a, bt = C.inputs(M, N, K, seed=3)
    c = np.full((M, N), np.nan, np.float32)
    rep = simgpu.cuda_source(C.MMA_SYNC_CU, "mma_sync_gemm", arch="sm_90")[C.grid(M, N), 128](a, bt, c, M, N, K)
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in rep.extras["ptx"]["compiled"].ptx
    np.testing.assert_array_equal(c.view(np.uint32), _chained_k16(a, bt).view(np.uint32))
    # not the exact product rounded once: the test can tell the tensor core's sums from numpy's
    assert not np.array_equal(c, (a.astype(np.float64) @ bt.astype(np.float64).T).astype(np.float32))
