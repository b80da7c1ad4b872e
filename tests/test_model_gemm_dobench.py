"""simgpu.model.gemm(timing="dobench") and kernel=: the model's behaviour (floors, cold operands,
the power-limited clock, the fallbacks' streaming rate, the small-M families, kernel-name parsing),
never measured numbers."""
import importlib
import math

import pytest

from simgpu.hardware import H200
from simgpu.hardware.presets import LIBRARY_PARAMS
from simgpu.model import gemm
from simgpu.model.gemm import kernel_launch, parse_kernel_name, small_m_regime

G = importlib.import_module("simgpu.model.gemm")     # the module (simgpu.model.gemm is also the function)
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
        P["tensor_flops"]["bf16"] * G._sm90_tile_rate(*c.tile[:2])[0] * H200.clock_hz / P["sustained_sm_clock_hz"]
        / H200.sm_count)


def test_short_kernels_run_at_the_maximum_clock_long_ones_near_the_power_limited_one():
    short = gemm(2048, 2048, 2048, timing="dobench")
    assert short.chosen.compute_s == pytest.approx(_max_clock_compute(short))
    long = gemm(16384, 16384, 16384, timing="dobench")
    ratio = long.chosen.compute_s / _max_clock_compute(long)
    limit = H200.clock_hz / (D["power_limited_sm_clock_hz"] * G._sm90_tile_rate(*long.chosen.tile[:2])[1])
    assert 1.0 < ratio < limit and ratio > 0.97 * limit     # the flush's headroom shrinks as t grows
    mid = gemm(4096, 4096, 8192, timing="dobench")
    assert 1.0 <= mid.chosen.compute_s / _max_clock_compute(mid) < ratio


def test_unaligned_beyond_the_small_m_regime_streams_at_the_fallback_rate():
    r = gemm(96, 8191, 6144, timing="dobench")
    assert not small_m_regime(96, 8191, 6144, "bf16")
    assert r.chosen.family == "sm75" and r.why["bound"] == "hbm"
    nbytes = (96 * 6144 + 6144 * 8191 + 96 * 8191) * 2
    bw = D["fallback_stream_bytes_per_s"][("sm75", "bf16")]
    assert r.chosen.hbm_s == pytest.approx(D["stream_start_s"] + nbytes / bw)
    # the same shape aligned takes a Hopper kernel and streams several times faster
    a = gemm(96, 8192, 6144, timing="dobench")
    assert a.chosen.family == "sm90" and r.seconds > 2.5 * a.seconds


def test_loop_model_is_unchanged_by_the_dobench_catalogue():
    assert gemm(4097, 4097, 4097).kernel == "sm75_align1_bf16_256x128"
    assert all(c.split_k == 1 for c in gemm(96, 4099, 4096).candidates)   # no fallback split-K in "loop"
    assert any(c.split_k > 1 for c in gemm(96, 4099, 4096, timing="dobench").candidates)
    assert "small_m" not in gemm(16, 8191, 4096).kernel                    # no small-M family in "loop"


# --- the small-M / unaligned families (call 3, validation/gemm_small_m) ---------------------------

@pytest.mark.parametrize("m,n,k,dt,want", [
    (16, 8191, 4096, "bf16", True), (64, 4100, 4096, "fp16", True), (8192, 3, 8192, "bf16", True),
    (1, 8191, 4096, "bf16", True),            # gemvx over rows that are not 16-byte aligned
    (65, 8191, 4096, "bf16", False),          # beyond M, N <= 64
    (16, 8192, 4096, "bf16", False),          # aligned: the Hopper kernels
    (16, 8191, 4096, "fp32", True), (16, 8192, 4096, "fp32", True),   # fp32: M <= 64, any alignment
    (4096, 3, 4096, "fp32", False),           # fp32: the x @ W form only
    (16, 8191, 4096, "tf32", False),
    (1, 8192, 8192, "bf16", False), (8192, 1, 8192, "bf16", False),   # GEMV with aligned matrix rows
])
def test_small_m_regime(m, n, k, dt, want):
    assert small_m_regime(m, n, k, dt) is want


def _families(m, n, k, dt="bf16"):
    return {c.kernel.split("_")[0] + ("_" + c.family if c.family.startswith("sm") else "")
            for c in gemm(m, n, k, dt, timing="dobench").candidates}


def test_small_m_family_choice_follows_the_documented_rule():
    assert _families(1, 8191, 4096) == {"gemvx"}                       # M = 1
    assert _families(8, 8191, 4096) == {"gemmSN", "sm75_sm75"}           # odd N, 2 <= M <= 16
    assert _families(32, 8191, 4096) == {"sm75_sm75"}                    # odd N, M > 16: align1 only
    assert _families(8, 8190, 4096) == {"sm80_sm80"}                     # 4-byte rows: align2, no gemmSN
    assert _families(8, 8188, 4096, "fp16") == {"sm80_sm80"}             # 8-byte rows: align2 too
    assert _families(8192, 3, 8192) == {"sm75_sm75"}                     # small N (W @ X): no gemmSN


def test_small_m_cost_is_the_family_floor_plus_one_pass_over_the_operands():
    m, n, k = 32, 8191, 4096
    r = gemm(m, n, k, "fp16", timing="dobench")
    t0, bw = D["small_m"][("sm75", "fp16")]
    nbytes = (m * k + k * n + m * n) * 2
    assert r.seconds == pytest.approx(t0 + nbytes / bw)
    assert r.why["bound"] == "hbm" and r.chosen.floor_s == t0


def test_small_m_time_grows_with_k_and_n_and_alignment_helps():
    for dt in ("bf16", "fp16"):
        ks = [gemm(16, 8191, k, dt, timing="dobench").seconds for k in (768, 2048, 4096, 8192)]
        assert ks == sorted(ks) and ks[0] < ks[-1]
        ns = [gemm(24, n, 4096, dt, timing="dobench").seconds for n in (1001, 2047, 4097, 8191, 32001)]
        assert ns == sorted(ns)
        a1, a2 = gemm(32, 8191, 4096, dt, timing="dobench"), gemm(32, 8190, 4096, dt, timing="dobench")
        al = gemm(32, 8192, 4096, dt, timing="dobench")
        assert al.seconds < a2.seconds < a1.seconds


def test_gemmsn_rate_grows_with_its_ctas_up_to_the_cap():
    t0, cap, per_cta = D["small_m"][("gemmSN", "bf16")]
    per_byte = []
    for n in (2047, 8191, 32001):
        c = next(c for c in gemm(4, n, 8192, timing="dobench").candidates if c.kernel.startswith("gemmSN"))
        nbytes = (4 * 8192 + 8192 * n + 4 * n) * 2
        per_byte.append(c.hbm_s / nbytes)
        assert c.hbm_s == pytest.approx(nbytes / min(cap, per_cta * -(-n // 64)))
    assert per_byte[0] > per_byte[1] >= per_byte[2]


def test_small_m_kernel_table_picks_the_named_family():
    sn = gemm(4, 32001, 4096, timing="dobench", kernel="void gemmSN_NN_kernel<float, 256, 4, 2, 8, 4, 4, false>(x)")
    assert [c.kernel for c in sn.candidates] == ["gemmSN_bf16"]
    a2 = gemm(16, 30522, 768, timing="dobench",
              kernel=("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_256x64_32x4_nn_align2>(x)", [8, 15, 1]))
    assert [c.family for c in a2.candidates] == ["sm80"]


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


def test_named_cluster_multicasts_the_shared_tile_in_the_l2_term():
    tile = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"          # BM 128, BN 256, pairs along M
    on = gemm(4096, 4096, 4096, timing="dobench", kernel=(tile, [2, 66, 1])).chosen
    assert on.cluster == (2, 1)
    out = 4096 * 4096 * 2
    l2 = P["l2_read_bytes_per_s"]
    # every CTA reads its A panel (128 rows); the B panel (256 columns) once per pair
    assert on.l2_s * l2 - out == pytest.approx(on.ctas * (128 + 256 / 2) * 4096 * 2)
    # the other orientation of the same tile shares the A panel instead
    v = gemm(4096, 4096, 4096, timing="dobench", kernel=("nvjet_sm90_tst_256x128_64x4_2x1_v_bz_coopA_NNT", [2, 66, 1])).chosen
    assert v.cluster == (1, 2) and v.l2_s * l2 - out == pytest.approx(v.ctas * (128 / 2 + 256) * 4096 * 2)


def test_multicast_switch_off_gives_the_model_without_clusters(monkeypatch):
    import importlib
    g = importlib.import_module("simgpu.model.gemm")
    tile = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
    on = gemm(4096, 4096, 4096, timing="dobench", kernel=tile).chosen
    monkeypatch.setattr(g, "_CLUSTER_MULTICAST", False)
    off = gemm(4096, 4096, 4096, timing="dobench", kernel=tile).chosen
    assert off.cluster == (1, 1) and off.rank_s is None
    assert on.l2_s < off.l2_s and on.seconds <= off.seconds


def test_tiles_are_padded_to_the_cluster_and_waves_counted_over_the_persistent_grid():
    # 1792 = 14 x 128 = 7 x 256: a 1x4 cluster along M pads 14 tile rows to 16 -> 16 x 7 = 112 CTAs
    r = gemm(1792, 1792, 1792, timing="dobench", kernel=("nvjet_sm90_tst_256x128_64x4_1x4_h_bz_coopA_NNT", [4, 28, 1]))
    assert r.chosen.cluster == (4, 1) and r.chosen.ctas == 112 and r.chosen.waves == 1
    # 2560: 20 x 10 tiles, padded to 20 x 12 by the 2x4 cluster, over the 120 CTAs of fifteen
    # clusters: two waves (over 132 slots 240 would need two as well; 121..132 would not)
    r = gemm(2560, 2560, 2560, timing="dobench", kernel=("nvjet_sm90_tst_256x128_64x4_4x2_h_bz_coopA_NNT", [8, 15, 1]))
    assert r.chosen.cluster == (2, 4) and r.chosen.ctas == 240 and r.chosen.waves == 2
    r = gemm(128 * 10, 256 * 12, 4096, timing="dobench", kernel=("nvjet_sm90_tst_256x128_64x4_4x2_h_bz_coopA_NNT", [8, 15, 1]))
    assert r.chosen.ctas == 120 and r.chosen.waves == 1
    r = gemm(128 * 12, 256 * 12, 4096, timing="dobench", kernel=("nvjet_sm90_tst_256x128_64x4_4x2_h_bz_coopA_NNT", [8, 15, 1]))
    assert r.chosen.ctas == 144 and r.chosen.waves == 2
    # 133 tiles over 132 SMs (2-CTA clusters: 66 slots of 2) need a second wave; 132 do not
    one = gemm(128 * 12, 256 * 11, 4096, timing="dobench", kernel="nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT")
    assert one.chosen.ctas == 132 and one.chosen.waves == 1
    t_tile = one.chosen.compute_s / one.chosen.waves
    two = gemm(128 * 14, 256 * 10, 4096, timing="dobench", kernel="nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT")
    assert two.chosen.ctas == 140 and two.chosen.waves == 2
    assert two.chosen.compute_s > 1.5 * t_tile


def test_kernel_launch_reads_cluster_and_grid():
    assert kernel_launch("nvjet_sm90_tst_192x192_64x3_2x1_v_bz_coopB_NNN", [2, 66, 1]) == ((1, 2), 132)
    assert kernel_launch("nvjet_sm90_tst_128x160_64x5_2x1_v_bz_NNT") == ((1, 2), None)
    assert kernel_launch("cutlass_75_tensorop_bf16_s1688gemm_bf16_64x64_nn_align1", [8, 99, 2]) == (None, None)


def test_heuristic_ranks_without_the_cluster_and_runs_the_faster_orientation(monkeypatch):
    r = gemm(4096, 4096, 4096, timing="dobench")
    sm90 = [c for c in r.candidates if c.family == "sm90"]
    # (the per-tile rates time a kernel, not rank it: without them the cluster only saves time)
    bare = [c for c in _without_tile_rates(monkeypatch, 4096, 4096, 4096, timing="dobench").candidates
            if c.family == "sm90"]
    assert all(c.rank_s is not None and c.rank_s >= c.seconds for c in bare)
    assert r.chosen is min(sm90, key=lambda c: (c.rank_s, c.ctas))
    # 1664 / 160 = 10.4 -> 11 tile rows: a pair along M would pad to 12, so the pair runs along N
    c = gemm(1664, 6144, 4096, timing="dobench", kernel="nvjet_sm90_tst_256x160_64x3_1x1_h_bz_NNN")
    h = [x for x in gemm(1664, 6144, 4096, timing="dobench").candidates if x.tile == (160, 256, 64) and x.split_k == 1][0]
    assert h.cluster == (1, 2) and h.ctas == c.chosen.ctas == 11 * 24


def test_fp32_small_m_families_and_gemmsn_slices():
    fams = lambda m: {c.kernel for c in gemm(m, 32000, 4096, "fp32", timing="dobench").candidates}   # noqa: E731
    assert fams(1) == {"gemvx_fp32"}
    assert fams(4) == {"simt_sgemm_fp32_small_m", "gemmSN_fp32", "sgemm_largek_fp32"}
    assert fams(12) == {"simt_sgemm_fp32_small_m", "gemmSN_fp32"}
    assert fams(32) == {"simt_sgemm_fp32_small_m"}
    t0, cap, per_cta = D["small_m"][("gemmSN", "fp32")]
    for m in (4, 8, 16):                     # ceil(M / 4) slices along M, each reading all of B
        c = next(c for c in gemm(m, 32000, 4096, "fp32", timing="dobench").candidates if c.kernel == "gemmSN_fp32")
        ys = -(-m // 4)
        assert c.ctas == 500 * ys
        assert c.hbm_s == pytest.approx((m * 4096 + ys * 4096 * 32000 + m * 32000) * 4 / min(cap, per_cta * 500 * ys))
    # the SIMT family's FFMA time is a floor under its streaming time
    c = gemm(64, 50000, 8192, "fp32", timing="dobench").chosen
    assert c.compute_s > 0 and c.seconds == pytest.approx(c.floor_s + max(c.compute_s, c.hbm_s))


def _without_tile_rates(monkeypatch, *args, **kw):
    with monkeypatch.context() as mp:
        mp.setattr(G, "_SM90_TILE_RATES", {})
        return gemm(*args, **kw)


FIVE_STAGE = ("nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_NNT", [2, 66, 1])     # BM 128, BN 192


def _with_rates(monkeypatch, rates, *args, lag="keep", **kw):
    with monkeypatch.context() as mp:
        mp.setattr(G, "_SM90_TILE_RATES", rates)
        if lag != "keep":
            mp.setattr(G, "_POWER_LAG_S", lag)
        return gemm(*args, **kw)


@pytest.mark.parametrize("n", [1024, 2048, 4096, 8192, 16384])
def test_a_tile_runs_at_its_per_clock_rate_and_the_share_of_its_clock_penalty_its_duration_shows(monkeypatch, n):
    per_clock, clock = G._SM90_TILE_RATES[(128, 192)]
    assert clock < 0.9 and abs(per_clock - 1) < 0.02     # the measured picture: same work per clock, lower clock
    on = gemm(n, n, n, timing="dobench", kernel=FIVE_STAGE).chosen
    off = _without_tile_rates(monkeypatch, n, n, n, timing="dobench", kernel=FIVE_STAGE).chosen
    assert (on.tile, on.waves, on.l2_s, on.hbm_s) == (off.tile, off.waves, off.l2_s, off.hbm_s)
    # the per-clock factor alone: the reference kernel's power equation, the tile's work per clock
    ref = _with_rates(monkeypatch, {(128, 192): (per_clock, 1.0)}, n, n, n, timing="dobench", kernel=FIVE_STAGE).chosen
    share = G._power_lag(ref.compute_s)
    assert on.compute_s == pytest.approx(ref.compute_s / (1.0 - (1.0 - clock) * share), rel=1e-12)
    fp16 = ("nvjet_sm90_hsh_192x128_64x5_1x2_h_bz_coopB_NNT", [2, 66, 1])
    assert gemm(n, n, n, "fp16", timing="dobench", kernel=fp16).seconds == \
        _without_tile_rates(monkeypatch, n, n, n, "fp16", timing="dobench", kernel=fp16).seconds   # bf16 only
    assert gemm(n, n, n).seconds == _without_tile_rates(monkeypatch, n, n, n).seconds     # loop model unchanged


def test_the_clock_penalty_grows_with_the_kernels_duration():
    lag, d_col = G._POWER_LAG_S, G._SM90_TILE_RATES_KERNEL_S
    assert G._power_lag(0.0) == 0.0 and G._power_lag(d_col) == pytest.approx(1.0)
    shares = [G._power_lag(d) for d in (10e-6, 70e-6, 300e-6, 1e-3, d_col, 10e-3, 1.0)]
    assert shares == sorted(shares) and len(set(shares)) == len(shares)
    assert shares[1] < 0.1                                    # a 70 us kernel: almost none of it
    w = 1.0 - (1.0 - math.exp(-d_col / lag)) / (d_col / lag)
    assert shares[-1] == pytest.approx(1.0 / w, rel=1e-3)   # a very long one: the lag's asymptote
    # a short 5-stage kernel runs near its per-clock rate, a long one near its measured clock
    d = [gemm(n, n, n, timing="dobench", kernel=FIVE_STAGE).chosen.compute_s for n in (1024, 16384)]
    assert G._power_lag(d[0]) < 0.1 < 0.9 < G._power_lag(d[1])


def test_without_the_lag_a_tiles_clock_scales_the_power_limited_clock(monkeypatch):
    # _POWER_LAG_S = None: the model before (the tile's clock scales c1 in the power equation)
    per_clock, clock = G._SM90_TILE_RATES[(128, 192)]
    for n, power_limited in ((1024, False), (16384, True)):
        on = _with_rates(monkeypatch, G._SM90_TILE_RATES, n, n, n, lag=None, timing="dobench", kernel=FIVE_STAGE).chosen
        off = _without_tile_rates(monkeypatch, n, n, n, timing="dobench", kernel=FIVE_STAGE).chosen
        if power_limited:
            assert off.compute_s / on.compute_s == pytest.approx(per_clock * clock, rel=0.01)
        else:
            assert off.compute_s / on.compute_s == pytest.approx(per_clock, rel=1e-9)


def test_a_tile_clocked_above_the_reference_never_runs_above_the_maximum_clock(monkeypatch):
    for n in (1024, 16384):
        cool = _with_rates(monkeypatch, {(128, 192): (1.0, 1.05)}, n, n, n, timing="dobench", kernel=FIVE_STAGE).chosen
        ref = _with_rates(monkeypatch, {(128, 192): (1.0, 1.0)}, n, n, n, timing="dobench", kernel=FIVE_STAGE).chosen
        at_max = ref.waves * 2.0 * 128 * 192 * n / (P["tensor_flops"]["bf16"] * H200.clock_hz
                                                    / P["sustained_sm_clock_hz"] / H200.sm_count)
        assert at_max <= cool.compute_s <= ref.compute_s      # a cooler tile: faster, up to the maximum clock
        assert (cool.compute_s == pytest.approx(at_max, rel=1e-12)) == (n == 1024)   # short: already at the maximum
