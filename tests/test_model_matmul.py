"""The mystery-plot model: tile, wave and alignment effects under a per-wave roofline."""
import pytest
from hypothesis import given, settings, strategies as st

from simgpu.hardware import A100, H200
from simgpu.model.matmul import matmul_throughput, mystery_curve


def test_4096_on_h200():
    """1024 tiles of 128 x 128, 2 blocks/SM (256 threads x 128 registers is register-limited),
    waves of 264: 3.879 waves, 4 executed; nothing padded, rows aligned."""
    r = matmul_throughput(H200, 4096)
    assert (r.n_tiles, r.blocks_per_sm, r.waves_executed) == (1024, 2, 4)
    assert r.waves == 1024 / 264 and r.wave_efficiency == 1024 / 1056
    assert r.tile_efficiency == 1.0 and r.sector_efficiency == 1.0 and r.vectorizable
    assert r.flops == 2 * 4096**3


def test_tile_quantisation_at_2049():
    """2049 needs 17 x 17 tiles and 65 K-steps of 32: efficiency 2049^3 / (17^2 x 128^2 x 2080)."""
    r = matmul_throughput(H200, 2049)
    assert r.n_tiles == 289
    assert r.tile_efficiency == pytest.approx(2049**3 / (289 * 128 * 128 * 65 * 32))


def test_wave_cliff_between_2048_and_2176():
    """2048 -> 256 tiles fit one wave of 264; 2176 -> 289 tiles need two: throughput drops."""
    a, b = matmul_throughput(H200, 2048), matmul_throughput(H200, 2176)
    assert (a.waves_executed, b.waves_executed) == (1, 2)
    assert b.tflops < 0.75 * a.tflops


def test_alignment_cliff():
    """4097 fp16 rows are 8194 B: most 64-byte tile rows straddle 3 sectors; 4112 rows are 8224 B,
    a multiple of 32, so the same tile grid has sector efficiency 1 and runs faster."""
    a, b = matmul_throughput(H200, 4097), matmul_throughput(H200, 4112)
    assert a.n_tiles == b.n_tiles
    assert a.sector_efficiency < 0.8 and b.sector_efficiency == 1.0
    assert not a.vectorizable and b.vectorizable
    assert a.tflops < b.tflops


def test_compute_bound_throughput_is_peak_times_tile_and_wave_efficiency():
    """When every wave is compute-bound (A100, N = 8192), TFLOP/s = peak x tile eff x wave eff."""
    r = matmul_throughput(A100, 8192)
    assert r.bound == "compute"
    assert r.flops / r.time_s == pytest.approx(A100.tensor_fp16_flops * r.tile_efficiency * r.wave_efficiency)


def test_rectangular_and_curve():
    r = matmul_throughput(H200, (256, 512, 1024))
    assert (r.m, r.n, r.k, r.n_tiles) == (256, 512, 1024, 8)
    c = mystery_curve(H200, [1024, 2048, 3000])
    assert list(c.sizes) == [1024, 2048, 3000] and c.peak_tflops == pytest.approx(989.4)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(16, 5000))
def test_never_above_any_roof(n):
    """No size beats the tensor peak or its own compute time, and the factors lie in (0, 1]."""
    r = matmul_throughput(H200, n)
    assert r.time_s >= r.compute_time_s * (1 - 1e-12) >= r.flops / r.peak_flops * (1 - 1e-12)
    assert r.tflops <= 989.4
    for f in (r.tile_efficiency, r.wave_efficiency, r.sector_efficiency):
        assert 0 < f <= 1
    assert r.bytes_dram <= r.bytes_l2 + 1e-9
