"""2D transpose out[x, y] = inp[y, x] of float32 matrices.

Square n x n, n a multiple of 32 (suite): transpose_naive, transpose_tiled (32x32 tile, 32x8
blocks: 32-way bank conflicts), transpose_tiled_padded (32x33 tile), transpose_tiled_32x32.
transpose_padded_checked: the padded tile with 32x32 blocks and bounds checks (any shape).

The kernels marked (suite) are validation/kernels/transpose.py's, measured on the H200;
tests/test_kernel_library.py keeps the two copies identical.
"""
import numpy as np
from numba import float32

from .. import cuda

TILE_DIM = 32
BLOCK_ROWS = 8
TILE_PAD = TILE_DIM + 1  # padded row length: 33 words

def transpose_naive(inp, out):
    x = cuda.blockIdx.x * TILE_DIM + cuda.threadIdx.x
    y0 = cuda.blockIdx.y * TILE_DIM + cuda.threadIdx.y
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        out[x, y0 + j] = inp[y0 + j, x]


def transpose_tiled(inp, out):
    tile = cuda.shared.array((TILE_DIM, TILE_DIM), np.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE_DIM + tx
    y = cuda.blockIdx.y * TILE_DIM + ty
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        tile[ty + j, tx] = inp[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE_DIM + tx
    y = cuda.blockIdx.x * TILE_DIM + ty
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        out[y + j, x] = tile[tx, ty + j]


def transpose_tiled_padded(inp, out):
    tile = cuda.shared.array((TILE_DIM, TILE_PAD), np.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE_DIM + tx
    y = cuda.blockIdx.y * TILE_DIM + ty
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        tile[ty + j, tx] = inp[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE_DIM + tx
    y = cuda.blockIdx.x * TILE_DIM + ty
    for j in range(0, TILE_DIM, BLOCK_ROWS):
        out[y + j, x] = tile[tx, ty + j]


def transpose_tiled_32x32(inp, out):
    tile = cuda.shared.array((TILE_DIM, TILE_DIM), np.float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    tile[ty, tx] = inp[cuda.blockIdx.y * TILE_DIM + ty, cuda.blockIdx.x * TILE_DIM + tx]
    cuda.syncthreads()
    out[cuda.blockIdx.x * TILE_DIM + ty, cuda.blockIdx.y * TILE_DIM + tx] = tile[tx, ty]


def transpose_padded_checked(a, out):
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
