"""Closed-form memory traffic of standard access patterns, to check simulations against.

All counts are Nsight Compute's: a *request* is one warp-level instruction, a *sector* a
distinct aligned 32-byte piece of memory touched by its active lanes.
"""
from __future__ import annotations

import numpy as np


def warp_sectors(first_byte, lanes, stride_bytes, size, sector_bytes=32):
    """Sectors touched by `lanes` active consecutive lanes reading `size` bytes each at
    first_byte + lane * stride_bytes (stride_bytes >= 0, elements naturally aligned).
    Vectorised over numpy arrays of first_byte / lanes.

    If stride_bytes <= sector_bytes no sector between the first and last byte is skipped,
    so the count is the span in sectors; otherwise every lane has sectors of its own."""
    first_byte = np.asarray(first_byte, dtype=np.int64)
    lanes = np.asarray(lanes, dtype=np.int64)
    if stride_bytes <= sector_bytes:
        last = first_byte + (lanes - 1) * stride_bytes + size - 1
        n = last // sector_bytes - first_byte // sector_bytes + 1
    else:
        per_lane = (first_byte % sector_bytes + size - 1) // sector_bytes + 1   # aligned: 1
        n = lanes * per_lane
    return np.where(lanes > 0, n, 0)


def strided_sectors(n_threads, stride, itemsize, offset=0, base_byte=0, warp=32):
    """Total sectors of `x[offset + i * stride]` executed by threads i = 0 .. n_threads-1
    (all active, consecutive warps of 32)."""
    warps = np.arange(-(-n_threads // warp), dtype=np.int64)
    lanes = np.minimum(warp, n_threads - warps * warp)
    first = base_byte + (offset + warps * warp * stride) * itemsize
    return int(warp_sectors(first, lanes, stride * itemsize, itemsize).sum())


def strided_copy_sectors(n, stride, itemsize, block=256):
    """Sectors loaded by ``j = i * stride; if j < n: b[j] = a[j]`` over a grid covering
    ceil(n / stride) threads: the active threads are i < ceil(n / stride)."""
    active = -(-n // stride)
    return strided_sectors(active, stride, itemsize)


def requests(n_threads, warp=32):
    """Warp-level requests of one access executed by n_threads consecutive active threads."""
    return -(-n_threads // warp)


def tiled_matmul_global_elements(n, tile):
    """Elements a shared-memory tiled matmul (C = A @ B, n x n, tile x tile blocks, each
    in-bounds element of a tile loaded once per block) reads from global memory:
    every block row of C reads A's rows once per block column, so A contributes
    n * n * ceil(n / tile) and B the same.  When tile divides n this is 2 n^3 / tile."""
    return 2 * n * n * (-(-n // tile))


def naive_matmul_global_elements(n):
    """Elements a naive matmul (one thread per C element, k-loop over A's row and B's
    column) reads: 2 n^3."""
    return 2 * n ** 3


def transpose_wavefronts_per_request(tile, padded, banks=32):
    """Shared-memory wavefronts of reading a float32 tile column (tile[tx, ty] with tx the
    lane): with row length tile (+1 if padded), lane l reads word l * row; the bank that
    holds the most of the 32 words sets the count."""
    row = tile + (1 if padded else 0)
    words = [l * row for l in range(min(32, tile))]
    per_bank = {}
    for w in words:
        per_bank[w % banks] = per_bank.get(w % banks, 0) + 1
    return max(per_bank.values())
