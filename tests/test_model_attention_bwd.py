"""The efficient (xFormers/CUTLASS) backend's backward kernel: the step model of
fmha_cutlassB (simgpu.model.attention._mem_eff_bwd_time).  These pin the model's structure and
behaviour, not measured numbers."""
import pytest

from simgpu.hardware import get_gpu
from simgpu.model.attention import (MEM_EFF_BWD_FP32_OPS, _mem_eff_bwd_config, _mem_eff_bwd_time,
                                    attention)
from simgpu.model.gemm import library_params

GPU = get_gpu("H200")
P = library_params(GPU)


def bwd(b, h, t, d, causal=False, backend="efficient"):
    """Seconds of the backward's main kernel, as attention() lists it."""
    k = dict(attention(b, h, t, d, backend=backend, causal=causal, backward=True).kernels)
    return k[f"{backend} backward"]


def test_kernel_choice_and_launch_follow_the_source():
    c = _mem_eff_bwd_config(1, 16, 2048, 64, GPU)
    # 64 x 64 tiles, 4 warps; 162 registers x 128 threads -> 3 CTAs an SM; one key block a CTA
    assert (c["bi"], c["bj"], c["warps"], c["ctas_per_sm"], c["splits"]) == (64, 64, 4, 3, 32)
    assert c["in_rf"] and c["name"] == "fmha_cutlassB_aligned_64x64_k64_seqaligned_sm80"
    c = _mem_eff_bwd_config(2, 8, 2048, 128, GPU)
    assert (c["bi"], c["bj"], c["warps"], c["ctas_per_sm"], c["splits"]) == (128, 128, 16, 1, 16)
    # enough heads and a short sequence: no key splitting
    assert _mem_eff_bwd_config(4, 64, 128, 64, GPU)["splits"] == 1
    # dK / dV not in registers (d > 128): splits capped at 200 / (B H)
    c = _mem_eff_bwd_config(1, 16, 4096, 256, GPU)
    assert not c["in_rf"] and c["splits"] == 200 // 16
    assert not _mem_eff_bwd_config(1, 16, 2000, 64, GPU)["name"].endswith("seqaligned_sm80")


def test_step_is_the_sum_of_its_phases():
    s, cfg, why = _mem_eff_bwd_time(GPU, P, 1, 16, 2048, 64, "bf16", False)
    assert why["step_s"] == pytest.approx(sum(why[k] for k in ("mma_s", "exp_s", "fp32_s", "smem_s", "gq_s")))
    sms, clk = GPU.sm_count, GPU.clock_hz
    # five 64 x 64 x 64 GEMMs at one SM's share of the sm80 mma rate
    assert why["mma_s"] == pytest.approx(5 * 2 * 64**3 / (P["sm80_align2_flops"]["bf16"] / sms))
    # 29 passes over 64 x 64 bf16 tiles through shared memory: 8 writes, 2 warp reads of each of
    # the 10 GEMM operands, P read back for dS
    assert why["smem_s"] == pytest.approx(29 * 64 * 64 * 2 / (GPU.l1_bytes_per_cycle * clk))
    assert why["fp32_s"] == pytest.approx(MEM_EFF_BWD_FP32_OPS * 4096 / (GPU.fp32_flops / 2 / sms))
    # gQ: an fp32 64 x 64 tile loaded and stored through L2, plus two lock latencies
    lat = GPU.l2.hit_latency_cycles / clk
    tile = max(64 * 64 * 4 / (P["l2_read_bytes_per_s"] / sms), lat)
    assert why["gq_s"] == pytest.approx(2 * tile + 2 * lat)
    # without key splits there is no lock
    assert _mem_eff_bwd_time(GPU, P, 4, 64, 128, 64, "bf16", False)[2]["gq_s"] == pytest.approx(2 * tile)
    # every CTA computes D for all T rows: its cost grows with T
    d4 = _mem_eff_bwd_time(GPU, P, 1, 16, 4096, 64, "bf16", False)[2]["delta_s"]
    assert d4 == pytest.approx(2 * why["delta_s"])


def test_efficient_backward_slower_than_flash():
    for t in (2048, 4096, 8192):
        e, f = bwd(1, 16, t, 64), bwd(1, 16, t, 64, backend="flash")
        assert e > 2 * f
    # and its backward dominates its own forward + backward
    a = attention(1, 16, 4096, 64, backend="efficient", backward=True)
    k = dict(a.kernels)
    assert k["efficient backward"] > 2 * k["efficient forward"]
    assert k["efficient backward"] < a.seconds


def test_scales_as_t_squared():
    r = bwd(1, 16, 8192, 64) / bwd(1, 16, 4096, 64)
    assert 3.6 < r < 4.4
    # B and H multiply the work once the SMs are full
    assert bwd(2, 16, 4096, 64) / bwd(1, 16, 4096, 64) == pytest.approx(2, rel=0.1)


def test_causal_skips_masked_pairs():
    for t in (4096, 8192):
        n, c = bwd(1, 16, t, 64), bwd(1, 16, t, 64, causal=True)
        # key block j does nq - j query blocks: about half the steps, but D is computed whole
        # and the long CTAs of the first key blocks set the tail
        assert 0.5 * n < c < 0.8 * n


def test_head_dim_128_dearer_than_64():
    assert bwd(2, 8, 2048, 128) > 1.2 * bwd(2, 8, 2048, 64)
    assert bwd(1, 16, 4096, 256) > bwd(1, 16, 4096, 128)


def test_kernels_listed_and_peak_memory_unchanged():
    b, h, t, d = 1, 16, 2048, 64
    a = attention(b, h, t, d, backend="efficient", backward=True)
    names = [n for n, _ in a.kernels]
    assert names == ["efficient forward", "dO made contiguous", "gQ workspace zeroed",
                     "efficient backward", "dq, dk, dv to q's layout (3 copies)"]
    assert a.seconds == pytest.approx(sum(s for _, s in a.kernels))
    # no separate D kernel: the CUTLASS backward computes D itself (kKernelComputesDelta)
    assert not any("rowsum" in n for n in names)
    nd, tr = b * h * t * d, b * h * t
    assert a.peak_bytes == 4 * tr * 2 + 4 * nd + nd * 2
    # fp16 runs the same kernels
    assert attention(b, h, t, d, dtype="fp16", backend="efficient", backward=True).seconds > 0


def test_forward_backward_costs_at_least_the_measured_host_step():
    from simgpu.model.attention import SDPA_HOST_FLOOR_S
    floors = SDPA_HOST_FLOOR_S["H200"]
    for backend, key in (("flash", "fused_fwd_bwd"), ("efficient", "fused_fwd_bwd"), ("math", "math_fwd_bwd")):
        tiny = attention(1, 1, 64, 64, backend=backend, backward=True)
        assert tiny.seconds == pytest.approx(floors[key])          # host-bound: the floor
        big = attention(1, 16, 4096, 64, backend=backend, backward=True)
        assert big.seconds == pytest.approx(sum(s for _, s in big.kernels))   # GPU-bound: the kernels
        assert big.seconds > floors[key]
    # the forward alone keeps the forward floor
    assert attention(1, 1, 64, 64, backend="flash").seconds == pytest.approx(floors["fused"])
