"""A sanitizer for kernels: compute-sanitizer's four tools on the modelled GPU, at the
kernel's source lines (docs/sanitizer.md).

    memcheck    out-of-bounds and misaligned accesses (the executors' own checks)
    racecheck   shared-memory hazards between threads of a block with no barrier between
                them (warps are not assumed to run in lock-step); global-memory hazards
                between blocks of one launch (atomics excepted)
    initcheck   reads of shared or local memory that nothing wrote in this launch
    synccheck   barriers in divergent code; warp collectives whose member mask names
                live lanes that do not execute them

``simgpu.launch(..., check=True)`` (or ``check="racecheck"``, a list of tools) attaches a
:class:`Sanitizer` observer; its findings are ``report.sanitizer`` (a SanitizerReport).
This package sits beside the memory model, below the runtime (setup.cfg's contract).
"""
from .findings import PREFIX, TOOLS, Finding, SanitizerReport
from .observer import Sanitizer, parse_tools
from .session import collecting, current_collector

__all__ = ["Finding", "PREFIX", "Sanitizer", "SanitizerReport", "TOOLS", "collecting",
           "current_collector", "parse_tools"]
