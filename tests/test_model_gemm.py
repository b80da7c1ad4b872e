"""simgpu.model.gemm and attention(): the model's behaviour (kernel choice, waves, floors,
alignment, memory formulas), never the measured numbers."""
import pytest

from simgpu.hardware import H200
from simgpu.hardware.presets import LIBRARY_PARAMS
from simgpu.model import alignment_bytes, attention, elementwise, gemm, quantize_fp8
from simgpu.model.gemm import _tile_candidate

P = LIBRARY_PARAMS["H200"]


def test_aligned_square_takes_a_hopper_kernel():
    r = gemm(4096, 4096, 4096)
    assert r.chosen.family == "sm90" and r.alignment_bytes == 16
    assert r.why["bound"] in ("compute", "l2")
    assert 0 < r.tflops < P["tensor_flops"]["bf16"] / 1e12


@pytest.mark.parametrize("n", [4081, 4089, 4095, 4097, 50257])
def test_odd_n_falls_back_to_align1(n):
    r = gemm(4096, n, 4096)
    assert r.alignment_bytes == 2
    assert r.kernel.startswith("sm75_align1")


@pytest.mark.parametrize("n,family", [(4098, "sm80"), (4100, "sm80"), (4104, "sm90")])
def test_partial_alignment_picks_the_matching_family(n, family):
    assert gemm(n, n, n).chosen.family == family


def test_alignment_cliff_is_deep_and_padding_recovers_it():
    odd, aligned = gemm(4097, 4097, 4097), gemm(4096, 4096, 4096)
    assert odd.tflops < 0.4 * aligned.tflops
    slow, padded = gemm(8192, 50257, 768), gemm(8192, 50304, 768)
    assert slow.seconds / padded.seconds > 3          # nanoGPT's vocab padding
    # fp32 has no 16-byte cliff of that kind: SIMT either way
    assert gemm(8192, 50257, 768, "fp32").seconds / gemm(8192, 50304, 768, "fp32").seconds < 1.2


def test_alignment_bytes_follows_every_pitch():
    assert alignment_bytes(8, 8, 8, "bf16") == 16
    assert alignment_bytes(8, 8, 12, "bf16") == 8            # A's pitch K = 24 B
    assert alignment_bytes(8, 8, 8, "bf16", layout="TN") == 16
    assert alignment_bytes(9, 8, 8, "bf16", layout="TN") == 2  # A stored K x M: pitch M = 18 B
    assert alignment_bytes(8, 9, 8, "fp32") == 4


def test_waves_partial_wave_costs_a_whole_tile():
    tile = (128, 128, 64)
    rate = P["tensor_flops"]["bf16"]
    one = _tile_candidate(H200, P, "sm90", "t", 128 * 12, 128 * 11, 4096, 1, tile, 1, rate, 2, 2, False)
    two = _tile_candidate(H200, P, "sm90", "t", 128 * 19, 128 * 7, 4096, 1, tile, 1, rate, 2, 2, False)
    assert (one.ctas, one.waves) == (132, 1)
    assert (two.ctas, two.waves) == (133, 2)
    assert two.compute_s == pytest.approx(2 * one.compute_s)


def test_time_grows_with_k_and_the_host_floor_holds_small_calls():
    ts = [gemm(2048, 2048, k).seconds for k in (512, 1024, 2048, 4096, 8192)]
    assert ts == sorted(ts)
    assert gemm(64, 64, 64).seconds == pytest.approx(P["host_floor_s"])
    assert gemm(64, 64, 64).why["bound"] == "host floor"


def test_batch1_is_memory_bound_and_the_roofline_has_a_knee():
    r = gemm(1, 8192, 8192)
    assert r.why["bound"] == "hbm"
    assert r.seconds == pytest.approx(8192 * 8192 * 2 / P["gemv_bytes_per_s"], rel=0.2)
    t = {b: gemm(b, 8192, 8192).seconds for b in (1, 16, 64, 1024, 4096)}
    assert t[16] < 1.2 * t[1] and t[64] < 1.3 * t[1]        # flat: the weight read dominates
    assert t[4096] > 3 * t[1024] > 3 * t[1]                  # then linear in the batch


def test_split_k_when_the_tiles_cannot_fill_the_sms():
    r = gemm(128, 128, 65536)
    assert r.chosen.split_k > 1
    assert gemm(8192, 8192, 8192).chosen.split_k == 1


def test_precisions_order_and_fp8_with_a_naive_quantise_is_no_2x():
    t = {d: gemm(8192, 8192, 8192, d).seconds for d in ("fp32", "tf32", "bf16", "fp8_e4m3")}
    assert t["fp8_e4m3"] < t["bf16"] < t["tf32"] < t["fp32"]
    quantised = t["fp8_e4m3"] + 2 * quantize_fp8(8192, 8192)
    assert quantised > 0.75 * t["bf16"]                      # not the 2x the formats promise
    with pytest.raises(ValueError, match="16 bytes"):
        gemm(4097, 4097, 4097, "fp8_e4m3")


@pytest.mark.parametrize("bad", [dict(dtype="int4"), dict(layout="XX"), dict(m=0)])
def test_bad_arguments_are_clear_errors(bad):
    args = dict(m=64, n=64, k=64)
    args.update(bad)
    m, n, k = args.pop("m"), args.pop("n"), args.pop("k")
    with pytest.raises(ValueError):
        gemm(m, n, k, **args)


def test_gpus_without_measured_library_parameters_are_refused():
    with pytest.raises(ValueError, match="no measured library"):
        gemm(1024, 1024, 1024, gpu="A100")


def test_elementwise_is_faster_when_it_fits_in_l2():
    n = 56 * 2**20                                   # one kernel's bytes, under the 60 MiB L2
    assert elementwise(n) < n / P["elementwise_bytes_per_s"]["copy"]
    assert elementwise(64 * n) > 64 * n / P["elementwise_bytes_per_s"]["copy"]
    assert elementwise(1) == P["elementwise_host_floor_s"]
    with pytest.raises(ValueError):
        elementwise(1e6, op="nope")


def test_attention_peak_memory_formulas():
    b, h, t, d = 1, 16, 4096, 64
    assert attention(b, h, t, d, backend="flash").peak_bytes == 4 * b * h * t
    assert attention(b, h, t, d, backend="efficient").peak_bytes == 0
    # backward: call 5's allocation trace (two bf16 contiguous copies, D, the fp32 dQ accumulator)
    nd, tr = b * h * t * d, b * h * t
    assert attention(b, h, t, d, backend="flash", backward=True).peak_bytes == 4 * tr * 2 + 4 * nd + 2 * nd * 2
    assert attention(b, h, t, d, backend="efficient", backward=True).peak_bytes == 4 * tr * 2 + 4 * nd + nd * 2
    assert attention(b, h, t, d, backend="math").peak_bytes == b * h * (9 * t * t + 16 * t * d)
    assert attention(b, h, t, d, backend="math", causal=True).peak_bytes == \
        b * h * (9 * t * t + 16 * t * d) + 4 * t * t


def test_flash_beats_math_and_scales_quadratically():
    f = [attention(1, 16, t, 64).seconds for t in (4096, 8192)]
    assert 3.5 < f[1] / f[0] < 4.5
    m = attention(1, 16, 8192, 64, backend="math")
    assert m.seconds > 5 * f[1]
    assert m.hbm_bytes > 10 * attention(1, 16, 8192, 64).hbm_bytes
    # causal skips the masked key tiles, but the CTAs of the last query tiles are the longest
    # and set the time: about 0.6 of non-causal with 64 query tiles a head, nothing saved with 8
    assert 0.5 * f[1] < attention(1, 16, 8192, 64, causal=True).seconds < 0.7 * f[1]
    # a small call costs at least the measured host time of one SDPA call (fused backends,
    # math)
    from simgpu.model.attention import SDPA_HOST_FLOOR_S
    fl = SDPA_HOST_FLOOR_S["H200"]
    assert attention(1, 1, 64, 64).seconds == pytest.approx(fl["fused"])
    assert attention(1, 1, 64, 64, causal=True, backend="efficient").seconds == pytest.approx(fl["fused"])
    assert attention(1, 1, 64, 64, backend="math").seconds == pytest.approx(fl["math"])
    fb = attention(1, 16, 4096, 64, backward=True)
    assert fb.seconds > 2 * f[0] and any("backward" in k for k, _ in fb.kernels)


def test_efficient_backend_serial_phases_through_shared_memory():
    """The CUTLASS (efficient) kernel: 64 x 64 steps whose mma, exp, FP32 and shared-memory
    times add up; FA2 (flash) overlaps them, so flash wins by about 2x at large T, and the
    efficient step is dearer than its mma alone by the shared-memory term."""
    from simgpu.hardware import get_gpu
    from simgpu.model.attention import MEM_EFF_TILE, _fa_time
    from simgpu.model.gemm import library_params
    gpu = get_gpu("H200")
    p = library_params(gpu)
    f = attention(1, 16, 8192, 64).seconds
    e = attention(1, 16, 8192, 64, backend="efficient").seconds
    assert 1.8 < e / f < 3.0
    args = (gpu, p, 1, 16, 8192, 64, "bf16", False, MEM_EFF_TILE, 2, 4, p["sm80_align2_flops"]["bf16"], 4)
    plain = _fa_time(*args)
    serial = _fa_time(*args, serial=True)
    with_smem = _fa_time(*args, serial=True, smem_bytes=96 * 1024)
    assert plain < serial < with_smem
    # 96 KB at 128 B a clock is 768 clocks a step; 8192 / 64 = 128 steps a CTA; 16 x 128 CTAs
    # on 132 SMs: the busiest SMs run 16 of them
    steps_per_sm = 16 * 128
    assert (with_smem - serial) == pytest.approx(steps_per_sm * 96 * 1024 / (128 * gpu.clock_hz), rel=1e-6)


def test_attention_rejects_bad_arguments():
    with pytest.raises(ValueError):
        attention(1, 1, 128, 64, backend="xformers")
    with pytest.raises(ValueError):
        attention(1, 1, 128, 64, dtype="fp32")


def test_makespan_processor_sharing():
    from simgpu.model.attention import _makespan
    assert _makespan([1.0] * 4, sms=4, per_sm=2) == pytest.approx(1.0)          # one CTA per SM: full rate
    assert _makespan([1.0] * 8, sms=4, per_sm=2) == pytest.approx(2.0)          # two share an SM
    assert _makespan([1.0] * 12, sms=4, per_sm=2) == pytest.approx(3.0)
    # a long job dispatched last finishes last: lengths matter, not just their sum
    assert _makespan([1.0, 1.0, 1.0, 4.0], sms=2, per_sm=1) == pytest.approx(5.0)
    assert _makespan([4.0, 1.0, 1.0, 1.0], sms=2, per_sm=1) == pytest.approx(4.0)


def test_sm_clock_scales_the_compute_term_only():
    p = LIBRARY_PARAMS["H200"]
    sustained = gemm(8192, 8192, 8192)
    assert gemm(8192, 8192, 8192, sm_clock_hz="sustained").seconds == sustained.seconds
    assert gemm(8192, 8192, 8192, sm_clock_hz=p["sustained_sm_clock_hz"]).seconds == pytest.approx(sustained.seconds)
    fast = gemm(8192, 8192, 8192, sm_clock_hz="max")
    assert fast.seconds < sustained.seconds
    # compute-bound at the max clock too: the ratio is the clock ratio, less the fixed floor
    assert fast.chosen.bound == "compute"
    ratio = H200.clock_hz / p["sustained_sm_clock_hz"]
    assert sustained.chosen.compute_s / ratio == pytest.approx(
        min(c.compute_s for c in fast.candidates if c.tile == sustained.chosen.tile and c.split_k == 1), rel=1e-9)
    # a lower clock is slower; L2 / HBM terms and the host floor do not move with the SM clock
    slow = gemm(8192, 8192, 8192, sm_clock_hz=1.2e9)
    assert slow.seconds > sustained.seconds
    assert slow.chosen.l2_s == pytest.approx(
        [c for c in sustained.candidates if c.kernel == slow.chosen.kernel][0].l2_s)
    tiny = gemm(64, 64, 64, sm_clock_hz="max")
    assert tiny.seconds == pytest.approx(gemm(64, 64, 64).seconds)     # host floor either way


@pytest.mark.parametrize("bad", ["boost", -1.0, 0])
def test_sm_clock_rejects_bad_values(bad):
    with pytest.raises(ValueError, match="sm_clock_hz"):
        gemm(1024, 1024, 1024, sm_clock_hz=bad)
