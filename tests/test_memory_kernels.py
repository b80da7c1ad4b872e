"""Explicitly managed tiles match their formulas exactly, and the Report shows the
traffic per level and per source line."""
import numpy as np
from hypothesis import given, settings, strategies as st
from numba import cuda

from simgpu.testing import (global_elements_loaded, naive_matmul_global_elements, run,
                            tiled_matmul_global_elements, traffic)

T = 8   # tile edge (module constant: shared-array shapes must be literal)


def matmul_tiled(A, B, C, n):
    sA = cuda.shared.array((T, T), np.float32)
    sB = cuda.shared.array((T, T), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * T + ty
    col = cuda.blockIdx.x * T + tx
    acc = np.float32(0.0)
    for t in range((n + T - 1) // T):
        k = t * T
        if row < n and k + tx < n:
            sA[ty, tx] = A[row, k + tx]
        else:
            sA[ty, tx] = np.float32(0.0)
        if k + ty < n and col < n:
            sB[ty, tx] = B[k + ty, col]
        else:
            sB[ty, tx] = np.float32(0.0)
        cuda.syncthreads()
        for kk in range(T):
            acc += sA[ty, kk] * sB[kk, tx]
        cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = acc


def matmul_naive(A, B, C, n):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < n and col < n:
        acc = np.float32(0.0)
        for k in range(n):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def _mats(n):
    rng = np.random.default_rng(n)
    return (rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32),
            np.zeros((n, n), np.float32))


@given(st.integers(1, 40))
@settings(max_examples=12, deadline=None)
def test_tiled_matmul_reads_formula_elements(n):
    """Tile T: 2 n^2 ceil(n/T) elements from global memory (2 n^3 / T when T divides n).
    Shared memory: every warp reads 2 T values per step; when T divides n (no divergent
    bounds checks) it also stores 2 tile values per step."""
    A, B, C = _mats(n)
    g = -(-n // T)
    rep = run(matmul_tiled, (g, g), (T, T), A, B, C, np.int64(n))
    assert global_elements_loaded(rep, 4) == tiled_matmul_global_elements(n, T)
    warp_steps = g * g * (T * T // 32) * g
    t = traffic(rep)
    assert t["shared_ld_requests"] == 2 * T * warp_steps
    if n % T == 0:
        assert global_elements_loaded(rep, 4) == 2 * n ** 3 // T
        assert t["shared_st_requests"] == 2 * warp_steps
    assert np.allclose(C, A @ B, rtol=1e-4, atol=1e-4)


def test_naive_matmul_reads_2n3_elements():
    """Without tiles every thread reads a row of A and a column of B: 2 n^3 elements."""
    n = 24
    A, B, C = _mats(n)
    rep = run(matmul_naive, (1, 3), (32, 8), A, B, C, np.int64(n))
    assert global_elements_loaded(rep, 4) == naive_matmul_global_elements(n)


def test_report_metrics_levels_sections_and_lines():
    """rep.metrics carries the Nsight Compute names, rep.bytes_by_level the per-level table,
    print(rep) a Memory section, and rep.by_line() the traffic of each source line."""
    n = 16
    A, B, C = _mats(n)
    rep = run(matmul_tiled, (2, 2), (T, T), A, B, C, np.int64(n))
    for name in ("dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
                 "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
                 "lts__t_sector_hit_rate.pct", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                 "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
                 "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sector_hit_rate.pct",
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                 "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                 "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                 "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
                 "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"):
        assert name in rep.metrics, name
    lv = rep.bytes_by_level
    assert set(lv) >= {"shared", "L1", "L2", "DRAM"}
    assert lv["L1"]["global_ld"]["requests"] == rep.metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
    assert lv["L2"]["bytes"] == 32 * sum(rep.metrics[f"lts__t_sectors_srcunit_tex_op_{op}.sum"]
                                         for op in ("read", "write", "atom", "red"))
    assert lv["L2"]["tag_bytes"] == rep.metrics["lts__t_bytes.sum"]
    assert lv["DRAM"]["read_bytes"] == rep.metrics["dram__bytes_read.sum"] == 2 * n * n * 4
    text = str(rep)
    assert "Memory (bytes moved at each level" in text and "Memory by source line" in text
    rows = {r["source"]: r for r in rep.by_line()}
    a_load = rows["sA[ty, tx] = A[row, k + tx]"]
    assert a_load["global_ld_requests"] == 2 * 2 * 2 * 2       # blocks x steps x warps
    assert a_load["sectors_per_request"] == 4.0               # 4 rows of 8 floats (32 B each)
    assert rows["acc += sA[ty, kk] * sB[kk, tx]"]["bank_conflicts"] == 0
