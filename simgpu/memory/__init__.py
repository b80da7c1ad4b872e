"""The memory hierarchy: every byte counted at each level.

    coalescing (engine.gather)   lane addresses -> requests, 128-byte lines, 32-byte sectors
    banks.shared_event           shared memory: wavefronts and bank conflicts
    cache                        sectored set-associative L1 per SM and one L2, LRU, write-back L2
    engine.global_event          one global/local instruction through L1, L2 and DRAM
    schedule                     the order accesses reach the caches (waves, SMs, warps)
    MemoryModel                  the executor observer tying them together; fills the Report

See docs/memory.md for the model, its metrics and what it leaves out.
"""
from .model import MemoryModel
from .schedule import Schedule

__all__ = ["MemoryModel", "Schedule"]
