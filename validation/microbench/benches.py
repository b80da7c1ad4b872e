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


# ============================================================================================
# Second calibration set (validation/microbench/analyze2.py -> validation/data/h200_microbench2.json).
# Bench names start with atom2_, st2_ or bcast2_ (run with MICRO_ONLY='^(atom2_|st2_|bcast2_)').
#
# atom2_*:  global atomics, one per element, address read from an index array (histogram-like), so the
#           compiler cannot aggregate them over the warp; grid-stride over FULL x BLOCK threads, so each
#           warp instruction takes 32 consecutive elements of idx (the patterns are defined per 32-chunk).
# st2_*:    float32 stores, one every S bytes of a 16 MiB buffer that stays in L2, P passes in one kernel.
# bcast2_*: every block runs acc += B[k, col] over k (col = threadIdx.x + 32*(blockIdx.x % 16), block
#           (32, 8) like a naive matmul), so all SMs read the same new 128-byte lines at each k.

ATOM2_PER_THREAD = 24 if not TINY else 2
ATOM2_N = FULL * BLOCK * ATOM2_PER_THREAD     # 6,488,064 atomics per launch (TINY: 128)
ATOM2_NLINES = 65536                          # 8 MiB u32 array (fits L2) for the line patterns
ST2_BYTES = 16 * MIB if not TINY else 64 * 1024
BC2_N = 2048 if not TINY else 8
BC2_COLS = 512


def mb_atom2_u32(hist, idx, n):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        cuda.atomic.add(hist, idx[i], np.uint32(1))
        i += stride


def mb_atom2_f32(hist, idx, n):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        cuda.atomic.add(hist, idx[i], np.float32(1.0))
        i += stride


def mb_atom2_idx_only(hist, idx, n):
    # control: the same index reads without the atomic (a store that never happens keeps the loads)
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        v = idx[i]
        if v == np.uint32(0xFFFFFFFF):
            hist[0] = v
        i += stride


def mb_st2_stride(a, step, nper, passes):
    # `passes` times: a[j * step] = p for j in [0, nper), grid-stride, 4 stores per loop iteration
    tid = cuda.grid(1)
    nt = cuda.gridsize(1)
    for p in range(passes):
        v = np.float32(p)
        i = tid
        while i + 3 * nt < nper:
            a[i * step] = v
            a[(i + nt) * step] = v
            a[(i + 2 * nt) * step] = v
            a[(i + 3 * nt) * step] = v
            i += 4 * nt
        while i < nper:
            a[i * step] = v
            i += nt


def mb_bcast2(B, out, passes):
    # as the brief / a naive matmul: for k in range(n): acc += B[k, col]
    col = cuda.threadIdx.x + 32 * (cuda.blockIdx.x % 16)
    n = B.shape[0]
    acc = np.float32(0.0)
    for p in range(passes):
        for k in range(n):
            acc += B[k, col]
    out[cuda.blockIdx.x * 256 + cuda.threadIdx.y * 32 + cuda.threadIdx.x] = acc


def mb_bcast2_chase(A, out, n, passes):
    # the same lines in the same order (flat index j = k * 512 + col), but the next index is the loaded
    # value added to j (every element of A holds 512), so a warp has one load in flight: the dependent
    # chain per k is LDG -> IADD -> address -> LDG (cf. mb_chase_u32)
    col = cuda.threadIdx.x + 32 * (cuda.blockIdx.x % 16)
    tot = np.uint32(0)
    p = 0
    while p < passes:
        j = np.uint32(col)
        s = 0
        while s < n:
            j = np.uint32(j + A[j])
            s += 1
        tot = np.uint32(tot + j)
        p += 1
    out[cuda.blockIdx.x * 256 + cuda.threadIdx.y * 32 + cuda.threadIdx.x] = tot


def atom2_idx(kind, n=None, seed=7):
    """Host uint32 index array for an atom2 pattern.
    kind = ("lines", L, st): per 32-chunk c (one warp instruction), lanes j in groups of 32/L consecutive
           lanes -> L lines base + k*st (k = j // (32/L)), distinct words (j % (32/L)) in each line;
           base = (c % st) + (c // st) * L * st (mod ATOM2_NLINES), so nearby chunks use disjoint lines.
    kind = ("addrs", A): line c (mod ATOM2_NLINES), lane j -> word j % A (A=1: all lanes one address).
    kind = ("rand", nbins): uniform random in [0, nbins)."""
    n = ATOM2_N if n is None else n
    e = np.arange(n, dtype=np.int64)
    c, j = e // 32, e % 32
    if kind[0] == "lines":
        _, L, st = kind
        g = 32 // L
        base = (c % st) + (c // st) * L * st
        line = (base + (j // g) * st) % ATOM2_NLINES
        return (line * 32 + j % g).astype(np.uint32)
    if kind[0] == "addrs":
        A = kind[1]
        return ((c % ATOM2_NLINES) * 32 + j % A).astype(np.uint32)
    if kind[0] == "rand":
        return np.random.default_rng(seed).integers(0, kind[1], size=n).astype(np.uint32)
    raise ValueError(kind)


def atom2_stats(idx):
    """Per warp instruction (32-chunk): distinct 128-byte lines, distinct 32-byte sectors, distinct words."""
    ch = idx.reshape(-1, 32).astype(np.int64)
    s = np.sort(ch, axis=1)
    words = 1 + np.count_nonzero(np.diff(s, axis=1), axis=1)
    lines = np.sort(ch // 32, axis=1)
    nl = 1 + np.count_nonzero(np.diff(lines, axis=1), axis=1)
    sec = np.sort(ch // 8, axis=1)
    ns = 1 + np.count_nonzero(np.diff(sec, axis=1), axis=1)
    return {"warp_instructions": int(ch.shape[0]), "lines_per_warp_inst": float(nl.mean()),
            "sectors_per_warp_inst": float(ns.mean()), "words_per_warp_inst": float(words.mean()),
            "distinct_words_total": int(np.unique(idx).size)}


def _benches2():
    B = []
    nthr = FULL * BLOCK
    # ---- 1. atomics vs address spread
    pats = []
    for L in (1, 2, 4, 8, 16, 32):
        pats.append((f"atom2_lines{L}_u32", ("lines", L, 1), "u32", "a_lines"))
    for sb in (256, 1024, 4096, 16384, 65536, MIB):
        lab = f"{sb // 1024}K" if sb < MIB else "1M"
        if sb < 1024:
            lab = f"{sb}B"
        pats.append((f"atom2_8lines_stride{lab}_u32", ("lines", 8, sb // 128), "u32", "b_line_stride"))
    for A in (1, 4):
        pats.append((f"atom2_1line_{A}addr_u32", ("addrs", A), "u32", "c_addrs_in_one_line"))
    pats.append(("atom2_hist256_u32", ("rand", 256), "u32", "d_hist256"))
    pats.append(("atom2_hist256_f32", ("rand", 256), "f32", "d_hist256"))
    pats.append(("atom2_1line_4addr_f32", ("addrs", 4), "f32", "d_f32_4addr"))
    pats.append(("atom2_lines1_f32", ("lines", 1, 1), "f32", "extra"))
    pats.append(("atom2_rand2M_u32", ("rand", ATOM2_NLINES * 32), "u32", "extra"))
    pats.append(("atom2_idx_only", ("lines", 1, 1), "none", "control"))
    for name, kind, dt, sub in pats:
        kern = {"u32": mb_atom2_u32, "f32": mb_atom2_f32, "none": mb_atom2_idx_only}[dt]
        nbins = kind[1] if kind[0] == "rand" else ATOM2_NLINES * 32

        def setup(ctx, kind=kind, dt=dt, nbins=nbins):
            idx = atom2_idx(kind)
            hd = np.float32 if dt == "f32" else np.uint32
            return (ctx.zeros(max(nbins, ATOM2_NLINES * 32) if kind[0] != "rand" else nbins, hd),
                    cuda.to_device(idx), np.int64(idx.size))
        desc = {"lines": "L lines, line stride st*128 B", "addrs": "A addresses in one line",
                "rand": "uniform random over nbins words"}[kind[0]]
        B.append(dict(name=name, group="atomics2", kernel=kern, grid=(FULL,), block=(BLOCK,), setup=setup,
                      params=dict(subgroup=sub, pattern=list(kind), pattern_desc=desc, dtype=dt,
                                  atomics=ATOM2_N if dt != "none" else 0, elements=ATOM2_N,
                                  warp_instructions=ATOM2_N // 32, threads=nthr,
                                  idx_bytes=4 * ATOM2_N, nbins=nbins)))
    # ---- 2. partial-sector stores into an L2-resident 16 MiB buffer
    for S in (4, 32, 128):
        step = S // 4
        nper = ST2_BYTES // S
        for P in ((50, 100) if not TINY else (1, 2)):
            B.append(dict(name=f"st2_l2_stride{S}B_p{P}", group="store_l2", kernel=mb_st2_stride,
                          grid=(FULL,), block=(BLOCK,),
                          setup=lambda ctx, step=step, nper=nper, P=P: (ctx.f32("st2", ST2_BYTES // 4), np.int64(step),
                                                                        np.int64(nper), np.int64(P)),
                          params=dict(stride_bytes=S, stores_per_pass=nper, passes=P, buffer_bytes=ST2_BYTES,
                                      stores=nper * P, warp_stores=nper * P // 32,
                                      sectors_expected=(nper * P * 4 // 32 if S == 4 else nper * P))))
    # ---- 3. lockstep broadcast
    for name, kern, grid in (("bcast2", mb_bcast2, FULL), ("bcast2_chase", mb_bcast2_chase, FULL),
                             ("bcast2_grid16", mb_bcast2, 16), ("bcast2_chase_grid16", mb_bcast2_chase, 16)):
        for P in (1, 2):
            if kern is mb_bcast2:
                setup = lambda ctx, grid=grid, P=P: (_bc2_B(ctx), ctx.zeros(grid * 256), np.int64(P))
            else:
                setup = lambda ctx, grid=grid, P=P: (_bc2_A(ctx), ctx.zeros(grid * 256, np.uint32), np.int64(BC2_N),
                                                     np.int64(P))
            B.append(dict(name=f"{name}_p{P}", group="bcast", kernel=kern, grid=(grid,), block=(32, 8),
                          setup=setup,
                          params=dict(n=BC2_N, cols=BC2_COLS, passes=P, blocks=grid, warps=grid * 8,
                                      B_bytes=BC2_N * BC2_COLS * 4, dependent=("chase" in name))))
    return B


def _bc2_B(ctx):
    if "bc2" not in ctx.bufs:
        b = (1.0 + (np.arange(BC2_N * BC2_COLS) % 97) / 97.0).astype(np.float32).reshape(BC2_N, BC2_COLS)
        ctx.bufs["bc2"] = cuda.to_device(b)
    return ctx.bufs["bc2"]


def _bc2_A(ctx):
    if "bc2A" not in ctx.bufs:
        ctx.bufs["bc2A"] = cuda.to_device(np.full(BC2_N * BC2_COLS, BC2_COLS, np.uint32))
    return ctx.bufs["bc2A"]


def check2(only=None, log=print):
    """Correctness check of every second-set bench at its real size (one launch on fresh buffers):
    atomics = bincount(idx), strided stores = last pass value at every S bytes and untouched elsewhere,
    bcast = passes * column sums of B. Returns the number of failures."""
    import re as _re
    bad = 0
    for b in _benches2():
        if only and not _re.search(only, b["name"]):
            continue
        ctx = Ctx()
        k = cuda.jit(b["kernel"])
        args = b["setup"](ctx)
        if b["group"] == "store_l2":
            a = args[0]
            a.copy_to_device(np.full(a.size, -3.0, np.float32))
        k[b["grid"], b["block"]](*args)
        cuda.synchronize()
        p = b["params"]
        if b["group"] == "atomics2":
            h = args[0].copy_to_host()
            idx = args[1].copy_to_host()
            if p["dtype"] == "none":
                ok = bool((h == 0).all())
            else:
                exp = np.bincount(idx, minlength=h.size)
                ok = bool((h.astype(np.float64) == exp).all())
            msg = str(atom2_stats(idx))
        elif b["group"] == "store_l2":
            a = args[0].copy_to_host()
            step = p["stride_bytes"] // 4
            m = np.zeros(a.size, bool)
            m[::step] = True
            ok = bool((a[m] == np.float32(p["passes"] - 1)).all() and (a[~m] == -3.0).all())
            msg = f"{m.sum()} stores"
        elif "chase" in b["name"]:
            out = args[1].copy_to_host()
            cols = (np.arange(32)[None, None, :] + 32 * (np.arange(b["grid"][0]) % 16)[:, None, None]
                    + 0 * np.arange(8)[None, :, None]).ravel()
            exp = ((cols + BC2_N * BC2_COLS) * p["passes"]).astype(np.uint32)
            ok = bool((out == exp).all())
            msg = f"{np.count_nonzero(out != exp)} wrong"
        else:
            out = args[1].copy_to_host()
            Bh = args[0].copy_to_host().astype(np.float64)
            cols = (np.arange(32)[None, :] + 32 * (np.arange(b["grid"][0]) % 16)[:, None])  # block, lane
            exp = p["passes"] * Bh.sum(axis=0)[cols]                                       # block, lane
            exp = np.repeat(exp[:, None, :], 8, axis=1).ravel()
            err = np.abs(out - exp).max() / np.abs(exp).max()
            ok = bool(err < 1e-4)
            msg = f"max rel err {err:.2e}"
        bad += 0 if ok else 1
        log(f"CHECK {'ok  ' if ok else 'FAIL'} {b['name']}: {msg}")
    return bad


BENCHES = BENCHES + _benches2()
