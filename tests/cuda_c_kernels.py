"""Shared by the CUDA C tensor-core tests: validation/tensor_cores/cuda_c/kernels.py (loaded by
path, under its own name) and the tensor-core model's answer for a GEMM chained in k16 steps."""
import importlib.util
import os

import numpy as np

from simgpu.ptx import ops_mma

_PATH = os.path.join(os.path.dirname(__file__), "..", "validation", "tensor_cores", "cuda_c", "kernels.py")
_spec = importlib.util.spec_from_file_location("cuda_c_kernels", _PATH)
C = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(C)


def chained_k16(a, bt):
    """A @ bt.T as the tensor core sums it: the k16 steps in order, each through ops_mma.fused_sum."""
    a, b = a.astype(np.float64), bt.astype(np.float64).T
    ea, eb = ops_mma.exponents("f16", a), ops_mma.exponents("f16", b)
    acc = np.zeros((a.shape[0], b.shape[1]))
    for s in range(0, a.shape[1], 16):
        acc = ops_mma.fused_sum(acc, a[:, None, s:s + 16] * b[s:s + 16].T[None],
                                ea[:, None, s:s + 16] + eb[s:s + 16].T[None])
    return acc.astype(np.float32)
