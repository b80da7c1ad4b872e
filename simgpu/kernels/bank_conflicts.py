"""Shared-memory bank conflicts: smem_stride does `iters` read-modify-writes of
sh[((tid + it) * stride) & MASK] in a 32 KiB shared array (suite bank_conflicts.py;
tests/test_kernel_library.py keeps the copies identical).
"""
import numpy as np

from .. import cuda

SH_WORDS = 8192
MASK = SH_WORDS - 1
BLOCK = 256

def smem_stride(out, stride, iters):
    sh = cuda.shared.array(SH_WORDS, np.float32)
    tid = cuda.threadIdx.x
    for k in range(tid, SH_WORDS, BLOCK):
        sh[k] = np.float32(k)
    cuda.syncthreads()
    m = np.float32(1.0001)
    for it in range(iters):
        idx = ((tid + it) * stride) & MASK
        sh[idx] = sh[idx] * m + np.float32(1.0)
    cuda.syncthreads()
    out[cuda.blockIdx.x * BLOCK + tid] = sh[tid]
