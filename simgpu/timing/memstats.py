"""Per-instruction cache outcomes for the timing model, from the memory model.

The memory model computes them (MemoryModel.instruction_stats / dram_bytes, the fields are
described in simgpu/memory/stats.py); this module is the timing layer's door to them, and
says what to assume for an instruction the memory model has no statistics for.
The simulator charges each request its *expected* L2 and DRAM bytes (so bandwidth totals
match the memory model) and gives requests L1/L2/DRAM latencies in the proportions of its
MemStat; a hit on data in flight waits as long as the miss it merged with.

Without a memory model (``launch(memory=False)``) every load sector goes to DRAM and every
store stays in the L2: a first-touch streaming assumption, stated in docs/timing.md.
"""
from __future__ import annotations

from ..memory.stats import STREAM_LOAD, STREAM_STORE, MemStat


def evicted_fraction(mm, scale, l2_bytes):
    """Share of the dirty bytes left in the L2 that a run `scale` times longer would have
    written back during the kernel (sampled execution; 0 for a full run)."""
    return mm.evicted_fraction(scale, l2_bytes)


def from_memory_model(mm, scale=1.0, l2_bytes=0, write_cost=1.0):
    """{instruction id: MemStat} from a MemoryModel, or {} without one.
    scale > 1: the counters cover 1/scale of the blocks (sampled execution)."""
    return {} if mm is None else mm.instruction_stats(scale, l2_bytes, write_cost)


def dram_bytes(mm, scale=1.0, l2_bytes=0):
    """Total DRAM bytes (read + write) during the kernel, or None without a memory model;
    scaled up (with the write-backs a longer run would do) for sampled execution."""
    return None if mm is None else mm.dram_bytes(scale, l2_bytes)


def default_stat(kind):
    """The streaming assumption for an instruction without statistics (kind "st" or a load)."""
    return STREAM_STORE if kind == "st" else STREAM_LOAD


__all__ = ["MemStat", "STREAM_LOAD", "STREAM_STORE", "from_memory_model", "dram_bytes", "default_stat",
           "evicted_fraction"]
