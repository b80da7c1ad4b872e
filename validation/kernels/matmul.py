"""float32 matrix multiply C = A @ B (square n x n, row-major).

naive:        thread x -> column (B and C accesses coalesced, A broadcast)
uncoalesced:  thread x -> row (A and C accesses strided by n, B broadcast)
tiled:        shared-memory tiles TILE x TILE, n divisible by TILE, no bounds checks
tiled_bounds: same with bounds checks (any n, e.g. 1000)
Sizes: n=512 (3 MiB total, fits L2), n=2048 (48 MiB total, about the L2 size),
n=4096 (192 MiB, exceeds L2; naive and tiled only, uncoalesced would take ~0.5 s),
bounds-checked n=1000 (fits) and n=3000 (103 MiB, exceeds).
"""
import os
import numpy as np
from numba import cuda

TINY = os.environ.get("VALIDATION_TINY") == "1"
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


def _args(n):
    def f(rng):
        return (rng.random((n, n), dtype=np.float32) - np.float32(0.5),
                rng.random((n, n), dtype=np.float32) - np.float32(0.5),
                np.zeros((n, n), np.float32), np.int32(n))
    return f


def _ref(args):
    A, B = args[0].astype(np.float64), args[1].astype(np.float64)
    return {2: A @ B}


def _cases():
    cases = []
    if TINY:
        plan = [("naive", matmul_naive, 32), ("uncoalesced", matmul_uncoalesced, 32),
                ("tiled", matmul_tiled, 32), ("tiled_bounds", matmul_tiled_bounds, 40)]
    else:
        plan = [("naive", matmul_naive, 512), ("naive", matmul_naive, 2048), ("naive", matmul_naive, 4096),
                ("uncoalesced", matmul_uncoalesced, 512), ("uncoalesced", matmul_uncoalesced, 2048),
                ("tiled", matmul_tiled, 512), ("tiled", matmul_tiled, 2048), ("tiled", matmul_tiled, 4096),
                ("tiled_bounds", matmul_tiled_bounds, 1000), ("tiled_bounds", matmul_tiled_bounds, 3000)]
    for variant, k, n in plan:
        total = 3 * n * n * 4
        fits = "fits-L2" if total <= 40 * 1024 * 1024 else ("near-L2" if total <= 64 * 1024 * 1024 else "exceeds-L2")
        if variant in ("naive",):
            block = (32, 8)
            grid = ((n + 31) // 32, (n + 7) // 8)
        elif variant == "uncoalesced":
            block = (32, 8)
            grid = ((n + 31) // 32, (n + 7) // 8)
        else:
            block = (TILE, TILE)
            grid = ((n + TILE - 1) // TILE, (n + TILE - 1) // TILE)
        cases.append(dict(
            name=f"matmul_{variant}_n{n}", kernel=k, grid=grid, block=block, args=_args(n),
            outputs=(2,), tags=("compute", "matmul", variant, fits), flops=2 * n ** 3,
            bytes=total, ref=_ref, tol=1e-4,
            notes=f"n={n}, block={block}; bytes = compulsory 3*n*n*4"))
    return cases


CASES = _cases()
