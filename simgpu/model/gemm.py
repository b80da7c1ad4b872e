"""Time of one library GEMM (cuBLAS through PyTorch): candidate kernels, each costed, fastest wins.

``gemm(M, N, K, dtype="bf16", gpu="H200", layout="NN")`` models ``torch.matmul(A, B)`` with A
M x K and B K x N, called back-to-back from Python on the same operands (warm L2), as the
lecture's mystery plot is measured.  Candidates, as cuBLAS 13 has them on Hopper:

  sm90       wgmma kernels (cuBLAS's nvjet / sm90_xmma), tiles BM x BN from its catalogue, both
             orientations, BK 64 (32 for tf32, 128 for fp8); only when every leading dimension
             is a multiple of 16 bytes (TMA); with split-K (2..8) when the tiles do not fill the SMs
  sm80       mma.sync s16816 kernels, "align2": rows a multiple of 4 bytes but not of 16
  sm75       s1688 "align1" kernels: some row is only 2-byte aligned (odd N or K in bf16/fp16),
             tf32 whenever a row is not a multiple of 16 bytes
  simt       fp32 without tf32: FFMA sgemm (sm80 xmma ffma), 4-byte aligned always
  gemv       M = 1 or N = 1: one pass over the matrix at the GEMV streaming bandwidth

Each tile candidate costs (rates from ``simgpu.hardware.presets.LIBRARY_PARAMS``, all measured):

  CTAs     = ceil(M/BM) ceil(N/BN) x split x batch,  one CTA per SM at a time
  t_tile   = 2 BM BN Kp / (family rate / SMs)        Kp = K/split rounded up to BK
  compute  = ceil(CTAs / SMs) x t_tile               (a partial last wave costs a whole tile)
             (+ the C-tile store after the main loop for the sm80 / sm75 / simt kernels, which
             do not overlap it: BM BN e_out at one SM's share of the GEMV bandwidth)
  L2       = (CTAs x (BM + BN) Kp e_in + M N e_out [+ split x M N x 8]) / L2 read bandwidth
  HBM      = (M K + K N) e_in + M N e_out over the GEMV bandwidth, or 0 when A, B and C fit
             in L2 together (repeated calls find them there)
  seconds  = max(max(compute, L2, HBM) + kernel floor [x 2 with split-K], host floor)

The rates hold at the SM clock a back-to-back loop settles to under the card's power limit
(``sustained_sm_clock_hz``, 1.68 GHz on the H200, measured).  ``sm_clock_hz`` runs the compute
term at another clock: ``"max"`` (the GPU's maximum clock, 1.98 GHz: a kernel alone after an
idle gap, as a profiler times it) or a number in Hz; L2, HBM and the floors do not change
(at 4096^3 the L2 term then binds, so the kernel gains 4 %, not 17 %).

``timing="dobench"`` (``triton.testing.do_bench``, L2 flushed) costs fp16 / bf16 with
min(M, N) <= 64 and some row not a multiple of 16 bytes, and fp32 with M <= 64, by cuBLAS's kernel
family there instead of by tile (``small_m_regime``; validation/gemm_small_m), each
``t0 + max(bytes / rate, compute)`` with bytes one pass over A, B and C and (t0, rate) fitted per
family and dtype on the calibration halves of calls 3 (fp16 / bf16) and 5 (fp32):

  gemvx      M = 1 or N = 1 on matrix rows that are not 16-byte aligned (fp32: M = 1)
  gemmSN     2-byte rows (fp32: any), 2 <= M <= 16: rate min(cap, CTAs x per-CTA rate), CTAs
             ceil(max(M, N) / 64) (fp32: x ceil(M / 4) slices along M, each reading all of B);
             a candidate beside align1 / SIMT (the faster wins)
  sm75       cutlass_75 align1 kernels, 2-byte rows
  sm80       cutlass_80 align2 kernels, 4- or 8-byte rows
  simt       fp32: sm80_xmma FFMA and cutlass SIMT sgemm (compute at the SIMT rate)
  largek     fp32, 2 <= M <= 8: sgemm_largek (rate as gemmSN's, ceil(N / 64) CTAs)

Under ``timing="dobench"`` an sm90 candidate runs with a thread-block cluster, as every nvjet
kernel does: its tile rows / columns padded to the cluster, its waves counted over the persistent
grid (the profiled one with ``kernel=(name, grid)``, else the SMs in whole clusters), and the
tile the cluster's CTAs share read once per cluster in the L2 term (TMA multicast).  Without a
named kernel the cluster is a pair in the orientation that pads less, and the candidates are
ranked by the cost without the cluster (``GemmCandidate.rank_s``) but timed with it
(``_CLUSTER_MULTICAST``; docs/model.md, "The large-N ordering with the kernels' clusters").
A bf16 sm90 tile then runs at its own rate (``_SM90_TILE_RATES``, measured on every tile cuBLASLt
offers at two shapes in no sweep): a factor per clock on the chip rate and a factor on the
power-limited clock (the 5-stage 192x128 kernels clock 11-13 % lower at the power limit on 3-4 ms
kernels), of which a kernel shows the share its duration lets the power controller act on
(``_power_lag``: 8 % of it at 70 us, 28 % at 0.3 ms, 80 % at 1.6 ms; measured at five durations); the
ranking stays blind to them, as cuBLAS's heuristic is (docs/model.md, "Per-tile rates").

The kernel floor is one launch plus the smallest kernel (CUDA-graph replay of a 64^3 matmul);
the host floor is what one ``torch.matmul`` costs the Python thread, so back-to-back calls
can never be faster.  The fastest candidate is the pick, as cuBLAS's heuristic intends (it is
not always what cuBLAS picks: docs/model.md lists the sizes where it is not).

Worked example (H200, bf16, 2048^3): 256 x 128 tiles make 8 x 16 = 128 CTAs, one wave; a tile
is 2 x 256 x 128 x 2048 = 134 MFLOP at 722.8/132 TFLOP/s per SM = 24.5 us; L2 carries
128 x 384 x 2048 x 2 B = 201 MB in 23.1 us; the operands (24 MiB) fit in L2: 24.5 + 2.2 us.

>>> r = gemm(2048, 2048, 2048)
>>> r.kernel, round(r.seconds * 1e6, 1), round(r.tflops)
('sm90_bf16_256x128', 26.7, 643)
>>> gemm(4097, 4097, 4097).kernel        # odd N: no 16-byte rows, cuBLAS's sm75 align1 fallback
'sm75_align1_bf16_256x128'
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from simgpu.hardware import get_gpu
from simgpu.hardware.presets import LIBRARY_PARAMS
from simgpu.hardware.spec import GPU

DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2")
IN_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1}
OUT_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8_e4m3": 2, "fp8_e5m2": 2}  # fp8 -> bf16 out
LAYOUTS = ("NN", "NT", "TN", "TT")

# Hopper wgmma tiles (BM, BN) seen in cuBLAS 13.1's kernel names on the H200 (nvjet_sm90_tst_*),
# used in both orientations.  Call 5 (validation/data/lecture_h200_kernels5.json) recorded the
# kernel at every N = 64..8192 step 32 of the square bf16 sweep: 192x176, once in this list, never
# runs there, so it is gone (with it the model picked 192x176 at 19 sizes where cuBLAS runs
# 192x192 / 160x256 / 256x128 and took a cliff-free path cuBLAS does not have).  cuBLAS also runs
# 128x160/224/288, 160x192, 256x80, 224x64 and more small ones; adding them all lets "fastest
# wins" dodge wave cliffs that cuBLAS's own heuristic does not dodge (tile match 0.50, kernel-time
# cliffs 6 of 18), so they stay out until the heuristic ranks tiles as cuBLAS does (docs/model.md).
SM90_TILES = ((64, 8), (64, 16), (64, 32), (64, 48), (64, 64), (128, 64), (128, 128), (192, 96),
              (192, 128), (256, 128), (192, 192), (160, 256), (320, 128))
# the fallbacks' tiles as their kernel names give them (cutlass_80_*_s16816gemm_*_256x128_64x3_*,
# cutlass_75_*_s1688gemm_*_256x128_*_align1, sm80_xmma_gemm_*_ffma tilesize 256x128x8 / 128x128x8 /
# 64x64x8)
SM80_TILES = ((256, 128),)
SM75_TILES = ((256, 128),)
SIMT_TILES = ((256, 128), (128, 128), (64, 64))
SPLITS = (2, 3, 4, 6, 8)
# issue 24: the small-M / unaligned kernels in call 1's profile (validation/gemm_dobench), in the
# model's (BM for M, BN for N) orientation (cuBLAS is column-major: a name's first number is the
# tile along torch's N): cutlass_80 s16816 align2 256x64 / 64x64 / wmma 32x32, cutlass_75 s1688
# align1 64x64 / 128x64 / wmma 32x32, sm80_xmma ffma 32x64, cutlass_80_simt_sgemm 128x32; with
# split-K in the grid's z (2, 8, 16 seen).  Used by timing="dobench".
SM80_TILES_SMALL_M = ((256, 128), (64, 256), (64, 64), (32, 32))
SM75_TILES_SMALL_M = ((256, 128), (64, 64), (64, 128), (32, 32))
SIMT_TILES_SMALL_M = ((64, 32), (32, 128))
# timing="dobench": every nvjet kernel cuBLAS runs on the H200 has a thread-block cluster (2 CTAs
# in 833 of the 1032 nvjet launches profiled in calls 1 and 4, 1x4 / 4x1 / 2x4 / 4x2 / 1x1 in the
# rest) whose CTAs share one operand's tile through TMA multicast: the L2 serves that tile once per
# cluster row / column.  The sm90 candidates are costed with their cluster (the kernel name's, or a
# 2-CTA cluster sharing the larger tile, which is what every square pick in call 1 does): tile rows
# and columns padded to the cluster, persistent CTAs (the profiled grid, else the SMs in whole
# clusters) taking the tiles wave by wave, and the L2 reads with the multicast.  cuBLAS's choice
# among the tiles is ranked without the multicast (every CTA reading its own panels at the L2 read
# rate), which keeps the large tiles cuBLAS runs at large N ahead of the small ones that would
# dodge wave cliffs (validation/gemm_dobench/README.md, "large N").  False: the model before issue
# 24's large-N work (no cluster, 132 slots, no multicast, ranked and timed alike).
_CLUSTER_MULTICAST = True
# timing="dobench", bf16 sm90: per-tile rates of cuBLAS's nvjet kernels, (BM, BN) in the model's
# orientation -> (per_clock, clock).  validation/gemm_dobench/tile_rates.py (every algorithm
# cuBLASLt's heuristic offers at 16384 x 16384 x 4096 and 12288 x 12288 x 8192, shapes in no sweep;
# H100 SXM, 2026-12-07) and derive_tiles.py: against the 192x192 kernel the chip rate was measured
# with, per_clock = a tile's work per SM per clock, clock = its SM clock at the 700 W limit (NVML,
# points at the limit only).  Every tile does within 1-2 % as much per clock (96x256: 8 % less);
# the two 5-stage coopB tiles (192x128 both ways) draw more power: the card clocks them 11-13 %
# lower at the limit.  A tile runs at per_clock x the chip rate at every
# clock and, on a kernel as long as those, at clock x the reference's power-limited clock
# (_dobench_terms; shorter kernels show less of it, _POWER_LAG_S); a tile not listed at the
# reference's (1, 1); the rank (cuBLAS's choice) uses neither (see _tile_candidate).  Both are
# ratios on one card, so they carry from the H100 to the H200 (the same SM; docs/model.md,
# "Per-tile rates").  Empty: the model before them (derive_tiles.py empties it while it runs).
_SM90_TILE_RATES = {
    (192, 192): (0.997, 1.005), (128, 320): (0.997, 0.997), (128, 256): (0.999, 1.003),
    (256, 128): (0.999, 0.981), (128, 192): (0.997, 0.866), (192, 128): (0.988, 0.888),
    (160, 128): (1.023, 0.936), (96, 256): (0.918, 0.976),
}
# timing="dobench": how much of a tile's clock penalty a kernel shows against its duration d.  The
# power controller lowers a tile that draws more power than the reference only once it has seen it:
# from the kernel's start its clock falls from the reference kernel's clock towards its own as a
# first-order lag of time constant _POWER_LAG_S, so the penalty averaged over the kernel is
# P w(d / tau), w(x) = 1 - (1 - e^-x) / x.  validation/gemm_dobench/derive_durations.py on
# tile_rates_durations.json (every cuBLASLt algorithm at five shapes in no sweep, kernels 60 us ..
# 3.5 ms; H100 SXM, 2026-12-07): the 5-stage coopB tiles' clock against the reference tiles', each
# kernel's do_bench time over its time alone under the profiler: none at 70 us, 1 % at 140 us, 2-4 %
# at 0.3-0.8 ms, 7 % at 3.4 ms; tau fitted there (rms within 5 % of the best for 0.21 .. 1.66 ms).
# The clock column above was measured on kernels of _SM90_TILE_RATES_KERNEL_S (tile_rates.json's
# 5-stage points), so it is the penalty at that duration: penalty(d) = (1 - clock) w(d / tau) /
# w(d_col / tau).  None: the model before (the tile's clock scaled c1 in the power equation at every
# duration, which held a 69 us 5-stage kernel 12 % slow).
_POWER_LAG_S = 513e-6
_SM90_TILE_RATES_KERNEL_S = 3.76e-3
GEMV_MAX_SMALL_DIM = 2          # cuBLAS runs gemvx at M = 1 and gemmSN (a GEMV-like kernel) at M = 2


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class GemmCandidate:
    """One kernel candidate and its costed time."""

    kernel: str
    family: str
    tile: tuple          # (BM, BN, BK); (0, 0, 0) for gemv
    split_k: int
    ctas: int
    waves: int
    compute_s: float
    l2_s: float
    hbm_s: float
    floor_s: float       # kernel floor(s) added to the slowest term
    seconds: float       # after the host floor
    rank_s: float = None  # what the kernel choice ranks by, when not ``seconds`` (sm90 under do_bench)
    cluster: tuple = (1, 1)  # (CTAs along M, along N) of the thread-block cluster

    @property
    def bound(self) -> str:
        terms = {"compute": self.compute_s, "l2": self.l2_s, "hbm": self.hbm_s}
        gpu_s = max(terms.values()) + self.floor_s
        return "host floor" if self.seconds > gpu_s else max(terms, key=terms.get)


@dataclass(frozen=True)
class GemmEstimate:
    """``gemm``'s answer: the chosen candidate and every candidate it beat."""

    m: int
    n: int
    k: int
    dtype: str
    layout: str
    batch: int
    alignment_bytes: int          # largest of 16/8/4/2/1 dividing every row pitch in bytes
    chosen: GemmCandidate
    candidates: tuple = field(repr=False)

    @property
    def seconds(self) -> float:
        return self.chosen.seconds

    @property
    def flops(self) -> float:
        return 2.0 * self.m * self.n * self.k * self.batch

    @property
    def tflops(self) -> float:
        return self.flops / self.seconds / 1e12

    @property
    def kernel(self) -> str:
        return self.chosen.kernel

    @property
    def why(self) -> dict:
        """The terms that decided the time (seconds) and the facts behind them."""
        c = self.chosen
        return {"kernel": c.kernel, "family": c.family, "tile": c.tile, "split_k": c.split_k,
                "alignment_bytes": self.alignment_bytes, "ctas": c.ctas, "waves": c.waves,
                "compute_s": c.compute_s, "l2_s": c.l2_s, "hbm_s": c.hbm_s, "floor_s": c.floor_s,
                "seconds": c.seconds, "bound": c.bound}

    def __str__(self):
        c = self.chosen
        return (f"{self.m}x{self.n}x{self.k} {self.dtype}: {c.kernel} split {c.split_k}, {c.ctas} CTAs in "
                f"{c.waves} waves, {self.seconds * 1e6:.1f} us = {self.tflops:.1f} TFLOP/s ({c.bound})")


def library_params(gpu: GPU) -> dict:
    """The measured library parameters of ``gpu`` (H200 only; others raise)."""
    try:
        return LIBRARY_PARAMS[gpu.name]
    except KeyError:
        raise ValueError(f"no measured library (cuBLAS) parameters for {gpu.name}; "
                         f"measured: {', '.join(LIBRARY_PARAMS)}") from None


def alignment_bytes(m: int, n: int, k: int, dtype: str, layout: str = "NN") -> int:
    """Largest of 16, 8, 4, 2, 1 bytes that divides the row pitch of A, B and C.

    Row-major storage: A is M x K (pitch K) for 'N', K x M (pitch M) for 'T'; B is K x N
    (pitch N) or N x K (pitch K); C is M x N (pitch N).

    >>> alignment_bytes(4096, 4096, 4096, "bf16"), alignment_bytes(4100, 4100, 4100, "bf16")
    (16, 8)
    >>> alignment_bytes(8192, 50257, 768, "bf16")
    2
    """
    e = IN_BYTES[dtype]
    pitches = (k if layout[0] == "N" else m, n if layout[1] == "N" else k)
    pitches_bytes = [p * e for p in pitches] + [n * OUT_BYTES[dtype]]
    for a in (16, 8, 4, 2, 1):
        if all(p % a == 0 for p in pitches_bytes):
            return a
    return 1


def _tile_candidate(gpu, p, family, name, m, n, k, batch, tile, split, rate, e_in, e_out, fits_l2,
                    timing="loop", launch=None, tile_rate=(1.0, 1.0)):
    """One tile kernel costed.  ``rate``: the family's chip rate at the clock the compute term runs
    at (the sustained clock for "loop", the maximum clock for "dobench").  ``launch``: (cluster,
    persistent CTAs) from a profiled kernel, either None (sm90 under do_bench only).  ``tile_rate``:
    (per clock, power-limited clock) of this tile against the kernel ``rate`` was measured with
    (sm90 bf16 under do_bench, ``_SM90_TILE_RATES``): the time uses them, the rank (cuBLAS's
    choice) does not."""
    per_clock, power_clock = tile_rate
    bm, bn, bk = tile
    sms = gpu.sm_count
    tiles = _ceil(m, bm) * _ceil(n, bn)
    ctas = tiles * split * batch
    kp = _ceil(_ceil(k, split), bk) * bk
    t_tile = 2.0 * bm * bn * kp / (rate / sms)
    if family != "sm90":
        t_tile += bm * bn * e_out / (p["gemv_bytes_per_s"] / sms)
    waves = _ceil(ctas, sms)
    compute = waves * t_tile
    l2_bytes = ctas * (bm + bn) * kp * e_in + batch * m * n * e_out
    if split > 1:
        l2_bytes += batch * split * m * n * 8          # fp32 partials written and read back
    l2 = l2_bytes / p["l2_read_bytes_per_s"]
    nbytes = batch * ((m * k + k * n) * e_in + m * n * e_out)
    cluster, rank = (1, 1), None
    if timing == "dobench":
        dt = "fp32" if family == "simt" else name.split("_")[-1]
        bw = p["dobench"]["fallback_stream_bytes_per_s"].get((family, dt))
        if family == "sm90" and _CLUSTER_MULTICAST:
            # ranked as before (no cluster, every CTA reads its own panels), timed with the cluster
            # and at the reference kernel's rate (cuBLAS's heuristic is blind to the per-tile rates)
            c0, hbm, floor, _ = _dobench_terms(gpu, p, compute, nbytes, split, bw)
            rank = max(max(c0, l2, hbm) + floor, 0.0)
            best = None
            for cluster, slots in _cluster_launches(gpu, bm, bn, launch):
                cm, cn = cluster
                c_ctas = _ceil(_ceil(m, bm), cm) * cm * _ceil(_ceil(n, bn), cn) * cn * split * batch
                c_waves = _ceil(c_ctas, slots)
                c_l2 = c_ctas * (bm / cn + bn / cm) * kp * e_in + batch * m * n * e_out
                if split > 1:
                    c_l2 += batch * split * m * n * 8
                c_l2 /= p["l2_read_bytes_per_s"]
                key = max(c_waves * t_tile, c_l2)
                if best is None or key < best[0]:
                    best = (key, cluster, c_ctas, c_waves, c_l2)
            _, cluster, ctas, waves, l2 = best
        compute = waves * t_tile / per_clock
        compute, hbm, floor, host = _dobench_terms(gpu, p, compute, nbytes, split, bw, power_clock)
    else:
        hbm = 0.0 if fits_l2 else nbytes / p["gemv_bytes_per_s"]
        floor = p["kernel_floor_s"] * (2 if split > 1 else 1)
        host = p["host_floor_s"]
    seconds = max(max(compute, l2, hbm) + floor, host)
    kname = f"{name}_{bm}x{bn}" + (f"_splitk{split}" if split > 1 else "")
    return GemmCandidate(kname, family, tile, split, ctas, waves, compute, l2, hbm, floor, seconds, rank, cluster)


def _sm90_tile_rate(bm, bn):
    """(per_clock, power-limited clock) of a bf16 sm90 tile under do_bench against the reference
    192x192 kernel: ``_SM90_TILE_RATES``'s, else the transposed tile's, else (1, 1)."""
    return _SM90_TILE_RATES.get((bm, bn), _SM90_TILE_RATES.get((bn, bm), (1.0, 1.0)))


def _cluster_launches(gpu, bm, bn, launch):
    """[((CTAs along M, along N), persistent CTA slots)] an sm90 kernel may run with under do_bench:
    the profiled kernel's cluster and grid where known, else a 2-CTA cluster either way (cuBLAS
    has both, "1x2_h" and "2x1_v"; the caller keeps the faster), the one sharing the larger tile
    first (along M when BN >= BM: the pair has the same B tile), in as many whole clusters as the
    SMs hold."""
    cluster, slots = launch if launch is not None else (None, None)
    options = [cluster] if cluster is not None else ([(2, 1), (1, 2)] if bn >= bm else [(1, 2), (2, 1)])
    out = []
    for c in options:
        size = c[0] * c[1]
        out.append((c, min(int(slots), gpu.sm_count) if slots else gpu.sm_count // size * size))
    return out


def _power_lag(duration_s):
    """Share of a tile's clock penalty, as measured on kernels of ``_SM90_TILE_RATES_KERNEL_S``, that
    a kernel of ``duration_s`` shows: w(d / tau) / w(d_col / tau), w(x) = 1 - (1 - e^-x) / x (the
    mean of a first-order lag of time constant tau = ``_POWER_LAG_S`` over the kernel).  0 for an
    empty kernel, 1 at d_col, towards 1 / w(d_col / tau) for long ones."""
    def w(x):
        return 1.0 - (1.0 - math.exp(-x)) / x if x > 0 else 0.0
    return w(duration_s / _POWER_LAG_S) / w(_SM90_TILE_RATES_KERNEL_S / _POWER_LAG_S)


def _dobench_terms(gpu, p, compute_max_clock, nbytes, split, stream_bytes_per_s=None, power_clock=1.0):
    """The terms as ``triton.testing.do_bench`` sees them (L2 flushed before every call, events
    around the call alone).

    compute: the kernel runs at the maximum clock unless that would hold the card above its power
    limit over a flush + call cycle.  Power is taken as the cube of the SM clock while the kernel
    runs (dynamic power ~ f V^2 with V ~ f at the top of the clock range), equal to the limit at
    the clock a long kernel settles at (c1, measured), and the flush's measured share of the limit
    while it runs: the clock c solves  t(c) ((c / c1)^3 - 1) = flush (1 - share),  t(c) = t_max cmax / c.
    HBM: every operand streamed after the flush, with the flush's dirty lines written back in
    proportion to the L2 those bytes replace.  No host floor (the host queues the call while the
    GPU is still flushing).  ``stream_bytes_per_s``: the family's own streaming rate (the
    align1 / align2 / SIMT fallbacks, measured at small M), else the cold GEMV curve's.
    ``power_clock``: the kernel's power-limited clock over the reference kernel's, measured on
    kernels of ``_SM90_TILE_RATES_KERNEL_S`` (a tile that draws more power per clock settles lower;
    ``_SM90_TILE_RATES``): the kernel runs at the reference's clock c, slowed by the share of
    ``1 - power_clock`` its duration (this compute term at c) shows (``_power_lag``)."""
    d = p["dobench"]
    lagged = _POWER_LAG_S is not None and power_clock != 1.0
    cmax, c1 = gpu.clock_hz, d["power_limited_sm_clock_hz"] * (1.0 if lagged else power_clock)
    a = compute_max_clock * cmax                       # t(c) = a / c
    head = d["flush_s"] * (1.0 - d["flush_power_share"])

    def excess(c):
        return a / c * ((c / c1) ** 3 - 1.0) - head

    c = cmax
    if a > 0 and excess(cmax) > 0:
        lo, hi = c1, cmax
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if excess(mid) < 0 else (lo, mid)
        c = lo
    compute = a / c if a > 0 else 0.0
    if lagged:      # the tile's own penalty, the share its duration shows; never above the maximum clock
        compute = max(compute / (1.0 - (1.0 - power_clock) * _power_lag(compute)), compute_max_clock)
    start = d["stream_start_s"] * min(1.0, nbytes / gpu.l2.size_bytes)
    hbm = start + nbytes / (stream_bytes_per_s or d["stream_bytes_per_s"])
    floor = d["floor_s"] + (p["kernel_floor_s"] if split > 1 else 0.0)
    return compute, hbm, floor, 0.0


def small_m_regime(m, n, k, dtype, layout="NN", gpu="H200") -> bool:
    """True where ``gemm(..., timing="dobench")`` costs by the small-M family rates of
    validation/gemm_small_m: fp16 / bf16 with min(M, N) <= 64 and some row not a multiple of 16
    bytes, except a GEMV whose matrix rows are 16-byte aligned (cuBLAS runs an aligned kernel
    there); fp32 with M <= 64, any alignment (call 5 measured the x @ W form only)."""
    d = library_params(get_gpu(gpu)).get("dobench", {})
    if "small_m" not in d:
        return False
    if dtype == "fp32":                       # call 5: M <= 64, every alignment (x @ W only)
        return m <= d["small_m_max_dim"] and ("simt", "fp32") in d["small_m"]
    if dtype not in ("bf16", "fp16") or min(m, n) > d["small_m_max_dim"]:
        return False
    if alignment_bytes(m, n, k, dtype, layout) >= 16:
        return False
    return not (min(m, n) == 1 and _gemv_matrix_aligned(m, n, k, dtype, layout))


def _gemv_matrix_aligned(m, n, k, dtype, layout):
    """M = 1 or N = 1: are the matrix operand's rows a multiple of 16 bytes?"""
    e = IN_BYTES[dtype]
    pitch = (n if layout[1] == "N" else k) if m == 1 else (k if layout[0] == "N" else m)
    return pitch * e % 16 == 0


def _small_m_candidates(gpu, p, m, n, k, dtype, batch, align, clock_scale, only, layout):
    """The small-M / unaligned families under do_bench (call 3, calibration half): each costs
    t0 + max(bytes / rate, compute), bytes one pass over A, B and C; None outside that regime (or
    when ``only`` names a family it has no rate for)."""
    if not small_m_regime(m, n, k, dtype, layout, gpu):
        return None
    d = p["dobench"]
    rates = d["small_m"]
    e = IN_BYTES[dtype]
    nbytes = batch * (m * k + k * n + m * n) * e
    fams = []
    if dtype == "fp32":
        if m == 1:
            fams.append("gemv")
        else:
            fams.append("simt")
            if m <= d["gemmsn_max_m"]:
                fams.append("gemmSN")
            if m <= d["largek_max_m"]:
                fams.append("largek")
    elif min(m, n) == 1:
        fams.append("gemv")
    else:
        fams.append("sm80" if align >= 4 else "sm75")
        if align <= 2 and 2 <= m <= d["gemmsn_max_m"]:
            fams.append("gemmSN")
    if only is not None:
        want = only[0]
        if want == "gemv":
            want = "gemv" if min(m, n) == 1 else "gemmSN"
        if dtype == "fp32" and want == "simt":
            want = "largek" if only[2] is None and only[1] == (64, 64, 8) else "simt"
        allowed = ("gemv", "gemmSN", "largek", "simt") if dtype == "fp32" else ("gemv", "gemmSN", "sm75", "sm80")
        if want not in allowed:
            return None
        fams = [want]
    out = []
    for f in fams:
        r = rates[(f, dtype)]
        t0, bw = r[0], r[1]
        ctas = _ceil(max(m, n), 64) * batch
        fb = nbytes
        if f == "gemmSN" and dtype == "fp32":          # ceil(M / 4) slices along M, each reads B
            ys = _ceil(m, 4)
            ctas *= ys
            fb = batch * (m * k + ys * k * n + m * n) * e
        if f in ("gemmSN", "largek"):
            bw = min(bw, r[2] * ctas)
        if f in ("gemv", "gemmSN", "largek"):
            compute = batch * 2.0 * m * n * k / gpu.fp32_flops
        else:
            flops = p["simt_fp32_flops"] if f == "simt" else p[{"sm80": "sm80_align2_flops",
                                                                  "sm75": "sm75_align1_flops"}[f]][dtype]
            compute = batch * 2.0 * m * n * k / (flops * clock_scale)
        hbm = fb / bw
        name = {"gemv": f"gemvx_{dtype}", "gemmSN": f"gemmSN_{dtype}", "sm80": f"sm80_align2_{dtype}_small_m",
                "sm75": f"sm75_align1_{dtype}_small_m", "largek": f"sgemm_largek_{dtype}",
                "simt": f"simt_sgemm_{dtype}_small_m"}[f]
        family = "gemv" if f in ("gemv", "gemmSN") else f if f != "largek" else "simt"
        out.append(GemmCandidate(name, family, (0, 0, 0), 1, ctas, 1, compute, 0.0, hbm, t0,
                                 t0 + max(hbm, compute)))
    return out


def _candidates(gpu, p, m, n, k, dtype, batch, align, clock_scale=1.0, timing="loop", only=None, layout="NN",
                launch=None):
    """Every candidate kernel, its tile rates scaled by ``clock_scale`` (SM clock / sustained).
    ``only`` = (family, (BM, BN, BK), split or None) keeps the one kernel a profiler named;
    ``launch`` = (cluster, grid CTAs) its launch (``kernel_launch``)."""
    if timing == "dobench":
        small = _small_m_candidates(gpu, p, m, n, k, dtype, batch, align, clock_scale, only, layout)
        if small is not None:
            return small
    e_in, e_out = IN_BYTES[dtype], OUT_BYTES[dtype]
    fits_l2 = batch * ((m * k + k * n) * e_in + m * n * e_out) <= gpu.l2.size_bytes
    few = _ceil(m, 64) * _ceil(n, 64) * batch < gpu.sm_count
    out = []

    def tiles(family, name, shapes, bk, rate, splits=(1,)):
        if only is not None:
            if only[0] != family:
                return
            shapes, bk = (only[1][:2],), only[1][2] or bk
            splits = (only[2],) if only[2] else (1,) + SPLITS
        seen = set()
        for a, b in shapes:
            for tile in ((a, b, bk), (b, a, bk)) if only is None else ((a, b, bk),):
                if tile in seen:
                    continue
                seen.add(tile)
                r, tr = rate, (1.0, 1.0)
                if isinstance(rate, dict):
                    r = rate.get((a, b), rate.get((b, a), min(rate.values())))
                if family == "sm90" and timing == "dobench" and dtype == "bf16":
                    tr = _sm90_tile_rate(tile[0], tile[1])
                for s in splits:
                    out.append(_tile_candidate(gpu, p, family, name, m, n, k, batch, tile, s, r * clock_scale,
                                               e_in, e_out, fits_l2, timing, launch, tr))

    # the fallbacks get split-K (the grid's z in cuBLAS's launch) and their small tiles only in
    # the "dobench" model (issue 24): the "loop" model keeps the catalogue it was validated with
    fb_splits = (1,) + (SPLITS + (16,) if few else ()) if timing == "dobench" else (1,)
    tensor = dtype in ("bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "tf32")
    if tensor and align == 16:
        bk = {"tf32": 32, "fp8_e4m3": 128, "fp8_e5m2": 128}.get(dtype, 64)
        tiles("sm90", f"sm90_{dtype}", SM90_TILES, bk, p["tensor_flops"][dtype],
              (1,) + (SPLITS if few else ()))
    elif dtype in ("fp8_e4m3", "fp8_e5m2"):
        raise ValueError(f"fp8 GEMM needs every row pitch a multiple of 16 bytes (cuBLASLt); "
                         f"{m}x{n}x{k} has {align}-byte rows")
    elif dtype in ("bf16", "fp16") and align >= 4:
        tiles("sm80", f"sm80_align{align // 2}_{dtype}", SM80_TILES if timing == "loop" else SM80_TILES_SMALL_M,
              64 if timing == "loop" else 32, p["sm80_align2_flops"][dtype], fb_splits)
    elif dtype in ("bf16", "fp16"):
        tiles("sm75", f"sm75_align1_{dtype}", SM75_TILES if timing == "loop" else SM75_TILES_SMALL_M, 32,
              p["sm75_align1_flops"][dtype], fb_splits)
    elif dtype == "tf32":
        tiles("sm75", "sm75_align1_tf32", SM75_TILES, 32, p["tf32_align1_flops"], fb_splits)
    if dtype == "fp32":
        rates = dict(p["simt_tile_flops"])
        if align != 16:
            rates[(256, 128)] = p["simt_fp32_unaligned_flops"]
        shapes = SIMT_TILES
        if timing == "dobench":
            shapes = SIMT_TILES + SIMT_TILES_SMALL_M
            for t in SIMT_TILES_SMALL_M:
                rates[t] = p["simt_tile_flops"][(64, 64)]
        tiles("simt", "simt_sgemm", shapes, 8, rates, fb_splits)
    gemv_ok = min(m, n) == 1 or (timing == "dobench" and min(m, n) <= GEMV_MAX_SMALL_DIM)
    if gemv_ok and (only is None or only[0] == "gemv"):
        # one pass over the matrix operand (A when N = 1, B when M = 1), the vectors and output
        nbytes = batch * ((m * k + k * n) * e_in + m * n * e_out)
        l2 = nbytes / p["l2_read_bytes_per_s"]
        compute = batch * 2.0 * m * n * k / gpu.fp32_flops
        if timing == "dobench":
            bw = None if min(m, n) == 1 else p["dobench"]["fallback_stream_bytes_per_s"][("gemv", "small_m")]
            compute, hbm, floor, host = _dobench_terms(gpu, p, compute, nbytes, 1, bw)
        else:
            hbm = 0.0 if fits_l2 else nbytes / p["gemv_bytes_per_s"]
            floor, host = p["kernel_floor_s"], p["host_floor_s"]
        seconds = max(max(compute, l2, hbm) + floor, host)
        out.append(GemmCandidate(f"gemv_{dtype}", "gemv", (0, 0, 0), 1, _ceil(max(m, n), 128) * batch, 1,
                                 compute, l2, hbm, floor, seconds))
    return out


def _clock_scale(gpu: GPU, p: dict, sm_clock_hz) -> float:
    """Compute-rate factor for running at ``sm_clock_hz`` instead of the sustained clock."""
    if sm_clock_hz is None or sm_clock_hz == "sustained":
        return 1.0
    if sm_clock_hz == "max":
        sm_clock_hz = gpu.clock_hz
    if isinstance(sm_clock_hz, str) or not sm_clock_hz > 0:
        raise ValueError(f"sm_clock_hz must be 'sustained', 'max' or a clock in Hz, not {sm_clock_hz!r}")
    return float(sm_clock_hz) / p["sustained_sm_clock_hz"]


TIMINGS = ("loop", "dobench")


def parse_kernel_name(name: str, grid=None):
    """(family, (BM, BM, BK), split or None) of a cuBLAS kernel name as torch.profiler shows it,
    in the model's orientation (BM along torch's M).  cuBLAS is column-major, so a name's first
    tile number runs along torch's N.  ``split``: the grid's z for the CUTLASS kernels (their
    split-K slices), None where the name says split-K without a count (nvjet ``_splitK_``: the
    model then tries its split counts) and 1 where it says none.

    >>> parse_kernel_name("nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_NNT")
    ('sm90', (128, 192, 64), 1)
    >>> parse_kernel_name("cutlass_75_tensorop_bf16_s1688gemm_bf16_64x64_nn_align1", [8, 99, 2])
    ('sm75', (64, 64, 32), 2)
    """
    grid_z = int(grid[2]) if grid is not None and len(grid) > 2 else 1
    m = re.search(r"nvjet_sm90_[a-z]+_(\d+)x(\d+)_(\d+)x\d+", name)
    if m:
        return "sm90", (int(m.group(2)), int(m.group(1)), int(m.group(3))), (None if "splitK" in name else 1)
    m = re.search(r"cutlass_80_(?:wmma_)?tensorop_\w*?gemm_\w*?_(\d+)x(\d+)_(\d+)x\d+_", name)
    if m:
        return "sm80", (int(m.group(2)), int(m.group(1)), int(m.group(3))), grid_z
    m = re.search(r"cutlass_75_(?:wmma_)?tensorop_\w*?gemm_\w*?_(\d+)x(\d+)_(?:(\d+)x\d+_)?nn", name)
    if m:
        return "sm75", (int(m.group(2)), int(m.group(1)), int(m.group(3) or 32)), grid_z
    m = re.search(r"tilesize(\d+)x(\d+)x(\d+)", name)
    if m:
        return "simt", (int(m.group(2)), int(m.group(1)), int(m.group(3))), (None if "split_k" in name else grid_z)
    m = re.search(r"simt_sgemm_(\d+)x(\d+)_(\d+)x", name)
    if m:
        return "simt", (int(m.group(2)), int(m.group(1)), int(m.group(3))), grid_z
    if "sgemm_largek" in name:
        return "simt", (64, 64, 8), None
    if "gemv" in name or "gemmSN" in name:
        return "gemv", (0, 0, 0), 1
    raise ValueError(f"unknown cuBLAS kernel name {name[:80]!r}")


def kernel_launch(name: str, grid=None):
    """(cluster, grid CTAs) of an nvjet kernel as torch.profiler shows it: the cluster in the
    model's orientation, (CTAs along torch's M, along N) -- the name gives it as cuBLAS's
    column-major (along N) x (along M) --, and the grid's product (nvjet grids are persistent:
    at most one CTA per SM); (None, None) for other kernels or what the name does not say.

    >>> kernel_launch("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", [2, 66, 1])
    ((2, 1), 132)
    >>> kernel_launch("nvjet_sm90_tst_256x128_64x4_4x2_h_bz_coopA_NNT", [8, 15, 1])
    ((2, 4), 120)
    """
    mm = re.search(r"nvjet_sm90_[a-z]+_\d+x\d+_\d+x\d+_(\d)x(\d)_", name)
    if not mm:
        return None, None
    slots = int(grid[0]) * int(grid[1]) * (int(grid[2]) if len(grid) > 2 else 1) if grid is not None else None
    return (int(mm.group(2)), int(mm.group(1))), slots


def gemm(m: int, n: int, k: int, dtype: str = "bf16", gpu="H200", layout: str = "NN",
         batch: int = 1, sm_clock_hz=None, timing: str = "loop", kernel=None) -> GemmEstimate:
    """Predicted time of ``batch`` products (M x K) @ (K x N) through cuBLAS; see the module doc.

    ``sm_clock_hz``: None or ``"sustained"`` (back-to-back calls at the power limit, as the
    lecture's plot is measured), ``"max"`` (a kernel alone at the GPU's maximum clock, as a
    profiler sees it) or a clock in Hz; it scales the compute term only.

    ``timing``: ``"loop"`` (back-to-back calls on warm operands, the default) or ``"dobench"``
    (``triton.testing.do_bench``: the L2 flushed before every call, the call alone timed; the
    clock is the maximum unless the kernel is long enough to hold the card at its power limit;
    sm_clock_hz must then be left None).  ``kernel``: a cuBLAS kernel name as torch.profiler
    shows it, or (name, grid): cost that kernel only instead of the fastest candidate (a table
    of cuBLAS's picks; see ``parse_kernel_name``).

    >>> a, b = gemm(8192, 8192, 8192), gemm(8192, 8192, 8192, sm_clock_hz="max")
    >>> round(a.seconds / b.seconds, 2)       # compute-bound: about 1.98 / 1.684 GHz
    1.16
    >>> round(gemm(4096, 4096, 4096).seconds / gemm(4096, 4096, 4096, sm_clock_hz="max").seconds, 2)
    1.04
    >>> round(gemm(1, 8192, 8192, timing="dobench").seconds * 1e6, 1)   # the weight from HBM
    44.6
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    if timing not in TIMINGS:
        raise ValueError(f"timing must be one of {', '.join(TIMINGS)}, not {timing!r}")
    m, n, k, batch = int(m), int(n), int(k), int(batch)
    if min(m, n, k, batch) <= 0:
        raise ValueError(f"GEMM sizes must be positive, got M={m} N={n} K={k} batch={batch}")
    gpu = get_gpu(gpu)
    p = library_params(gpu)
    if timing == "dobench":
        if sm_clock_hz is not None:
            raise ValueError("timing='dobench' sets its own clock; leave sm_clock_hz None")
        if "dobench" not in p:
            raise ValueError(f"no do_bench parameters measured for {gpu.name}")
        scale = gpu.clock_hz / p["sustained_sm_clock_hz"]
    else:
        scale = _clock_scale(gpu, p, sm_clock_hz)
    align = alignment_bytes(m, n, k, dtype, layout)
    only = launch = None
    if kernel is not None:
        name, grid = (kernel, None) if isinstance(kernel, str) else kernel
        only = parse_kernel_name(name, grid)
        launch = kernel_launch(name, grid)
    cands = _candidates(gpu, p, m, n, k, dtype, batch, align, scale, timing, only, layout, launch)
    if not cands:
        raise ValueError(f"kernel {kernel!r} ({only[0]}) does not run {m}x{n}x{k} {dtype} "
                         f"({align}-byte rows) in this model")
    best = min(cands, key=lambda c: (c.seconds if c.rank_s is None else c.rank_s, c.ctas))
    return GemmEstimate(m, n, k, dtype, layout, batch, align, best, tuple(cands))


def elementwise(nbytes: float, gpu="H200", kernels: int = 1, op: str = "copy") -> float:
    """Seconds of ``kernels`` back-to-back PyTorch elementwise/reduction kernels of class ``op``
    moving ``nbytes`` in all (read + write): each costs max(host floor, kernel floor + its bytes
    over the op's measured bandwidth); an op whose bytes fit in L2 runs at the L2 read bandwidth
    instead when that is higher (warm L2).  Classes: the keys of
    ``LIBRARY_PARAMS[gpu]["elementwise_bytes_per_s"]`` (copy, add, abs, to_bf16, to_fp8, max,
    softmax, where, eq, all, to_fp32, mul_0d_tensor).

    >>> round(elementwise(2 * 2**30) * 1e6)          # copy 1 GiB: 2 GiB over 4.16 TB/s
    518
    """
    gpu = get_gpu(gpu)
    p = library_params(gpu)
    rates = p["elementwise_bytes_per_s"]
    if op not in rates:
        raise ValueError(f"unknown elementwise class {op!r}; known: {', '.join(rates)}")
    per = nbytes / kernels
    bw = rates[op]
    if per <= gpu.l2.size_bytes:
        bw = max(bw, p["l2_read_bytes_per_s"] * rates[op] / rates["copy"])
    return kernels * max(p["elementwise_host_floor_s"], p["elementwise_kernel_floor_s"] + per / bw)


def quantize_fp8(rows: int, cols: int, gpu="H200", dtype: str = "bf16") -> float:
    """Seconds of PyTorch's naive per-tensor fp8 quantise of a rows x cols ``dtype`` matrix,
    ``amax = x.abs().max().float(); s = 448 / amax; (x * s).to(float8_e4m3fn)``:
    abs (read e, write e), max (read e), x * s with s a 0-d fp32 tensor (read e, write e: a
    mixed-dtype kernel, PyTorch's slow path), .to(float8) (read e, write 1); the 0-d scale
    arithmetic is three more launches at the host floor.

    >>> round(quantize_fp8(8192, 8192) * 1e6)
    441
    """
    gpu = get_gpu(gpu)
    p = library_params(gpu)
    e = IN_BYTES[dtype]
    n = rows * cols
    return (elementwise(2 * e * n, gpu, op="abs") + elementwise(e * n, gpu, op="max")
            + elementwise(2 * e * n, gpu, op="mul_0d_tensor") + elementwise((e + 1) * n, gpu, op="to_fp8")
            + 3 * p["elementwise_host_floor_s"])


__all__ = ["DTYPES", "TIMINGS", "GemmCandidate", "GemmEstimate", "alignment_bytes", "gemm", "elementwise",
           "kernel_launch", "library_params", "parse_kernel_name", "quantize_fp8", "small_m_regime"]
