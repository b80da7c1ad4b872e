"""2D transpose out[x, y] = inp[y, x] of an n x n float32 matrix.

naive:         thread x -> column of inp: coalesced reads, writes strided by n
tiled:         tile[32][32] in shared memory, 32x8 blocks (each thread moves 4 elements);
               column read of the tile -> 32-way bank conflicts
tiled_padded:  tile[32][33]: conflict-free
tiled_32x32:   tile[32][32] with 32x32 blocks (one element per thread)
Sizes: 1024^2 (4 MiB per matrix, fits L2) and 8192^2 (256 MiB per matrix, exceeds).
"""
import os
import numpy as np
from numba import cuda

TINY = os.environ.get("VALIDATION_TINY") == "1"
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


def _args(n):
    def f(rng):
        return (rng.random((n, n), dtype=np.float32), np.zeros((n, n), np.float32))
    return f


def _ref(args):
    return {1: np.ascontiguousarray(args[0].T)}


def _cases():
    cases = []
    sizes = [("L2", 1024), ("DRAM", 8192)] if not TINY else [("L2", 64), ("DRAM", 96)]
    for tag, n in sizes:
        fits = "fits-L2" if tag == "L2" else "exceeds-L2"
        g = (n // TILE_DIM, n // TILE_DIM)
        for variant, k, block in (("naive", transpose_naive, (32, 8)),
                                  ("tiled", transpose_tiled, (32, 8)),
                                  ("tiled_padded", transpose_tiled_padded, (32, 8)),
                                  ("tiled_32x32", transpose_tiled_32x32, (32, 32))):
            cases.append(dict(
                name=f"transpose_{variant}_{tag}", kernel=k, grid=g, block=block, args=_args(n),
                outputs=(1,), tags=("memory", "transpose", variant, fits), flops=0, bytes=2 * n * n * 4,
                ref=_ref, tol=0.0,
                notes=f"n={n}, block={block}, grid={g}"))
    return cases


CASES = _cases()
