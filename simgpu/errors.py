"""User-facing errors.  Each points at the kernel's source line.

A user's mistake reaches them as simgpu's message after their own frames and the one frame of
simgpu's entry point that raises it (:func:`user_facing`): not simgpu's internal frames, nor the
internal exception it was translated from ("During handling of the above exception...").
``SIMGPU_TRACEBACK=full`` in the environment keeps all of it (for simgpu's developers).
"""
from __future__ import annotations

import functools
import os
import runpy
import traceback


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


def full_tracebacks():
    """``SIMGPU_TRACEBACK=full``: errors keep simgpu's internal frames and chains."""
    return os.environ.get("SIMGPU_TRACEBACK", "").strip().lower() == "full"


def mark_user_error(err):
    """Mark another package's exception (numba's compile error, made readable by
    runtime/compile_errors.py) as the user's mistake: :func:`user_facing` treats it as it
    treats a SimGPUError.  Returns `err`."""
    err._simgpu_user_error = True
    return err


def is_user_error(err):
    return isinstance(err, SimGPUError) or getattr(err, "_simgpu_user_error", False)


def as_user_error(err):
    """`err` as its user sees it: no traceback of its own (the caller's frames are added as it
    propagates) and no chained internal exception printed.  The exception it was raised from
    or during stays reachable as ``__context__``."""
    if err.__cause__ is not None:
        err.__context__ = err.__cause__
        err.__cause__ = None
    err.__suppress_context__ = True
    return err.with_traceback(None)


def user_facing(fn=None, *, translate=None):
    """Decorate a public entry point: a user's error raised inside it (a SimGPUError, or what
    `translate`, a function of the exception, marks as one) reaches the caller with the
    caller's frames and this entry point's, not simgpu's internal ones (see the module
    docstring).  Entry points calling entry points nest: the outermost one's frame is shown."""
    if fn is None:
        return functools.partial(user_facing, translate=translate)

    @functools.wraps(fn)
    def entry(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as err:
            if full_tracebacks():
                raise
            if translate is not None:
                translate(err)
            if not is_user_error(err):
                raise
            raise as_user_error(err)
    return entry

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_RUNNERS = ("<frozen runpy>", os.path.abspath(runpy.__file__))


def _runner_frame(filename):
    """A frame of what runs the user's code: simgpu itself, runpy, importlib's bootstrap."""
    path = os.path.abspath(filename) if not filename.startswith("<") else filename
    return path.startswith(_PACKAGE) or path in _RUNNERS or filename.startswith("<frozen importlib")


def _library_frame(filename):
    """A frame of simgpu's or numba's code (or what runs the user's code)."""
    parts = filename.replace("\\", "/").split("/")
    return _runner_frame(filename) or "numba" in parts or "numba_cuda" in parts


def user_traceback(err):
    """The text Python prints for `err`, from the user's first frame on: the frames of what ran
    the user's code (the ``simgpu`` script, cli.py, runpy, the import of the user's file) left
    out; for a user's error (:func:`is_user_error`) also the library frames between the user's
    last frame and the one that raised.  Where no frame is the user's (a bug of simgpu's own),
    all of them."""
    tb = err.__traceback__
    first, seen_runner = tb, False
    while first is not None:
        runner = _runner_frame(first.tb_frame.f_code.co_filename)
        if seen_runner and not runner:
            break
        seen_runner |= runner
        first = first.tb_next
    if first is None or full_tracebacks():
        return "".join(traceback.format_exception(type(err), err, tb))
    te = traceback.TracebackException(type(err), err, first)
    if is_user_error(err) and len(te.stack) > 1:
        frames = list(te.stack)
        keep = [f for f in frames[:-1] if not _library_frame(f.filename)] + [frames[-1]]
        te.stack = traceback.StackSummary.from_list(keep)
    return "".join(te.format())
