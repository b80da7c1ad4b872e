"""PerfectMemory: the memory model of a what-if experiment, every global and local access an L1
hit.  Traffic is still counted as it really happens (requests, sectors, bank conflicts,
what the caches would do); only what the timing model is told changes: no sector goes on to
the L2, no byte to DRAM.  The time it predicts is the kernel with memory taken out of the
way, so the gap to the real prediction is what memory costs:

    simgpu.launch(kernel, grid, block, args, memory=PerfectMemory)
"""
from __future__ import annotations

from .model import MemoryModel
from .stats import MemStat

ALL_L1_HITS = MemStat(l2_fraction=0.0, l2_hit=1.0, dram_per_l2=0.0, dram_busy_per_l2=0.0)


class PerfectMemory(MemoryModel):
    """A MemoryModel whose every global/local access hits the L1 (see the module docstring)."""

    def instruction_stats(self, scale=1.0, l2_bytes=0, write_cost=1.0):
        return {ins_id: ALL_L1_HITS for ins_id in super().instruction_stats(scale, l2_bytes, write_cost)}

    def dram_bytes(self, scale=1.0, l2_bytes=0):
        return 0.0

    def evicted_fraction(self, scale, l2_bytes):
        return 0.0
