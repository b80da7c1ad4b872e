"""Compile the memory model's numba code before its first launch needs it.

The memory model's engine (engine.py, cache.py, banks.py) is numba-compiled with ``cache=True``:
the first launch on a machine compiles it (several seconds of CPU), every later process loads it
from numba's cache.  :func:`compile_engine` feeds a one-warp MemoryModel one event of each kind
it compiles for (global, shared) and ends its launch, which compiles -- or loads -- every
function for the types a real launch gives them (MemoryModel.mem makes those types the same
for every executor).  ``python -m simgpu.memory.warm`` does it in a process of its own:
``simgpu demo`` starts that first, so that numba compiles the engine while numba-cuda
compiles the demo's kernels.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..events import ArrayHandle, Chunk, Launch, Mask, MemEvent, ProgramFacts
from ..hardware import get_gpu
from .engine import global_event
from .model import MemoryModel


def engine_cached():
    """Whether numba's cache already holds the engine's entry point for the types MemoryModel
    gives it (read-only addresses and masks): then a process to compile it is not worth
    starting.  Reads numba's cache index (numba's internals: any surprise reads as False)."""
    try:
        index = global_event._cache._cache_file._load_index()
        return any(not key[0][0].mutable and not key[0][1].mutable for key in index)
    except Exception:
        return False


def compile_engine(gpu=None):
    """Run one warp's global load, store and atomic and shared load and store through a
    MemoryModel (compiling its numba code, or loading it from numba's cache)."""
    gpu = get_gpu(gpu)
    launch = Launch("warm", None, gpu, (1, 1, 1), (32, 1, 1), [], 0, facts=ProgramFacts())
    mm = MemoryModel(gpu, launch)
    chunk = Chunk(0, 1, (32, 1, 1), (1, 1, 1))
    mm.launch_begin(launch)
    mm.chunk_begin(chunk)
    data = np.zeros(32, np.float32)
    for n, (space, kind, base) in enumerate((("global", "ld", 1 << 40), ("global", "st", 1 << 40),
                                             ("global", "atom", 1 << 40), ("shared", "ld", 0),
                                             ("shared", "st", 0))):
        arr = ArrayHandle("warm", space, (32,), np.dtype(np.float32), data, base_addr=base)
        addr = base + 4 * np.arange(32, dtype=np.int64)
        mm.mem(MemEvent(SimpleNamespace(id=n), space, kind, addr, Mask.all_valid(chunk), 4, arr, chunk))
    mm.chunk_end(chunk)
    mm.launch_end(launch)


if __name__ == "__main__":
    compile_engine()
