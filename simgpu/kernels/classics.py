"""Classic kernels from the lecture, used by `simgpu demo` and the docs."""
import numpy as np

from .. import cuda
from numba import float32

TILE = 16
TPB = 256


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def matmul_naive(A, B, C):
    row, col = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def matmul_coalesced(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def matmul_tiled(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    col, row = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    n = A.shape[1]
    acc = float32(0)
    for t in range((n + TILE - 1) // TILE):
        if row < A.shape[0] and t * TILE + tx < n:
            sA[ty, tx] = A[row, t * TILE + tx]
        else:
            sA[ty, tx] = 0
        if col < B.shape[1] and t * TILE + ty < n:
            sB[ty, tx] = B[t * TILE + ty, col]
        else:
            sB[ty, tx] = 0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


def reduce_sum(x, out):
    s = cuda.shared.array(TPB, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    s[tid] = x[i] if i < x.size else float32(0)
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            s[tid] += s[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        cuda.atomic.add(out, 0, s[0])


def transpose_tiled(a, out):
    tile = cuda.shared.array((32, 33), float32)
    x = cuda.blockIdx.x * 32 + cuda.threadIdx.x
    y = cuda.blockIdx.y * 32 + cuda.threadIdx.y
    if x < a.shape[1] and y < a.shape[0]:
        tile[cuda.threadIdx.y, cuda.threadIdx.x] = a[y, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * 32 + cuda.threadIdx.x
    y = cuda.blockIdx.x * 32 + cuda.threadIdx.y
    if x < out.shape[1] and y < out.shape[0]:
        out[y, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y]


def relu_branch(x, out):
    i = cuda.grid(1)
    if i < x.size:
        if x[i] > 0:
            out[i] = x[i]
        else:
            out[i] = 0


def demo_launches(scale=1):
    """(title, kernel, grid, block, args, check) for `simgpu demo`."""
    rng = np.random.default_rng(0)
    n = 1 << 20
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    m = 256
    A, B = rng.random((m, m), dtype=np.float32), rng.random((m, m), dtype=np.float32)
    C1, C2 = np.zeros((m, m), np.float32), np.zeros((m, m), np.float32)
    r = np.zeros(1, np.float32)
    t_in = rng.random((1024, 1024), dtype=np.float32)
    t_out = np.zeros_like(t_in)
    g = (m + TILE - 1) // TILE
    return [
        ("saxpy: 1M elements, memory-bound", saxpy, n // TPB, TPB, (np.float32(2), x, y, out),
         lambda: np.allclose(out, 2 * x + y)),
        ("naive matmul 256x256 (coalesced B)", matmul_coalesced, (g, g), (TILE, TILE), (A, B, C1),
         lambda: np.allclose(C1, A @ B, rtol=1e-4)),
        ("tiled matmul 256x256, 16x16 shared tiles", matmul_tiled, (g, g), (TILE, TILE), (A, B, C2),
         lambda: np.allclose(C2, A @ B, rtol=1e-4)),
        ("tree reduction of 1M floats", reduce_sum, n // TPB, TPB, (x, r),
         lambda: np.isclose(r[0], x.sum(dtype=np.float64), rtol=1e-4)),
        ("padded shared-memory transpose 1024x1024", transpose_tiled, (32, 32), (32, 32), (t_in, t_out),
         lambda: np.array_equal(t_out, t_in.T)),
    ]
