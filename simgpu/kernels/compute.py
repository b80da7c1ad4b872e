"""Compute-bound loops: each thread loads one value, runs `iters` iterations of independent
dependency chains and stores one value.

fp32_fma, sin_f32, exp_f32, int32_mad, fp64_fma, divergent_lane, uniform_branch (suite
compute.py; tests/test_kernel_library.py keeps them identical); sin_loop: one sin chain
(benchmarks/bench_timing.py).
"""
import math

import numpy as np

from .. import cuda


def fp32_fma(x, out, iters):
    i = cuda.grid(1)
    a0 = x[i]
    a1 = a0 + np.float32(1.0)
    a2 = a0 + np.float32(2.0)
    a3 = a0 + np.float32(3.0)
    b = np.float32(0.9999)
    c = np.float32(0.0001)
    for it in range(iters):
        a0 = a0 * b + c
        a1 = a1 * b + c
        a2 = a2 * b + c
        a3 = a3 * b + c
    out[i] = a0 + a1 + a2 + a3


def sin_f32(x, out, iters):
    i = cuda.grid(1)
    a0 = x[i]
    a1 = a0 + np.float32(0.25)
    a2 = a0 + np.float32(0.5)
    a3 = a0 + np.float32(0.75)
    c = np.float32(0.5)
    for it in range(iters):
        a0 = math.sin(a0) + c
        a1 = math.sin(a1) + c
        a2 = math.sin(a2) + c
        a3 = math.sin(a3) + c
    out[i] = a0 + a1 + a2 + a3


def exp_f32(x, out, iters):
    i = cuda.grid(1)
    a0 = x[i]
    a1 = a0 + np.float32(0.25)
    a2 = a0 + np.float32(0.5)
    a3 = a0 + np.float32(0.75)
    m = np.float32(-0.5)
    for it in range(iters):
        a0 = math.exp(a0 * m)
        a1 = math.exp(a1 * m)
        a2 = math.exp(a2 * m)
        a3 = math.exp(a3 * m)
    out[i] = a0 + a1 + a2 + a3


def int32_mad(x, out, iters):
    i = cuda.grid(1)
    a0 = x[i]
    a1 = np.int32(a0 + np.int32(1))
    a2 = np.int32(a0 + np.int32(2))
    a3 = np.int32(a0 + np.int32(3))
    c = np.int32(1013904223)
    for it in range(iters):
        # quadratic map (not affine: the compiler cannot fold several iterations into one)
        a0 = np.int32(a0 * a0 + c)
        a1 = np.int32(a1 * a1 + c)
        a2 = np.int32(a2 * a2 + c)
        a3 = np.int32(a3 * a3 + c)
    out[i] = np.int32(a0 ^ a1 ^ a2 ^ a3)


def fp64_fma(x, out, iters):
    i = cuda.grid(1)
    a0 = x[i]
    a1 = a0 + 1.0
    a2 = a0 + 2.0
    a3 = a0 + 3.0
    b = 0.9999
    c = 0.0001
    for it in range(iters):
        a0 = a0 * b + c
        a1 = a1 * b + c
        a2 = a2 * b + c
        a3 = a3 * b + c
    out[i] = a0 + a1 + a2 + a3


def divergent_lane(x, out, iters):
    # even lanes run one FMA loop, odd lanes another: the warp executes both
    i = cuda.grid(1)
    a0 = x[i]
    a1 = a0 + np.float32(1.0)
    b = np.float32(0.9999)
    c = np.float32(0.0001)
    if cuda.threadIdx.x % 2 == 0:
        for it in range(iters):
            a0 = a0 * b + c
            a1 = a1 * b + c
    else:
        for it in range(iters):
            a0 = a0 * c + b
            a1 = a1 * c + b
    out[i] = a0 + a1


def uniform_branch(x, out, iters):
    # same two bodies, but the branch is uniform per block (block parity): no divergence
    i = cuda.grid(1)
    a0 = x[i]
    a1 = a0 + np.float32(1.0)
    b = np.float32(0.9999)
    c = np.float32(0.0001)
    if cuda.blockIdx.x % 2 == 0:
        for it in range(iters):
            a0 = a0 * b + c
            a1 = a1 * b + c
    else:
        for it in range(iters):
            a0 = a0 * c + b
            a1 = a1 * c + b
    out[i] = a0 + a1


def sin_loop(x, y, iters):
    i = cuda.grid(1)
    a = x[i]
    for it in range(iters):
        a = math.sin(a) + np.float32(0.5)
    y[i] = a
