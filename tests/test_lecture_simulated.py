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
    assert results["relu_if"].simt_efficiency < 0.9 <= results["relu_mask"].simt_efficiency


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
    """Just past a whole wave of blocks, throughput drops: 448 (0.99 waves) beats 496 (1.21)."""
    import mystery_plot_simulated as ex
    r448, r496 = ex.sweep([448, 496])
    assert r448["waves"] <= 1.0 < r496["waves"]
    assert r496["tflops"] < 0.9 * r448["tflops"]
