"""A user's mistake as the user sees it.

A user's mistake reaches them as simgpu's message after their own frames and the one frame of
simgpu's entry point that raises it (:func:`user_facing`): not simgpu's internal frames, nor the
internal exception it was translated from ("During handling of the above exception...").
``SIMGPU_TRACEBACK=full`` (simgpu.settings' ``traceback``) keeps all of it, for simgpu's developers.
"""
from __future__ import annotations

import functools
import os
import runpy
import traceback

from . import settings
from .errors import SimGPUError


def full_tracebacks():
    """``SIMGPU_TRACEBACK=full`` (settings' ``traceback``): errors keep simgpu's internal frames
    and chains."""
    return settings.current().traceback == "full"


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
