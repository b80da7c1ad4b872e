"""Helpers for tests of simulated kernels: run quickly, read traffic in plain words."""
from __future__ import annotations

from ..runtime.launch import launch

SHORT = {
    "ld_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "ld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "st_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "st_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "atom_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "atom_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    "ld_bytes": "simgpu__global_ld_bytes_requested.sum",
    "st_bytes": "simgpu__global_st_bytes_requested.sum",
    "shared_ld_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "shared_st_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "shared_ld_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "shared_st_conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "shared_ld_requests": "smsp__inst_executed_op_shared_ld.sum",
    "shared_st_requests": "smsp__inst_executed_op_shared_st.sum",
    "l2_read_sectors": "lts__t_sectors_srcunit_tex_op_read.sum",
    "l2_write_sectors": "lts__t_sectors_srcunit_tex_op_write.sum",
    "l2_bytes": "lts__t_bytes.sum",
    "dram_read_bytes": "dram__bytes_read.sum",
    "dram_write_bytes": "dram__bytes_write.sum",
    "l2_dirty_bytes": "simgpu__l2_dirty_bytes_at_end.sum",
}


def run(kernel, grid, block, *args, gpu=None, **options):
    """Launch on the modelled GPU with memory counting and without the timing model (faster
    in tests); returns the Report."""
    options.setdefault("timing", False)
    return launch(kernel, grid, block, args, gpu=gpu, **options)


def traffic(rep):
    """The memory counters of a Report under short names (see SHORT), as ints."""
    return {k: int(rep.metrics.get(v, 0)) for k, v in SHORT.items()}


def global_elements_loaded(rep, itemsize):
    """Elements the kernel's global loads asked for (active lanes x loads)."""
    return rep.metrics["simgpu__global_ld_bytes_requested.sum"] // itemsize


def assert_traffic(rep, **expected):
    """Assert exact counters: ``assert_traffic(rep, ld_sectors=4096, shared_ld_conflicts=0)``."""
    got = traffic(rep)
    bad = {k: (got[k], v) for k, v in expected.items() if got[k] != v}
    if bad:
        lines = "\n".join(f"  {k}: simulated {g:,}, expected {e:,}" for k, (g, e) in bad.items())
        raise AssertionError(f"memory traffic of {rep.kernel} differs:\n{lines}")
