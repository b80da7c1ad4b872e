"""Kernels that each exercise one feature of the frontend (device functions, loops with break and
continue, float32 math, numba's typing, 2D grids, votes) or of the memory model, for the core
tests and the CUDA-simulator oracle; plain numba.cuda dialect.  The classic kernels (vadd,
tree_reduce, tiled matmul, warp_sum, histogram16, ...) live in simgpu.kernels."""
import math

import numpy as np
from numba import cuda, float32


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
