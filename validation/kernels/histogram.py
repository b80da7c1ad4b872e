"""256-bin histograms of uint8 data with a grid-stride loop (grid = 132*8 blocks of 256).

shared:          per-block bins in shared memory (cuda.atomic.add on shared), then one global
                 atomic add per bin per block
global:          one global atomic add per element, uniform data over 256 bins
global_4bins:    same kernel, data only in bins 0..3 (heavy contention on 4 addresses)
Sizes: 8 MiB of uint8 (fits L2) and 512 MiB (exceeds); the contended case uses 128 MiB
(exceeds L2) to keep its run time sane.
"""
import os
import numpy as np
from numba import cuda

TINY = os.environ.get("VALIDATION_TINY") == "1"
NBINS = 256
BLOCK = 256
GRID = 132 * 8 if not TINY else 4


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


def _args(n, nb):
    def f(rng):
        return (rng.integers(0, nb, size=n, dtype=np.uint8), np.zeros(NBINS, np.uint32))
    return f


def _ref(args):
    return {1: np.bincount(args[0], minlength=NBINS).astype(np.uint32)}


def _cases():
    MIB = 1024 * 1024
    cases = []
    plan = [("shared", hist_shared, 256, 8 * MIB, "fits-L2"), ("shared", hist_shared, 256, 512 * MIB, "exceeds-L2"),
            ("global", hist_global, 256, 8 * MIB, "fits-L2"), ("global", hist_global, 256, 512 * MIB, "exceeds-L2"),
            ("global_4bins", hist_global, 4, 8 * MIB, "fits-L2"),
            ("global_4bins", hist_global, 4, 128 * MIB, "exceeds-L2")]
    for variant, k, nb, n, fits in plan:
        if TINY:
            n = 8192 if fits == "fits-L2" else 16384
        tag = "L2" if fits == "fits-L2" else "DRAM"
        cases.append(dict(
            name=f"hist_{variant}_{tag}", kernel=k, grid=(GRID,), block=(BLOCK,), args=_args(n, nb),
            outputs=(1,), tags=("atomics", "histogram", variant, fits), flops=0, bytes=n + NBINS * 4,
            ref=_ref, tol=0.0,
            notes=f"n={n} uint8 values uniform in [0,{nb}), grid-stride over {GRID}x{BLOCK} threads"))
    return cases


CASES = _cases()
