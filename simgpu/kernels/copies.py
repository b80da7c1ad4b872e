"""Copy kernels: coalesced, strided, misaligned, and a grid-stride loop.

copy, copy_strided, copy_offset (suite copies.py) and copy_gridstride (suite compute.py).
tests/test_kernel_library.py keeps them identical to the suite's copies.
"""
from .. import cuda


def copy(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i]


def copy_strided(a, b, stride):
    # thread i copies element i*stride; only every stride-th element is touched
    i = cuda.grid(1)
    j = i * stride
    if j < a.size:
        b[j] = a[j]


def copy_offset(a, b, offset):
    # misaligned read: b[i] = a[i + offset]; writes stay aligned
    i = cuda.grid(1)
    if i + offset < a.size:
        b[i] = a[i + offset]


def copy_gridstride(a, b):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < a.size:
        b[i] = a[i]
        i += stride
