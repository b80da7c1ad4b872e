"""float32 matrix multiply C = A @ B.

Taking n (square n x n, suite): matmul_naive (thread x -> column: coalesced),
matmul_uncoalesced (thread x -> row), matmul_tiled (TILE x TILE shared tiles, n a multiple of
TILE), matmul_tiled_bounds (any n).
Sizes from the arrays' shapes (any m, n, k): matmul_coalesced (col, row = cuda.grid(2)) and
matmul_tiled_shape (shared tiles with bounds checks).

The kernels marked (suite) are validation/kernels/matmul.py's, measured on the H200;
tests/test_kernel_library.py keeps the two copies identical.
"""
import numpy as np
from numba import float32

from .. import cuda

TILE = 16

def matmul_naive(A, B, C, n):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < n and col < n:
        acc = np.float32(0.0)
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def matmul_uncoalesced(A, B, C, n):
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    col = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < n and col < n:
        acc = np.float32(0.0)
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def matmul_tiled(A, B, C, n):
    sA = cuda.shared.array((TILE, TILE), np.float32)
    sB = cuda.shared.array((TILE, TILE), np.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = np.float32(0.0)
    for t in range(n // TILE):
        sA[ty, tx] = A[row, t * TILE + tx]
        sB[ty, tx] = B[t * TILE + ty, col]
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    C[row, col] = acc


def matmul_tiled_bounds(A, B, C, n):
    sA = cuda.shared.array((TILE, TILE), np.float32)
    sB = cuda.shared.array((TILE, TILE), np.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = np.float32(0.0)
    for t in range((n + TILE - 1) // TILE):
        ka = t * TILE + tx
        kb = t * TILE + ty
        if row < n and ka < n:
            sA[ty, tx] = A[row, ka]
        else:
            sA[ty, tx] = np.float32(0.0)
        if kb < n and col < n:
            sB[ty, tx] = B[kb, col]
        else:
            sB[ty, tx] = np.float32(0.0)
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = acc


def matmul_coalesced(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def matmul_tiled_shape(A, B, C):
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
