"""Compute-bound loops: each thread loads one value, runs ITERS iterations over 4 independent
dependency chains, and stores one value (so memory traffic is negligible).

fp32_fma:  a = a*b + c (float32)                 -> 4 FFMA per iteration
sin_f32:   a = sin(a) + c (float32, libdevice __nv_sinf, accurate path)
exp_f32:   a = exp(a * -0.5) (float32, libdevice __nv_expf)
int32:     a = (a*a + c) as int32 (quadratic, so not foldable) -> 4 IMAD per iteration
fp64_fma:  a = a*b + c (float64)                  -> 4 DFMA per iteration
Grid sizes: one wave ("1wave": 132 SMs x 8 blocks of 256 = 1056 blocks, the full-occupancy
capacity if <= 32 registers) and 8 waves ("8waves": 8448 blocks).

Also: divergent (if/else on lane parity, each side an FMA loop of ITERS) vs uniform branch
(if/else on block parity), small grid (16 blocks: 116 SMs idle), and partial last wave
(1056+5 blocks, 1056 and 2112 blocks as references).
"""
import math
import os
import numpy as np
from numba import cuda

TINY = os.environ.get("VALIDATION_TINY") == "1"
BLOCK = 256 if not TINY else 64
WAVE = 132 * 8 if not TINY else 2
ITERS = 4096 if not TINY else 8
ITERS_SFU = 512 if not TINY else 4
ITERS_F64 = 1024 if not TINY else 8


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


def copy_gridstride(a, b):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < a.size:
        b[i] = a[i]
        i += stride


def _fargs(n, dtype=np.float32):
    def f(rng):
        if dtype == np.int32:
            return (rng.integers(0, 1 << 20, size=n, dtype=np.int32), np.zeros(n, np.int32), np.int32(0))
        return (rng.random(n).astype(dtype), np.zeros(n, dtype), np.int32(0))
    return f


def _with_iters(f, iters):
    def g(rng):
        t = f(rng)
        return t[:-1] + (np.int32(iters),)
    return g


def _ref_loop(kind, iters):
    def ref(args):
        x = args[0]
        if kind == "fp32_fma":
            b, c = np.float32(0.9999), np.float32(0.0001)
            a = [x.astype(np.float64) + k for k in range(4)]
            # closed form of the affine recurrence, in float64
            bn = np.float64(b) ** iters
            s = (1 - bn) / (1 - np.float64(b)) * np.float64(c)
            return {1: sum(ak * bn + s for ak in a)}
        if kind == "fp64_fma":
            b, c = 0.9999, 0.0001
            bn = b ** iters
            s = (1 - bn) / (1 - b) * c
            return {1: sum((x + k) * bn + s for k in range(4))}
        if kind == "int32":
            m = min(4096, x.size)
            M = np.uint64(0xFFFFFFFF)
            c = np.uint64(1013904223)
            acc = None
            for k in range(4):
                a = (x[:m].astype(np.int64) + k).astype(np.uint64) & M
                for _ in range(iters):
                    a = (a * a + c) & M
                acc = a if acc is None else acc ^ a
            return {1: (slice(0, m), acc.astype(np.uint32).view(np.int32))}
        if kind in ("sin", "exp"):
            m = min(4096, x.size)
            a = [x[:m].astype(np.float64) + k for k in (0.0, 0.25, 0.5, 0.75)]
            for _ in range(iters):
                if kind == "sin":
                    a = [np.sin(v) + 0.5 for v in a]
                else:
                    a = [np.exp(v * -0.5) for v in a]
            return {1: (slice(0, m), sum(a))}
        return {}
    return ref


def _cases():
    cases = []
    for wname, nblocks in (("1wave", WAVE), ("8waves", 8 * WAVE)):
        n = nblocks * BLOCK
        for name, k, iters, dtype, flop_per_iter, kind in (
                ("fp32_fma", fp32_fma, ITERS, np.float32, 8, "fp32_fma"),
                ("sin_f32", sin_f32, ITERS_SFU, np.float32, 4, "sin"),
                ("exp_f32", exp_f32, ITERS_SFU, np.float32, 4, "exp"),
                ("int32_mad", int32_mad, ITERS, np.int32, 8, "int32"),
                ("fp64_fma", fp64_fma, ITERS_F64, np.float64, 8, "fp64_fma")):
            cases.append(dict(
                name=f"{name}_{wname}", kernel=k, grid=(nblocks,), block=(BLOCK,),
                args=_with_iters(_fargs(n, dtype), iters), outputs=(1,),
                tags=("compute", name, wname), flops=n * iters * flop_per_iter,
                bytes=2 * n * np.dtype(dtype).itemsize, ref=_ref_loop(kind, iters),
                tol=(1e-3 if kind != "int32" else 0.0),
                notes=f"{nblocks} blocks x {BLOCK} threads, {iters} iterations x 4 chains "
                      f"(flops counts FMA as 2; for sin/exp it counts calls)"))
    # divergence (8 waves)
    n = 8 * WAVE * BLOCK
    for name, k in (("divergent_lane_parity", divergent_lane), ("uniform_block_parity", uniform_branch)):
        cases.append(dict(
            name=name, kernel=k, grid=(8 * WAVE,), block=(BLOCK,), args=_with_iters(_fargs(n), ITERS),
            outputs=(1,), tags=("compute", "divergence", name), flops=n * ITERS * 4, bytes=2 * n * 4,
            notes="each thread does ITERS iterations of 2 FMA chains (a*b+c vs a*c+b: same cost); "
                  "lane parity makes every warp run both loops"))
    # small grid and partial waves (fp32_fma)
    for name, nblocks in (("fp32_fma_grid16", 16), ("fp32_fma_wave1_exact", WAVE),
                          ("fp32_fma_wave1_plus5", WAVE + 5), ("fp32_fma_wave2_exact", 2 * WAVE)):
        n = nblocks * BLOCK
        cases.append(dict(
            name=name, kernel=fp32_fma, grid=(nblocks,), block=(BLOCK,),
            args=_with_iters(_fargs(n), ITERS), outputs=(1,), tags=("compute", "waves", name),
            flops=n * ITERS * 8, bytes=2 * n * 4, ref=_ref_loop("fp32_fma", ITERS), tol=1e-3,
            notes=f"{nblocks} blocks of {BLOCK}; a wave is 132 SMs x 8 blocks = {WAVE} blocks at full occupancy"))
    # small grid memory kernel: 16 blocks copy 8 MiB with a grid-stride loop
    n = (8 * 1024 * 1024 // 4) if not TINY else 4096
    cases.append(dict(
        name="copy_gridstride_grid16_L2", kernel=copy_gridstride, grid=(16,), block=(BLOCK,),
        args=lambda rng, n=n: (rng.random(n, dtype=np.float32), np.zeros(n, np.float32)),
        outputs=(1,), tags=("memory", "copy", "small-grid", "fits-L2"), flops=0, bytes=2 * n * 4,
        ref=lambda args: {1: args[0]},
        notes="16 blocks of 256 threads copy 8 MiB: bandwidth limited by 16 SMs' outstanding requests"))
    return cases


CASES = _cases()
