"""Roofline: attainable = min(peak, AI x bandwidth); roofs come from the GPU spec."""
import pytest
from hypothesis import given, strategies as st

from simgpu.hardware import A100, H200, V100
from simgpu.model import roofline as rl


def test_h200_ridge_points():
    """H200 FP32 peak 2 x 128 x 132 x 1.98 GHz = 66.908 TFLOP/s over 4.8 TB/s = 13.939 FLOP/B;
    fp16 tensor 989.4 TFLOP/s gives 206.125 FLOP/B."""
    assert rl.compute_roof(H200, "fp32") == 2 * 128 * 132 * 1.98e9
    assert rl.ridge_point(H200) == pytest.approx(13.939, abs=1e-3)
    assert rl.ridge_point(H200, "fp16_tensor") == pytest.approx(206.125)
    assert rl.ridge_point(H200, "fp16_tensor", "l2") == pytest.approx(989.4 / 8.71)   # measured L2 roof


def test_saxpy_is_memory_bound():
    """SAXPY moves 12 B per 2 FLOP: AI 1/6, attainable 0.8 TFLOP/s on 4.8 TB/s."""
    p = rl.roofline_point(H200, "saxpy", 2 * 2**20, 12 * 2**20)
    assert p.arithmetic_intensity == pytest.approx(1 / 6)
    assert p.attainable_flops == pytest.approx(0.8e12)
    assert p.bound == "memory"
    assert p.predicted_time_s == pytest.approx(12 * 2**20 / 4.8e12)


def test_big_fp16_matmul_is_compute_bound():
    """A 4096^3 fp16 matmul moving each operand once has AI 4096/3 = 1365 FLOP/B > 206."""
    ai = rl.matmul_intensity(4096, 4096, 4096, "fp16")
    assert ai == pytest.approx(4096 / 3)
    assert rl.attainable_flops(H200, ai, "fp16_tensor") == H200.tensor_fp16_flops


def test_measured_time_gives_fraction_of_roof():
    p = rl.roofline_point(H200, "k", 1e12, 1e9, "fp16_tensor", measured_time_s=2e-3)
    assert p.achieved_flops == 5e14
    assert p.fraction_of_roof == pytest.approx(5e14 / 989.4e12)


def test_missing_roofs_are_named():
    """V100 has no FP8 tensor cores; asking for that roof says so."""
    with pytest.raises(ValueError, match="no fp8_tensor peak"):
        rl.compute_roof(V100, "fp8_tensor")
    with pytest.raises(ValueError, match="unknown memory roof"):
        rl.memory_roof(A100, "l3")


@given(ai=st.floats(1e-3, 1e5))
def test_attainable_is_the_lower_of_slope_and_roof(ai):
    """attainable <= peak and <= AI x bandwidth, equal to one of them."""
    a = rl.attainable_flops(H200, ai, "fp16_tensor")
    assert a <= H200.tensor_fp16_flops and a <= ai * H200.dram_bandwidth * (1 + 1e-12)
    assert a in (H200.tensor_fp16_flops, ai * H200.dram_bandwidth)
