"""User-facing errors.  Each points at the kernel's source line.

How a user's mistake reaches them (their own frames, simgpu's entry point, the message; not
simgpu's internal frames) is simgpu/tracebacks.py's job, above the settings layer, so that
``SIMGPU_TRACEBACK`` is read with the other settings.  This module is the bottom layer's:
the exception and warning classes alone.
"""
from __future__ import annotations


class SimGPUError(Exception):
    """Base class of every error simgpu raises for a user's mistake."""


class DSLError(SimGPUError):
    """The kernel uses a Python construct that simgpu (like numba.cuda) cannot compile."""

    def __init__(self, msg, loc=None, hint=None):
        self.loc = loc
        self.hint = hint
        text = f"{loc}: {msg}" if loc else msg
        if hint:
            text += f"\n    hint: {hint}"
        super().__init__(text)


class TypingError(DSLError):
    """numba's typing rules reject an operation."""


class LaunchError(SimGPUError):
    """The launch cannot run on the modelled GPU (as the CUDA driver would refuse it)."""


class KernelError(SimGPUError):
    """A fault while the kernel runs: out-of-bounds access, barrier misuse, runaway loop."""

    def __init__(self, msg, loc=None, kernel=None, block=None, thread=None):
        self.loc, self.kernel, self.block, self.thread = loc, kernel, block, thread
        where = []
        if block is not None:
            where.append(f"block {tuple(int(v) for v in block)}")
        if thread is not None:
            where.append(f"thread {tuple(int(v) for v in thread)}")
        text = f"{loc}: " if loc else ""
        text += f"in kernel {kernel!r}: " if kernel else ""
        text += msg
        if where:
            text += " in " + " ".join(where)
        super().__init__(text)


class SimGPUWarning(UserWarning):
    """simgpu's one warning class: something the user should know that does not stop the run --
    a kernel that runs but almost surely does not do what its author meant (frontend/lint.py),
    or a fact about the modelled run (host/session.py)."""


class ArgumentError(SimGPUError, TypeError):
    """Wrong number or kind of kernel arguments."""
