"""No false positive on the project's own kernels: a sample of the validation suite and the
holdout set (shared-memory reductions, tiles, histograms, shuffles, GPU-Puzzles solutions),
sanitized on both paths.  The whole set: validation/sanitizer/run_suite.py (230 launches,
validation/data/sanitizer_suite.json).  And one real race the suite holds is found."""
import os
import sys

import numpy as np
import pytest

from simgpu._compat import patch_numpy_for_numba

patch_numpy_for_numba()

import simgpu  # noqa: E402
from simgpu.sass.toolchain import compiled_path_available  # noqa: E402

ROOT = os.path.join(os.path.dirname(__file__), os.pardir, "validation")
SAMPLE = ["hist_shared_L2", "matmul_tiled_bounds_n40", "reduce_interleaved_L2", "reduce_shuffle_L2",
          "transpose_tiled_padded_L2", "nc_fast_matmul_tpb16_n20", "nc_array_sum_i64_block1024",
          "gp_pooling_f32", "gp_dot_f32", "gp_prefix_sum_block_f32", "gp_axis_sum_6x700_f32",
          "gp_matmul_tpb8_n20", "st_stencil2d_5pt_f32_n40", "layernorm_rows_7x100_f32",
          "spmv_csr_vector_f32", "cbe_histo_shmem_100MiB"]
EXECUTORS = ["ir", pytest.param("ptx", marks=pytest.mark.skipif(
    not compiled_path_available()[0], reason="needs numba-cuda and ptxas"))]


def _cases():
    """The suite's and the holdout's cases at their tiny sizes.  This runs when pytest collects
    the module, so it leaves nothing behind: VALIDATION_TINY, sys.path and the validation
    modules it imported (`kernels`, `run_suite`, ...) are restored, or later tests
    (tests/test_memory_h200.py, tests/test_validation_accuracy.py) would build their cases
    tiny, or from the holdout's `kernels`, and compare them with full-size measurements."""
    old_tiny = os.environ.get("VALIDATION_TINY")
    before = set(sys.modules)
    os.environ["VALIDATION_TINY"] = "1"
    sys.path[:0] = [ROOT, os.path.join(ROOT, "holdout")]
    try:
        import kernels as holdout           # validation/holdout/kernels.py
        from run_suite import collect_cases
        cases = {c["name"]: c for c in collect_cases() if "_error" not in c}
        cases.update({c["name"]: c for c in holdout.cases(tiny=True)})
    finally:
        del sys.path[:2]
        if old_tiny is None:
            os.environ.pop("VALIDATION_TINY", None)
        else:
            os.environ["VALIDATION_TINY"] = old_tiny
        root = os.path.realpath(ROOT)
        for name in set(sys.modules) - before:
            f = getattr(sys.modules[name], "__file__", None) or ""
            if f and os.path.realpath(f).startswith(root + os.sep):
                del sys.modules[name]
    return cases


CASES = _cases()


def _run(c, executor):
    host = c["args"](np.random.default_rng(0))
    args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in host)
    return simgpu.launch(c["kernel"], tuple(c["grid"]), tuple(c["block"]), args, executor=executor,
                         check=True, timing=False, memory=False)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("name", SAMPLE)
def test_project_kernels_have_no_findings(name, executor):
    rep = _run(CASES[name], executor)
    assert len(rep.sanitizer) == 0, rep.sanitizer.summary()


@pytest.mark.parametrize("executor", EXECUTORS)
def test_the_bank_conflict_microbenchmark_race_is_found(executor):
    """smem_stride updates sh[((tid + it) * stride) & MASK] in a loop with no barrier: thread t
    at iteration it and thread t+1 at iteration it-1 touch the same word (a real race)."""
    rep = _run(CASES["smem_stride1"], executor)
    assert {(f.tool, f.kind) for f in rep.sanitizer} == {("racecheck", k) for k in ("RAW", "WAR", "WAW")}
    assert all(f.loc.endswith("bank_conflicts.py:31") for f in rep.sanitizer)
