"""Timing a big launch without running all of it: execute only the waves the timing model
samples (the first wave and the partial last wave), then predict.

This is `simgpu.timing.predict(..., sample=True)`.  The kernel's outputs are then only
partly computed (the blocks of the executed waves), and memory-model counters cover those
waves only: the per-instruction hit rates the timing model uses come from them, and DRAM
bytes for the roofline are scaled by (all blocks / executed blocks).  The difference from
running everything is measured in tests/test_timing_sampling.py and docs/timing.md.

It is `simgpu.launch(..., sample=True)`.
"""
from __future__ import annotations

from .. import kernel as K


def sampled_launch(kernel, grid, block, args, gpu=None, registers_per_thread=None, memory=True,
                   max_loop_iterations=1 << 22, chunk_lanes=K.DEFAULT_CHUNK_LANES):
    """Run the sampled waves of a launch and return its Report (timing filled in)."""
    return K.launch(kernel, grid, block, args, gpu=gpu, memory=memory, timing=True,
                    chunk_lanes=chunk_lanes, max_loop_iterations=max_loop_iterations,
                    registers_per_thread=registers_per_thread, sample=True)


__all__ = ["sampled_launch"]
