"""Block reductions of float32: each 256-thread block sums 256 elements (one per thread)
and writes its partial sum to partial[blockIdx.x].

interleaved: tree in shared memory, `if tid % (2*s) == 0` (divergent warps, bank conflicts)
sequential:  tree in shared memory, `if tid < s` (no divergence within active warps)
shuffle:     warp shuffle (shfl_down_sync) then the 8 warp sums through shared memory
Sizes: 8 MiB (2M floats, fits L2) and 512 MiB (128M floats, exceeds).
"""
import os
import numpy as np
from numba import cuda

TINY = os.environ.get("VALIDATION_TINY") == "1"
BLOCK = 256
WARPS = BLOCK // 32


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


def _args(n):
    def f(rng):
        return (rng.random(n, dtype=np.float32), np.zeros(n // BLOCK, np.float32))
    return f


def _ref(args):
    return {1: args[0].astype(np.float64).reshape(-1, BLOCK).sum(axis=1)}


def _cases():
    MIB = 1024 * 1024
    sizes = [("L2", 8 * MIB // 4), ("DRAM", 512 * MIB // 4)] if not TINY else [("L2", 2048), ("DRAM", 4096)]
    cases = []
    for tag, n in sizes:
        fits = "fits-L2" if tag == "L2" else "exceeds-L2"
        for variant, k in (("interleaved", reduce_interleaved), ("sequential", reduce_sequential),
                           ("shuffle", reduce_shuffle)):
            cases.append(dict(
                name=f"reduce_{variant}_{tag}", kernel=k, grid=(n // BLOCK,), block=(BLOCK,), args=_args(n),
                outputs=(1,), tags=("memory", "reduction", variant, fits), flops=n,
                bytes=n * 4 + (n // BLOCK) * 4, ref=_ref, tol=1e-5,
                notes=f"n={n} floats, one partial per 256-thread block"))
    return cases


CASES = _cases()
