"""Units and their formatting: the bottom layer, imported by everything, importing nothing."""
from __future__ import annotations

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


def human_bytes(n):
    """Bytes in decimal units, as Nsight Compute prints them: '1.05 MB'."""
    n = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.2f} {unit}"
        n /= 1000.0


# The unit of every metric a Report holds (docs/report.md, "Metrics and their units"): exact
# names first, then the first matching rule on the name.  Nsight Compute's units where it has
# the metric: gpu__time_duration.sum is in nanoseconds, as ncu reports it.
METRIC_UNITS = {
    "gpu__time_duration.sum": "ns",
    "sm__cycles_elapsed.avg": "cycles",
    "launch__grid_size": "blocks",
    "launch__block_size": "threads",
    "launch__registers_per_thread": "registers",
    "launch__waves_per_multiprocessor": "waves",
    "launch__occupancy_limit_blocks": "blocks per SM",
    "launch__occupancy_limit_registers": "blocks per SM",
    "launch__occupancy_limit_shared_mem": "blocks per SM",
    "launch__occupancy_limit_warps": "blocks per SM",
    "sm__maximum_warps_per_active_cycle_pct": "%",
    "smsp__thread_inst_executed_per_inst_executed.ratio": "threads per warp instruction",
    "simgpu__flop.sum": "FLOP",
    "simgpu__achieved_flops_per_s": "FLOP/s",
    "simgpu__achieved_dram_bytes_per_s": "bytes/s",
    "simgpu__grid_barriers.sum": "grid barriers",
    "simgpu__const_serialized_accesses.sum": "accesses",
    "simgpu__inst_by_class": "warp instructions per class",
    "simgpu__sass_inst_undecided.sum": "warp instructions",
}
_METRIC_RULES = (                 # (the name contains, unit), first match wins
    (".pct", "%"), ("bytes", "bytes"), ("shared_mem_per_block", "bytes"), ("wavefronts", "wavefronts"), ("bank_conflicts", "wavefronts"),
    ("sectors", "sectors (32 bytes)"), ("requests", "requests (one per warp instruction)"),
    ("thread_inst", "thread instructions"), ("inst_executed", "warp instructions"),
    ("branch_warp", "warp branch executions"), ("hits_in_flight", "sectors (32 bytes)"),
)


def metric_unit(name):
    """The unit of a Report metric: 'ns', 'bytes', '%', ... ('' for a name simgpu does not make)."""
    if name in METRIC_UNITS:
        return METRIC_UNITS[name]
    for part, unit in _METRIC_RULES:
        if part in name:
            return unit
    return ""
