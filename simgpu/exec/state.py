"""Run-time state of one chunk of blocks: poisoned memory; the records an executor reports
(Chunk, Mask, ArrayHandle, the events, Observer) live in :mod:`simgpu.events`."""
from __future__ import annotations

import numpy as np

from simgpu.events import (POISON, ArrayHandle, BarrierEvent, BranchEvent, Chunk, InstrEvent,  # noqa: F401
                           Mask, MemEvent, Observer, WARP)

# Shared and local memory start as this byte in every position (launch(poison=...)): 0xFF
# makes every float width NaN (f16/f32/f64) and every integer -1 (or its unsigned maximum),
# so a read before any write gives visibly wrong output, as the hardware's leftovers do.
# The PTX executor uses the same value (simgpu/ptx/memory.py POISON); defined in simgpu/events.py
# (Launch.poison's default).


def poisoned(shape, dtype, poison=POISON):
    """An array of `shape` whose every byte is `poison` (None: zeros)."""
    if poison is None:
        return np.zeros(shape, dtype=dtype)
    a = np.empty(shape, dtype=dtype)
    a.view(np.uint8).fill(poison)
    return a

