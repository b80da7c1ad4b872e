"""Kernels used by the core tests (plain numba.cuda dialect)."""
import math

import numpy as np
from numba import cuda, float32, int32

TILE = 16
TPB = 128


def vadd(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def tree_reduce(x, partial):
    s = cuda.shared.array(TPB, float32)
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


def matmul_tiled(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = A.shape[1]
    acc = float32(0.0)
    for t in range((n + TILE - 1) // TILE):
        if y < A.shape[0] and t * TILE + tx < n:
            sA[ty, tx] = A[y, t * TILE + tx]
        else:
            sA[ty, tx] = 0
        if x < B.shape[1] and t * TILE + ty < n:
            sB[ty, tx] = B[t * TILE + ty, x]
        else:
            sB[ty, tx] = 0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = acc


def warp_sum(x, out):
    i = cuda.grid(1)
    v = x[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if cuda.laneid == 0:
        cuda.atomic.add(out, 0, v)


def histogram(data, bins):
    h = cuda.shared.array(16, int32)
    tid = cuda.threadIdx.x
    if tid < 16:
        h[tid] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(h, data[i] % 16, 1)
    cuda.syncthreads()
    if tid < 16:
        cuda.atomic.add(bins, tid, h[tid])


@cuda.jit(device=True)
def clamp(v, lo, hi):
    if v < lo:
        return lo
    if v > hi:
        return hi
    return v


def use_device_fn(x, out):
    i = cuda.grid(1)
    if i >= x.size:
        return
    out[i] = clamp(x[i], float32(-0.5), float32(0.5))


def loops_and_control(n_arr, out):
    i = cuda.grid(1)
    if i >= out.size:
        return
    total = 0
    k = 0
    while True:
        k += 1
        if k % 3 == 0:
            continue
        if k > n_arr[i]:
            break
        total += k
    for j in range(i % 5):
        total += j * 2 if j % 2 == 0 else -j
    out[i] = total


def math_mix(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = math.sin(v) * math.exp(v * float32(0.1)) + math.sqrt(abs(v)) - math.floor(v) + 0.5 * v


def typing_f64(x, out):
    i = cuda.grid(1)
    if i < x.size:
        acc = 0
        acc += x[i] * 1.1
        out[i] = acc


def grid2d(out):
    x, y = cuda.grid(2)
    if x < out.shape[1] and y < out.shape[0]:
        out[y, x] = y * 1000 + x + cuda.blockIdx.y * 0


def votes(x, out_ballot, out_any):
    i = cuda.grid(1)
    p = x[i] > 0
    b = cuda.ballot_sync(0xFFFFFFFF, p)
    a = cuda.any_sync(0xFFFFFFFF, p)
    out_ballot[i] = cuda.popc(b)
    out_any[i] = 1 if a else 0


def rows_in_lockstep(a, out):
    # every warp of every block reads row k of `a` in iteration k: the first warp on an SM
    # to ask for a line misses, the others hit it while it is still in flight
    acc = np.float32(0)
    for k in range(a.shape[0]):
        acc += a[k, cuda.threadIdx.x]
    out[cuda.grid(1)] = acc
