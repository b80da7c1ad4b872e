"""Reductions of float32.

Per-block partial sums of 256-thread blocks (suite): reduce_interleaved (`tid % (2*s) == 0`),
reduce_sequential (`tid < s`), reduce_shuffle (warp shuffles, then the 8 warp sums).
tree_reduce: the sequential tree for 128-thread blocks, with a bounds check; reduce_sum: the
tree for 256-thread blocks, then one atomic add per block into out[0]; warp_sum: a shuffle
reduction per warp, then one atomic add per warp.

The kernels marked (suite) are validation/kernels/reduction.py's, measured on the H200;
tests/test_kernel_library.py keeps the two copies identical.
"""
import numpy as np
from numba import float32

from .. import cuda

BLOCK = 256
WARPS = BLOCK // 32
TPB = 256          # reduce_sum's block
TREE_TPB = 128     # tree_reduce's block

def reduce_interleaved(a, partial):
    sh = cuda.shared.array(BLOCK, np.float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK + tid
    sh[tid] = a[i]
    cuda.syncthreads()
    s = 1
    while s < BLOCK:
        if tid % (2 * s) == 0:
            sh[tid] += sh[tid + s]
        cuda.syncthreads()
        s *= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sh[0]


def reduce_sequential(a, partial):
    sh = cuda.shared.array(BLOCK, np.float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * BLOCK + tid
    sh[tid] = a[i]
    cuda.syncthreads()
    s = BLOCK // 2
    while s > 0:
        if tid < s:
            sh[tid] += sh[tid + s]
        cuda.syncthreads()
        s //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = sh[0]


def reduce_shuffle(a, partial):
    sh = cuda.shared.array(WARPS, np.float32)
    tid = cuda.threadIdx.x
    lane = tid % 32
    warp = tid // 32
    v = a[cuda.blockIdx.x * BLOCK + tid]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if lane == 0:
        sh[warp] = v
    cuda.syncthreads()
    if warp == 0:
        if lane < WARPS:
            v = sh[lane]
        else:
            v = np.float32(0.0)
        off = 16
        while off > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
            off //= 2
        if lane == 0:
            partial[cuda.blockIdx.x] = v


def tree_reduce(x, partial):
    s = cuda.shared.array(TREE_TPB, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    s[tid] = x[i] if i < x.size else float32(0)
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            s[tid] += s[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = s[0]


def reduce_sum(x, out):
    s = cuda.shared.array(TPB, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    s[tid] = x[i] if i < x.size else float32(0)
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            s[tid] += s[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, s[0])


def warp_sum(x, out):
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)
