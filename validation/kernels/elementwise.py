"""Elementwise chains (lecture examples).

relu_if:      y = x if x > 0 else 0                (branch, likely compiled to a select)
relu_mask:    y = x * (x > 0)                      (multiply by a 0/1 mask)
relu_f16:     float16 ReLU (half the bytes of float32)
sincos_fused: y = sin(x)^2 + cos(x)^2 in one kernel
unfused chain, one launch each: s = sin(x); c = cos(x); s2 = s*s; c2 = c*c; y = s2 + c2
Sizes: 8 MiB per float32 array (fits L2) and 512 MiB per array (exceeds).
"""
import math
import os
import numpy as np
from numba import cuda

TINY = os.environ.get("VALIDATION_TINY") == "1"
BLOCK = 256 if not TINY else 64


def relu_if(x, y):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if v > np.float32(0.0):
            y[i] = v
        else:
            y[i] = np.float32(0.0)


def relu_mask(x, y):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        y[i] = v * np.float32(v > np.float32(0.0))


def relu_f16(x, y):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        z = np.float16(0.0)
        if v > z:
            y[i] = v
        else:
            y[i] = z


def sincos_fused(x, y):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        s = math.sin(v)
        c = math.cos(v)
        y[i] = s * s + c * c


def sin_k(x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = math.sin(x[i])


def cos_k(x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = math.cos(x[i])


def square_k(x, y):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        y[i] = v * v


def add_k(a, b, y):
    i = cuda.grid(1)
    if i < a.size:
        y[i] = a[i] + b[i]


def _signed(rng, n, dtype=np.float32):
    return (rng.random(n, dtype=np.float32) * np.float32(2.0) - np.float32(1.0)).astype(dtype)


def _angles(rng, n):
    return rng.random(n, dtype=np.float32) * np.float32(6.2831855)


def _cases():
    MIB = 1024 * 1024
    sizes = [("L2", 8 * MIB), ("DRAM", 512 * MIB)] if not TINY else [("L2", 16384), ("DRAM", 32768)]
    cases = []
    for tag, nbytes in sizes:
        fits = "fits-L2" if tag == "L2" else "exceeds-L2"
        n = nbytes // 4
        g = ((n + BLOCK - 1) // BLOCK,)
        common = dict(grid=g, block=(BLOCK,), outputs=(1,))
        cases.append(dict(name=f"relu_if_f32_{tag}", kernel=relu_if,
                          args=lambda rng, n=n: (_signed(rng, n), np.zeros(n, np.float32)),
                          tags=("memory", "elementwise", "relu", fits), flops=n, bytes=8 * n,
                          ref=lambda a: {1: np.maximum(a[0], 0)}, tol=0.0, notes="ReLU via if/else", **common))
        cases.append(dict(name=f"relu_mask_f32_{tag}", kernel=relu_mask,
                          args=lambda rng, n=n: (_signed(rng, n), np.zeros(n, np.float32)),
                          tags=("memory", "elementwise", "relu", fits), flops=2 * n, bytes=8 * n,
                          ref=lambda a: {1: np.maximum(a[0], 0)}, tol=0.0, notes="ReLU as x * (x > 0)", **common))
        n16 = nbytes // 4  # same element count as float32: half the bytes
        cases.append(dict(name=f"relu_if_f16_{tag}", kernel=relu_f16,
                          args=lambda rng, n=n16: (_signed(rng, n, np.float16), np.zeros(n, np.float16)),
                          tags=("memory", "elementwise", "relu", "float16", fits), flops=n16, bytes=4 * n16,
                          ref=lambda a: {1: np.maximum(a[0], 0)}, tol=0.0,
                          notes="float16 ReLU, same element count as float32 ReLU (half the bytes)", **common))
        cases.append(dict(name=f"sincos_fused_{tag}", kernel=sincos_fused,
                          args=lambda rng, n=n: (_angles(rng, n), np.zeros(n, np.float32)),
                          tags=("elementwise", "sincos", "fused", fits), flops=5 * n, bytes=8 * n,
                          ref=lambda a: {1: np.ones(a[0].size)}, tol=1e-6,
                          notes="y = sin(x)^2 + cos(x)^2 in one kernel (flops counts sin, cos as 1 each)", **common))
        chain = [
            ("sin", sin_k, lambda rng, n=n: (_angles(rng, n), np.zeros(n, np.float32)),
             lambda a: {1: np.sin(a[0].astype(np.float64))}, 1e-6),
            ("cos", cos_k, lambda rng, n=n: (_angles(rng, n), np.zeros(n, np.float32)),
             lambda a: {1: np.cos(a[0].astype(np.float64))}, 1e-6),
            ("square_s", square_k, lambda rng, n=n: (np.sin(_angles(rng, n)), np.zeros(n, np.float32)),
             lambda a: {1: a[0].astype(np.float64) ** 2}, 1e-6),
            ("square_c", square_k, lambda rng, n=n: (np.cos(_angles(rng, n)), np.zeros(n, np.float32)),
             lambda a: {1: a[0].astype(np.float64) ** 2}, 1e-6),
        ]
        for step, (sname, k, args, ref, tol) in enumerate(chain):
            cases.append(dict(name=f"sincos_unfused{step + 1}_{sname}_{tag}", kernel=k, args=args,
                              tags=("elementwise", "sincos", "unfused", fits), flops=n, bytes=8 * n,
                              ref=ref, tol=tol, notes=f"unfused chain launch {step + 1}/5", **common))
        cases.append(dict(name=f"sincos_unfused5_add_{tag}", kernel=add_k,
                          args=lambda rng, n=n: (np.sin(_angles(rng, n)) ** 2, np.cos(_angles(rng, n)) ** 2,
                                                 np.zeros(n, np.float32)),
                          grid=g, block=(BLOCK,), outputs=(2,),
                          tags=("elementwise", "sincos", "unfused", fits), flops=n, bytes=12 * n,
                          ref=lambda a: {2: a[0].astype(np.float64) + a[1]}, tol=1e-6,
                          notes="unfused chain launch 5/5: y = s2 + c2"))
    return cases


CASES = _cases()
