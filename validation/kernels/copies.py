"""Copy kernels: coalesced, strided, misaligned, float16/float32/float64.

Sizes: "L2" = 8 MiB per array (input + output = 16 MiB, fits in the 50 MB L2);
"DRAM" = 512 MiB per array (1 GiB touched, 20x the L2).
Set VALIDATION_TINY=1 for tiny sizes (local CUDA-simulator checks only).
"""
import os
import numpy as np
from numba import cuda

TINY = os.environ.get("VALIDATION_TINY") == "1"
MIB = 1024 * 1024
SIZES = [("L2", 8 * MIB), ("DRAM", 512 * MIB)] if not TINY else [("L2", 16384), ("DRAM", 32768)]
BLOCK = 256 if not TINY else 64


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


def _ref_strided(s):
    def ref(args):
        a = args[0]
        e = np.zeros_like(a)
        e[::s] = a[::s]
        return {1: e}
    return ref


def _ref_offset(o):
    def ref(args):
        a = args[0]
        e = np.zeros_like(a)
        e[: a.size - o] = a[o:]
        return {1: e}
    return ref


def _cases():
    cases = []
    for tag, nbytes in SIZES:
        fits = "fits-L2" if tag == "L2" else "exceeds-L2"
        n = nbytes // 4
        cases.append(dict(
            name=f"copy_f32_coalesced_{tag}", kernel=copy, grid=((n + BLOCK - 1) // BLOCK,), block=(BLOCK,),
            args=lambda rng, n=n: (rng.random(n, dtype=np.float32), np.zeros(n, np.float32)),
            outputs=(1,), tags=("memory", "copy", "coalesced", fits), flops=0, bytes=2 * n * 4,
            ref=lambda args: {1: args[0]},
            notes="b[i]=a[i], one float32 per thread, 256-thread blocks"))
        for s in (2, 4, 8, 32):
            m = (n + s - 1) // s
            cases.append(dict(
                name=f"copy_f32_stride{s}_{tag}", kernel=copy_strided, grid=((m + BLOCK - 1) // BLOCK,), block=(BLOCK,),
                args=lambda rng, n=n, s=s: (rng.random(n, dtype=np.float32), np.zeros(n, np.float32), np.int32(s)),
                outputs=(1,), tags=("memory", "copy", "strided", f"stride{s}", fits), flops=0, bytes=2 * m * 4,
                ref=_ref_strided(s),
                notes=f"thread i copies element i*{s} (stride {4 * s} bytes); n/{s} threads; "
                      f"useful bytes = 2*4*n/{s}"))
        cases.append(dict(
            name=f"copy_f32_offset1_{tag}", kernel=copy_offset, grid=((n + BLOCK - 1) // BLOCK,), block=(BLOCK,),
            args=lambda rng, n=n: (rng.random(n, dtype=np.float32), np.zeros(n, np.float32), np.int32(1)),
            outputs=(1,), tags=("memory", "copy", "misaligned", fits), flops=0, bytes=2 * n * 4,
            ref=_ref_offset(1),
            notes="b[i]=a[i+1]: each warp's 128-byte read straddles two lines (5 sectors instead of 4)"))
        n16 = nbytes // 2
        cases.append(dict(
            name=f"copy_f16_coalesced_{tag}", kernel=copy, grid=((n16 + BLOCK - 1) // BLOCK,), block=(BLOCK,),
            args=lambda rng, n=n16: (rng.random(n, dtype=np.float32).astype(np.float16), np.zeros(n, np.float16)),
            outputs=(1,), tags=("memory", "copy", "coalesced", "float16", fits), flops=0, bytes=2 * n16 * 2,
            ref=lambda args: {1: args[0]},
            notes="float16 copy, same bytes as the float32 copy, twice the threads (2-byte accesses)"))
        n64 = nbytes // 8
        cases.append(dict(
            name=f"copy_f64_coalesced_{tag}", kernel=copy, grid=((n64 + BLOCK - 1) // BLOCK,), block=(BLOCK,),
            args=lambda rng, n=n64: (rng.random(n), np.zeros(n, np.float64)),
            outputs=(1,), tags=("memory", "copy", "coalesced", "float64", fits), flops=0, bytes=2 * n64 * 8,
            ref=lambda args: {1: args[0]},
            notes="float64 copy, same bytes as the float32 copy, half the threads (8-byte accesses)"))
    return cases


CASES = _cases()
