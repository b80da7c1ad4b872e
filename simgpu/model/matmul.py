"""The matmul "mystery plot": predicted TFLOP/s of a tiled GPU matmul versus its size.

The lecture explains the jagged curve by three stacked effects; each is computed here from
the kernel's tiling and the GPU spec, none is fitted:

(a) tile quantisation: C is cut into BM x BN output tiles and K into BK steps; edge tiles run
    the full tile's tensor-core work, so
        tile efficiency = 2MNK / (ceil(M/BM) ceil(N/BN) ceil(K/BK) x 2 BM BN BK).
(b) wave quantisation: the ceil(M/BM) ceil(N/BN) tiles run in waves of
    blocks_per_sm x n_sms (blocks_per_sm from ``occupancy`` of the kernel's threads,
    registers and shared-memory pipeline); a partial last wave costs a whole tile time:
        wave efficiency = waves / ceil(waves).
(c) alignment: each block loads its A and B tiles as row segments (BK elements of A,
    BN of B).  A segment of L bytes at byte a touches floor((a+L-1)/32) - floor(a/32) + 1
    sectors; when the row pitch N x bytes is not a multiple of 32 B, rows start mid-sector and
    a 64-byte fp16 segment needs 3 sectors instead of 2.  The sectors per request set the
    effective bandwidth: sector efficiency = useful bytes / (32 x sectors).  (With a pitch
    that is not a multiple of 16 B the 16-byte vector loads are impossible as well; the
    extra load instructions that costs are not modelled, see docs/model.md.)

All under the roofline, wave by wave:
    t_wave = max(t_tile, L2 bytes of the wave / L2 bandwidth, DRAM bytes of the wave / DRAM bw)
    t_tile = blocks_per_sm x (padded tile FLOPs) / (tensor peak / n_sms)
where the L2 bytes are every block's tile loads (in sectors) plus its C stores, and the DRAM
bytes are the A row-panels and B column-panels the wave touches (each once: panels are
shared through L2 within a wave) plus C; when A, B and C together fit in L2, a panel comes
from DRAM only the first time any wave touches it.

Assumptions (the kernel): row-major A, B, C, sector-aligned bases; tiles issued in raster
order (row of tiles after row of tiles); a resident block gets 1/blocks_per_sm of its SM's
tensor throughput whether or not its neighbours' slots are full; C is stored in the input
dtype; the default kernel is 256 threads x 128 registers with a 3-stage shared-memory
pipeline, which gives 2 blocks per SM on H100/H200 (register-limited).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simgpu.hardware.spec import GPU
from .occupancy import occupancy
from .roofline import DTYPE_ROOF, compute_roof, dtype_bytes
from .tiling import rows_sectors_by_block, tile_segments
from .waves import wave_quantization


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


BOUNDS = ("compute", "l2", "dram")


@dataclass(frozen=True)
class MatmulBreakdown:
    """Predicted time of one C = A.B and the factors that make it."""

    m: int
    n: int
    k: int
    dtype: str
    tile: tuple
    flops: float                 # useful: 2MNK
    padded_flops: float          # what the tensor cores execute
    bytes_l2: float              # sector bytes between L2 and the SMs
    bytes_dram: float            # sector bytes between DRAM and L2
    n_tiles: int                 # output tiles = blocks
    blocks_per_sm: int
    waves: float
    waves_executed: int
    tile_efficiency: float
    wave_efficiency: float
    sector_efficiency: float     # useful tile-load bytes / sector bytes (alignment)
    vectorizable: bool           # row pitches allow 16-byte vector loads
    compute_time_s: float
    l2_time_s: float
    dram_time_s: float
    time_s: float
    bound: str                   # which term set most of the time: compute, l2 or dram
    peak_flops: float

    @property
    def tflops(self) -> float:
        return self.flops / self.time_s / 1e12

    @property
    def fraction_of_peak(self) -> float:
        return self.flops / self.time_s / self.peak_flops


def _shape(n) -> tuple:
    if isinstance(n, (tuple, list)):
        m, nn, k = (int(v) for v in n)
    else:
        m = nn = k = int(n)
    if min(m, nn, k) <= 0:
        raise ValueError(f"matmul sizes must be positive, got {(m, nn, k)}")
    return m, nn, k


def _sector_tables(m, n, k, bm, bn, bk, eb):
    """Sectors per tile-row of A tiles (L2 and DRAM), per tile-column of B, per C tile."""
    a_edges = np.minimum(np.arange(_ceil_div(m, bm) + 1) * bm, m)
    a_starts, a_lens = tile_segments(k, bk, eb)
    sa_l2 = rows_sectors_by_block(a_edges, k * eb, a_starts, a_lens).sum(axis=1)
    sa_dram = rows_sectors_by_block(a_edges, k * eb, [0], [k * eb])[:, 0]
    b_starts, b_lens = tile_segments(n, bn, eb)
    sb = rows_sectors_by_block([0, k], n * eb, b_starts, b_lens)[0]
    sc = rows_sectors_by_block(a_edges, n * eb, b_starts, b_lens)      # (tile rows, tile cols)
    useful = m * k * _ceil_div(n, bn) + k * n * _ceil_div(m, bm)      # in-range tile loads
    return sa_l2, sa_dram, sb, sc, useful * eb


def _wave_bytes(sa_l2, sa_dram, sb, sc, wave: int, n_waves: int, fits_l2: bool):
    """L2 and DRAM bytes of each wave, tiles taken in raster order (row of tiles after row).

    L2: every tile's A and B loads and C stores.  DRAM: C, plus the A row-panels and B
    column-panels the wave touches -- once per wave, or once per kernel when all fits in L2.
    """
    tm, tn = sc.shape
    n_tiles = tm * tn
    starts = np.arange(n_waves) * wave
    ends = np.minimum(starts + wave, n_tiles)
    i, j = np.divmod(np.arange(n_tiles), tn)
    per_tile = sa_l2[i] + sb[j] + sc.ravel()
    l2 = np.add.reduceat(per_tile, starts) if n_waves else np.zeros(0)
    c = np.add.reduceat(sc.ravel(), starts) if n_waves else np.zeros(0)
    if fits_l2:          # a panel comes from DRAM when a wave touches it for the first time
        rows = np.bincount(np.arange(tm) * tn // wave, weights=sa_dram, minlength=n_waves)
        cols = np.bincount(np.arange(tn) // wave, weights=sb, minlength=n_waves)
    else:                # every wave fetches the panels it touches
        csa, csb = np.concatenate([[0], np.cumsum(sa_dram)]), np.concatenate([[0], np.cumsum(sb)])
        rows = csa[(ends - 1) // tn + 1] - csa[starts // tn]
        c0, c1 = starts % tn, (ends - 1) % tn
        cols = np.where(c0 <= c1, csb[c1 + 1] - csb[c0], csb[-1] - (csb[c0] - csb[c1 + 1]))
        cols = np.where(ends - starts >= tn, csb[-1], cols)
    return 32.0 * l2, 32.0 * (rows + cols + c)


def matmul_throughput(gpu: GPU, n, dtype: str = "fp16", tile=(128, 128, 32), threads_per_block: int = 256,
                      registers_per_thread: int = 128, stages: int = 3, overhead_s: float = 0.0,
                      vector_bytes: int = 16) -> MatmulBreakdown:
    """Predicted time and throughput of C = A.B, ``n`` = N (square) or (M, N, K).

    Worked example, H200, fp16, 128 x 128 x 32 tiles, n = 4096: 32 x 32 = 1024 tiles,
    2 blocks/SM -> waves of 264 -> 3.88 waves, 4 executed (wave efficiency 0.970); tiles divide
    4096 (tile efficiency 1); 8192-byte rows are sector-aligned (sector efficiency 1).  A tile
    moves (128 + 128) x 4096 x 2 B = 2 MiB through L2 for 2 x 128^2 x 4096 = 134 MFLOP:
    64 FLOP/B against an L2 ridge of 989 / 8.71 = 114 FLOP/B, so the waves are L2-bound.
    (This is the lecture's idealised kernel; ``simgpu.model.gemm`` models what cuBLAS runs.)

    >>> from simgpu.hardware import H200
    >>> r = matmul_throughput(H200, 4096)
    >>> r.n_tiles, r.blocks_per_sm, round(r.waves, 2), r.waves_executed, r.bound
    (1024, 2, 3.88, 4, 'l2')
    >>> round(r.tflops)
    549
    """
    m, nn, k = _shape(n)
    bm, bn, bk = tile
    eb = dtype_bytes(dtype)
    peak = compute_roof(gpu, DTYPE_ROOF[dtype])
    tm, tn, kt = _ceil_div(m, bm), _ceil_div(nn, bn), _ceil_div(k, bk)
    n_tiles = tm * tn
    tile_flops = 2.0 * bm * bn * kt * bk
    flops = 2.0 * m * nn * k
    occ = occupancy(gpu, threads_per_block, registers_per_thread, stages * (bm * bk + bk * bn) * eb)
    wq = wave_quantization(n_tiles, occ.blocks_per_sm, gpu.sm_count)
    t_tile = occ.blocks_per_sm * tile_flops / (peak / gpu.sm_count)

    sa_l2, sa_dram, sb, sc, useful_load_bytes = _sector_tables(m, nn, k, bm, bn, bk, eb)
    fits_l2 = (m * k + k * nn + m * nn) * eb <= gpu.l2.size_bytes
    l2_w, dram_w = _wave_bytes(sa_l2, sa_dram, sb, sc, wq.wave_size, wq.waves_executed, fits_l2)
    l2_bw = gpu.l2_bandwidth_bytes_per_s
    terms = np.stack([np.full(len(l2_w), t_tile), l2_w / l2_bw if l2_bw > 0 else 0 * l2_w,
                      dram_w / gpu.dram_bandwidth])            # (compute, l2, dram) x waves
    per_wave = terms.max(axis=0)
    totals = np.bincount(terms.argmax(axis=0), weights=per_wave, minlength=3)
    bytes_l2, bytes_dram, time = float(l2_w.sum()), float(dram_w.sum()), float(per_wave.sum())
    loads_sector_bytes = 32.0 * (sa_l2.sum() * tn + sb.sum() * tm)
    return MatmulBreakdown(
        m=m, n=nn, k=k, dtype=dtype, tile=tuple(tile), flops=flops, padded_flops=n_tiles * tile_flops,
        bytes_l2=bytes_l2, bytes_dram=bytes_dram, n_tiles=n_tiles, blocks_per_sm=occ.blocks_per_sm,
        waves=wq.waves, waves_executed=wq.waves_executed,
        tile_efficiency=flops / (n_tiles * tile_flops), wave_efficiency=wq.tail_efficiency,
        sector_efficiency=useful_load_bytes / loads_sector_bytes,
        vectorizable=(k * eb) % vector_bytes == 0 and (nn * eb) % vector_bytes == 0,
        compute_time_s=wq.waves_executed * t_tile,
        l2_time_s=bytes_l2 / l2_bw if l2_bw > 0 else 0.0, dram_time_s=bytes_dram / gpu.dram_bandwidth,
        time_s=time + overhead_s, bound=BOUNDS[int(totals.argmax())], peak_flops=peak,
    )


@dataclass(frozen=True)
class MysteryCurve:
    """``matmul_throughput`` over many sizes, as arrays for plotting."""

    sizes: np.ndarray
    tflops: np.ndarray
    tile_efficiency: np.ndarray
    wave_efficiency: np.ndarray
    sector_efficiency: np.ndarray
    bound: tuple
    peak_tflops: float
    breakdowns: tuple


def mystery_curve(gpu: GPU, sizes, dtype: str = "fp16", tile=(128, 128, 32), **kernel) -> MysteryCurve:
    """Predicted TFLOP/s of square matmuls for every size in ``sizes`` (keyword arguments
    go to ``matmul_throughput``)."""
    rows = [matmul_throughput(gpu, int(s), dtype, tile, **kernel) for s in sizes]
    return MysteryCurve(
        sizes=np.array([r.n for r in rows]), tflops=np.array([r.tflops for r in rows]),
        tile_efficiency=np.array([r.tile_efficiency for r in rows]),
        wave_efficiency=np.array([r.wave_efficiency for r in rows]),
        sector_efficiency=np.array([r.sector_efficiency for r in rows]),
        bound=tuple(r.bound for r in rows), peak_tflops=rows[0].peak_flops / 1e12 if rows else 0.0,
        breakdowns=tuple(rows),
    )


__all__ = ["MatmulBreakdown", "matmul_throughput", "MysteryCurve", "mystery_curve"]
