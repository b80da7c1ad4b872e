"""Shared-memory bank conflicts: each thread does ITERS read-modify-writes of the float32 word
sh[((tid + it) * STRIDE) & MASK] in a 32 KiB shared array (8192 words; 32 banks of 4 bytes).

stride 1 and 33: conflict-free (1 wavefront per warp access)
stride 2:        2-way conflicts
stride 32:       32-way conflicts (all lanes in one bank)
Blocks of 256 threads, grid 132*8 (one full-occupancy wave); the output is the block's
first 256 shared words (the values race between iterations, so no reference).
"""
import os
import numpy as np
from numba import cuda

TINY = os.environ.get("VALIDATION_TINY") == "1"
SH_WORDS = 8192
MASK = SH_WORDS - 1
BLOCK = 256
GRID = 132 * 8 if not TINY else 2
ITERS = 1024 if not TINY else 4


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


def _cases():
    cases = []
    for s in (1, 2, 32, 33):
        cases.append(dict(
            name=f"smem_stride{s}", kernel=smem_stride, grid=(GRID,), block=(BLOCK,),
            args=lambda rng, s=s: (np.zeros(GRID * BLOCK, np.float32), np.int32(s), np.int32(ITERS)),
            outputs=(0,), tags=("shared-memory", "bank-conflicts", f"stride{s}"), flops=GRID * BLOCK * ITERS * 2,
            bytes=GRID * BLOCK * 4,
            notes=f"word stride {s}: expected {[1, 2, 32, 1][(1, 2, 32, 33).index(s)]}-way; "
                  f"per warp-iteration 1 LDS + 1 STS; ITERS={ITERS}"))
    return cases


CASES = _cases()
