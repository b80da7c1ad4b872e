"""simgpu.model.gemm(timing="dobench") and kernel=: the model's behaviour (floors, cold operands,
the power-limited clock, the fallbacks' streaming rate, kernel-name parsing), never measured numbers."""
import pytest

from simgpu.hardware import H200
from simgpu.hardware.presets import LIBRARY_PARAMS
from simgpu.model import gemm
from simgpu.model.gemm import parse_kernel_name

P = LIBRARY_PARAMS["H200"]
D = P["dobench"]


def test_tiny_call_costs_the_do_bench_floor_not_the_host():
    r = gemm(64, 64, 64, timing="dobench")
    assert r.seconds == pytest.approx(D["floor_s"], rel=0.05)
    assert r.seconds < gemm(64, 64, 64).seconds            # the loop model's host floor is gone
    assert r.why["bound"] != "host floor"


def test_operands_come_from_hbm_even_when_they_fit_in_l2():
    warm, cold = gemm(1024, 1024, 1024), gemm(1024, 1024, 1024, timing="dobench")
    assert warm.chosen.hbm_s == 0.0 and cold.chosen.hbm_s > 0.0
    nbytes = 3 * 1024 * 1024 * 2
    start = D["stream_start_s"] * nbytes / H200.l2.size_bytes
    assert cold.chosen.hbm_s == pytest.approx(start + nbytes / D["stream_bytes_per_s"])


def test_gemv_streams_the_weight_at_the_cold_rate():
    r = gemm(1, 8192, 8192, timing="dobench")
    nbytes = (8192 + 8192 * 8192 + 8192) * 2
    assert r.why["bound"] == "hbm"
    assert r.seconds == pytest.approx(D["floor_s"] + D["stream_start_s"] + nbytes / D["stream_bytes_per_s"], rel=1e-6)


def _max_clock_compute(r):
    c = r.chosen
    return c.waves * 2.0 * c.tile[0] * c.tile[1] * (-(-r.k // c.tile[2]) * c.tile[2]) / (
        P["tensor_flops"]["bf16"] * H200.clock_hz / P["sustained_sm_clock_hz"] / H200.sm_count)


def test_short_kernels_run_at_the_maximum_clock_long_ones_near_the_power_limited_one():
    short = gemm(2048, 2048, 2048, timing="dobench")
    assert short.chosen.compute_s == pytest.approx(_max_clock_compute(short))
    long = gemm(16384, 16384, 16384, timing="dobench")
    ratio = long.chosen.compute_s / _max_clock_compute(long)
    limit = H200.clock_hz / D["power_limited_sm_clock_hz"]
    assert 1.0 < ratio < limit and ratio > 0.97 * limit     # the flush's headroom shrinks as t grows
    mid = gemm(4096, 4096, 8192, timing="dobench")
    assert 1.0 <= mid.chosen.compute_s / _max_clock_compute(mid) < ratio


def test_unaligned_small_m_streams_at_the_fallback_rate():
    r = gemm(16, 8191, 6144, timing="dobench")
    assert r.chosen.family == "sm75" and r.why["bound"] == "hbm"
    nbytes = (16 * 6144 + 6144 * 8191 + 16 * 8191) * 2
    bw = D["fallback_stream_bytes_per_s"][("sm75", "bf16")]
    assert r.chosen.hbm_s == pytest.approx(D["stream_start_s"] + nbytes / bw)
    # the same shape aligned takes a Hopper kernel and streams several times faster
    a = gemm(16, 8192, 6144, timing="dobench")
    assert a.chosen.family == "sm90" and r.seconds > 2.5 * a.seconds


def test_loop_model_is_unchanged_by_the_dobench_catalogue():
    assert gemm(4097, 4097, 4097).kernel == "sm75_align1_bf16_256x128"
    assert all(c.split_k == 1 for c in gemm(16, 4099, 4096).candidates)   # no fallback split-K in "loop"
    assert any(c.split_k > 1 for c in gemm(16, 4099, 4096, timing="dobench").candidates)


@pytest.mark.parametrize("name,grid,want", [
    ("nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_NNT", None, ("sm90", (128, 192, 64), 1)),
    ("nvjet_sm90_tst_64x8_64x16_2x1_v_bz_splitK_NNT", [2, 64, 1], ("sm90", (8, 64, 64), None)),
    ("void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_64x64_nn_align1>(x)", [8, 99, 2],
     ("sm75", (64, 64, 32), 2)),
    ("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_256x64_32x4_nn_align2>(x)", [8, 15, 1],
     ("sm80", (64, 256, 32), 1)),
    ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x64x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_"
     "kernel__5x_cublas", [1, 64, 8], ("simt", (64, 32, 8), 8)),
    ("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(x)", [8, 4, 16], ("simt", (32, 128, 8), 16)),
    ("void gemmSN_NN_kernel<float, 256, 4, 2, 8, 4, 4, false>(x)", None, ("gemv", (0, 0, 0), 1)),
])
def test_kernel_names_parse_in_the_models_orientation(name, grid, want):
    assert parse_kernel_name(name, grid) == want


def test_unknown_kernel_name_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown cuBLAS kernel name"):
        parse_kernel_name("ampere_h16816gemm_something")


def test_kernel_table_costs_the_named_kernel_only():
    r = gemm(4096, 4096, 4096, timing="dobench", kernel="nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT")
    assert r.chosen.tile == (128, 256, 64) and len(r.candidates) == 1
    s = gemm(64, 4096, 4096, timing="dobench", kernel=("nvjet_sm90_tst_64x32_64x16_1x2_h_bz_splitK_NNT", [2, 64, 1]))
    assert {c.split_k for c in s.candidates} == {1, 2, 3, 4, 6, 8}     # split count not in the name
    with pytest.raises(ValueError, match="does not run"):
        gemm(4097, 4097, 4097, timing="dobench", kernel="nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT")


def test_timing_arguments_are_checked():
    with pytest.raises(ValueError, match="timing must be one of"):
        gemm(64, 64, 64, timing="cold")
    with pytest.raises(ValueError, match="leave sm_clock_hz None"):
        gemm(64, 64, 64, timing="dobench", sm_clock_hz="max")
