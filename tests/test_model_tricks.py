"""The six tricks as numbers."""
import pytest

from simgpu.hardware import H200
from simgpu.model import tricks


def test_divergence_halves_a_warp():
    """An if/else split inside a warp runs both sides: 16/16 lanes -> 50 %; uniform -> 100 %."""
    assert tricks.simt_efficiency(16) == 0.5
    assert tricks.simt_efficiency(0) == tricks.simt_efficiency(32) == 1.0
    assert tricks.simt_efficiency(16, cost_if=3, cost_else=1) == (16 * 3 + 16) / (32 * 4)
    assert tricks.expected_simt_efficiency(0.5) == pytest.approx(0.5)


def test_relu_bytes_per_flop():
    """ReLU: 8 B/FLOP in fp32, 4 in fp16 (the lecture's numbers), 2 in fp8."""
    assert [tricks.relu_bytes_per_flop(d) for d in ("fp32", "fp16", "fp8")] == [8, 4, 2]


def test_fusion_of_sin2_cos2():
    """5 kernels make 11 HBM accesses per element, the fused kernel 2: 5.5x less traffic and time."""
    u, f = tricks.fusion_cost(H200, 1 << 20, False), tricks.fusion_cost(H200, 1 << 20, True)
    assert (u.kernels, u.accesses_per_element, f.kernels, f.accesses_per_element) == (5, 11, 1, 2)
    assert u.bytes == 11 * 4 * (1 << 20) and u.flops == f.flops
    assert u.time_s / f.time_s == pytest.approx(5.5)


def test_recomputation_five_ninths_and_the_lectures_five_eighths():
    """Counting every access: store 4 + 5 = 9, recompute 2 + 3 = 5 -> 5/9.  The lecture's 5/8 is
    the store side counted without reading the upstream gradient."""
    store, rec = tricks.recomputation_ledgers()
    assert (len(store.forward), len(store.backward), len(rec.forward), len(rec.backward)) == (4, 5, 2, 3)
    assert tricks.recomputation_ratio() == 5 / 9
    assert tricks.recomputation_ratio(count_upstream_gradient=False) == 5 / 8


@pytest.mark.parametrize("stride, sectors", [(0, 1), (1, 4), (2, 8), (3, 12), (4, 16), (8, 32), (100, 32)])
def test_sectors_per_request_fp32(stride, sectors):
    """fp32, lane i at element i x s: min(32, floor(31 s 4 / 32) + 1) sectors; 32 from stride 8 on."""
    assert tricks.sectors_per_request(stride) == sectors


def test_sectors_per_request_other_dtypes():
    """fp16 stride 1: 64 B over 2 sectors; an offset start of 16 B spills into a third."""
    assert tricks.sectors_per_request(1, "fp16") == 2
    assert tricks.sectors_per_request(1, "fp16", offset_bytes=16) == 3
    assert tricks.coalescing_efficiency(1) == 1.0 and tricks.coalescing_efficiency(8) == 0.125


def test_tiling_reduction():
    assert tricks.tiling_global_reads(512, 16) == {"naive": 2 * 512**3, "tiled": 2 * 512**3 // 16, "reduction": 16.0}
