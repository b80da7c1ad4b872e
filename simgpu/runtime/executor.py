"""The executor seam: what runs a kernel's program over the grid and tells observers.

An executor takes the specialised program, the bound launch (arguments at device
addresses, the chunks of blocks to run) and the observers, runs every chunk and returns
how many blocks it executed.  Everything around it (binding, the memory and timing models,
the Report) is shared: a second executor -- the PTX executor of the compiled code -- is a
second implementation of `Executor.run`, not a fork of `launch`.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

from .. import settings
from ..errors import LaunchError
from ..exec.budget import LaunchWatch
from ..exec.counters import InstCounter
from ..exec.interp import Interpreter
from ..exec.state import Chunk
from ..sass.toolchain import compiled_path_available
from .ptx_path import PTXExecutor


@runtime_checkable
class Executor(Protocol):
    """What `launch` asks of an executor, in the order it asks (runtime/launch.py):

    - ``binds_python``: True if the launch binds the arguments from the kernel's Python
      signature (the compiled code's ABI) rather than through simgpu's own frontend;
    - ``supports_timing``: whether its records can feed the timing model;
    - ``prepare(program, launch, values)``: after binding, before the models are built (the
      PTX executor compiles here and sets the launch's registers and shared memory);
    - ``make_counter(launch)``: the instruction counter the Report's ``smsp__*`` come from;
    - ``run(program, launch, observers)``: every chunk, telling the observers
      (simgpu/events.py); returns the number of blocks executed.
    """
    name: str
    binds_python: bool
    supports_timing: bool

    def prepare(self, program, launch, values) -> object:
        """Get ready to run `program` for `launch` (may set its registers and facts)."""

    def make_counter(self, launch) -> object:
        """The Observer that counts instructions, with metrics(), by_line(), fill_report(rep)."""

    def run(self, program, launch, observers) -> int:
        """Run launch.chunks() of `program`; call the observer contract (simgpu/events.py)."""


class IRExecutor:
    """The vectorised SIMT interpreter of simgpu's own IR (simgpu/exec)."""

    name = "ir"
    binds_python = False        # simgpu's frontend specialises and binds the arguments
    supports_timing = True

    def prepare(self, program, launch, values=None):
        """Nothing to compile: the IR is the program (launch.prepare adds its ProgramFacts)."""
        return None

    def make_counter(self, launch):
        return InstCounter()

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
    if not isinstance(name_or_executor, Executor):
        missing = [m for m in ("name", "binds_python", "supports_timing", "prepare", "make_counter", "run")
                   if not hasattr(name_or_executor, m)]
        raise LaunchError(f"executor={name_or_executor!r} is not an executor: it lacks {', '.join(missing)} "
                          "(simgpu.runtime.executor.Executor)")
    return name_or_executor
