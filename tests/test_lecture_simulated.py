"""The six tricks emerge from simulation: each pair of kernels shows the effect the lecture names."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))


@pytest.fixture(scope="module")
def results():
    import lecture_tricks_simulated as ex
    return ex.main(["--n", "65536"])


def test_divergence_costs_simt_efficiency(results):
    """The branch as written idles half the lanes; the mask never does; the compiled code of a
    branch this short is predicated (NVVM's select), so it barely diverges either."""
    assert results["relu_if_as_written"].simt_efficiency < 0.9 <= results["relu_mask"].simt_efficiency
    assert results["relu_if"].simt_efficiency >= 0.9


def test_float16_halves_the_bytes(results):
    b32 = results["relu_mask"].metrics["dram__bytes_read.sum"]
    b16 = results["relu16"].metrics["dram__bytes_read.sum"]
    assert b16 == b32 / 2


def test_fusion_cuts_hbm_traffic_several_fold(results):
    assert results["fusion_bytes_ratio"] > 4


@pytest.mark.parametrize("stride,sectors", [(1, 4), (2, 8), (8, 32), (32, 32)])
def test_coalescing_sectors_per_request(results, stride, sectors):
    m = results[f"stride{stride}"].metrics
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == \
        sectors * m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]


def test_tiling_reads_t_times_less_from_global(results):
    naive = results["naive"].metrics["simgpu__global_ld_bytes_requested.sum"]
    tiled = results["tiled"].metrics["simgpu__global_ld_bytes_requested.sum"]
    assert naive == 16 * tiled


def test_simulated_mystery_plot_has_a_wave_quantisation_cliff():
    """Just past a whole wave of blocks, throughput drops: the largest N whose (N/16)^2 blocks
    fit in one wave beats the next N.  (Where the wave ends depends on the registers per
    thread: ptxas' count on the compiled path, the estimate on the IR path.)"""
    import mystery_plot_simulated as ex
    probe = ex.sweep([64])[0]                         # 16 blocks: waves = 16 / (blocks per wave)
    per_wave = round(probe["blocks"] / probe["waves"])
    g = int(per_wave ** 0.5)
    lo, hi = ex.sweep([16 * g, 16 * (g + 1)])
    assert lo["waves"] <= 1.0 < hi["waves"]
    assert hi["tflops"] < 0.9 * lo["tflops"]
