"""Attention: HBM traffic and FLOPs of naive (three kernels) vs FlashAttention, forward and
backward, their roofline times, and online softmax in numpy.

Per head, with sequence length N, head dim d, element size e (all counts in elements):

Naive forward, as separate kernels (FlashAttention paper, Algorithm 0):
  S = Q K^T      reads Q, K (2Nd)      writes S (N^2)
  P = softmax(S) reads S (N^2)         writes P (N^2)
  O = P V        reads P, V (N^2 + Nd) writes O (Nd)
  HBM = 4N^2 + 4Nd;  FLOPs = 4N^2 d (two matmuls) + 5N^2 (max, subtract, exp, sum, divide)
Naive backward (paper, Algorithm 3), P stored by the forward:
  dV = P^T dO (reads P, dO; writes dV)   dP = dO V^T (reads dO, V; writes dP)
  dS = P o (dP - rowsum(P o dP)) (reads P, dP; writes dS)
  dQ = dS K (reads dS, K; writes dQ)     dK = dS^T Q (reads dS, Q; writes dK)
  HBM = 7N^2 + 8Nd;  FLOPs = 8N^2 d + 4N^2
FlashAttention forward (FlashAttention-2 loop order: outer loop over query tiles of Br rows,
inner loop over key/value tiles of Bc rows):
  each query tile reads its Q rows once and all of K and V once, and writes O and the
  log-sum-exp L once; nothing N x N touches HBM.
  HBM = 2Nd (Q, O) + N (L) + 2Nd ceil(N/Br) (K, V once per query tile)
  FLOPs = naive forward + Nd ceil(N/Bc) (rescaling the O accumulator once per K/V tile)
FlashAttention backward (FlashAttention-2, outer loop over K/V tiles of Bc rows), recomputes
  S and P tile by tile from Q, K and L instead of reading a stored P:
  HBM = 2Nd (read O, dO for D = rowsum(dO o O)) + N (write D) + 4Nd (read K, V; write dK, dV)
        + ceil(N/Bc) x (4Nd + 2N) (read Q, dO, L, D; read and write dQ per K/V tile)
  FLOPs = 10N^2 d + 9N^2 (one extra Q K^T and softmax: the price of recomputation)

Block sizes follow the paper's SRAM budget, M = SRAM of one block in elements
(``gpu.max_shared_mem_per_block_bytes / e``): the tile that stays resident in SRAM across the
inner loop has ceil(M / 4d) rows and the streamed tile min(ceil(M / 4d), d) rows (the paper's
Bc and Br; FlashAttention-2 keeps the query tile resident in the forward, the K/V tile in the
backward).  Then the forward's K/V term is 2Nd x N / (M/4d) = 8 N^2 d^2 / M: the paper's
Theta(N^2 d^2 / M).  Pass ``block_rows`` / ``block_cols`` to model another kernel.
Times: each kernel's max(matmul FLOPs / tensor peak + elementwise FLOPs / FP32 peak,
HBM bytes / HBM bandwidth), summed over kernels.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from simgpu.hardware import get_gpu
from simgpu.hardware.spec import GPU
from .gemm import IN_BYTES, elementwise, gemm, library_params
from .roofline import DTYPE_ROOF, compute_roof, dtype_bytes

SOFTMAX_FLOPS_PER_ELEMENT = 5      # max, subtract, exp, sum, divide (forward)
SOFTMAX_BWD_FLOPS_PER_ELEMENT = 4  # multiply, row-sum, subtract, multiply (backward)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Kernel:
    """One kernel's work: elements moved to/from HBM and FLOPs by pipe."""

    name: str
    hbm_elements: int
    matmul_flops: float
    elementwise_flops: float


@dataclass(frozen=True)
class AttentionCost:
    """Traffic, FLOPs and predicted time of one attention pass (all heads)."""

    algorithm: str               # "naive" or "flash"
    direction: str               # "forward" or "backward"
    n: int
    d: int
    heads: int
    elem_bytes: int
    kernels: tuple               # Kernel per launch (per head)
    time_s: float

    @property
    def hbm_elements(self) -> int:
        return self.heads * sum(k.hbm_elements for k in self.kernels)

    @property
    def hbm_bytes(self) -> int:
        return self.hbm_elements * self.elem_bytes

    @property
    def flops(self) -> float:
        return self.heads * sum(k.matmul_flops + k.elementwise_flops for k in self.kernels)

    @property
    def arithmetic_intensity(self) -> float:
        return self.flops / self.hbm_bytes


def flash_block_sizes(gpu: GPU, d: int, dtype: str = "fp16") -> tuple:
    """(resident rows, streamed rows) = (ceil(M/4d), min(ceil(M/4d), d)), M = SRAM elements.

    >>> from simgpu.hardware import H200
    >>> flash_block_sizes(H200, 64)       # M = 227 KiB / 2 B = 116224 elements
    (454, 64)
    """
    m_elems = gpu.max_shared_mem_per_block_bytes // dtype_bytes(dtype)
    resident = _ceil_div(m_elems, 4 * d)
    return resident, min(resident, d)


def _time(gpu: GPU, kernels, heads: int, eb: int, dtype: str) -> float:
    tensor, fp32, bw = compute_roof(gpu, DTYPE_ROOF[dtype]), gpu.fp32_flops, gpu.dram_bandwidth
    return sum(max(heads * (k.matmul_flops / tensor + k.elementwise_flops / fp32),
                   heads * k.hbm_elements * eb / bw) for k in kernels)


def naive_attention(gpu: GPU, n: int, d: int, heads: int = 1, dtype: str = "fp16",
                    direction: str = "forward") -> AttentionCost:
    """Standard attention as separate kernels, the N x N matrices going through HBM.

    >>> from simgpu.hardware import H200
    >>> naive_attention(H200, 4096, 64).hbm_elements == 4 * 4096**2 + 4 * 4096 * 64
    True
    """
    nn, nd, f = n * n, n * d, 2.0 * n * n * d
    if direction == "forward":
        ks = (Kernel("S = Q K^T", 2 * nd + nn, f, 0.0),
              Kernel("P = softmax(S)", 2 * nn, 0.0, SOFTMAX_FLOPS_PER_ELEMENT * nn),
              Kernel("O = P V", nn + 2 * nd, f, 0.0))
    elif direction == "backward":
        ks = (Kernel("dV = P^T dO", nn + 2 * nd, f, 0.0),
              Kernel("dP = dO V^T", 2 * nd + nn, f, 0.0),
              Kernel("dS = softmax'(P, dP)", 3 * nn, 0.0, SOFTMAX_BWD_FLOPS_PER_ELEMENT * nn),
              Kernel("dQ = dS K", nn + 2 * nd, f, 0.0),
              Kernel("dK = dS^T Q", nn + 2 * nd, f, 0.0))
    else:
        raise ValueError(f"direction must be 'forward' or 'backward', not {direction!r}")
    eb = dtype_bytes(dtype)
    return AttentionCost("naive", direction, n, d, heads, eb, ks, _time(gpu, ks, heads, eb, dtype))


def flash_attention(gpu: GPU, n: int, d: int, heads: int = 1, dtype: str = "fp16",
                    direction: str = "forward", block_rows: int | None = None,
                    block_cols: int | None = None) -> AttentionCost:
    """FlashAttention as one fused kernel (plus the D pre-pass in backward).

    Worked example, H200, fp16, d = 64: M = 227 KiB / 2 B = 116224 elements, query tiles of
    454 rows, K/V tiles of 64.  At N = 4096 the forward reads K and V ceil(4096/454) = 10
    times: HBM = 2Nd + N + 2Nd x 10 = 5.77 M elements, versus 68.2 M for the naive forward.

    >>> from simgpu.hardware import H200
    >>> flash_attention(H200, 4096, 64).hbm_elements
    5771264
    """
    resident, streamed = flash_block_sizes(gpu, d, dtype)
    nn, nd, f = n * n, n * d, 2.0 * n * n * d
    if direction == "forward":
        br, bc = block_rows or resident, block_cols or streamed
        tr, tc = _ceil_div(n, br), _ceil_div(n, bc)
        ks = (Kernel("flash forward", 2 * nd + n + 2 * nd * tr, 2 * f,
                     SOFTMAX_FLOPS_PER_ELEMENT * nn + nd * tc),)
    elif direction == "backward":
        tc = _ceil_div(n, block_cols or resident)
        ks = (Kernel("D = rowsum(dO o O)", 2 * nd + n, 0.0, 2.0 * nd),
              Kernel("flash backward", 4 * nd + tc * (4 * nd + 2 * n), 5 * f,
                     (SOFTMAX_FLOPS_PER_ELEMENT + SOFTMAX_BWD_FLOPS_PER_ELEMENT) * nn))
    else:
        raise ValueError(f"direction must be 'forward' or 'backward', not {direction!r}")
    eb = dtype_bytes(dtype)
    return AttentionCost("flash", direction, n, d, heads, eb, ks, _time(gpu, ks, heads, eb, dtype))


def flash_traffic_theta(n: int, d: int, sram_elements: int) -> float:
    """The paper's Theta(N^2 d^2 / M), without the constant: N^2 d^2 / M."""
    return n * n * d * d / sram_elements


def softmax(x, axis: int = -1):
    """Ordinary numerically stable softmax: subtract the max, exponentiate, normalise."""
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def online_softmax(x, tile: int):
    """Softmax of the last axis computed tile by tile, as in the lecture's pseudo-code:

        for tile in tiles:
            m_new = max(m, tile.max())          # running max
            acc   = acc * exp(m - m_new)        # correct the old sum for the new max
            acc   = acc + exp(tile - m_new).sum()
            m     = m_new
        out = exp(x - m) / acc                  # normalise once at the end

    Equals ``softmax(x)`` to rounding:

    >>> x = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0])
    >>> bool(np.allclose(online_softmax(x, 3), softmax(x)))
    True
    """
    x = np.asarray(x, dtype=np.float64)
    if tile <= 0:
        raise ValueError("tile must be positive")
    m = np.full(x.shape[:-1] + (1,), -np.inf)
    acc = np.zeros(x.shape[:-1] + (1,))
    for s in range(0, x.shape[-1], tile):
        t = x[..., s:s + tile]
        m_new = np.maximum(m, t.max(axis=-1, keepdims=True))
        acc = acc * np.exp(m - m_new) + np.exp(t - m_new).sum(axis=-1, keepdims=True)
        m = m_new
    return np.exp(x - m) / acc


def online_attention(q, k, v, tile: int):
    """softmax(Q K^T / sqrt(d)) V computed over K/V tiles with the online softmax: the running
    max, running sum and the un-normalised output are rescaled when a tile raises the max, and
    O is divided by the sum once at the end.  No N x N matrix is ever formed."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    scale = 1.0 / np.sqrt(q.shape[-1])
    m = np.full((q.shape[0], 1), -np.inf)
    acc = np.zeros((q.shape[0], 1))
    out = np.zeros((q.shape[0], v.shape[1]))
    for s in range(0, k.shape[0], tile):
        scores = q @ k[s:s + tile].T * scale
        m_new = np.maximum(m, scores.max(axis=1, keepdims=True))
        p = np.exp(scores - m_new)
        fix = np.exp(m - m_new)
        acc = acc * fix + p.sum(axis=1, keepdims=True)
        out = out * fix + p @ v[s:s + tile]
        m = m_new
    return out / acc


def attention_reference(q, k, v):
    """softmax(Q K^T / sqrt(d)) V with the whole N x N matrix (what the naive kernels do)."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    return softmax(q @ k.T / np.sqrt(q.shape[-1])) @ v


__all__ = ["Kernel", "AttentionCost", "naive_attention", "flash_attention", "flash_block_sizes",
           "flash_traffic_theta", "softmax", "online_softmax", "online_attention", "attention_reference"]


# ------------------------------------------------------------------------------------------------
# Library attention (PyTorch's scaled_dot_product_attention backends) timed with the GEMM model
# ------------------------------------------------------------------------------------------------
BACKENDS = ("flash", "efficient", "math")
# PyTorch's flash backend is FlashAttention-2 built for sm80: mma.sync (s16816) on the tensor
# cores, query tiles of 128 rows, one CTA of 4 warps per (batch, head, query tile)
FA2_QUERY_TILE = 128
# FP32-pipe operations per score besides the exp: the scale-and-subtract FMA, the running max,
# the running sum, the fp32 -> bf16 pack of P (forward); backward adds dS = P o (dP - D) (2)
FP32_OPS_PER_SCORE_FWD = 4
FP32_OPS_PER_SCORE_BWD = 6
# math backend (PyTorch >= 2.5 upcasts fp16/bf16 to fp32 unless
# allow_fp16_bf16_reduction_math_sdp(True)): bytes per score of the kernels after S = Q K^T --
#   _safe_softmax: softmax (read S 4, write P 4), S == -inf (read 4, write 1 bool), .all(-1)
#   over that mask (read 1), where(all_masked_rows, 0, P) (read 4, write 4); then the
#   attention weights it returns besides O, attn.to(dtype) (read 4, write 2)
#   (name, elementwise class, bytes per score)
MATH_SOFTMAX_KERNELS = (("softmax", "softmax", 8), ("S == -inf", "eq", 5), ("all(-1)", "all", 1),
                        ("where", "where", 8), ("attn.to(dtype)", "to_bf16", 6))
# ... and the bytes alive at once at the peak: S (fp32), P (fp32) and the bool mask
MATH_PEAK_BYTES_PER_SCORE = 9


@dataclass(frozen=True)
class AttentionEstimate:
    """``attention``'s answer: time, extra memory and HBM traffic of one SDPA call."""

    backend: str
    b: int
    h: int
    t: int
    d: int
    dtype: str
    causal: bool
    backward: bool
    seconds: float
    peak_bytes: int              # allocated beyond q, k, v and the output (and their grads)
    hbm_bytes: float
    kernels: tuple               # (name, seconds) per kernel launched

    @property
    def why(self) -> dict:
        return {name: s for name, s in self.kernels}


# The efficient backend's forward kernel, as call 5's profiler named it for bf16, d = 64:
# fmha_cutlassF_bf16_aligned_64x64_rf_sm80 (PyTorch's copy of xFormers' CUTLASS kernel,
# aten/src/ATen/native/transformers/cuda/mem_eff_attention/kernel_forward.h): 64 query rows x 64
# keys a step, 4 warps of 32 x 32 warp tiles (2 x 2), 128 registers a thread and 18.9 KB of shared
# memory (CUPTI's launch record), so 4 CTAs fit an SM.  Per key block the kernel runs a whole
# CUTLASS threadblock GEMM S = Q K^T (its multistage pipeline filled and drained again each block:
# K = d is 2-4 k-iterations), __syncthreads, the softmax update, P written to shared memory,
# __syncthreads, O += P V with P read back from shared memory.  So the phases do not overlap
# (unlike FA2's, which keeps Q and P in registers); a step costs their sum:
#   mma: 2 GEMMs of 64 x 64 x d at the mma.sync rate; exp: 64 x 64 on the SFU; FP32: 4 ops a score
#   plus the rescale of the 64 x d O accumulator; shared memory: every operand is written once
#   (cp.async / the P store) and read by the 2 warps that share its rows or columns (2 x 2 warp
#   grid), Q re-read from global each key block: (Q, K, V: 64 x d; P: 64 x 64) x 3 x e bytes
#   (96 KB at d = 64) at one 128-byte wavefront per clock (gpu.l1_bytes_per_cycle).
# Built from the d = 64 kernel; other d are an extrapolation (the hold-out at d = 128 checks it).
MEM_EFF_TILE = 64
MEM_EFF_CTAS_PER_SM = 4
MEM_EFF_SMEM_PASSES = 3            # one write + two warp reads per operand element

# Host cost of one scaled_dot_product_attention call, the Python thread's time per call: a host
# clock around 2000 calls on 1 x 1 x 64 x 64 without a sync (call 4, validation/data/
# lecture_h200_attention2.json "host_cost" -> "host_only_s"; for torch.matmul 64^3 that clock
# read 17.5 us against 18.0 back-to-back, so it measures what the GEMM host floor measures).
# Default dispatch (the dispatcher picks flash or efficient): 24.8 us; the math path (about ten
# ATen calls): 144.5 us.  The same run's is_causal=True call read 16.6 us, but the host-bound
# T = 1024 flash runs of that call took 23.6 us non-causal and 22.3 causal, so the model does
# not carry a separate causal cost.  Host costs move between machines (torch.matmul 64^3: 11.4 us
# on call 2's machine, 17.5-18.0 on call 4's); the model takes call 4's as measured.
# Forward + backward (o.backward(g) after the call, autograd's SDPA backward node and its
# kernels' launches), the same host clock around 1000 steps on 1 x 1 x 64 x 64 (call 8,
# validation/data/lecture_h200_call8.json "host"): default dispatch 144.0 us; the math path, with
# sdpa_kernel(MATH) entered once around the loop, 830.6 us.  Entering sdpa_kernel(...) at every
# call costs more (flash 236 us a step, efficient 181) and is not in the model.
SDPA_HOST_FLOOR_S = {"H200": {"fused": 24.8e-6, "math": 144.5e-6,
                              "fused_fwd_bwd": 144.0e-6, "math_fwd_bwd": 830.6e-6}}

# CTAs resident per SM: FA2's forward kernel (Flash_fwd_kernel_traits<64, 128, 128, 4>: 4 warps,
# 48 KB of shared memory for the Q, K and V tiles) is register-limited to 2 CTAs per SM (up to
# 255 registers x 128 threads = 32 K of the SM's 64 K); an assumption from the kernel's
# resources (call 5's launch record: 255 registers, 48 KB shared memory).  The efficient
# (xFormers/CUTLASS) kernel: 4 (128 registers x 128 threads, 18.9 KB; MEM_EFF_CTAS_PER_SM).
CTAS_PER_SM = {"flash": 2, "efficient": MEM_EFF_CTAS_PER_SM}


def _makespan(lengths, sms: int, per_sm: int) -> float:
    """Finish time of CTAs of the given lengths (seconds alone on an SM), dispatched in order,
    each to an SM with room (fewest resident first), at most ``per_sm`` resident per SM; the
    CTAs resident on one SM share its throughput equally (processor sharing): a CTA alone on
    an SM runs at the SM's full rate, two run at half each."""
    lengths = [float(x) for x in lengths]
    if not lengths:
        return 0.0
    rem = np.full((sms, per_sm), np.inf)            # remaining work of resident CTAs (inf: empty)
    nxt, now = 0, 0.0
    while True:
        # dispatch: fill empty slots, emptiest SMs first
        while nxt < len(lengths):
            busy = np.isfinite(rem).sum(axis=1)
            sm = int(np.argmin(busy))
            if busy[sm] >= per_sm:
                break
            rem[sm, int(np.argmax(~np.isfinite(rem[sm])))] = lengths[nxt]
            nxt += 1
        busy = np.isfinite(rem).sum(axis=1)
        if not busy.any():
            return now
        # next completion: remaining x residents on its SM
        share = np.where(busy > 0, busy, 1)[:, None]
        dt = float(np.min(rem * share))
        now += dt
        rem = rem - dt / share
        rem[rem <= 1e-15 * max(now, 1e-30)] = np.inf


def _fa_time(gpu, p, b, h, t, d, dtype, causal, tile, matmuls, fp32_ops, rate, ctas_per_sm=1,
             serial=False, smem_bytes=0.0):
    """One fused FlashAttention kernel: CTAs of ``tile`` query rows, each looping over key tiles
    of ``tile`` rows; per key tile, max(mma time, exp time + FP32 time) at one SM's share of
    each rate (the warps overlap the pipes; up to ``ctas_per_sm`` CTAs share an SM).
    Non-causal: every CTA does all ceil(T / tile) key tiles, so waves of equal CTAs.  Causal:
    query tile i does only the i + 1 key tiles at or left of the diagonal (the masked ones are
    skipped, the diagonal one runs whole).  The CTAs, in blockIdx order (query tile fastest,
    then batch, then head), go to the SMs as ``_makespan`` dispatches them, so the long last
    query tiles of the last heads set the time: with few CTAs per SM causal saves little
    (B x H = 16, d = 64: causal / non-causal 1.0 at T = 1024, 0.88 at 2048, 0.76 at 4096)."""
    nq = _ceil_div(t, tile)
    sms = gpu.sm_count
    scores = tile * tile                                      # per key tile
    mma = matmuls * 2.0 * scores * d / (rate / sms)
    exp = scores / (p["exp2_per_s"] / sms)
    fp32 = fp32_ops * scores / (gpu.fp32_flops / 2 / sms)    # fp32_flops counts an FMA as 2
    smem = smem_bytes / (gpu.l1_bytes_per_cycle * gpu.clock_hz)
    if serial:                                                # phases separated by barriers
        t_kv = mma + exp + fp32 + smem
    else:
        t_kv = max(mma, exp + fp32, smem)                     # one key tile, CTA alone on an SM
    per_head = [min(i + 1, nq) for i in range(nq)] if causal else [nq] * nq
    ctas = b * h * nq
    if ctas > 16 * sms * ctas_per_sm:                         # many waves: the tail is noise
        span = max(sum(per_head) * b * h / sms, nq)
    else:
        span = _makespan(per_head * (b * h), sms, ctas_per_sm)
    return span * t_kv + p["kernel_floor_s"]


# ------------------------------------------------------------------------------------------------
# The efficient backend's backward kernel, fmha_cutlassB_<dtype>_aligned_<BI>x<BJ>_k<maxK>[_seqaligned]_sm80
# (call 5 at B 1 H 16 T 2048 d 64 bf16: fmha_cutlassB_bf16_aligned_64x64_k64_seqaligned_sm80, template
# AttentionBackwardKernel<Sm80, bf16, aligned, no dropout, kPreload, 64, 64, 64, seqaligned>, grid
# (32, 16, 1), 128 threads, 162 registers, 42240 B of shared memory, 554 us alone).  A step model
# built from its source, PyTorch's copy of xFormers' kernel
# (aten/src/ATen/native/transformers/cuda/mem_eff_attention/kernel_backward.h, kernels/cutlassB.h,
# and the launch in attention_backward.cu); read, not copied.  What the source does:
#   * tiles: kBlockSizeI query rows x kBlockSizeJ keys, one 32 x 32 warp tile per warp, so
#     BI * BJ / 1024 warps (4 at 64 x 64).  The sm80 dispatch list (tried in order, the first
#     whose kMaxK >= d wins): d <= 64 -> 64 x 64 (kPreload), d <= 128 -> 128 x 128 (kPreload, 16
#     warps; the 128 x 64 k96 kernel is only for cc 8.6 / 8.9), larger -> 128 x 64 k65536 (no
#     preload).  kOutputInRF = half precision and kMaxK <= BI: dK and dV stay in registers across
#     the query loop (true for the first two; the third round-trips them through an fp32
#     workspace every step).
#   * grid = (num_splits_key, heads, batch).  The launch sets num_splits_key = ceil(T / BJ) (1 if
#     B x H >= 256 and T <= 2 BJ; at most 200 / (B H) when dK/dV need a workspace), so at d = 64
#     every CTA owns ONE key block (its dK, dV) and loops over the query blocks -- the inner loop.
#     Non-causal, CTA j starts at query block j (getQueryStartShift) and wraps around, so the CTAs
#     of one head are at different query blocks at any time; causal, key block j starts at the
#     diagonal query block and does nq - j of them (the masked pairs are skipped).
#   * kKernelComputesDelta (half precision): before its loop EVERY CTA computes
#     D = rowsum(dO o O) for ALL T query rows of its head (computeDelta over every query block;
#     no split index), reading O and dO: 2 T d e bytes a CTA, from L2.
#   * one step (processBlockIJ), phases separated by __syncthreads, each a whole CUTLASS
#     threadblock GEMM with both operands in shared memory:
#       S^T = K_j Q_i^T (K_j stays in shared memory, Q_i prefetched); scale; exp(S - LSE) on the
#       SFU, P^T stored to shared memory | dV += P^T dO_i (A from shared memory; dO_i loaded into
#       shared memory) | dP = dO_i V_j^T (dO_i loaded AGAIN, V_j reloaded every step) |
#       dS = (dP - D_i) o P (P read back from shared memory), scaled, stored to shared memory |
#       dQ_i += dS K_j (K_j loaded again) into the fp32 gQ workspace (GradQTempStorage) under a
#       lock: atomicCAS spin by thread 0, __threadfence, the fp32 tile loaded from global into
#       registers, the GEMM, stored back, __threadfence, release | dK += dS^T Q_i (Q_i loaded
#       again).
#     So 5 GEMMs of BI x BJ x d per step (as FA2) but run one after another, every operand
#     written to shared memory and read by the BI/32 or BJ/32 warps that share its rows or
#     columns, and the gQ tile's load / store / fences on the critical path.
# Costed like the forward (``MEM_EFF_*``): a step is the SUM of its phases at one SM's share of
# each rate: tensor (sm80 mma rate), SFU (exp), FP32 (MEM_EFF_BWD_FP32_OPS per score), shared memory
# (gpu.l1_bytes_per_cycle a clock), and L2 for the synchronous fp32 gQ load + store (the library's
# measured L2 read bandwidth, each transfer at least one L2 hit latency, gpu.l2) plus two L2
# latencies for the lock (the atomicCAS acquire and the __threadfence before release).  cp.async
# operand prefetches are not charged beyond their shared-memory write (as in the forward).  The
# per-query-block lse / D loads are not charged.  A CTA's length: D (2 T d e bytes at the L2 share,
# or one L2 latency per query block if longer) + its steps + the dK, dV epilogue; the CTAs, in
# blockIdx order, go to the SMs by ``_makespan``.  No parameter is fitted to the 554 us.
MEM_EFF_BWD_GEMMS = 5
# FP32-pipe operations per score: S scaled (1), minus LSE (1), packed to bf16 for the P^T store
# (1); dS: P read back and unpacked (1), dP - D (1), times P (1), times the scale (1), packed (1)
MEM_EFF_BWD_FP32_OPS = 8
# CTAs per SM.  64 x 64: 162 registers x 128 threads (call 5's launch record), allocated per warp in
# units of gpu.register_alloc_unit: 4 x 5376 = 21504 of 65536 -> 3 CTAs (42240 B of shared memory
# would allow 5; __launch_bounds__ asks for 12 warps / 4 = 3).  128 x 128 (512 threads) and
# 128 x 64 (256 threads): not seen; 1 CTA (a 512-thread CTA holding dK and dV for a 128 x 128 tile
# in registers needs more than the 64 registers a thread that two CTAs would leave) -- assumed.
MEM_EFF_BWD_REGISTERS = {64: 162}


def _mem_eff_bwd_config(b: int, h: int, t: int, d: int, gpu: GPU) -> dict:
    """Which fmha_cutlassB kernel the sm80 dispatch picks and how it is launched (see above)."""
    if d <= 64:
        bi, bj, max_k, preload = 64, 64, (32 if d <= 32 else 64), True
    elif d <= 128:
        bi, bj, max_k, preload = 128, 128, 128, True
    else:
        bi, bj, max_k, preload = 128, 64, 65536, False
    in_rf = max_k <= bi
    warps = bi * bj // 1024
    regs = MEM_EFF_BWD_REGISTERS.get(max_k) if bi == 64 else None
    if regs is not None:
        unit = gpu.register_alloc_unit
        per_warp = _ceil_div(regs * gpu.warp_size, unit) * unit
        ctas = max(1, min(gpu.registers_per_sm // (per_warp * warps),
                          gpu.max_warps_per_sm // warps))
    else:
        ctas = 1
    splits = _ceil_div(t, bj)
    if b * h >= 256 and t <= 2 * bj:
        splits = 1
    if not in_rf:
        splits = min(splits, 200 // (b * h))
    splits = max(splits, 1)
    aligned = t % bi == 0 and t % bj == 0
    name = (f"fmha_cutlassB_aligned_{bi}x{bj}_k{max_k}{'_seqaligned' if aligned else ''}_sm80")
    return dict(bi=bi, bj=bj, warps=warps, ctas_per_sm=ctas, splits=splits, in_rf=in_rf, name=name)


def _mem_eff_bwd_time(gpu: GPU, p: dict, b: int, h: int, t: int, d: int, dtype: str, causal: bool):
    """Seconds of the efficient backend's backward kernel (the step model above) and its config."""
    cfg = _mem_eff_bwd_config(b, h, t, d, gpu)
    bi, bj, splits = cfg["bi"], cfg["bj"], cfg["splits"]
    e = IN_BYTES[dtype]
    sms = gpu.sm_count
    dn = _ceil_div(d, bi) * bi if cfg["in_rf"] else _ceil_div(d, 64) * 64  # GEMM N: d padded to the tile
    dk = _ceil_div(d, 32) * 32                                   # GEMM K: d in steps of 32
    scores = bi * bj
    mma = 2.0 * (2 * scores * dk + 3 * scores * dn) / (p["sm80_align2_flops"][dtype] / sms)
    exp = scores / (p["exp2_per_s"] / sms)
    fp32 = (MEM_EFF_BWD_FP32_OPS + (1 if causal else 0)) * scores / (gpu.fp32_flops / 2 / sms)
    wi, wj = bi // 32, bj // 32                                  # warps along query rows, keys
    smem_elems = (
        (bj * dk * wi + bi * dk * wj + bi * dk)                 # S^T = K Q^T: reads, Q written
        + (scores * wi + bi * dn * wj + scores + bi * dn)       # dV += P^T dO: reads, P and dO written
        + (bi * dk * wj + bj * dk * wi + bi * dk + bj * dk)     # dP = dO V^T: reads, dO and V written
        + (scores + scores)                                     # dS: P read back, dS written
        + (scores * wj + bj * dn * wi + bj * dn)                # dQ += dS K: reads, K written
        + (scores * wi + bi * dn * wj + bi * dn))               # dK += dS^T Q: reads, Q written
    smem = smem_elems * e / (gpu.l1_bytes_per_cycle * gpu.clock_hz)
    l2_bw = p["l2_read_bytes_per_s"] / sms
    lat = gpu.l2.hit_latency_cycles / gpu.clock_hz
    gq_tile = bi * dn * 4                                        # fp32 gQ workspace tile
    gq = 2 * max(gq_tile / l2_bw, lat) + (2 * lat if splits > 1 else 0.0)
    if not cfg["in_rf"]:                                         # dK, dV fp32 round trips too
        gq += 2 * 2 * max(bj * dn * 4 / l2_bw, lat)
    step = mma + exp + fp32 + smem + gq
    nq, nk = _ceil_div(t, bi), _ceil_div(t, bj)
    delta = max(2 * t * d * e / l2_bw, nq * lat)                 # every CTA: D for all T rows
    final = 2 * bj * d * e / l2_bw + 2 * 2 * bj * dn * 4 / (gpu.l1_bytes_per_cycle * gpu.clock_hz)

    def steps(j):                                                # query blocks key block j visits
        return nq - (j * bj) // bi if causal else nq

    per_head = []
    for x in range(splits):
        blocks = range(x, nk, splits)
        per_head.append(delta + sum(steps(j) * step + final for j in blocks))
    lengths = per_head * (b * h)
    per_sm = cfg["ctas_per_sm"]
    if len(lengths) > 16 * sms * per_sm:
        span = max(sum(lengths) / sms, max(lengths))
    else:
        span = _makespan(lengths, sms, per_sm)
    why = dict(step_s=step, mma_s=mma, exp_s=exp, fp32_s=fp32, smem_s=smem, gq_s=gq, delta_s=delta)
    return span + p["kernel_floor_s"], cfg, why


def attention(b: int, h: int, t: int, d: int, dtype: str = "bf16", backend: str = "flash",
              causal: bool = False, backward: bool = False, gpu="H200") -> AttentionEstimate:
    """Predicted time, peak extra memory and HBM traffic of
    ``torch.nn.functional.scaled_dot_product_attention`` on (B, H, T, d) inputs.

    flash / efficient: one fused kernel (``_fa_time``) at the tensor rate of the mma.sync
    (sm80 s16816) GEMM family -- both are sm80 kernels -- with query tiles of 128 / 64 rows;
    flash overlaps its pipes (the slowest sets the time), the efficient (CUTLASS) kernel runs
    its phases one after another and moves every operand through shared memory (see
    ``MEM_EFF_TILE``); the call costs at least the measured host time of one SDPA call
    (``SDPA_HOST_FLOOR_S``: fused backends, math; with ``backward`` the measured host cost of a
    forward + backward step);
    peak memory the fp32 log-sum-exp (flash: 4 B per query row; efficient keeps none without
    grad).  Backward: one kernel with 5 matmuls per score pair (recompute S, dP, dV, dQ, dK),
    plus the D = rowsum(dO o O) pre-pass (flash: like its forward; efficient: the step model of
    fmha_cutlassB, ``_mem_eff_bwd_time``: serial phases through shared memory, the fp32 gQ
    workspace under a lock, D computed inside by every CTA); extra memory the fp32 dQ
    accumulator and D.
    math: PyTorch's composite: fp32 upcasts of q, k, v, the scaled copy, S = Q K^T and O = P V as
    batched fp32 GEMMs (``gemm``), the softmax kernels of ``MATH_SOFTMAX_KERNELS``, a cast
    back; peak memory 9 B per score (S, P fp32 and a bool mask) + 16 B per (row, dim) of the
    fp32 copies (+ a T x T fp32 mask when causal).

    >>> a = attention(1, 16, 8192, 64, backend="flash")
    >>> a.peak_bytes                        # fp32 log-sum-exp, 16 x 8192 x 4 B
    524288
    >>> m = attention(1, 16, 8192, 64, backend="math")
    >>> m.peak_bytes == 16 * (9 * 8192**2 + 16 * 8192 * 64)
    True
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if dtype not in ("bf16", "fp16"):
        raise ValueError(f"attention models bf16 and fp16 inputs, not {dtype!r}")
    if min(b, h, t, d) <= 0:
        raise ValueError(f"sizes must be positive, got B={b} H={h} T={t} d={d}")
    gpu = get_gpu(gpu)
    p = library_params(gpu)
    e = IN_BYTES[dtype]
    bh, nd, tt = b * h, t * d, t * t
    io = 4 * bh * nd * e                          # q, k, v read, o written
    kernels = []
    floors = SDPA_HOST_FLOOR_S.get(gpu.name, {})
    host = floors.get("math" if backend == "math" else "fused", p["host_floor_s"])
    if backend in ("flash", "efficient"):
        tile = FA2_QUERY_TILE if backend == "flash" else MEM_EFF_TILE
        rate = p["sm80_align2_flops"][dtype]
        kv_reads = 2 * bh * nd * e * _ceil_div(t, tile)
        hbm = io + kv_reads + (4 * bh * t if backend == "flash" else 0)
        if backend == "flash":
            fwd = _fa_time(gpu, p, b, h, t, d, dtype, causal, tile, 2, FP32_OPS_PER_SCORE_FWD, rate,
                           CTAS_PER_SM["flash"])
        else:
            smem = MEM_EFF_SMEM_PASSES * e * (3 * tile * d + tile * tile)
            fwd = _fa_time(gpu, p, b, h, t, d, dtype, causal, tile, 2, FP32_OPS_PER_SCORE_FWD + d / tile, rate,
                           CTAS_PER_SM["efficient"], serial=True, smem_bytes=smem)
        kernels.append((f"{backend} forward", max(fwd, host)))
        peak = 4 * bh * t if backend == "flash" else 0
        if backward:
            # the kernels call 5's profiler saw around the backward kernel (B 1 H 16 T 2048 d 64):
            # flash: two direct copies (O and dO made contiguous), flash_bwd_dot_do_o (D),
            # the main kernel, flash_bwd_convert_dq (fp32 dQ accumulator -> bf16); efficient: one
            # copy (dO), a fill (the fp32 gQ workspace zeroed), the main kernel, three copies
            # (dq, dk, dv from its (B, T, H, d) layout to q's)
            copy = elementwise(2 * bh * nd * e, gpu, op="copy")
            if backend == "flash":
                kernels.append(("O, dO made contiguous (2 copies)", 2 * copy))
            else:
                kernels.append(("dO made contiguous", copy))
                kernels.append(("gQ workspace zeroed", elementwise(4 * bh * nd, gpu, op="copy")))
            if backend == "flash":   # the CUTLASS backward computes D itself (kKernelComputesDelta for
                # bf16/fp16 on sm80+, mem_eff_attention/kernel_backward.h; no such kernel in the trace)
                kernels.append(("D = rowsum(dO o O)", elementwise(2 * bh * nd * e + 4 * bh * t, gpu, op="max")))
            if backend == "flash":
                kernels.append(("flash backward", _fa_time(gpu, p, b, h, t, d, dtype, causal, tile, 5,
                                                           FP32_OPS_PER_SCORE_BWD, rate)))
            else:                # fmha_cutlassB: the step model above (_mem_eff_bwd_time)
                kernels.append(("efficient backward", _mem_eff_bwd_time(gpu, p, b, h, t, d, dtype, causal)[0]))
            if backend == "flash":
                kernels.append(("dQ accumulator fp32 -> bf16", elementwise(bh * nd * (4 + e), gpu, op="to_bf16")))
            else:
                kernels.append(("dq, dk, dv to q's layout (3 copies)", 3 * copy))
            hbm += 2 * io + 2 * bh * nd * 4 * _ceil_div(t, tile)
            # what the backward allocates (call 5, torch.cuda.memory._record_memory_history at
            # B 1 H 16 T 2048 d 64): flash: two bf16 B*H*T*d copies made contiguous (the two
            # direct-copy kernels before flash_bwd_dot_do_o; O and dO, which SDPA hands over as
            # (B, T, H, d) views), D (fp32, T rounded up to 128) and the fp32 dQ accumulator
            # (T to 128, d to 32; pytorch_flash::mha_bwd frees it); efficient: one bf16 copy,
            # D and its fp32 gQ workspace (8 KB more, not counted); the log-sum-exp of the forward
            # is alive throughout (4 B a row)
            tr, dr = _ceil_div(t, 128) * 128, _ceil_div(d, 32) * 32
            if backend == "flash":
                peak = 4 * bh * t + 4 * bh * tr + 4 * bh * tr * dr + 2 * bh * nd * e
            else:
                peak = 4 * bh * t + 4 * bh * t + 4 * bh * nd + bh * nd * e
    else:
        up = 4 if dtype in ("bf16", "fp16") else e
        for name in ("q.float()", "k.float()", "v.float()"):
            kernels.append((name, elementwise(bh * nd * (e + up), gpu, op="to_fp32")))
        kernels.append(("q * sqrt(scale)", elementwise(2 * bh * nd * up, gpu, op="add")))
        kernels.append(("k^T * sqrt(scale)", elementwise(2 * bh * nd * up, gpu, op="add")))
        kernels.append(("S = Q K^T (fp32 GEMM)", gemm(t, t, d, "fp32", gpu, layout="NT", batch=bh).seconds))
        if causal:
            kernels.append(("causal mask: ones.tril()", elementwise(2 * tt, gpu, op="copy")))
            kernels.append(("causal mask to -inf/0 fp32", elementwise(5 * tt, gpu, op="where")))
            kernels.append(("S += mask", elementwise(bh * tt * 8 + tt * 4, gpu, op="add")))
        for name, op, per in MATH_SOFTMAX_KERNELS:
            kernels.append((name, elementwise(bh * tt * per, gpu, op=op)))
        kernels.append(("O = P V (fp32 GEMM)", gemm(t, d, t, "fp32", gpu, batch=bh).seconds))
        kernels.append(("O.to(dtype)", elementwise(bh * nd * (4 + e), gpu, op="to_bf16")))
        hbm = (bh * nd * (3 * (e + up) + 4 * up + 4 + e) + bh * tt * (4 + sum(x for _, _, x in MATH_SOFTMAX_KERNELS) + 4)
               + (bh * tt * 8 + tt * 4 if causal else 0))
        peak = bh * (MATH_PEAK_BYTES_PER_SCORE * tt + 4 * up * nd) + (4 * tt if causal else 0)
        if backward:
            # autograd of the composite: dP = dO V^T, dV = P^T dO (GEMMs), softmax backward
            # (read P, dP, write dS: 12 B per score), dQ = dS K, dK = dS^T Q; S, P kept for it
            kernels.append(("dP = dO V^T", gemm(t, t, d, "fp32", gpu, layout="NT", batch=bh).seconds))
            kernels.append(("dV = P^T dO", gemm(t, d, t, "fp32", gpu, layout="TN", batch=bh).seconds))
            kernels.append(("softmax backward", elementwise(bh * tt * 12, gpu, op="softmax")))
            kernels.append(("dQ = dS K", gemm(t, d, t, "fp32", gpu, batch=bh).seconds))
            kernels.append(("dK = dS^T Q", gemm(t, d, t, "fp32", gpu, layout="TN", batch=bh).seconds))
            hbm += bh * tt * (4 + 4 + 12 + 8)
            peak += bh * tt * 8                       # dP and dS alive with P
    seconds = sum(s for _, s in kernels)
    if backend == "math":
        seconds = max(seconds, host)                  # the composite's ~10 ATen calls on the host
    if backward:                                      # forward + backward on the host (call 8)
        key = "math_fwd_bwd" if backend == "math" else "fused_fwd_bwd"
        seconds = max(seconds, floors.get(key, 0.0))
    return AttentionEstimate(backend, b, h, t, d, dtype, causal, backward, seconds, int(peak), float(hbm),
                             tuple(kernels))


__all__ += ["BACKENDS", "AttentionEstimate", "attention"]
