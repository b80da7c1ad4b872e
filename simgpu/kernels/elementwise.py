"""Elementwise kernels: saxpy, vector add, ReLU, the sin/cos chain.

relu_if, relu_mask, relu_f16, sincos_fused, sin_k, cos_k, square_k, add_k (suite): ReLU as an
if or a 0/1 mask, float16 ReLU, sin^2 + cos^2 fused and as five launches.
saxpy, saxpy_inplace, vadd, relu_branch: the lecture's and the demo's forms.

The kernels marked (suite) are validation/kernels/elementwise.py's, measured on the H200;
tests/test_kernel_library.py keeps the two copies identical.
"""
import math

import numpy as np

from .. import cuda


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


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def saxpy_inplace(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


def vadd(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def relu_branch(x, out):
    i = cuda.grid(1)
    if i < x.size:
        if x[i] > 0:
            out[i] = x[i]
        else:
            out[i] = 0
