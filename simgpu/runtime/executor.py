"""The executor seam: what runs a kernel's program over the grid and tells observers.

An executor takes the specialised program, the bound launch (arguments at device
addresses, the chunks of blocks to run) and the observers, runs every chunk and returns
how many blocks it executed.  Everything around it (binding, the memory and timing models,
the Report) is shared: a second executor -- the PTX executor of the compiled code -- is a
second implementation of `Executor.run`, not a fork of `launch`.
"""
from __future__ import annotations

from typing import Protocol

from .. import settings
from ..exec.budget import LaunchWatch
from ..exec.interp import Interpreter
from ..exec.state import Chunk
from ..sass.toolchain import compiled_path_available
from .ptx_path import PTXExecutor


class Executor(Protocol):
    name: str

    def run(self, program, launch, observers) -> int:
        """Run launch.chunks() of `program`; call the observer contract (exec/state.py)."""


class IRExecutor:
    """The vectorised SIMT interpreter of simgpu's own IR (simgpu/exec)."""

    name = "ir"

    def run(self, program, launch, observers) -> int:
        watch = LaunchWatch(launch.budget, launch.kernel_name)
        interp = Interpreter(program, launch.kernel_name, [*observers, watch],
                             max_loop_iterations=launch.max_loop_iterations, watch=watch,
                             poison=launch.poison)
        executed = 0
        for index, first, n in launch.chunks():
            interp.run_chunk(Chunk(first, n, launch.block, launch.grid, index=index),
                             launch.bindings, launch.smem_layout)
            executed += n
            launch.chunk_done(index)
        return executed


EXECUTORS = {"ir": IRExecutor, "ptx": PTXExecutor}


def default_executor():
    """The executor `executor="auto"` (the default) means: $SIMGPU_EXECUTOR if set, else the
    compiled code ("ptx") where numba-cuda and ptxas are installed, else simgpu's IR ("ir")."""
    env = settings.current().executor
    if env and env != "auto":
        return env
    return "ptx" if compiled_path_available()[0] else "ir"


def get_executor(name_or_executor="auto") -> Executor:
    if name_or_executor is None or name_or_executor == "auto":
        name_or_executor = default_executor()
    if isinstance(name_or_executor, str):
        if name_or_executor not in EXECUTORS:
            raise ValueError(f"unknown executor {name_or_executor!r}; known: {', '.join(EXECUTORS)}")
        return EXECUTORS[name_or_executor]()
    return name_or_executor
