"""The memory hierarchy: every byte counted at each level.

    engine.gather / global_event   lane addresses -> requests, 128-byte lines, 32-byte
                                   sectors; each SM's L1, then the L2 and DRAM
    cache                          sectored set-associative LRU L1s and L2, byte-masked
                                   write-back L2, DRAM at its read granularity; EngineParams,
                                   the cache geometry the compiled code runs with
    banks.shared_event             shared memory: wavefronts and bank conflicts
    schedule                       the order accesses reach the caches (waves, SMs, warps)
    reductions                     atomics the compiler turns into RED
    counters / tables              the counter table, Nsight Compute metrics, Report sections
    stats                          per-instruction outcomes for the timing model (MemStat)
    reference                      the same rules in slow, plain Python (tests, benchmark)
    PerfectMemory                  the what-if model: every access an L1 hit (memory=PerfectMemory)
    AfterFlush                     the L2 as do_bench's flush leaves it: full of the memset's
                                   dirty lines (memory=AfterFlush; flushed.py)
    MemoryModel                    the executor observer tying them together; what the
                                   timing layer reads: instruction_stats(), dram_bytes()

This package sits below the timing layer and never imports it (setup.cfg's contract).

See docs/memory.md for the model, its metrics, its calibration on the H200 and what it
leaves out.
"""
from .model import MemoryModel
from .perfect import PerfectMemory
from .flushed import AfterFlush
from .schedule import Schedule

__all__ = ["AfterFlush", "MemoryModel", "PerfectMemory", "Schedule"]
