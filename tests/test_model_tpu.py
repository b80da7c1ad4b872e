"""TPU specs as data, and many small (GPU) vs few big (TPU) matrix units."""
import pytest

from simgpu.hardware import H100, H200
from simgpu.hardware.spec import HardwareError
from simgpu.hardware.tpu import TPU_V4, TPU_V5E, TPU_V5P, get_tpu
from simgpu.model.tpu import compare, gpu_matrix_units, matmul_utilisation, tpu_matrix_units


def test_tpu_presets_rebuild_their_datasheet_peaks():
    """2 FLOP x MXUs x 128 x 128 x clock is within 1 % of each datasheet peak."""
    assert (TPU_V4.mxus, TPU_V5E.mxus, TPU_V5P.mxus) == (8, 4, 8)
    for t in (TPU_V4, TPU_V5E, TPU_V5P):
        assert t.mxu_bf16_flops == pytest.approx(t.peak_bf16_flops, rel=0.01)
    assert TPU_V4.mxu_bf16_flops == 2 * 8 * 128 * 128 * 1.05e9


def test_inconsistent_tpu_is_refused():
    with pytest.raises(HardwareError, match="datasheet"):
        TPU_V4.__class__(**{**TPU_V4.__dict__, "clock_hz": 2e9})
    assert get_tpu("TPU v5e") is TPU_V5E and get_tpu(None) is TPU_V5P


def test_many_small_vs_few_big():
    """H100: 132 SMs x 4 tensor cores = 528 units; TPU v5p: 2 TensorCores x 4 MXUs = 8."""
    g, t = gpu_matrix_units(H100), tpu_matrix_units(TPU_V5P)
    assert (g.units, g.unit_tile, t.units, t.unit_tile) == (528, (16, 8, 16), 8, (8, 128, 128))
    assert g.peak_flops == pytest.approx(H100.tensor_fp16_flops)


def test_odd_head_dim_pads_on_the_mxu():
    """N = K = 96: no padding on 16 x 8 x 16 pieces, 96^2 / 128^2 = 0.5625 on the MXU."""
    g = matmul_utilisation(gpu_matrix_units(H200), 4096, 96, 96)
    t = matmul_utilisation(tpu_matrix_units(TPU_V5P), 4096, 96, 96)
    assert (g.padding_efficiency, t.padding_efficiency) == (1.0, 0.5625)


def test_small_matmul_leaves_gpu_units_idle():
    """64^3: 4 x 8 x 4 = 128 pieces on 528 tensor cores (occupancy 0.242); the MXU pads N and K to
    128 (0.25) but its 8 pieces fill the 8 MXUs."""
    (_, g, t), = compare(H200, TPU_V5P, [(64, 64, 64)])
    assert (g.work_items, g.occupancy) == (128, 128 / 528)
    assert (t.padding_efficiency, t.occupancy, t.below_lecture_min) == (0.25, 1.0, False)


def test_lecture_minimum_is_flagged():
    """The lecture: a TPU refuses inputs under 64; we pad and flag instead."""
    t = matmul_utilisation(tpu_matrix_units(TPU_V5P), 32, 32, 32)
    assert t.below_lecture_min and t.padding_efficiency == 32**3 / (32 * 128 * 128)
