"""Parameter sweeps: one function over many cases, on local worker processes or a Dask cluster,
with per-case failures as data, a progress bar and a cache directory to resume from.

    tab = simgpu.sweep(lambda p: simgpu.launch(k, p["n"] // 256, 256, args(p)), simgpu.sweeps.grid(n=[...]))
    tab.to_csv("sweep.csv"); tab.to_pandas()

A face, beside stepper, plot, validate and testing (docs/design.md); see docs/sweep.md.
"""
from .run import DEFAULT_METRICS, case_key, default_workers, grid, run_case, sweep
from .table import SweepTable

__all__ = ["sweep", "grid", "SweepTable", "DEFAULT_METRICS", "case_key", "default_workers", "run_case"]
