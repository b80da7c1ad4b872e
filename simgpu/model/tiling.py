"""Global-memory traffic of matmul C = A.B, naive and shared-memory tiled.

Layout: A is M x K, B is K x N, C is M x N, all row-major, each starting on a sector
boundary (cudaMalloc returns 256-byte aligned pointers).

Naive (one thread per C element, reading its row of A and its column of B, no cache reuse):
  element reads = 2 M N K,  element writes = M N.

Tiled with square tile T (one block per T x T tile of C; for each of the ceil(K/T) steps it
stages a T x T tile of A and one of B in shared memory):
  tiles                 = ceil(M/T) ceil(N/T) ceil(K/T)       (block-steps)
  elements requested    = tiles x 2 T^2                       (as if edges were padded)
  elements loaded       = M K ceil(N/T) + K N ceil(M/T)       (bounds-checked loads fetch only
                                                               in-range elements)
  when T divides M = N = K = n:  2 n^3 / T, a T-fold cut of the naive 2 n^3.
  sectors               = the 32-byte sectors those in-range row segments touch: a segment of
                          L bytes starting at byte a touches floor((a+L-1)/32) - floor(a/32) + 1.

The lecture: "each input is read N/T times from global memory and T times from shared
memory": an element of A is fetched from global memory once per block column, ceil(N/T)
times, and each time it sits in shared memory T threads of the block read it, so it is used
N/T x T = N times in all, as in the naive kernel, but only N/T of those uses go to DRAM.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .roofline import dtype_bytes


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def segment_sectors(start_bytes, length_bytes, sector_bytes: int = 32):
    """Sectors touched by the byte range [start, start + length); vectorised, 0 for length 0.

    >>> int(segment_sectors(0, 64)), int(segment_sectors(2, 64)), int(segment_sectors(16, 16))
    (2, 3, 1)
    """
    start = np.asarray(start_bytes, dtype=np.int64)
    length = np.asarray(length_bytes, dtype=np.int64)
    last = (start + length - 1) // sector_bytes
    return np.where(length > 0, last - start // sector_bytes + 1, 0)


def rows_sectors_by_block(row_edges, pitch_bytes: int, seg_starts_bytes, seg_lens_bytes,
                          sector_bytes: int = 32) -> np.ndarray:
    """Sectors per (row block, segment): entry [b, s] sums, over rows r in
    [row_edges[b], row_edges[b+1]), the sectors of [r x pitch + start_s, + len_s).

    Exact and fast: a row's offset within a sector, (r x pitch) mod 32, repeats with period
    32 / gcd(pitch, 32), so each residue class is evaluated once and weighted by its row count.
    """
    edges = np.asarray(row_edges, dtype=np.int64)
    starts = np.atleast_1d(np.asarray(seg_starts_bytes, dtype=np.int64))
    lens = np.atleast_1d(np.asarray(seg_lens_bytes, dtype=np.int64))
    period = sector_bytes // math.gcd(int(pitch_bytes), sector_bytes)
    classes = np.arange(period, dtype=np.int64)
    below = (edges[:, None] - 1 - classes[None, :]) // period       # rows < edge in each class
    counts = below[1:] - below[:-1]                                  # (blocks, period)
    offsets = (classes * pitch_bytes) % sector_bytes
    per_class = segment_sectors(offsets[:, None] + starts[None, :], lens[None, :], sector_bytes)
    return counts @ per_class


def rows_sectors(row_begin: int, row_end: int, pitch_bytes: int, seg_starts_bytes, seg_lens_bytes,
                 sector_bytes: int = 32) -> int:
    """Total sectors of the segments over rows [row_begin, row_end) (see rows_sectors_by_block)."""
    if row_end <= row_begin:
        return 0
    return int(rows_sectors_by_block([row_begin, row_end], pitch_bytes, seg_starts_bytes,
                                     seg_lens_bytes, sector_bytes).sum())


def tile_segments(extent: int, tile: int, elem_bytes: int):
    """Start byte and byte length of each tile-wide column segment of a row of ``extent`` elements."""
    idx = np.arange(_ceil_div(extent, tile), dtype=np.int64)
    starts = idx * tile
    return starts * elem_bytes, np.minimum(tile, extent - starts) * elem_bytes


@dataclass(frozen=True)
class MatmulTraffic:
    """Global-memory traffic of one matmul kernel.  Elements are counted, bytes derived."""

    kind: str                    # "naive" or "tiled"
    m: int
    n: int
    k: int
    tile: int | None
    elem_bytes: int
    tiles: int                   # block-steps: ceil(M/T) ceil(N/T) ceil(K/T) (0 for naive)
    elements_requested: int      # loads as issued, padding included
    elements_loaded: int         # in-range elements actually fetched
    sectors_loaded: int          # 32-byte sectors those loads touch (0 if not modelled)
    elements_written: int

    @property
    def bytes_loaded(self) -> int:
        return self.elements_loaded * self.elem_bytes

    @property
    def sector_efficiency(self) -> float:
        """Useful bytes over sector bytes moved (1.0 when every row segment is sector-aligned)."""
        return self.bytes_loaded / (32 * self.sectors_loaded) if self.sectors_loaded else 1.0

    @property
    def reads_per_input_element(self) -> float:
        """Average global reads of each element of A and B."""
        return self.elements_loaded / (self.m * self.k + self.k * self.n)


def naive_matmul_traffic(m: int, n: int, k: int, dtype: str = "fp32") -> MatmulTraffic:
    """2 M N K element reads (a row of A and a column of B per output), M N writes.

    >>> naive_matmul_traffic(1024, 1024, 1024).elements_loaded == 2 * 1024**3
    True
    """
    reads = 2 * m * n * k
    return MatmulTraffic("naive", m, n, k, None, dtype_bytes(dtype), 0, reads, reads, 0, m * n)


def tiled_matmul_traffic(m: int, n: int, k: int, tile: int, dtype: str = "fp32",
                         sector_bytes: int = 32) -> MatmulTraffic:
    """Traffic of the shared-memory tiled matmul with square tile ``tile`` (formulas above).

    Worked example: n = 1000, T = 32, fp32.  ceil(1000/32) = 32 tiles a side, so 32^3 = 32768
    block-steps request 32768 x 2 x 1024 = 67.1 M elements; bounds checks leave
    2 x 1000^2 x 32 = 64.0 M loaded.  A row is 4000 B = 125 sectors, so every tile row is
    sector-aligned: 8.0 M sectors, efficiency 1.0.  At n = 1001 a row is 4004 B, rows start
    at every 4-byte offset within a sector, most 128-byte tile rows straddle 5 sectors, and
    the efficiency drops to 0.817.

    >>> t = tiled_matmul_traffic(1000, 1000, 1000, 32)
    >>> t.elements_requested, t.elements_loaded, t.sectors_loaded
    (67108864, 64000000, 8000000)
    >>> round(tiled_matmul_traffic(1001, 1001, 1001, 32).sector_efficiency, 3)
    0.817
    """
    if min(m, n, k, tile) <= 0:
        raise ValueError(f"sizes and tile must be positive, got M={m} N={n} K={k} T={tile}")
    eb = dtype_bytes(dtype)
    tm, tn, tk = _ceil_div(m, tile), _ceil_div(n, tile), _ceil_div(k, tile)
    tiles = tm * tn * tk
    loaded = m * k * tn + k * n * tm
    a_starts, a_lens = tile_segments(k, tile, eb)          # a row of A cut into K-tiles
    b_starts, b_lens = tile_segments(n, tile, eb)          # a row of B cut into N-tiles
    sectors = (tn * rows_sectors(0, m, k * eb, a_starts, a_lens, sector_bytes)
               + tm * rows_sectors(0, k, n * eb, b_starts, b_lens, sector_bytes))
    return MatmulTraffic("tiled", m, n, k, tile, eb, tiles, tiles * 2 * tile * tile, loaded,
                         sectors, m * n)


@dataclass(frozen=True)
class Reuse:
    """The lecture's sentence as numbers, for an n x n matmul with tile T."""

    n: int
    tile: int
    naive_global_reads_per_element: int       # n
    tiled_global_reads_per_element: float     # n / T
    shared_reads_per_global_load: int         # T
    uses_per_element: float                   # (n / T) x T = n
    reduction: float                          # naive / tiled global reads = T


def reuse(n: int, tile: int) -> Reuse:
    """"Each input is read N/T times from global memory and T times from shared memory."

    >>> r = reuse(4096, 32)
    >>> r.tiled_global_reads_per_element, r.shared_reads_per_global_load, r.reduction
    (128.0, 32, 32.0)
    """
    g = n / tile
    return Reuse(n, tile, n, g, tile, g * tile, n / g)


def tiling_reduction(m: int, n: int, k: int, tile: int) -> float:
    """Naive element reads over tiled element reads; exactly T when T divides the sizes."""
    return naive_matmul_traffic(m, n, k).elements_loaded / tiled_matmul_traffic(m, n, k, tile).elements_loaded


__all__ = ["segment_sectors", "rows_sectors", "rows_sectors_by_block", "tile_segments", "MatmulTraffic", "naive_matmul_traffic",
           "tiled_matmul_traffic", "Reuse", "reuse", "tiling_reduction"]
