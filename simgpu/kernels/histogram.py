"""Histograms with atomics.

256 bins of uint8 data, grid-stride loop (suite): hist_shared (per-block bins in shared
memory, then one global atomic per bin) and hist_global (one global atomic per element).
histogram16: 16 bins of int32 data (value % 16), one element per thread, shared bins.

The kernels marked (suite) are validation/kernels/histogram.py's, measured on the H200;
tests/test_kernel_library.py keeps the two copies identical.
"""
import numpy as np
from numba import int32

from .. import cuda

NBINS = 256

def hist_shared(data, hist):
    sh = cuda.shared.array(NBINS, np.uint32)
    tid = cuda.threadIdx.x
    sh[tid] = np.uint32(0)
    cuda.syncthreads()
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = data.size
    while i < n:
        cuda.atomic.add(sh, data[i], np.uint32(1))
        i += stride
    cuda.syncthreads()
    cuda.atomic.add(hist, tid, sh[tid])


def hist_global(data, hist):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    n = data.size
    while i < n:
        cuda.atomic.add(hist, data[i], np.uint32(1))
        i += stride


def histogram16(data, bins):
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
