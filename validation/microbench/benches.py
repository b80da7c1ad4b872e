"""Calibration microbenchmarks for the H200 (run by validation/microbench/run_micro.py).

Every timed or profiled kernel is named mb_* (ncu filters on that name); buffer set-up kernels
are named setup_*. Each entry of BENCHES:
  name, group, kernel (plain function), jit (cuda.jit options), grid, block,
  setup(ctx) -> tuple of device args (ctx caches big buffers between entries),
  params: what the analysis needs (bytes, accesses, ops, steps, ...).
Hot loops are `while` loops with a plain counter: numba's range() lowering keeps a 64-bit
remaining-count update (setp/selp/add.s64) in every unrolled iteration, which would distort issue rates.
Set VALIDATION_TINY=1 for tiny sizes (CUDA simulator checks only).
"""
import math
import os

import numpy as np
from numba import cuda

TINY = os.environ.get("VALIDATION_TINY") == "1"
MIB = 1024 * 1024
GIB = 1024 * MIB
NSM = 132
BLOCK = 256 if not TINY else 32
FULL = NSM * 8 if not TINY else 2            # one full-occupancy wave of 256-thread blocks

ITERS_FMA = 2048 if not TINY else 4
ITERS_SFU = 256 if not TINY else 2
ITERS_LAT = 65536 if not TINY else 4
ITERS_SMEM = 2048 if not TINY else 4
SMEM_ROWS = 8
SMEM_COLS = 512
SMEM_MASK = SMEM_COLS - 1
CHASE_SH = 4096                               # words in the shared-memory pointer chase
ATOM_K = 4

# --------------------------------------------------------------------------------------------
# set-up kernels (not profiled)


def setup_fill(a, v):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < a.size:
        a[i] = v + np.float32(i & 1023) * np.float32(1e-3)
        i += stride


# --------------------------------------------------------------------------------------------
# memory


def mb_read_stride(a, out, stride):
    # read one float every `stride` elements (DRAM granularity)
    i = cuda.grid(1)
    j = i * stride
    if j < a.size:
        v = a[j]
        if v == np.float32(-1.0):
            out[0] = v


def mb_write_stride(a, stride):
    i = cuda.grid(1)
    j = i * stride
    if j < a.size:
        a[j] = np.float32(2.0)


def mb_read_repeat(a, out, nelem, passes):
    # grid-stride read of a[0:nelem], `passes` times, 4 independent loads in flight per thread
    tid = cuda.grid(1)
    nt = cuda.gridsize(1)
    acc0 = np.float32(0.0)
    acc1 = np.float32(0.0)
    acc2 = np.float32(0.0)
    acc3 = np.float32(0.0)
    for p in range(passes):
        i = tid
        while i + 3 * nt < nelem:
            acc0 += a[i]
            acc1 += a[i + nt]
            acc2 += a[i + 2 * nt]
            acc3 += a[i + 3 * nt]
            i += 4 * nt
        while i < nelem:
            acc0 += a[i]
            i += nt
    s = acc0 + acc1 + acc2 + acc3
    if s == np.float32(-1.0):
        out[0] = s


def mb_write_repeat(a, nelem, passes):
    tid = cuda.grid(1)
    nt = cuda.gridsize(1)
    for p in range(passes):
        v = np.float32(p)
        i = tid
        while i + 3 * nt < nelem:
            a[i] = v
            a[i + nt] = v
            a[i + 2 * nt] = v
            a[i + 3 * nt] = v
            i += 4 * nt
        while i < nelem:
            a[i] = v
            i += nt


def mb_copy(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i]


def mb_smem_bw(out):
    sh = cuda.shared.array((SMEM_ROWS, SMEM_COLS), np.float32)
    tid = cuda.threadIdx.x
    for k in range(tid, SMEM_COLS, cuda.blockDim.x):
        for r in range(SMEM_ROWS):
            sh[r, k] = np.float32(r + k)
    cuda.syncthreads()
    a0 = np.float32(0.0)
    a1 = np.float32(0.0)
    a2 = np.float32(0.0)
    a3 = np.float32(0.0)
    a4 = np.float32(0.0)
    a5 = np.float32(0.0)
    a6 = np.float32(0.0)
    a7 = np.float32(0.0)
    it = 0
    while it < ITERS_SMEM:
        j = (tid + it * 32) & SMEM_MASK
        a0 += sh[0, j]
        a1 += sh[1, j]
        a2 += sh[2, j]
        a3 += sh[3, j]
        a4 += sh[4, j]
        a5 += sh[5, j]
        a6 += sh[6, j]
        a7 += sh[7, j]
        it += 1
    s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7
    if s == np.float32(-1.0):
        out[0] = s


# --------------------------------------------------------------------------------------------
# latency (single thread, dependent loads)


def mb_chase(a, out, steps):
    j = 0
    s = 0
    while s < steps:
        j = a[j]
        s += 1
    out[0] = j


def mb_chase_shared(a, out, steps):
    sh = cuda.shared.array(CHASE_SH, np.int32)
    for k in range(CHASE_SH):
        sh[k] = a[k]
    j = 0
    s = 0
    while s < steps:
        j = sh[j]
        s += 1
    out[0] = j


def mb_chase_u32(a, out, steps):
    # unsigned index: numba emits no negative-index wrap-around, so the dependent chain per step is
    # LDG -> one IMAD.WIDE.U32 (address) -> LDG
    j = np.uint32(0)
    s = 0
    while s < steps:
        j = a[j]
        s += 1
    out[0] = j


def mb_chase_shared_u32(a, out, steps):
    sh = cuda.shared.array(CHASE_SH, np.uint32)
    for k in range(CHASE_SH):
        sh[k] = a[k]
    j = np.uint32(0)
    s = 0
    while s < steps:
        j = sh[j]
        s += 1
    out[0] = j


def mb_read_repeat8(a, out, nelem, passes):
    # as mb_read_repeat with 8 independent loads in flight per thread
    tid = cuda.grid(1)
    nt = cuda.gridsize(1)
    acc0 = np.float32(0.0)
    acc1 = np.float32(0.0)
    acc2 = np.float32(0.0)
    acc3 = np.float32(0.0)
    acc4 = np.float32(0.0)
    acc5 = np.float32(0.0)
    acc6 = np.float32(0.0)
    acc7 = np.float32(0.0)
    for p in range(passes):
        i = tid
        while i + 7 * nt < nelem:
            acc0 += a[i]
            acc1 += a[i + nt]
            acc2 += a[i + 2 * nt]
            acc3 += a[i + 3 * nt]
            acc4 += a[i + 4 * nt]
            acc5 += a[i + 5 * nt]
            acc6 += a[i + 6 * nt]
            acc7 += a[i + 7 * nt]
            i += 8 * nt
        while i < nelem:
            acc0 += a[i]
            i += nt
    s = acc0 + acc1 + acc2 + acc3 + acc4 + acc5 + acc6 + acc7
    if s == np.float32(-1.0):
        out[0] = s


def mb_fma_latency(x, out):
    a = x[cuda.threadIdx.x]
    b = np.float32(0.9999)
    c = np.float32(0.0001)
    it = 0
    while it < ITERS_LAT:
        a = a * b + c
        it += 1
    out[cuda.threadIdx.x] = a


def mb_dfma_latency(x, out):
    a = x[cuda.threadIdx.x]
    it = 0
    while it < ITERS_LAT:
        a = a * 0.9999 + 0.0001
        it += 1
    out[cuda.threadIdx.x] = a


# --------------------------------------------------------------------------------------------
# issue rates (8 independent chains per thread)


def mb_fma_f32(x, out):
    i = cuda.grid(1)
    a0 = x[i]
    a1 = a0 + np.float32(0.1)
    a2 = a0 + np.float32(0.2)
    a3 = a0 + np.float32(0.3)
    a4 = a0 + np.float32(0.4)
    a5 = a0 + np.float32(0.5)
    a6 = a0 + np.float32(0.6)
    a7 = a0 + np.float32(0.7)
    b = np.float32(0.9999)
    c = np.float32(0.0001)
    it = 0
    while it < ITERS_FMA:
        a0 = a0 * b + c
        a1 = a1 * b + c
        a2 = a2 * b + c
        a3 = a3 * b + c
        a4 = a4 * b + c
        a5 = a5 * b + c
        a6 = a6 * b + c
        a7 = a7 * b + c
        it += 1
    out[i] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7


def mb_fma_f64(x, out):
    i = cuda.grid(1)
    a0 = x[i]
    a1 = a0 + 0.1
    a2 = a0 + 0.2
    a3 = a0 + 0.3
    a4 = a0 + 0.4
    a5 = a0 + 0.5
    a6 = a0 + 0.6
    a7 = a0 + 0.7
    it = 0
    while it < ITERS_FMA // 4:
        a0 = a0 * 0.9999 + 0.0001
        a1 = a1 * 0.9999 + 0.0001
        a2 = a2 * 0.9999 + 0.0001
        a3 = a3 * 0.9999 + 0.0001
        a4 = a4 * 0.9999 + 0.0001
        a5 = a5 * 0.9999 + 0.0001
        a6 = a6 * 0.9999 + 0.0001
        a7 = a7 * 0.9999 + 0.0001
        it += 1
    out[i] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7


def mb_iadd_i32(x, out):
    # coupled additions (a_k += a_{k+1}): not foldable into a closed form
    i = cuda.grid(1)
    a0 = x[i]
    a1 = np.int32(a0 + np.int32(1))
    a2 = np.int32(a0 + np.int32(2))
    a3 = np.int32(a0 + np.int32(3))
    a4 = np.int32(a0 + np.int32(4))
    a5 = np.int32(a0 + np.int32(5))
    a6 = np.int32(a0 + np.int32(6))
    a7 = np.int32(a0 + np.int32(7))
    it = 0
    while it < ITERS_FMA:
        a0 = np.int32(a0 + a1)
        a1 = np.int32(a1 + a2)
        a2 = np.int32(a2 + a3)
        a3 = np.int32(a3 + a4)
        a4 = np.int32(a4 + a5)
        a5 = np.int32(a5 + a6)
        a6 = np.int32(a6 + a7)
        a7 = np.int32(a7 + a0)
        it += 1
    out[i] = np.int32(a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7)


def mb_imad_i32(x, out):
    i = cuda.grid(1)
    a0 = x[i]
    a1 = np.int32(a0 + np.int32(1))
    a2 = np.int32(a0 + np.int32(2))
    a3 = np.int32(a0 + np.int32(3))
    a4 = np.int32(a0 + np.int32(4))
    a5 = np.int32(a0 + np.int32(5))
    a6 = np.int32(a0 + np.int32(6))
    a7 = np.int32(a0 + np.int32(7))
    c = np.int32(1013904223)
    it = 0
    while it < ITERS_FMA:
        a0 = np.int32(a0 * a0 + c)
        a1 = np.int32(a1 * a1 + c)
        a2 = np.int32(a2 * a2 + c)
        a3 = np.int32(a3 * a3 + c)
        a4 = np.int32(a4 * a4 + c)
        a5 = np.int32(a5 * a5 + c)
        a6 = np.int32(a6 * a6 + c)
        a7 = np.int32(a7 * a7 + c)
        it += 1
    out[i] = np.int32(a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7)


def mb_sin_f32(x, out):
    i = cuda.grid(1)
    a0 = x[i]
    a1 = a0 + np.float32(0.1)
    a2 = a0 + np.float32(0.2)
    a3 = a0 + np.float32(0.3)
    a4 = a0 + np.float32(0.4)
    a5 = a0 + np.float32(0.5)
    a6 = a0 + np.float32(0.6)
    a7 = a0 + np.float32(0.7)
    it = 0
    while it < ITERS_SFU:
        a0 = math.sin(a0)
        a1 = math.sin(a1)
        a2 = math.sin(a2)
        a3 = math.sin(a3)
        a4 = math.sin(a4)
        a5 = math.sin(a5)
        a6 = math.sin(a6)
        a7 = math.sin(a7)
        it += 1
    out[i] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7


def mb_exp_f32(x, out):
    i = cuda.grid(1)
    a0 = x[i]
    a1 = a0 + np.float32(0.1)
    a2 = a0 + np.float32(0.2)
    a3 = a0 + np.float32(0.3)
    a4 = a0 + np.float32(0.4)
    a5 = a0 + np.float32(0.5)
    a6 = a0 + np.float32(0.6)
    a7 = a0 + np.float32(0.7)
    it = 0
    while it < ITERS_SFU:
        a0 = math.exp(-a0)
        a1 = math.exp(-a1)
        a2 = math.exp(-a2)
        a3 = math.exp(-a3)
        a4 = math.exp(-a4)
        a5 = math.exp(-a5)
        a6 = math.exp(-a6)
        a7 = math.exp(-a7)
        it += 1
    out[i] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7


# --------------------------------------------------------------------------------------------
# atomics and launch


def mb_atomic_one(out):
    for k in range(ATOM_K):
        cuda.atomic.add(out, 0, np.float32(1.0))


def mb_atomic_one_int(out):
    for k in range(ATOM_K):
        cuda.atomic.add(out, 0, np.uint32(1))


def mb_atomic_lane(out):
    lane = cuda.threadIdx.x % 32
    for k in range(ATOM_K):
        cuda.atomic.add(out, lane, np.float32(1.0))


def mb_atomic_warp(out):
    # one address per warp (all 32 lanes of a warp hit the same word)
    w = cuda.grid(1) // 32
    for k in range(ATOM_K):
        cuda.atomic.add(out, w, np.float32(1.0))


def mb_atomic_spread(out):
    i = cuda.grid(1)
    for k in range(ATOM_K):
        cuda.atomic.add(out, i, np.float32(1.0))


def mb_empty():
    pass


# --------------------------------------------------------------------------------------------
# set-up helpers

class Ctx:
    """Caches device buffers between benches."""

    def __init__(self):
        self.bufs = {}
        self.fill = cuda.jit(setup_fill)

    def f32(self, key, nelem):
        if key not in self.bufs:
            a = cuda.device_array(nelem, np.float32)
            self.fill[NSM * 8, 256](a, np.float32(1.0))
            self.bufs[key] = a
        return self.bufs[key]

    def zeros(self, n, dtype=np.float32):
        return cuda.to_device(np.zeros(n, dtype))

    def drop(self, key):
        self.bufs.pop(key, None)


def chase_array(nbytes, seed=1, line=128):
    """int32 array of nbytes; a random single cycle through one word per `line`-byte line."""
    n = nbytes // 4
    per = line // 4
    nl = n // per
    rng = np.random.default_rng(seed)
    perm = rng.permutation(nl).astype(np.int64)
    a = np.zeros(n, np.int32)
    nxt = np.roll(perm, -1)
    a[perm * per] = (nxt * per).astype(np.int32)
    return a, nl


def _chase_setup(nbytes, steps, dtype=np.int32):
    def f(ctx):
        key = ("chase", nbytes, np.dtype(dtype).name)
        if key not in ctx.bufs:
            a, _ = chase_array(nbytes)
            ctx.bufs[key] = cuda.to_device(a.astype(dtype))
        return (ctx.bufs[key], ctx.zeros(1, dtype), np.int64(steps))
    return f


def _benches():
    B = []
    g1 = 1 * GIB if not TINY else 1 * MIB
    # (a) granularity: read/write one float every `s` elements of a 1 GiB buffer
    for s in (1, 2, 4, 8, 16, 32, 64, 128, 1024):
        n = g1 // 4
        m = n // s
        B.append(dict(name=f"gran_read_stride{s * 4}B", group="granularity", kernel=mb_read_stride,
                      grid=((m + BLOCK - 1) // BLOCK,), block=(BLOCK,),
                      setup=lambda ctx, s=s, n=n: (ctx.f32("g1", n), ctx.zeros(1), np.int64(s)),
                      params=dict(stride_bytes=4 * s, accesses=m, buffer_bytes=g1)))
    for s in (1, 8, 32):
        n = g1 // 4
        m = n // s
        B.append(dict(name=f"gran_write_stride{s * 4}B", group="granularity", kernel=mb_write_stride,
                      grid=((m + BLOCK - 1) // BLOCK,), block=(BLOCK,),
                      setup=lambda ctx, s=s, n=n: (ctx.f32("g1w", n), np.int64(s)),
                      params=dict(stride_bytes=4 * s, accesses=m, buffer_bytes=g1)))
    # (b) L2 working-set sweep: `passes` grid-stride reads of W bytes in one kernel
    sweep = (2, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 128, 200) if not TINY else (1,)
    for w in sweep:
        nb = w * MIB if not TINY else 64 * 1024
        passes = 10
        B.append(dict(name=f"l2sweep_{w}MB", group="l2_sweep", kernel=mb_read_repeat,
                      grid=(FULL,), block=(BLOCK,),
                      setup=lambda ctx, nb=nb, passes=passes: (ctx.f32("big", (2 * GIB if not TINY else MIB) // 4),
                                                               ctx.zeros(1), np.int64(nb // 4), np.int64(passes)),
                      params=dict(working_set_bytes=nb, passes=passes, bytes_read=nb * passes)))
    # (d) bandwidths
    nb = 16 * MIB if not TINY else 64 * 1024
    B.append(dict(name="l2_bw_16MB_x100", group="bandwidth", kernel=mb_read_repeat, grid=(FULL * 2,), block=(BLOCK,),
                  setup=lambda ctx, nb=nb: (ctx.f32("big", (2 * GIB if not TINY else MIB) // 4), ctx.zeros(1),
                                            np.int64(nb // 4), np.int64(100)),
                  params=dict(working_set_bytes=nb, passes=100, bytes_read=nb * 100)))
    nb = 2 * GIB if not TINY else MIB
    B.append(dict(name="dram_read_2GiB", group="bandwidth", kernel=mb_read_repeat, grid=(FULL * 4,), block=(BLOCK,),
                  setup=lambda ctx, nb=nb: (ctx.f32("big", nb // 4), ctx.zeros(1), np.int64(nb // 4), np.int64(1)),
                  params=dict(bytes_read=nb)))
    B.append(dict(name="dram_write_2GiB", group="bandwidth", kernel=mb_write_repeat, grid=(FULL * 4,), block=(BLOCK,),
                  setup=lambda ctx, nb=nb: (ctx.f32("bigw", nb // 4), np.int64(nb // 4), np.int64(1)),
                  params=dict(bytes_written=nb)))
    n = (1 * GIB if not TINY else MIB) // 4
    B.append(dict(name="dram_copy_1GiB", group="bandwidth", kernel=mb_copy, grid=((n + BLOCK - 1) // BLOCK,),
                  block=(BLOCK,), setup=lambda ctx, n=n: (ctx.f32("g1", n), ctx.f32("g1w", n)),
                  params=dict(bytes_read=4 * n, bytes_written=4 * n)))
    B.append(dict(name="smem_bw", group="bandwidth", kernel=mb_smem_bw, grid=(FULL,), block=(BLOCK,),
                  setup=lambda ctx: (ctx.zeros(1),),
                  params=dict(lds_per_thread=SMEM_ROWS * ITERS_SMEM, bytes_per_lds_thread=4,
                              threads=FULL * BLOCK)))
    # write-back: write 8 MiB 10 times (and 2 GiB once, above)
    nb = 8 * MIB if not TINY else 64 * 1024
    B.append(dict(name="writeback_8MB_x10", group="writeback", kernel=mb_write_repeat, grid=(FULL,), block=(BLOCK,),
                  setup=lambda ctx, nb=nb: (ctx.f32("bigw", (2 * GIB if not TINY else MIB) // 4), np.int64(nb // 4),
                                            np.int64(10)),
                  params=dict(working_set_bytes=nb, passes=10, bytes_written=nb * 10)))
    # (c) latency: pointer chase, one thread; steps S and 2S after a warm-up of one full cycle
    sizes = ([("8KB", 8 * 1024), ("64KB", 64 * 1024), ("192KB", 192 * 1024), ("1MB", MIB), ("4MB", 4 * MIB),
              ("16MB", 16 * MIB), ("32MB", 32 * MIB), ("48MB", 48 * MIB), ("128MB", 128 * MIB),
              ("1GB", GIB)] if not TINY else [("8KB", 8 * 1024)])
    for label, nbytes in sizes:
        lines = nbytes // 128
        warm = lines if nbytes <= 64 * MIB else 0
        S = 20000 if nbytes >= 64 * MIB else 50000
        if TINY:
            warm, S = lines, 16
        for mult in (1, 2):
            steps = warm + mult * S
            B.append(dict(name=f"chase_{label}_x{mult}", group="latency", kernel=mb_chase, grid=(1,), block=(1,),
                          setup=_chase_setup(nbytes, steps),
                          params=dict(footprint_bytes=nbytes, lines=lines, warm_steps=warm, S=S, mult=mult,
                                      steps=steps)))
    for mult in (1, 2):
        S = 100000 if not TINY else 16
        B.append(dict(name=f"chase_shared_x{mult}", group="latency", kernel=mb_chase_shared, grid=(1,), block=(1,),
                      setup=lambda ctx, S=S, mult=mult: (cuda.to_device(chase_array(CHASE_SH * 4, line=4)[0]),
                                                         ctx.zeros(1, np.int32), np.int64(mult * S)),
                      params=dict(S=S, mult=mult, steps=mult * S, footprint_bytes=CHASE_SH * 4)))
    # the same with unsigned indices (no wrap-around instructions in the dependent chain)
    sizes_u = ([("8KB", 8 * 1024), ("192KB", 192 * 1024), ("1MB", MIB), ("4MB", 4 * MIB), ("16MB", 16 * MIB),
                ("24MB", 24 * MIB), ("32MB", 32 * MIB), ("48MB", 48 * MIB), ("128MB", 128 * MIB), ("1GB", GIB)]
               if not TINY else [("8KB", 8 * 1024)])
    for label, nbytes in sizes_u:
        lines = nbytes // 128
        warm = lines if nbytes <= 64 * MIB else 0
        S = 20000 if nbytes >= 64 * MIB else 50000
        if TINY:
            warm, S = lines, 16
        for mult in (1, 2):
            steps = warm + mult * S
            B.append(dict(name=f"chaseu_{label}_x{mult}", group="latency_u32", kernel=mb_chase_u32, grid=(1,),
                          block=(1,), setup=_chase_setup(nbytes, steps, np.uint32),
                          params=dict(footprint_bytes=nbytes, lines=lines, warm_steps=warm, S=S, mult=mult,
                                      steps=steps)))
    for mult in (1, 2):
        S = 100000 if not TINY else 16
        B.append(dict(name=f"chaseu_shared_x{mult}", group="latency_u32", kernel=mb_chase_shared_u32, grid=(1,),
                      block=(1,),
                      setup=lambda ctx, S=S, mult=mult: (cuda.to_device(chase_array(CHASE_SH * 4, line=4)[0]
                                                                        .astype(np.uint32)),
                                                         ctx.zeros(1, np.uint32), np.int64(mult * S)),
                      params=dict(S=S, mult=mult, steps=mult * S, footprint_bytes=CHASE_SH * 4)))
    # bandwidth with 8 loads in flight per thread
    for label, nb, passes, grid in (("l2_bw8_16MB_x100", 16 * MIB, 100, FULL * 2),
                                    ("dram_read8_2GiB", 2 * GIB, 1, FULL * 4)):
        nb = nb if not TINY else 64 * 1024
        B.append(dict(name=label, group="bandwidth", kernel=mb_read_repeat8, grid=(grid,), block=(BLOCK,),
                      setup=lambda ctx, nb=nb, passes=passes: (ctx.f32("big", (2 * GIB if not TINY else MIB) // 4),
                                                               ctx.zeros(1), np.int64(nb // 4), np.int64(passes)),
                      params=dict(working_set_bytes=nb, passes=passes, bytes_read=nb * passes)))
    B.append(dict(name="fma_f32_latency", group="latency", kernel=mb_fma_latency, grid=(1,), block=(32,),
                  setup=lambda ctx: (ctx.f32("x32", 32), ctx.zeros(32)), params=dict(chain=ITERS_LAT)))
    B.append(dict(name="fma_f64_latency", group="latency", kernel=mb_dfma_latency, grid=(1,), block=(32,),
                  setup=lambda ctx: (cuda.to_device(np.ones(32)), ctx.zeros(32, np.float64)),
                  params=dict(chain=ITERS_LAT)))
    # (e) issue rates: 4 full waves of 256-thread blocks
    nblk = 4 * FULL
    nthr = nblk * BLOCK
    for name, k, dtype, ops, fm in (
            ("issue_fma_f32", mb_fma_f32, np.float32, 8 * ITERS_FMA, False),
            ("issue_fma_f64", mb_fma_f64, np.float64, 8 * (ITERS_FMA // 4), False),
            ("issue_iadd_i32", mb_iadd_i32, np.int32, 8 * ITERS_FMA, False),
            ("issue_imad_i32", mb_imad_i32, np.int32, 8 * ITERS_FMA, False),
            ("issue_sin_f32", mb_sin_f32, np.float32, 8 * ITERS_SFU, False),
            ("issue_sin_f32_fastmath", mb_sin_f32, np.float32, 8 * ITERS_SFU, True),
            ("issue_exp_f32", mb_exp_f32, np.float32, 8 * ITERS_SFU, False),
            ("issue_exp_f32_fastmath", mb_exp_f32, np.float32, 8 * ITERS_SFU, True)):
        def setup(ctx, dtype=dtype):
            if dtype == np.int32:
                x = cuda.to_device(np.arange(nthr, dtype=np.int32))
            else:
                x = cuda.to_device((np.arange(nthr) % 1000 / 1000.0).astype(dtype))
            return (x, ctx.zeros(nthr, dtype))
        B.append(dict(name=name, group="issue", kernel=k, grid=(nblk,), block=(BLOCK,), jit=dict(fastmath=fm),
                      setup=setup, params=dict(ops_per_thread=ops, threads=nthr, fastmath=fm)))
    # (g) atomics: FULL blocks x 256 threads x ATOM_K atomics each
    for name, k, dtype, nout in (("atomic_one_addr_f32", mb_atomic_one, np.float32, 1),
                                 ("atomic_one_addr_u32", mb_atomic_one_int, np.uint32, 1),
                                 ("atomic_32_addr_per_lane", mb_atomic_lane, np.float32, 32),
                                 ("atomic_per_warp_addr", mb_atomic_warp, np.float32, FULL * BLOCK // 32),
                                 ("atomic_spread_unique", mb_atomic_spread, np.float32, FULL * BLOCK)):
        B.append(dict(name=name, group="atomics", kernel=k, grid=(FULL,), block=(BLOCK,),
                      setup=lambda ctx, dtype=dtype, nout=nout: (ctx.zeros(nout, dtype),),
                      params=dict(atomics=FULL * BLOCK * ATOM_K, addresses=nout)))
    # (f) launch overhead
    B.append(dict(name="empty_kernel", group="launch", kernel=mb_empty, grid=(1,), block=(32,),
                  setup=lambda ctx: (), params=dict()))
    B.append(dict(name="empty_kernel_1056x256", group="launch", kernel=mb_empty, grid=(FULL,), block=(BLOCK,),
                  setup=lambda ctx: (), params=dict()))
    return B


BENCHES = _benches()
