"""The lecture's six tricks, each as numbers.

1 divergence      SIMT efficiency of an if/else inside a warp (both sides run, masked)
2 low precision   bytes per FLOP of ReLU: 2 x element bytes (fp32 8, fp16 4)
3 fusion          HBM accesses of sin^2 x + cos^2 x: 5 kernels, 11 per element, vs fused, 2
4 recomputation   HBM accesses of x -> sigmoid -> sigmoid -> sigmoid -> out, forward + backward,
                  storing activations vs recomputing them (the lecture's 5/8, derived below)
5 coalescing      32-byte sectors per warp request at stride s
6 tiling          T-fold fewer global reads (see ``tiling.py``)
"""
from __future__ import annotations

from dataclasses import dataclass

from simgpu.hardware import get_gpu
from simgpu.hardware.presets import LIBRARY_PARAMS
from simgpu.hardware.spec import GPU
from .roofline import dtype_bytes, roofline_time
from .tiling import naive_matmul_traffic, tiled_matmul_traffic


# -- 1 divergence -------------------------------------------------------------------------
def simt_efficiency(lanes_if: int, warp_size: int = 32, cost_if: float = 1.0, cost_else: float = 1.0) -> float:
    """Useful lane-work over issued lane-slots for a warp whose ``lanes_if`` lanes take the if.

    A side with at least one active lane is issued for the whole warp (the others masked):
      time = cost_if [lanes_if > 0] + cost_else [lanes_else > 0]
      efficiency = (lanes_if cost_if + lanes_else cost_else) / (warp_size x time)
    Half the lanes each way with equal costs: 0.5 -- "half the threads sit idle".

    >>> simt_efficiency(16), simt_efficiency(32), simt_efficiency(1)
    (0.5, 1.0, 0.5)
    """
    if not 0 <= lanes_if <= warp_size:
        raise ValueError(f"lanes_if must be in [0, {warp_size}]")
    lanes_else = warp_size - lanes_if
    time = cost_if * (lanes_if > 0) + cost_else * (lanes_else > 0)
    return (lanes_if * cost_if + lanes_else * cost_else) / (warp_size * time)


def expected_simt_efficiency(p: float, warp_size: int = 32, cost_if: float = 1.0, cost_else: float = 1.0) -> float:
    """Each lane independently takes the if with probability p.  The if side is issued unless
    no lane takes it (probability (1-p)^32), the else side unless all do (p^32):
      E[time] = cost_if (1 - (1-p)^32) + cost_else (1 - p^32)
      efficiency = (p cost_if + (1-p) cost_else) / E[time]

    >>> round(expected_simt_efficiency(0.5), 6), expected_simt_efficiency(0.0)
    (0.5, 1.0)
    """
    t = cost_if * (1 - (1 - p) ** warp_size) + cost_else * (1 - p ** warp_size)
    return (p * cost_if + (1 - p) * cost_else) / t


# -- 2 low precision ----------------------------------------------------------------------
def relu_bytes_per_flop(dtype: str = "fp32") -> float:
    """ReLU reads one element and writes one per FLOP: 2 x element bytes per FLOP.

    >>> relu_bytes_per_flop("fp32"), relu_bytes_per_flop("fp16"), relu_bytes_per_flop("fp8")
    (8.0, 4.0, 2.0)
    """
    return 2.0 * dtype_bytes(dtype)


# -- 3 fusion -----------------------------------------------------------------------------
SIN2_COS2_UNFUSED = (            # (kernel, elements read, elements written, FLOPs) per element
    ("a = sin(x)", 1, 1, 1), ("b = cos(x)", 1, 1, 1), ("a2 = a*a", 1, 1, 1),
    ("b2 = b*b", 1, 1, 1), ("out = a2 + b2", 2, 1, 1))
SIN2_COS2_FUSED = (("out = sin(x)**2 + cos(x)**2", 1, 1, 5),)


@dataclass(frozen=True)
class FusionCost:
    kernels: int
    accesses_per_element: int    # HBM element reads + writes
    bytes: float
    flops: float
    time_s: float                # sum over kernels of the roofline time


def fusion_cost(gpu: GPU, n: int, fused: bool, dtype: str = "fp32") -> FusionCost:
    """HBM traffic and roofline time of sin^2 x + cos^2 x over n elements.

    Unfused: 5 kernels, 2+2+2+2+3 = 11 accesses per element; fused: 1 kernel, 2.  The FLOPs
    are the same 5 per element (sin and cos counted as one each), so fusion is 5.5x less
    traffic, and for a memory-bound op, 5.5x less time.

    >>> from simgpu.hardware import H200
    >>> fusion_cost(H200, 1, False).accesses_per_element, fusion_cost(H200, 1, True).accesses_per_element
    (11, 2)
    """
    eb = dtype_bytes(dtype)
    table = SIN2_COS2_FUSED if fused else SIN2_COS2_UNFUSED
    time = sum(roofline_time(gpu, f * n, (r + w) * n * eb) for _, r, w, f in table)
    acc = sum(r + w for _, r, w, _ in table)
    return FusionCost(len(table), acc, acc * n * eb, sum(f for *_, f in table) * n, time)


# -- 4 recomputation ----------------------------------------------------------------------
@dataclass(frozen=True)
class RecomputeLedger:
    """HBM accesses (in vectors of n elements) of x -> s1 -> s2 -> out, forward + backward."""

    strategy: str
    forward: tuple                 # names of the arrays read (r:) or written (w:)
    backward: tuple

    @property
    def accesses(self) -> int:
        return len(self.forward) + len(self.backward)


def recomputation_ledgers(count_upstream_gradient: bool = True) -> tuple:
    """Store-activations vs recompute for three chained sigmoids, each pass one fused kernel.

    sigma'(z) = sigma(z)(1 - sigma(z)), so the backward needs s1, s2 and out (the outputs).
      store:     fwd  r:x w:s1 w:s2 w:out                      4
                 bwd  r:dout r:s1 r:s2 r:out w:dx              5     total 9
      recompute: fwd  r:x w:out                                2
                 bwd  r:x r:dout w:dx  (s1, s2, out rebuilt)   3     total 5
    Counting every access gives 5/9 = 0.556, not the lecture's 5/8 = 0.625.  The 5/8 comes out
    when the stored version's backward is tallied without reading the upstream gradient dout
    (4 + 4 = 8) while the recomputing version's keeps it (2 + 3 = 5);
    ``count_upstream_gradient=False`` drops it from the store side only, reproducing 5/8.
    Dropping dout on both sides would give 4/8 = 1/2.  Either way recomputing moves about half
    the bytes, for three extra sigmoids per element.
    """
    store_bwd = ("r:dout", "r:s1", "r:s2", "r:out", "w:dx")
    if not count_upstream_gradient:
        store_bwd = store_bwd[1:]
    store = RecomputeLedger("store", ("r:x", "w:s1", "w:s2", "w:out"), store_bwd)
    recompute = RecomputeLedger("recompute", ("r:x", "w:out"), ("r:x", "r:dout", "w:dx"))
    return store, recompute


def recomputation_ratio(count_upstream_gradient: bool = True) -> float:
    """Recompute accesses over store accesses: 5/9 counting everything, 5/8 the lecture's way.

    >>> recomputation_ratio(), recomputation_ratio(False)
    (0.5555555555555556, 0.625)
    """
    store, recompute = recomputation_ledgers(count_upstream_gradient)
    return recompute.accesses / store.accesses


# -- 5 coalescing -------------------------------------------------------------------------
def sectors_per_request(stride_elements: int, dtype: str = "fp32", warp_size: int = 32,
                        sector_bytes: int = 32, offset_bytes: int = 0) -> int:
    """Distinct 32-byte sectors one warp's load touches, lane i reading element i x stride.

    Closed form for a sector-aligned start: stride 0 -> 1; otherwise
      min(warp_size, floor((warp_size - 1) x s x e / 32) + 1) when s x e <= 32, else warp_size
    (fp32: stride 1 -> 4 sectors = 128 B for 128 useful B; stride 8 or more -> 32 sectors).

    >>> [sectors_per_request(s) for s in (0, 1, 2, 4, 8, 32)]
    [1, 4, 8, 16, 32, 32]
    """
    eb = dtype_bytes(dtype)
    addrs = {(offset_bytes + lane * stride_elements * eb) // sector_bytes for lane in range(warp_size)}
    ends = {(offset_bytes + lane * stride_elements * eb + eb - 1) // sector_bytes for lane in range(warp_size)}
    return len(addrs | ends)


def coalescing_efficiency(stride_elements: int, dtype: str = "fp32", warp_size: int = 32) -> float:
    """Useful bytes over sector bytes: warp_size x e / (32 x sectors); 1/8 at fp32 stride >= 8."""
    eb = dtype_bytes(dtype)
    useful = eb * (warp_size if stride_elements else 1)
    return useful / (32 * sectors_per_request(stride_elements, dtype, warp_size))


# -- 6 tiling -----------------------------------------------------------------------------
def tiling_global_reads(n: int, tile: int, dtype: str = "fp32") -> dict:
    """Global element reads of an n x n matmul, naive vs tiled: the T-fold reduction.

    >>> tiling_global_reads(1024, 32)["reduction"]
    32.0
    """
    naive = naive_matmul_traffic(n, n, n, dtype).elements_loaded
    tiled = tiled_matmul_traffic(n, n, n, tile, dtype).elements_loaded
    return {"naive": naive, "tiled": tiled, "reduction": naive / tiled}


# -- the same tricks as TIMES (closed forms; examples/lecture_tricks.py sets them beside the
#    simulated kernels and the H200).  Rates come from the preset (datasheet and microbenchmarks);
#    nothing here is fitted to the tricks' own measurements.
# SASS instructions a numba `for it in range(n)` loop adds per iteration with an int64 trip
# count (counted in the unrolled main loop: validation/data/h200_loop_overhead_microbench.json,
# sass_counts_main_loop_per_4_iterations.range_int64_k4: 38 instructions, 16 FFMA, 4 iterations)
LOOP_OVERHEAD_INT64 = 5.5


def _stream_params(gpu: GPU):
    """(bytes/s, kernel floor s) of a streaming kernel: the measured copy bandwidth and the
    graph-replayed launch floor where the preset has library measurements, else the DRAM roof."""
    p = LIBRARY_PARAMS.get(gpu.name)
    if p:
        return p["copy_bytes_per_s"], p["elementwise_kernel_floor_s"]
    return gpu.dram.bandwidth_bytes_per_s, gpu.launch_overhead_ns * 1e-9


def divergence_time(gpu, threads: int, iters: int, divergent: bool, body_insts: float = 2.0,
                    loop_insts: float = LOOP_OVERHEAD_INT64, lanes_if: int = 16) -> float:
    """Seconds of an issue-bound loop kernel whose warps split into two equal-cost loop bodies.

      warp instructions = warps x iters x (body + loop overhead) x sides
      seconds           = warp instructions / (SMs x schedulers x clock) + launch overhead
    sides = 1 when the branch is uniform per warp, 2 when lanes of one warp take both sides
    (1 / simt_efficiency(lanes_if) with equal costs): divergence doubles the time.
    simgpu.kernels.divergent_lane / uniform_branch: body 2 FFMA.

    >>> from simgpu.hardware import H200
    >>> round(divergence_time(H200, 4224 * 256, 256, True) / divergence_time(H200, 4224 * 256, 256, False), 2)
    1.98
    """
    gpu = get_gpu(gpu)
    sides = 1.0 / simt_efficiency(lanes_if, gpu.warp_size) if divergent else 1.0
    warps = -(-threads // gpu.warp_size)
    issue = gpu.sm_count * gpu.schedulers_per_sm * gpu.clock_hz
    return warps * iters * (body_insts + loop_insts) * sides / issue + gpu.launch_overhead_ns * 1e-9


def recomputation_times(gpu, n: int, dtype: str = "fp32") -> dict:
    """Seconds of the forward and backward kernels of three chained sigmoids, storing the
    activations vs recomputing them (one fused kernel per pass, ``recomputation_ledgers``):
    each pass costs kernel floor + accesses x n x element bytes / streaming bandwidth.  The
    three extra sigmoids per element of the recomputing backward are free while the pass is
    memory-bound (6 MUFU ops per element against 12-16 bytes).

    >>> t = recomputation_times("H200", 1 << 25)
    >>> round((t["recompute"]["fwd"] + t["recompute"]["bwd"]) / (t["store"]["fwd"] + t["store"]["bwd"]), 3)
    0.56
    """
    gpu = get_gpu(gpu)
    bw, floor = _stream_params(gpu)
    eb = dtype_bytes(dtype)
    out = {}
    for led in recomputation_ledgers(True):
        out[led.strategy] = {"fwd": floor + len(led.forward) * n * eb / bw,
                             "bwd": floor + len(led.backward) * n * eb / bw}
    return out


def coalescing_time(gpu, threads: int, stride_elements: int, dtype: str = "fp32") -> float:
    """Seconds of a strided copy, thread i copying element i x stride (``copy_strided``):
    every DRAM access granule (``gpu.dram.access_bytes``, 64 B on the H200) that a warp's load
    or store touches moves whole, read once and written once:
      bytes   = 2 x warps x granules touched per warp request x granule bytes
      seconds = kernel floor + bytes / streaming bandwidth
    Stride 1 fp32: 2 granules per 128-byte warp request (no waste); stride >= 16: 32 granules
    for 128 useful bytes (16x the traffic per element).

    >>> from simgpu.hardware import H200
    >>> round(coalescing_time(H200, 1 << 20, 32) / coalescing_time(H200, 1 << 25, 1), 2)
    0.51
    """
    gpu = get_gpu(gpu)
    bw, floor = _stream_params(gpu)
    g = gpu.dram.access_bytes
    eb = dtype_bytes(dtype)
    ws = gpu.warp_size
    per_req = len({(lane * stride_elements * eb) // g for lane in range(ws)})
    warps = -(-threads // ws)
    return floor + 2 * warps * per_req * g / bw


def tiling_time(gpu, n: int, tile: int) -> float:
    """Seconds of an n x n x n fp32 matmul, one thread per output, naive (tile 1) or with
    tile x tile shared-memory tiles, bound by the slowest of (the lecture's accounting):
      FMA      n^3 FFMA over the FP32 lanes
      global   2 n^3 / tile element reads (``tiling_global_reads``) over the L2 read bandwidth
               (the lecture's global memory; nothing credited to L1)
      shared   2 n^3 element reads from shared memory (tiled only) at l1_bytes_per_cycle per SM
    + launch overhead.

    >>> from simgpu.hardware import H200
    >>> round(tiling_time(H200, 512, 1) / tiling_time(H200, 512, 16), 1)
    5.5
    """
    gpu = get_gpu(gpu)
    fma = n ** 3 / (gpu.fp32_lanes_per_sm * gpu.sm_count * gpu.clock_hz)
    glob = 2.0 * n ** 3 / tile * 4 / gpu.l2_read_bytes_per_s
    shared = 0.0 if tile == 1 else 2.0 * n ** 3 * 4 / (gpu.l1_bytes_per_cycle * gpu.sm_count * gpu.clock_hz)
    return max(fma, glob, shared) + gpu.launch_overhead_ns * 1e-9


__all__ = ["LOOP_OVERHEAD_INT64", "divergence_time", "recomputation_times", "coalescing_time", "tiling_time",
           "simt_efficiency", "expected_simt_efficiency", "relu_bytes_per_flop", "fusion_cost", "FusionCost",
           "SIN2_COS2_UNFUSED", "SIN2_COS2_FUSED", "RecomputeLedger", "recomputation_ledgers",
           "recomputation_ratio", "sectors_per_request", "coalescing_efficiency", "tiling_global_reads"]
