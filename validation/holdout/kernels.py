"""HOLDOUT kernels (issue #10): numba.cuda kernels nobody on this project wrote or tuned simgpu for.

Every kernel is either copied from a public source (numba-cuda's own tests, documentation
examples and library kernels, the CUDA-by-Example book, NVIDIA's transpose paper, GPU Gems 3)
or is the textbook kernel for a public exercise/specification (the GPU-Puzzles exercises, whose
repository gives only stubs; PMPP-style lecture tricks; Bell & Garland's SpMV).  The comment
above each kernel names its source and every change made to it (only changes needed to launch it
with many blocks or to fix its sizes; the arithmetic and the memory access patterns are the
source's).  None of them was used to set a simgpu parameter.

Each case is a dict like validation/kernels/*.py's: name, kernel, grid, block, args(rng),
outputs (argument indices written), tags, ref(args) -> {index: expected}, tol (relative L2;
0 means exact), source, notes.  `cases(tiny=False)` gives the H200 sizes (each launch runs
>= ~20 us there); `cases(tiny=True)` gives sizes for local checks (simgpu, CUDA simulator).
"""
import math
import os

import numpy as np
from numba import cuda

NC = "numba-cuda 0.30.4 wheel (github.com/NVIDIA/numba-cuda), numba_cuda/numba/cuda/"

# ------------------------------------------------------------------------------------------------
# 1. numba-cuda: documentation examples, tests, library kernels
# ------------------------------------------------------------------------------------------------


# Source: numba_cuda/numba/cuda/tests/doc_examples/test_vecadd.py (`f`), verbatim.
def nc_vecadd(a, b, c):
    tid = cuda.grid(1)
    size = len(c)

    if tid < size:
        c[tid] = a[tid] + b[tid]


# Source: numba_cuda/numba/cuda/tests/doc_examples/test_matmul.py (`matmul`), verbatim
# (tmp = 0.0 is a float64 accumulator; i = cuda.grid(2)[0] indexes rows, so a warp reads 16 rows).
def nc_matmul(A, B, C):
    """Perform square matrix multiplication of C = A * B."""
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.0
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


TPB = 16


# Source: numba_cuda/numba/cuda/tests/doc_examples/test_matmul.py (`fast_matmul`, by Robert
# Crovella, stackoverflow.com/a/64198479), verbatim.
def nc_fast_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=np.float32)

    x, y = cuda.grid(2)

    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x  # blocks per grid

    tmp = np.float32(0.0)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]

        cuda.syncthreads()

        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]

        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


# Source: numba_cuda/numba/cuda/tests/cudapy/test_matmul.py (`cu_square_matrix_mul`), verbatim;
# bpg/tpb/n are the test's closure constants (50, 32, 1600 on a GPU; 2, 8, 16 in its simulator
# configuration), so the kernel is built by a factory.
def make_square_matmul(bpg, tpb):
    n = bpg * tpb
    SM_SIZE = (tpb, tpb)

    def nc_square_matrix_mul(A, B, C):
        sA = cuda.shared.array(shape=SM_SIZE, dtype=np.float32)
        sB = cuda.shared.array(shape=(tpb, tpb), dtype=np.float32)

        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        bx = cuda.blockIdx.x
        by = cuda.blockIdx.y
        bw = cuda.blockDim.x
        bh = cuda.blockDim.y

        x = tx + bx * bw
        y = ty + by * bh

        acc = np.float32(0)  # forces all the math to be f32
        for i in range(bpg):
            if x < n and y < n:
                sA[ty, tx] = A[y, tx + i * tpb]
                sB[ty, tx] = B[ty + i * tpb, x]

            cuda.syncthreads()

            if x < n and y < n:
                for j in range(tpb):
                    acc += sA[ty, j] * sB[j, tx]

            cuda.syncthreads()

        if x < n and y < n:
            C[y, x] = acc

    return nc_square_matrix_mul


# Source: numba_cuda/numba/cuda/tests/cudapy/test_laplace.py (`get_max`, `jocabi_relax_core`),
# verbatim; tpb is the test's closure constant (16 on a GPU, 4 in the simulator).
@cuda.jit(device=True, inline="always")
def nc_get_max(a, b):
    if a > b:
        return a
    else:
        return b


def make_jacobi(tpb):
    SM_SIZE = (tpb, tpb)

    def nc_jocabi_relax_core(A, Anew, error):
        err_sm = cuda.shared.array(SM_SIZE, dtype=np.float64)

        ty = cuda.threadIdx.x
        tx = cuda.threadIdx.y
        bx = cuda.blockIdx.x
        by = cuda.blockIdx.y

        n = A.shape[0]
        m = A.shape[1]

        i, j = cuda.grid(2)

        err_sm[ty, tx] = 0
        if j >= 1 and j < n - 1 and i >= 1 and i < m - 1:
            Anew[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1] + A[j - 1, i] + A[j + 1, i])
            err_sm[ty, tx] = Anew[j, i] - A[j, i]

        cuda.syncthreads()

        # max-reduce err_sm vertically
        t = tpb // 2
        while t > 0:
            if ty < t:
                err_sm[ty, tx] = nc_get_max(err_sm[ty, tx], err_sm[ty + t, tx])
            t //= 2
            cuda.syncthreads()

        # max-reduce err_sm horizontally
        t = tpb // 2
        while t > 0:
            if tx < t and ty == 0:
                err_sm[ty, tx] = nc_get_max(err_sm[ty, tx], err_sm[ty, tx + t])
            t //= 2
            cuda.syncthreads()

        if tx == 0 and ty == 0:
            error[by, bx] = err_sm[0, 0]

    return nc_jocabi_relax_core


# Source: numba_cuda/numba/cuda/tests/cudapy/test_blackscholes.py (`cnd_cuda`,
# `black_scholes_cuda`, constants, numpy reference `black_scholes`), verbatim.
RISKFREE = 0.02
VOLATILITY = 0.30
A1 = 0.31938153
A2 = -0.356563782
A3 = 1.781477937
A4 = -1.821255978
A5 = 1.330274429
RSQRT2PI = 0.39894228040143267793994605993438


@cuda.jit(device=True, inline="always")
def nc_cnd_cuda(d):
    K = 1.0 / (1.0 + 0.2316419 * math.fabs(d))
    ret_val = (RSQRT2PI * math.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5))))))
    if d > 0:
        ret_val = 1.0 - ret_val
    return ret_val


def nc_black_scholes(callResult, putResult, S, X, T, R, V):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    if i >= S.shape[0]:
        return
    sqrtT = math.sqrt(T[i])
    d1 = (math.log(S[i] / X[i]) + (R + 0.5 * V * V) * T[i]) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    cndd1 = nc_cnd_cuda(d1)
    cndd2 = nc_cnd_cuda(d2)

    expRT = math.exp((-1.0 * R) * T[i])
    callResult[i] = S[i] * cndd1 - X[i] * expRT * cndd2
    putResult[i] = X[i] * expRT * (1.0 - cndd2) - S[i] * (1.0 - cndd1)


def _cnd_np(d):
    K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    ret_val = RSQRT2PI * np.exp(-0.5 * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    return np.where(d > 0, 1.0 - ret_val, ret_val)


def _ref_black_scholes(args):
    _, _, S, X, T, R, V = args
    sqrtT = np.sqrt(T)
    d1 = (np.log(S / X) + (R + 0.5 * V * V) * T) / (V * sqrtT)
    d2 = d1 - V * sqrtT
    c1, c2 = _cnd_np(d1), _cnd_np(d2)
    expRT = np.exp(-R * T)
    return {0: S * c1 - X * expRT * c2, 1: X * expRT * (1.0 - c2) - S * (1.0 - c1)}


# Source: numba_cuda/numba/cuda/tests/cudapy/test_montecarlo.py (`step`), verbatim.
def nc_montecarlo_step(last, paths, dt, c0, c1, normdist):
    i = cuda.grid(1)
    if i >= paths.shape[0]:
        return
    noise = normdist[i]
    paths[i] = last[i] * math.exp(c0 * dt + c1 * noise)


# Source: numba_cuda/numba/cuda/tests/cudapy/test_mandel.py (`mandel`, a device function the test
# only compiles), verbatim; the kernel around it (one thread per pixel) is the minimal launcher.
@cuda.jit(device=True)
def nc_mandel(tid, min_x, max_x, min_y, max_y, width, height, iters):
    pixel_size_x = (max_x - min_x) / width
    pixel_size_y = (max_y - min_y) / height

    x = tid % width
    y = tid / width

    real = min_x + x * pixel_size_x
    imag = min_y + y * pixel_size_y

    c = complex(real, imag)
    z = 0.0j

    for i in range(iters):
        z = z * z + c
        if (z.real * z.real + z.imag * z.imag) >= 4:
            return i
    return iters


def nc_mandel_kernel(out, min_x, max_x, min_y, max_y, width, height, iters):
    tid = cuda.grid(1)
    if tid < out.size:
        out[tid] = nc_mandel(tid, min_x, max_x, min_y, max_y, width, height, iters)


def _ref_mandel(args):
    out, min_x, max_x, min_y, max_y, width, height, iters = args
    tid = np.arange(out.size, dtype=np.int64)
    x = tid % int(width)
    y = tid / float(width)
    c = (min_x + x * ((max_x - min_x) / float(width))) + 1j * (min_y + y * ((max_y - min_y) / float(height)))
    z = np.zeros_like(c)
    res = np.full(out.size, int(iters), np.int32)
    alive = np.arange(out.size)
    for i in range(int(iters)):
        z[alive] = z[alive] * z[alive] + c[alive]
        zr, zi = z[alive].real, z[alive].imag
        esc = zr * zr + zi * zi >= 4
        res[alive[esc]] = i
        alive = alive[~esc]
        if alive.size == 0:
            break
    return {0: res}


NELEM = 1024


# Source: numba_cuda/numba/cuda/tests/doc_examples/test_reduction.py (`array_sum`); the original
# runs one block and writes data[0]; here every block writes its sum to out[blockIdx.x] (the only
# change), so the launch can have many blocks.
def nc_array_sum(data, out):
    tid = cuda.threadIdx.x
    size = len(data)
    if tid < size:
        i = cuda.grid(1)

        shr = cuda.shared.array(NELEM, np.int32)
        shr[tid] = data[i]

        cuda.syncthreads()

        s = 1
        while s < cuda.blockDim.x:
            if tid % (2 * s) == 0:
                shr[tid] += shr[tid + s]
            s *= 2
            cuda.syncthreads()

        if tid == 0:
            out[cuda.blockIdx.x] = shr[tid]


# Source: numba_cuda/numba/cuda/kernels/transpose.py (the kernel inside `transpose`), verbatim,
# with its tile shape for MAX_THREADS_PER_BLOCK = 1024: tile (32, 33), blocks of (32, 32).
TR_TILE = (32, 33)


def nc_transpose_kernel(input, output):
    tile = cuda.shared.array(shape=TR_TILE, dtype=np.float64)

    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bx = cuda.blockIdx.x * cuda.blockDim.x
    by = cuda.blockIdx.y * cuda.blockDim.y
    x = by + tx
    y = bx + ty

    if by + ty < input.shape[0] and bx + tx < input.shape[1]:
        tile[ty, tx] = input[by + ty, bx + tx]
    cuda.syncthreads()
    if y < output.shape[0] and x < output.shape[1]:
        output[y, x] = tile[tx, ty]


# Source: numba_cuda/numba/cuda/kernels/reduction.py (`_gpu_reduce_factory` with reduce_op = add:
# `inner_warp_reduction`, `device_reduce_full_block`, `gpu_reduce_block_strided`), verbatim for
# the full-block path (blockDim == 128) that Reduce.__call__ launches on min(size//128, 64) blocks.
_WARPSIZE = 32
_NUMWARPS = 4
_INNER_SM = _WARPSIZE + 1


@cuda.jit(device=True)
def nc_reduce_op(a, b):
    return a + b


@cuda.jit(device=True)
def nc_inner_warp_reduction(sm_partials, init):
    tid = cuda.threadIdx.x
    warpid = tid // _WARPSIZE
    laneid = tid % _WARPSIZE

    sm_this = sm_partials[warpid, :]
    sm_this[laneid] = init
    cuda.syncwarp()

    width = _WARPSIZE // 2
    while width:
        if laneid < width:
            old = sm_this[laneid]
            sm_this[laneid] = nc_reduce_op(old, sm_this[laneid + width])
        cuda.syncwarp()
        width //= 2


@cuda.jit(device=True)
def nc_device_reduce_full_block(arr, partials, sm_partials):
    tid = cuda.threadIdx.x
    blkid = cuda.blockIdx.x
    blksz = cuda.blockDim.x
    gridsz = cuda.gridDim.x

    start = tid + blksz * blkid
    stop = arr.size
    step = blksz * gridsz

    tmp = arr[start]
    for i in range(start + step, stop, step):
        tmp = nc_reduce_op(tmp, arr[i])

    cuda.syncthreads()
    nc_inner_warp_reduction(sm_partials, tmp)

    cuda.syncthreads()
    if tid < 2:
        sm_partials[tid, 0] = nc_reduce_op(sm_partials[tid, 0], sm_partials[tid + 2, 0])
        cuda.syncwarp()
    if tid == 0:
        partials[blkid] = nc_reduce_op(sm_partials[0, 0], sm_partials[1, 0])


def nc_gpu_reduce_block_strided(arr, partials, init, use_init):
    tid = cuda.threadIdx.x
    sm_partials = cuda.shared.array((_NUMWARPS, _INNER_SM), dtype=np.float64)
    nc_device_reduce_full_block(arr, partials, sm_partials)
    if use_init and tid == 0 and cuda.blockIdx.x == 0:
        partials[0] = nc_reduce_op(partials[0], init)


def _ref_reduce_lib(args):
    arr, partials = args[0], args[1]
    g = partials.size
    blk = (np.arange(arr.size) // 128) % g
    return {1: np.bincount(blk, weights=arr, minlength=g) + np.where(np.arange(g) == 0, args[2], 0.0)}


# Source: numba_cuda/numba/cuda/tests/doc_examples/test_laplace.py (`solve_heat_equation`, the
# documentation's 1D heat equation); one time step per launch (timesteps = 1), so the
# cooperative grid.sync() the original needs between steps is dropped.  Otherwise verbatim.
def nc_heat_step(buf_0, buf_1, timesteps, k):
    i = cuda.grid(1)

    if i >= len(buf_0):
        return

    for step in range(timesteps):
        if (step % 2) == 0:
            data = buf_0
            next_data = buf_1
        else:
            data = buf_1
            next_data = buf_0

        curr_temp = data[i]

        if i == 0:
            next_temp = curr_temp + k * (data[i + 1] - (2 * curr_temp))
        elif i == len(data) - 1:
            next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp))
        else:
            next_temp = curr_temp + k * (data[i - 1] - (2 * curr_temp) + data[i + 1])

        next_data[i] = next_temp


def _ref_heat(args):
    d, k = args[0], args[3]
    e = np.empty_like(d)
    e[1:-1] = d[1:-1] + k * (d[:-2] - (2 * d[1:-1]) + d[2:])
    e[0] = d[0] + k * (d[1] - 2 * d[0])
    e[-1] = d[-1] + k * (d[-2] - 2 * d[-1])
    return {1: e}


# ------------------------------------------------------------------------------------------------
# 2. CUDA by Example (Sanders & Kandrot, 2010), chapter 9, hist_gpu_shmem_atomics.cu and
#    hist_gpu_gmem_atomics.cu (`histo_kernel`), transcribed to numba.cuda; the book's launch:
#    grid = 2 * multiprocessors (132 on the H200), 256 threads, a 100 MiB byte buffer.
# ------------------------------------------------------------------------------------------------
def cbe_histo_shmem(buffer, histo):
    temp = cuda.shared.array(256, np.uint32)
    temp[cuda.threadIdx.x] = 0
    cuda.syncthreads()

    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    offset = cuda.blockDim.x * cuda.gridDim.x
    while i < buffer.size:
        cuda.atomic.add(temp, buffer[i], 1)
        i += offset
    cuda.syncthreads()
    cuda.atomic.add(histo, cuda.threadIdx.x, temp[cuda.threadIdx.x])


def cbe_histo_gmem(buffer, histo):
    i = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    stride = cuda.blockDim.x * cuda.gridDim.x
    while i < buffer.size:
        cuda.atomic.add(histo, buffer[i], 1)
        i += stride


def _ref_histo(args):
    return {1: np.bincount(args[0], minlength=256).astype(np.uint32)}


# ------------------------------------------------------------------------------------------------
# 3. GPU-Puzzles (Sasha Rush, github.com/srush/GPU-Puzzles): the repository gives each puzzle's
#    specification and a stub; these are the straightforward solutions of the specification,
#    in the puzzles' own indexing (local_i = threadIdx.x, i = blockIdx.x*blockDim.x+threadIdx.x;
#    for 2D, i indexes ROWS), at large sizes and TPB = 256 (the puzzles use TPB = 3..8).
# ------------------------------------------------------------------------------------------------
GP_TPB = 256
GP_CONV = 15     # puzzle 11: MAX_CONV (4 in the puzzle)
GP_MM = 8        # puzzle 14: TPB for matmul tiles (3 in the puzzle)
GP_WIN = GP_TPB + GP_CONV   # numba needs a plain constant for a shared-array shape


# Puzzle 3 "Guard": out[i] = a[i] + 10 for i < size.
def gp_map_guard(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + 10


# Puzzle 2 "Zip": out[i] = a[i] + b[i] (guarded).
def gp_zip(out, a, b, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + b[i]


# Puzzle 7 "Blocks 2D": out[i, j] = a[i, j] + 10 with i (ROW) from the x dimension: a warp
# touches 32 rows, i.e. uncoalesced (the puzzles' indexing, kept on purpose).
def gp_map_blocks2d(out, a, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if i < size and j < size:
        out[i, j] = a[i, j] + 10


# Puzzle 5 "Broadcast": out[i, j] = a[i, 0] + b[0, j], i (ROW) from x.
def gp_broadcast(out, a, b, size):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if i < size and j < size:
        out[i, j] = a[i, 0] + b[0, j]


# Puzzle 9 "Pooling": out[i] = a[i-2] + a[i-1] + a[i] (missing terms dropped), each a read once
# from global into shared; the two elements before the block come from global.
def gp_pooling(out, a, size):
    shared = cuda.shared.array(GP_TPB, np.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        shared[local_i] = a[i]
    cuda.syncthreads()
    if i < size:
        acc = shared[local_i]
        for k in range(1, 3):
            if local_i - k >= 0:
                acc += shared[local_i - k]
            elif i - k >= 0:
                acc += a[i - k]
        out[i] = acc


def _ref_pooling(args):
    a = args[1].astype(np.float64)
    e = a.copy()
    e[1:] += a[:-1]
    e[2:] += a[:-2]
    return {0: e}


# Puzzle 10 "Dot product": products in shared memory, tree-reduced; one partial per block.
def gp_dot(out, a, b, size):
    shared = cuda.shared.array(GP_TPB, np.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        shared[local_i] = a[i] * b[i]
    else:
        shared[local_i] = 0
    cuda.syncthreads()
    s = GP_TPB // 2
    while s > 0:
        if local_i < s:
            shared[local_i] += shared[local_i + s]
        cuda.syncthreads()
        s //= 2
    if local_i == 0:
        out[cuda.blockIdx.x] = shared[0]


def _ref_dot(args):
    out, a, b = args[0], args[1], args[2]
    p = (a.astype(np.float64) * b).reshape(out.size, GP_TPB)
    return {0: p.sum(axis=1)}


# Puzzle 11 "1D Convolution": out[i] = sum_j a[i + j] * b[j] over j < b_size, i + j < a_size;
# a block's window of a (TPB + CONV - 1 values) and b staged in shared memory.
def gp_conv1d(out, a, b, a_size, b_size):
    shared_a = cuda.shared.array(GP_WIN, np.float32)
    shared_b = cuda.shared.array(GP_CONV, np.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < a_size:
        shared_a[local_i] = a[i]
    if local_i < b_size:
        shared_b[local_i] = b[local_i]
        j = i + GP_TPB
        if j < a_size:
            shared_a[local_i + GP_TPB] = a[j]
        else:
            shared_a[local_i + GP_TPB] = 0
    cuda.syncthreads()
    if i < a_size:
        acc = np.float32(0)
        for k in range(b_size):
            if i + k < a_size:
                acc += shared_a[local_i + k] * shared_b[k]
        out[i] = acc


def _ref_conv1d(args):
    a, b = args[1].astype(np.float64), args[2].astype(np.float64)
    n = a.size
    ap = np.concatenate([a, np.zeros(b.size)])
    e = np.zeros(n)
    for k in range(b.size):
        e += ap[k:k + n] * b[k]
    return {0: e}


# Puzzle 12 "Prefix sum": inclusive scan within each block (Hillis-Steele in shared memory,
# double buffered); each block's scan is written out (the puzzle keeps the block total).
def gp_prefix_sum(out, a, size):
    buf = cuda.shared.array((2, GP_TPB), np.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    local_i = cuda.threadIdx.x
    if i < size:
        buf[0, local_i] = a[i]
    else:
        buf[0, local_i] = 0
    cuda.syncthreads()
    src = 0
    d = 1
    while d < GP_TPB:
        v = buf[src, local_i]
        if local_i >= d:
            v += buf[src, local_i - d]
        buf[1 - src, local_i] = v
        src = 1 - src
        cuda.syncthreads()
        d *= 2
    if i < size:
        out[i] = buf[src, local_i]


def _ref_prefix(args):
    a = args[1].astype(np.float64)
    return {0: np.cumsum(a.reshape(-1, GP_TPB), axis=1).ravel()}


# Puzzle 13 "Axis sum": out[batch, 0] = sum of a[batch, :], one block per row
# (batch = blockIdx.y as in the puzzle); each thread strides the row, then a shared tree.
def gp_axis_sum(out, a, size):
    cache = cuda.shared.array(GP_TPB, np.float32)
    local_i = cuda.threadIdx.x
    batch = cuda.blockIdx.y
    acc = np.float32(0)
    k = local_i
    while k < size:
        acc += a[batch, k]
        k += GP_TPB
    cache[local_i] = acc
    cuda.syncthreads()
    s = GP_TPB // 2
    while s > 0:
        if local_i < s:
            cache[local_i] += cache[local_i + s]
        cuda.syncthreads()
        s //= 2
    if local_i == 0:
        out[batch, 0] = cache[0]


# Puzzle 14 "Matrix multiply": shared-memory tiles of TPB x TPB (TPB = 8), i (ROW) from x.
def gp_matmul(out, a, b, size):
    a_shared = cuda.shared.array((GP_MM, GP_MM), np.float32)
    b_shared = cuda.shared.array((GP_MM, GP_MM), np.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    local_i = cuda.threadIdx.x
    local_j = cuda.threadIdx.y
    acc = np.float32(0)
    for t in range((size + GP_MM - 1) // GP_MM):
        if i < size and t * GP_MM + local_j < size:
            a_shared[local_i, local_j] = a[i, t * GP_MM + local_j]
        else:
            a_shared[local_i, local_j] = 0
        if j < size and t * GP_MM + local_i < size:
            b_shared[local_i, local_j] = b[t * GP_MM + local_i, j]
        else:
            b_shared[local_i, local_j] = 0
        cuda.syncthreads()
        for k in range(GP_MM):
            acc += a_shared[local_i, k] * b_shared[k, local_j]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = acc


# ------------------------------------------------------------------------------------------------
# 4. Lecture tricks and classic kernels from papers / books
# ------------------------------------------------------------------------------------------------
COARSE = 4


# Thread coarsening (Kirk & Hwu, "Programming Massively Parallel Processors", 4th ed., ch. 6.3;
# the lecture's trick): SAXPY where each thread does COARSE elements, strided by the grid size
# so that every access stays coalesced.
def lt_saxpy_coarsened(a, x, y, out):
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    for c in range(COARSE):
        j = i + c * stride
        if j < out.size:
            out[j] = a * x[j] + y[j]


CT = 16


# Tiled matmul with thread coarsening (PMPP 4th ed., ch. 6.3, fig. 6.13, COARSE_FACTOR = 4):
# each thread computes 4 outputs in 4 horizontally adjacent tiles, reusing its A tile.
def lt_matmul_coarsened(M, N, P, width):
    Mds = cuda.shared.array((CT, CT), np.float32)
    Nds = cuda.shared.array((CT, CT), np.float32)
    bx = cuda.blockIdx.x
    by = cuda.blockIdx.y
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = by * CT + ty
    col_start = bx * CT * COARSE + tx
    p0 = np.float32(0)
    p1 = np.float32(0)
    p2 = np.float32(0)
    p3 = np.float32(0)
    for ph in range(width // CT):
        Mds[ty, tx] = M[row, ph * CT + tx]
        for c in range(COARSE):
            col = col_start + c * CT
            Nds[ty, tx] = N[ph * CT + ty, col]
            cuda.syncthreads()
            acc = np.float32(0)
            for k in range(CT):
                acc += Mds[ty, k] * Nds[k, tx]
            if c == 0:
                p0 += acc
            elif c == 1:
                p1 += acc
            elif c == 2:
                p2 += acc
            else:
                p3 += acc
            cuda.syncthreads()
    P[row, col_start] = p0
    P[row, col_start + CT] = p1
    P[row, col_start + 2 * CT] = p2
    P[row, col_start + 3 * CT] = p3


TILE_DIM = 32
BLOCK_ROWS = 8
TILE_SHAPE = (TILE_DIM, TILE_DIM + 1)


# Ruetsch & Micikevicius, "Optimizing Matrix Transpose in CUDA" (NVIDIA CUDA SDK whitepaper,
# 2009), `transposeDiagonal`: padded shared tile, 32x8 threads each moving 4 elements, blocks
# renumbered along diagonals to spread partition traffic.  Transcribed to numba.cuda (square).
def lt_transpose_diagonal(odata, idata, width, height):
    tile = cuda.shared.array(TILE_SHAPE, np.float32)
    if width == height:
        blockIdx_y = cuda.blockIdx.x
        blockIdx_x = (cuda.blockIdx.x + cuda.blockIdx.y) % cuda.gridDim.x
    else:
        bid = cuda.blockIdx.x + cuda.gridDim.x * cuda.blockIdx.y
        blockIdx_y = bid % cuda.gridDim.y
        blockIdx_x = ((bid // cuda.gridDim.y) + blockIdx_y) % cuda.gridDim.x
    xIndex = blockIdx_x * TILE_DIM + cuda.threadIdx.x
    yIndex = blockIdx_y * TILE_DIM + cuda.threadIdx.y
    for i in range(0, TILE_DIM, BLOCK_ROWS):
        tile[cuda.threadIdx.y + i, cuda.threadIdx.x] = idata[yIndex + i, xIndex]
    cuda.syncthreads()
    xIndex = blockIdx_y * TILE_DIM + cuda.threadIdx.x
    yIndex = blockIdx_x * TILE_DIM + cuda.threadIdx.y
    for i in range(0, TILE_DIM, BLOCK_ROWS):
        odata[yIndex + i, xIndex] = tile[cuda.threadIdx.x, cuda.threadIdx.y + i]


# 2D five-point Jacobi stencil (the heat/Laplace step of e.g. NVIDIA's "CUDA Fortran/C stencil"
# lectures; Micikevicius, "3D finite difference computation on GPUs using CUDA", GPGPU-2 2009,
# in 2D), plain global loads, boundary copied.
def st_stencil2d_5pt(a, b, k):
    i, j = cuda.grid(2)      # i: column (x), j: row
    ny, nx = a.shape
    if j < ny and i < nx:
        if i == 0 or j == 0 or i == nx - 1 or j == ny - 1:
            b[j, i] = a[j, i]
        else:
            b[j, i] = a[j, i] + k * (a[j, i - 1] + a[j, i + 1] + a[j - 1, i] + a[j + 1, i] - 4 * a[j, i])


def _ref_stencil2d(args):
    a, k = args[0].astype(np.float64), float(args[2])
    e = a.copy()
    e[1:-1, 1:-1] = a[1:-1, 1:-1] + k * (a[1:-1, :-2] + a[1:-1, 2:] + a[:-2, 1:-1] + a[2:, 1:-1] - 4 * a[1:-1, 1:-1])
    return {1: e}


# 3D seven-point stencil, one thread per point (the naive baseline of Micikevicius 2009 above).
def st_stencil3d_7pt(a, b, c0, c1):
    x, y, z = cuda.grid(3)
    nz, ny, nx = a.shape
    if x >= 1 and y >= 1 and z >= 1 and x < nx - 1 and y < ny - 1 and z < nz - 1:
        b[z, y, x] = c0 * a[z, y, x] + c1 * (a[z, y, x - 1] + a[z, y, x + 1] + a[z, y - 1, x] + a[z, y + 1, x]
                                             + a[z - 1, y, x] + a[z + 1, y, x])


def _ref_stencil3d(args):
    a, b0, c0, c1 = args[0].astype(np.float64), args[1], float(args[2]), float(args[3])
    e = b0.astype(np.float64).copy()
    e[1:-1, 1:-1, 1:-1] = c0 * a[1:-1, 1:-1, 1:-1] + c1 * (
        a[1:-1, 1:-1, :-2] + a[1:-1, 1:-1, 2:] + a[1:-1, :-2, 1:-1] + a[1:-1, 2:, 1:-1]
        + a[:-2, 1:-1, 1:-1] + a[2:, 1:-1, 1:-1])
    return {1: e}


SM_TPB = 256


# Row softmax, one block per row, three passes (max, sum of exp, write), block reductions in
# shared memory: the structure of PyTorch's cunn_SoftMaxForward / the "naive softmax" of
# Milakov & Gimelshein, "Online normalizer calculation for softmax" (2018), algorithm 2.
def softmax_rows(x, y):
    red = cuda.shared.array(SM_TPB, np.float32)
    row = cuda.blockIdx.x
    tid = cuda.threadIdx.x
    n = x.shape[1]
    m = np.float32(-np.inf)
    k = tid
    while k < n:
        m = max(m, x[row, k])
        k += SM_TPB
    red[tid] = m
    cuda.syncthreads()
    s = SM_TPB // 2
    while s > 0:
        if tid < s:
            red[tid] = max(red[tid], red[tid + s])
        cuda.syncthreads()
        s //= 2
    m = red[0]
    cuda.syncthreads()
    acc = np.float32(0)
    k = tid
    while k < n:
        acc += math.exp(x[row, k] - m)
        k += SM_TPB
    red[tid] = acc
    cuda.syncthreads()
    s = SM_TPB // 2
    while s > 0:
        if tid < s:
            red[tid] += red[tid + s]
        cuda.syncthreads()
        s //= 2
    inv = np.float32(1) / red[0]
    k = tid
    while k < n:
        y[row, k] = math.exp(x[row, k] - m) * inv
        k += SM_TPB


def _ref_softmax(args):
    x = args[0].astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return {1: e / e.sum(axis=1, keepdims=True)}


# LayerNorm forward, one warp per row, mean and variance by warp shuffles (the layout of
# Apex / PyTorch's "vectorized layer norm" for short rows; Ba et al. 2016 for the formula).
def layernorm_rows(x, gamma, beta, y, eps):
    warp = cuda.grid(1) // 32
    lane = cuda.laneid
    rows, n = x.shape
    if warp >= rows:
        return
    s = np.float32(0)
    k = lane
    while k < n:
        s += x[warp, k]
        k += 32
    off = 16
    while off > 0:
        s += cuda.shfl_xor_sync(0xFFFFFFFF, s, off)
        off //= 2
    mean = s / np.float32(n)
    v = np.float32(0)
    k = lane
    while k < n:
        d = x[warp, k] - mean
        v += d * d
        k += 32
    off = 16
    while off > 0:
        v += cuda.shfl_xor_sync(0xFFFFFFFF, v, off)
        off //= 2
    rstd = np.float32(1) / math.sqrt(v / np.float32(n) + eps)
    k = lane
    while k < n:
        y[warp, k] = (x[warp, k] - mean) * rstd * gamma[k] + beta[k]
        k += 32


def _ref_layernorm(args):
    x, g, b, _, eps = args
    x = x.astype(np.float64)
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    return {3: (x - mu) / np.sqrt(var + eps) * g + b}


# Bell & Garland, "Efficient Sparse Matrix-Vector Multiplication on CUDA" (NVIDIA tech. report
# NVR-2008-004), `spmv_csr_scalar_kernel` (one thread per row) and `spmv_csr_vector_kernel`
# (one warp per row; the paper's shared-memory warp reduction replaced by shuffles).
def spmv_csr_scalar(num_rows, ptr, indices, data, x, y):
    row = cuda.grid(1)
    if row < num_rows:
        dot = np.float32(0)
        row_start = ptr[row]
        row_end = ptr[row + 1]
        for jj in range(row_start, row_end):
            dot += data[jj] * x[indices[jj]]
        y[row] = dot


def spmv_csr_vector(num_rows, ptr, indices, data, x, y):
    thread_id = cuda.grid(1)
    warp_id = thread_id // 32
    lane = thread_id & 31
    row = warp_id
    if row < num_rows:
        row_start = ptr[row]
        row_end = ptr[row + 1]
        acc = np.float32(0)
        for jj in range(row_start + lane, row_end, 32):
            acc += data[jj] * x[indices[jj]]
        off = 16
        while off > 0:
            acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, off)
            off //= 2
        if lane == 0:
            y[row] = acc


def _csr(rng, rows, cols, max_nnz):
    nnz = rng.integers(1, max_nnz + 1, rows)
    ptr = np.zeros(rows + 1, np.int32)
    ptr[1:] = np.cumsum(nnz)
    idx = rng.integers(0, cols, int(ptr[-1]), dtype=np.int32)
    data = rng.standard_normal(int(ptr[-1]), dtype=np.float32)
    x = rng.standard_normal(cols, dtype=np.float32)
    return ptr, idx, data, x


def _ref_spmv(args):
    rows, ptr, idx, data, x = args[0], args[1], args[2], args[3], args[4]
    prod = data.astype(np.float64) * x[idx]
    rowid = np.repeat(np.arange(int(rows)), np.diff(ptr))
    return {5: np.bincount(rowid, weights=prod, minlength=int(rows))}


NB_P = 256
SOFT2 = 0.01


# Nyland, Harris & Prins, "Fast N-Body Simulation with CUDA", GPU Gems 3, ch. 31
# (`bodyBodyInteraction`, `tile_calculation`, `calculate_forces`), transcribed: float4 bodies as
# rows of an (N, 4) array (x, y, z, mass), shared tile of p bodies, softening eps^2 = 0.01.
@cuda.jit(device=True, inline="always")
def nb_body_body(bix, biy, biz, bjx, bjy, bjz, bjw, ax, ay, az):
    rx = bjx - bix
    ry = bjy - biy
    rz = bjz - biz
    distSqr = rx * rx + ry * ry + rz * rz + np.float32(SOFT2)
    invDist = np.float32(1) / math.sqrt(distSqr)
    invDistCube = invDist * invDist * invDist
    s = bjw * invDistCube
    return ax + rx * s, ay + ry * s, az + rz * s


def nbody_forces(pos, accel):
    sh = cuda.shared.array((NB_P, 4), np.float32)
    gtid = cuda.grid(1)
    N = pos.shape[0]
    bx = pos[gtid, 0]
    by = pos[gtid, 1]
    bz = pos[gtid, 2]
    ax = np.float32(0)
    ay = np.float32(0)
    az = np.float32(0)
    tile = 0
    i = 0
    while i < N:
        idx = tile * NB_P + cuda.threadIdx.x
        sh[cuda.threadIdx.x, 0] = pos[idx, 0]
        sh[cuda.threadIdx.x, 1] = pos[idx, 1]
        sh[cuda.threadIdx.x, 2] = pos[idx, 2]
        sh[cuda.threadIdx.x, 3] = pos[idx, 3]
        cuda.syncthreads()
        for j in range(NB_P):
            ax, ay, az = nb_body_body(bx, by, bz, sh[j, 0], sh[j, 1], sh[j, 2], sh[j, 3], ax, ay, az)
        cuda.syncthreads()
        i += NB_P
        tile += 1
    accel[gtid, 0] = ax
    accel[gtid, 1] = ay
    accel[gtid, 2] = az


def _ref_nbody(args):
    p = args[0].astype(np.float64)
    n = p.shape[0]
    out = np.zeros((n, 3))
    for s in range(0, n, 512):
        r = p[None, :, :3] - p[s:s + 512, None, :3]
        d2 = (r * r).sum(-1) + SOFT2
        w = p[None, :, 3] / d2 ** 1.5
        out[s:s + 512] = (r * w[..., None]).sum(1)
    return {1: out}


RW_STEPS = 100


# Random walks without cuda.random: Marsaglia's xorshift32 ("Xorshift RNGs", J. Stat. Softw.
# 8(14), 2003, the 13/17/5 triple), one walker per thread, 2 random bits pick the step
# (+x, -x, +y, -y): integer-ALU-bound, a 4-way branch per step.
def rw_xorshift(seeds, outx, outy, steps):
    i = cuda.grid(1)
    if i >= seeds.size:
        return
    s = np.uint32(seeds[i])
    x = 0
    y = 0
    for t in range(steps):
        s ^= np.uint32(s << np.uint32(13))
        s ^= np.uint32(s >> np.uint32(17))
        s ^= np.uint32(s << np.uint32(5))
        d = s & np.uint32(3)
        if d == 0:
            x += 1
        elif d == 1:
            x -= 1
        elif d == 2:
            y += 1
        else:
            y -= 1
    outx[i] = x
    outy[i] = y


def _ref_rw(args):
    seeds, steps = args[0], int(args[3])
    s = seeds.astype(np.uint64)
    x = np.zeros(s.size, np.int64)
    y = np.zeros(s.size, np.int64)
    M = np.uint64(0xFFFFFFFF)
    for _ in range(steps):
        s ^= (s << np.uint64(13)) & M
        s ^= s >> np.uint64(17)
        s ^= (s << np.uint64(5)) & M
        d = s & np.uint64(3)
        x += (d == 0).astype(np.int64) - (d == 1)
        y += (d == 2).astype(np.int64) - (d == 3)
    return {1: x.astype(np.int32), 2: y.astype(np.int32)}


# Collatz stopping times (Project Euler 14, the classic data-dependent-loop divergence demo,
# e.g. in NVIDIA's "CUDA C/C++ Basics" exercises): steps[i] = number of 3n+1 / n/2 steps from
# start + i to 1.
def collatz_steps(start, steps):
    i = cuda.grid(1)
    if i < steps.size:
        n = np.int64(start + i)
        c = 0
        while n != 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            c += 1
        steps[i] = c


def _ref_collatz(args):
    start, steps = int(args[0]), args[1]
    n = np.arange(start, start + steps.size, dtype=np.int64)
    c = np.zeros(steps.size, np.int32)
    alive = n != 1
    while alive.any():
        v = n[alive]
        n[alive] = np.where(v % 2 == 0, v // 2, 3 * v + 1)
        c[alive] += 1
        alive = n != 1
    return {1: c}


# ------------------------------------------------------------------------------------------------
def _f32(rng, *shape):
    return rng.random(shape, dtype=np.float32)


def _poison(shape, dtype):
    a = np.empty(shape, dtype)
    if np.dtype(dtype).kind == "f":
        a.fill(np.nan)
    else:
        a.fill(np.iinfo(dtype).max // 3)
    return a


def cases(tiny=False):
    T = tiny
    C = []

    def add(name, kernel, grid, block, args, outputs, tags, ref, source, tol=1e-5, notes=""):
        C.append(dict(name=name, kernel=kernel, grid=tuple(grid) if isinstance(grid, tuple) else (grid,),
                      block=tuple(block) if isinstance(block, tuple) else (block,), args=args,
                      outputs=tuple(outputs), tags=tuple(tags), ref=ref, tol=tol, source=source, notes=notes))

    # --- numba-cuda ---
    n = 1000 if T else 8 << 20
    add("nc_vecadd_f64", nc_vecadd, n // 256 + 1, 256,
        lambda rng, n=n: (rng.random(n), rng.random(n), _poison(n, np.float64)), (2,),
        ("numba-cuda", "memory", "elementwise", "float64"), lambda a: {2: a[0] + a[1]},
        NC + "tests/doc_examples/test_vecadd.py", tol=0)

    m = 20 if T else 256
    add(f"nc_matmul_naive_n{m}", nc_matmul, (math.ceil(m / 16), math.ceil(m / 16)), (16, 16),
        lambda rng, m=m: (_f32(rng, m, m), _f32(rng, m, m), _poison((m, m), np.float32)), (2,),
        ("numba-cuda", "compute", "matmul", "uncoalesced", "float64-accumulator"),
        lambda a: {2: a[0].astype(np.float64) @ a[1]}, NC + "tests/doc_examples/test_matmul.py (matmul)",
        tol=1e-6)

    m = 20 if T else 512
    add(f"nc_fast_matmul_tpb16_n{m}", nc_fast_matmul, (math.ceil(m / 16), math.ceil(m / 16)), (16, 16),
        lambda rng, m=m: (_f32(rng, m, m), _f32(rng, m, m), _poison((m, m), np.float32)), (2,),
        ("numba-cuda", "compute", "matmul", "shared"),
        lambda a: {2: a[0].astype(np.float64) @ a[1]}, NC + "tests/doc_examples/test_matmul.py (fast_matmul)",
        tol=1e-5)

    bpg, tpb = (2, 8) if T else (16, 32)
    m = bpg * tpb
    add(f"nc_square_matrix_mul_tpb{tpb}_n{m}", make_square_matmul(bpg, tpb), (bpg, bpg), (tpb, tpb),
        lambda rng, m=m: (_f32(rng, m, m), _f32(rng, m, m), _poison((m, m), np.float32)), (2,),
        ("numba-cuda", "compute", "matmul", "shared", "1024-thread-blocks"),
        lambda a: {2: a[0].astype(np.float64) @ a[1]}, NC + "tests/cudapy/test_matmul.py (cu_square_matrix_mul)",
        tol=1e-5, notes="the test's tpb=32; bpg=16 (the test: 50) so that simgpu simulates it in seconds")

    tpb = 4 if T else 16
    nn = 8 if T else 4096

    def jac_args(rng, nn=nn):
        A = rng.random((nn, nn))
        return (A, rng.random((nn, nn)), _poison((nn // tpb, nn // tpb), np.float64))

    def jac_ref(a, tpb=tpb):
        A, An0 = a[0], a[1]
        An = An0.copy()
        An[1:-1, 1:-1] = 0.25 * (A[1:-1, 2:] + A[1:-1, :-2] + A[:-2, 1:-1] + A[2:, 1:-1])
        E = np.zeros_like(A)
        E[1:-1, 1:-1] = An[1:-1, 1:-1] - A[1:-1, 1:-1]
        g = A.shape[0] // tpb
        return {1: An, 2: E.reshape(g, tpb, g, tpb).max(axis=(1, 3))}
    add(f"nc_jacobi_relax_core_f64_n{nn}", make_jacobi(tpb), (nn // tpb, nn // tpb), (tpb, tpb), jac_args, (1, 2),
        ("numba-cuda", "memory", "stencil", "shared", "float64", "divergence"), jac_ref,
        NC + "tests/cudapy/test_laplace.py (jocabi_relax_core)", tol=1e-12)

    n = 400 if T else 4 << 20
    add("nc_black_scholes_f64", nc_black_scholes, math.ceil(n / 512), 512,
        lambda rng, n=n: (_poison(n, np.float64), _poison(n, np.float64),
                          (1.0 - (r := rng.random(n))) * 5.0 + r * 30.0,
                          (1.0 - (r := rng.random(n))) * 1.0 + r * 100.0,
                          (1.0 - (r := rng.random(n))) * 0.25 + r * 10.0, RISKFREE, VOLATILITY),
        (0, 1), ("numba-cuda", "compute", "float64", "transcendental"), _ref_black_scholes,
        NC + "tests/cudapy/test_blackscholes.py", tol=1e-10)

    n = 1000 if T else 8 << 20
    add("nc_montecarlo_step_f64", nc_montecarlo_step, math.ceil(n / 256), 256,
        lambda rng, n=n: (rng.random(n) + 1.0, _poison(n, np.float64), 1.0 / 252, -0.0001, 0.02,
                          rng.standard_normal(n)), (1,),
        ("numba-cuda", "memory", "float64", "transcendental"),
        lambda a: {1: a[0] * np.exp(a[3] * a[2] + a[4] * a[5])}, NC + "tests/cudapy/test_montecarlo.py (step)",
        tol=1e-12)

    w, h, it = (48, 32, 64) if T else (2048, 1024, 256)
    add(f"nc_mandel_f64_{w}x{h}_it{it}", nc_mandel_kernel, math.ceil(w * h / 256), 256,
        lambda rng, w=w, h=h, it=it: (_poison(w * h, np.int32), -2.0, 1.0, -1.0, 1.0,
                                      np.uint32(w), np.uint32(h), np.uint32(it)), (0,),
        ("numba-cuda", "compute", "float64", "divergence", "complex"), _ref_mandel,
        NC + "tests/cudapy/test_mandel.py (mandel)", tol=2e-2,
        notes="iteration counts; a few boundary pixels may differ from numpy by FMA contraction")

    n = 4096 if T else 16 << 20
    add("nc_array_sum_i64_block1024", nc_array_sum, n // NELEM, NELEM,
        lambda rng, n=n: (rng.integers(0, 1000, n, dtype=np.int64), _poison(n // NELEM, np.int64)), (1,),
        ("numba-cuda", "reduction", "shared", "divergence", "int"),
        lambda a: {1: a[0].reshape(-1, NELEM).sum(axis=1)}, NC + "tests/doc_examples/test_reduction.py (array_sum)",
        tol=0, notes="interleaved tree with tid % (2*s); per-block sum to out[blockIdx.x] instead of data[0]")

    r, c = (37, 45) if T else (4000, 5000)
    add(f"nc_transpose_lib_f64_{r}x{c}", nc_transpose_kernel, (int(c / 32 + 1), int(r / 32 + 1)), (32, 32),
        lambda rng, r=r, c=c: (rng.random((r, c)), _poison((c, r), np.float64)), (1,),
        ("numba-cuda", "memory", "transpose", "shared", "float64"), lambda a: {1: a[0].T.copy()},
        NC + "kernels/transpose.py", tol=0, notes="numba.cuda.kernels.transpose's launch: blocks = int(rows/32+1), int(cols/32+1)")

    n = 1000 if T else 16 << 20
    add("nc_heat_step_f64", nc_heat_step, math.ceil(n / 256), 256,
        lambda rng, n=n: (rng.random(n), _poison(n, np.float64), 1, 0.25), (1,),
        ("numba-cuda", "memory", "stencil", "float64"), _ref_heat,
        NC + "tests/doc_examples/test_laplace.py (solve_heat_equation, one step, no grid.sync)", tol=1e-14)

    # --- CUDA by Example ---
    n = 100000 if T else 100 << 20
    add("cbe_histo_shmem_100MiB", cbe_histo_shmem, 2 if T else 264, 256,
        lambda rng, n=n: (rng.integers(0, 256, n, dtype=np.uint8), np.zeros(256, np.uint32)), (1,),
        ("cuda-by-example", "atomics", "shared", "histogram"), _ref_histo,
        "CUDA by Example (Sanders & Kandrot 2010), ch. 9, hist_gpu_shmem_atomics.cu", tol=0)
    n = 100000 if T else 16 << 20
    add("cbe_histo_gmem_16MiB", cbe_histo_gmem, 2 if T else 264, 256,
        lambda rng, n=n: (rng.integers(0, 256, n, dtype=np.uint8), np.zeros(256, np.uint32)), (1,),
        ("cuda-by-example", "atomics", "global", "histogram", "contention"), _ref_histo,
        "CUDA by Example (Sanders & Kandrot 2010), ch. 9, hist_gpu_gmem_atomics.cu", tol=0)

    # --- GPU-Puzzles ---
    GP = "GPU-Puzzles (github.com/srush/GPU-Puzzles), "
    n = 1000 if T else 32 << 20
    add("gp_map_guard_f32", gp_map_guard, math.ceil(n / 256), 256,
        lambda rng, n=n: (_poison(n, np.float32), _f32(rng, n), n), (0,), ("gpu-puzzles", "memory", "elementwise"),
        lambda a: {0: a[1] + np.float32(10)}, GP + "puzzle 3 (Guard)", tol=0)
    add("gp_zip_f32", gp_zip, math.ceil(n / 256), 256,
        lambda rng, n=n: (_poison(n, np.float32), _f32(rng, n), _f32(rng, n), n), (0,),
        ("gpu-puzzles", "memory", "elementwise"), lambda a: {0: a[1] + a[2]}, GP + "puzzle 2 (Zip)", tol=0)
    s = 40 if T else 4096
    add(f"gp_map_blocks2d_rowsx_f32_n{s}", gp_map_blocks2d, (math.ceil(s / 32), math.ceil(s / 8)), (32, 8),
        lambda rng, s=s: (_poison((s, s), np.float32), _f32(rng, s, s), s), (0,),
        ("gpu-puzzles", "memory", "uncoalesced"), lambda a: {0: a[1] + np.float32(10)},
        GP + "puzzle 7 (Blocks 2D)", tol=0, notes="i = row from threadIdx.x: each warp touches 32 rows")
    add(f"gp_broadcast_f32_n{s}", gp_broadcast, (math.ceil(s / 32), math.ceil(s / 8)), (32, 8),
        lambda rng, s=s: (_poison((s, s), np.float32), _f32(rng, s, 1), _f32(rng, 1, s), s), (0,),
        ("gpu-puzzles", "memory", "uncoalesced", "broadcast"), lambda a: {0: a[1] + a[2]},
        GP + "puzzle 5 (Broadcast)", tol=0)
    n = 1000 if T else 32 << 20
    add("gp_pooling_f32", gp_pooling, math.ceil(n / GP_TPB), GP_TPB,
        lambda rng, n=n: (_poison(n, np.float32), _f32(rng, n), n), (0,), ("gpu-puzzles", "memory", "shared", "stencil"),
        _ref_pooling, GP + "puzzle 9 (Pooling)", tol=1e-6)
    n = 1024 if T else 32 << 20
    add("gp_dot_f32", gp_dot, n // GP_TPB, GP_TPB,
        lambda rng, n=n: (_poison(n // GP_TPB, np.float32), _f32(rng, n), _f32(rng, n), n), (0,),
        ("gpu-puzzles", "reduction", "shared"), _ref_dot, GP + "puzzle 10 (Dot product)", tol=1e-5)
    n = 1000 if T else 16 << 20
    add(f"gp_conv1d_k{GP_CONV}_f32", gp_conv1d, math.ceil(n / GP_TPB), GP_TPB,
        lambda rng, n=n: (_poison(n, np.float32), _f32(rng, n), _f32(rng, GP_CONV), n, GP_CONV), (0,),
        ("gpu-puzzles", "shared", "stencil"), _ref_conv1d, GP + "puzzle 11 (1D Convolution)", tol=1e-5)
    n = 1024 if T else 16 << 20
    add("gp_prefix_sum_block_f32", gp_prefix_sum, n // GP_TPB, GP_TPB,
        lambda rng, n=n: (_poison(n, np.float32), _f32(rng, n), n), (0,), ("gpu-puzzles", "scan", "shared"),
        _ref_prefix, GP + "puzzle 12 (Prefix sum)", tol=1e-5)
    b, s = (6, 700) if T else (16384, 1024)
    add(f"gp_axis_sum_{b}x{s}_f32", gp_axis_sum, (1, b), GP_TPB,
        lambda rng, b=b, s=s: (_poison((b, 1), np.float32), _f32(rng, b, s), s), (0,),
        ("gpu-puzzles", "reduction", "shared"), lambda a: {0: a[1].astype(np.float64).sum(axis=1, keepdims=True)},
        GP + "puzzle 13 (Axis sum)", tol=1e-5)
    s = 20 if T else 512
    add(f"gp_matmul_tpb8_n{s}", gp_matmul, (math.ceil(s / GP_MM), math.ceil(s / GP_MM)), (GP_MM, GP_MM),
        lambda rng, s=s: (_poison((s, s), np.float32), _f32(rng, s, s), _f32(rng, s, s), s), (0,),
        ("gpu-puzzles", "compute", "matmul", "shared", "small-tiles"),
        lambda a: {0: a[1].astype(np.float64) @ a[2]}, GP + "puzzle 14 (Matrix multiply)", tol=1e-5)

    # --- lecture tricks, papers ---
    n = 5000 if T else 32 << 20
    gr = math.ceil(n / (COARSE * 256))
    add("lt_saxpy_coarsened4_f32", lt_saxpy_coarsened, gr, 256,
        lambda rng, n=n: (np.float32(2.5), _f32(rng, n), _f32(rng, n), _poison(n, np.float32)), (3,),
        ("lecture", "memory", "coarsening"), lambda a: {3: a[0] * a[1] + a[2]},
        "PMPP 4th ed. (Kirk & Hwu), ch. 6.3 thread coarsening, on SAXPY", tol=1e-6)
    s = 64 if T else 512
    add(f"lt_matmul_coarsened4_tile16_n{s}", lt_matmul_coarsened, (s // (CT * COARSE), s // CT), (CT, CT),
        lambda rng, s=s: (_f32(rng, s, s), _f32(rng, s, s), _poison((s, s), np.float32), s), (2,),
        ("lecture", "compute", "matmul", "shared", "coarsening"),
        lambda a: {2: a[0].astype(np.float64) @ a[1]}, "PMPP 4th ed. (Kirk & Hwu), ch. 6.3, fig. 6.13", tol=1e-5)
    s = 64 if T else 8192
    add(f"lt_transpose_diagonal_f32_n{s}", lt_transpose_diagonal, (s // TILE_DIM, s // TILE_DIM), (TILE_DIM, BLOCK_ROWS),
        lambda rng, s=s: (_poison((s, s), np.float32), _f32(rng, s, s), s, s), (0,),
        ("paper", "memory", "transpose", "shared"), lambda a: {0: a[1].T.copy()},
        "Ruetsch & Micikevicius, Optimizing Matrix Transpose in CUDA (NVIDIA, 2009), transposeDiagonal", tol=0)
    s = 40 if T else 8192
    add(f"st_stencil2d_5pt_f32_n{s}", st_stencil2d_5pt, (math.ceil(s / 32), math.ceil(s / 8)), (32, 8),
        lambda rng, s=s: (_f32(rng, s, s), _poison((s, s), np.float32), np.float32(0.2)), (1,),
        ("stencil", "memory"), _ref_stencil2d, "Micikevicius, 3D Finite Difference Computation on GPUs using CUDA "
        "(GPGPU-2, 2009), naive one-point-per-thread stencil in 2D", tol=1e-6)
    s = 20 if T else 384
    add(f"st_stencil3d_7pt_f32_n{s}", st_stencil3d_7pt, (math.ceil(s / 32), math.ceil(s / 4), math.ceil(s / 2)), (32, 4, 2),
        lambda rng, s=s: (_f32(rng, s, s, s), np.zeros((s, s, s), np.float32), np.float32(0.4), np.float32(0.1)), (1,),
        ("stencil", "memory", "3d"), _ref_stencil3d,
        "Micikevicius 2009 (above), the naive 3D 7-point stencil, one thread per point", tol=1e-6)
    r, c = (5, 700) if T else (8192, 4096)
    add(f"softmax_rows_{r}x{c}_f32", softmax_rows, r, SM_TPB,
        lambda rng, r=r, c=c: (rng.standard_normal((r, c), dtype=np.float32), _poison((r, c), np.float32)), (1,),
        ("ml", "reduction", "shared", "transcendental"), _ref_softmax,
        "Milakov & Gimelshein 2018, 'Online normalizer calculation for softmax', alg. 2 (safe softmax), "
        "block-per-row layout of PyTorch's cunn_SoftMaxForward", tol=1e-5)
    r, c = (7, 100) if T else (32768, 1024)
    add(f"layernorm_rows_{r}x{c}_f32", layernorm_rows, math.ceil(r * 32 / 256), 256,
        lambda rng, r=r, c=c: (rng.standard_normal((r, c), dtype=np.float32), _f32(rng, c), _f32(rng, c),
                               _poison((r, c), np.float32), np.float32(1e-5)), (3,),
        ("ml", "reduction", "shuffle"), _ref_layernorm, "Ba, Kiros & Hinton 2016 (LayerNorm); warp-per-row layout "
        "of Apex/PyTorch layer_norm kernels for short rows", tol=1e-5)
    rows, cols, mx = (300, 500, 40) if T else (1 << 20, 1 << 20, 31)
    add("spmv_csr_scalar_f32", spmv_csr_scalar, math.ceil(rows / 256), 256,
        lambda rng, rows=rows, cols=cols, mx=mx: (rows, *_csr(rng, rows, cols, mx), _poison(rows, np.float32)), (5,),
        ("sparse", "memory", "gather", "divergence"), _ref_spmv,
        "Bell & Garland, Efficient Sparse Matrix-Vector Multiplication on CUDA (NVR-2008-004), spmv_csr_scalar_kernel",
        tol=1e-5, notes="1..31 nonzeros per row, uniform random columns")
    add("spmv_csr_vector_f32", spmv_csr_vector, math.ceil(rows * 32 / 256), 256,
        lambda rng, rows=rows, cols=cols, mx=mx: (rows, *_csr(rng, rows, cols, mx), _poison(rows, np.float32)), (5,),
        ("sparse", "memory", "gather", "shuffle"), _ref_spmv,
        "Bell & Garland (above), spmv_csr_vector_kernel (warp per row; shuffle reduction)", tol=1e-5)
    n = 512 if T else 4096
    add(f"nbody_forces_n{n}", nbody_forces, n // NB_P, NB_P,
        lambda rng, n=n: (np.concatenate([rng.standard_normal((n, 3), dtype=np.float32),
                                          rng.random((n, 1), dtype=np.float32) + np.float32(0.5)], axis=1),
                          _poison((n, 3), np.float32)), (1,),
        ("gpu-gems", "compute", "shared", "rsqrt"), _ref_nbody,
        "GPU Gems 3 ch. 31 (Nyland, Harris & Prins), calculate_forces", tol=1e-4)
    n, st = (1000, 50) if T else (1 << 20, RW_STEPS)
    add(f"rw_xorshift_steps{st}", rw_xorshift, math.ceil(n / 256), 256,
        lambda rng, n=n, st=st: (rng.integers(1, 2 ** 32 - 1, n, dtype=np.uint32), _poison(n, np.int32),
                                 _poison(n, np.int32), st), (1, 2),
        ("random", "compute", "int", "divergence"), _ref_rw,
        "Marsaglia, Xorshift RNGs (J. Stat. Softw. 8(14), 2003), xorshift32 13/17/5; 2D lattice random walk",
        tol=0)
    n = 2000 if T else 1 << 20
    add("collatz_steps", collatz_steps, math.ceil(n / 256), 256,
        lambda rng, n=n: (1, _poison(n, np.int32)), (1,), ("divergence", "int", "data-dependent-loop"),
        _ref_collatz, "Collatz stopping times (Project Euler 14), the classic divergence exercise", tol=0)
    # numba-cuda's library reduction, kept last (see notes)
    n = 128 * 70 if T else 8 << 20
    g = min(n // 128, 64)
    add("nc_reduce_lib_f64_grid64", nc_gpu_reduce_block_strided, g, 128,
        lambda rng, n=n, g=g: (rng.random(n), _poison(g, np.float64), 0.0, True), (1,),
        ("numba-cuda", "reduction", "latency-bound", "float64", "syncwarp"), _ref_reduce_lib,
        NC + "kernels/reduction.py (Reduce full-block kernel)", tol=1e-12,
        notes="last on purpose: its `if tid < 2: syncwarp()` (full mask, 2 lanes) is undefined behaviour by the PTX spec, so a hang here costs only this case; cuda.reduce's first launch: min(n//128, 64) blocks of 128 threads, block-strided loop")

    names = [c["name"] for c in C]
    assert len(set(names)) == len(names), names
    return C


TINY = os.environ.get("VALIDATION_TINY") == "1"
CASES = cases(TINY)
