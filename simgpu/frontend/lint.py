"""Mistakes that compile: code numba-cuda accepts but that cannot be what the user meant.  They
are warnings (the kernel runs as numba would run it), given on both execution paths.

* a function named but not called (``cuda.syncthreads`` without ``()``): the line does nothing,
  and a missing barrier is a race."""
from __future__ import annotations

import ast
import inspect
import textwrap
import warnings

from ..errors import SimGPUWarning


def uncalled_message(text):
    return (f"`{text}` names a function without calling it: this line does nothing "
            f"(hint: call it: {text}())")


_CACHE = {}


def lint(py_func):
    """[(file, line, message)] for the kernel's compiling mistakes (empty if its source cannot
    be read); cached per code object."""
    key = getattr(py_func, "__code__", None)
    if key is not None and key in _CACHE:
        return _CACHE[key]
    out = _lint(py_func)
    if key is not None:
        _CACHE[key] = out
    return out


def _lint(py_func):
    try:
        src = textwrap.dedent(inspect.getsource(py_func))
        file = inspect.getsourcefile(py_func) or py_func.__code__.co_filename
        first = py_func.__code__.co_firstlineno
        tree = ast.parse(src)
    except (OSError, TypeError, SyntaxError):
        return []
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Expr) and isinstance(n.value, (ast.Name, ast.Attribute)):
            out.append((file, first + n.lineno - 1, uncalled_message(ast.unparse(n.value))))
    return out


def warn(file, line, message):
    warnings.warn_explicit(message, SimGPUWarning, file, line)


def warn_lint(py_func):
    """Give lint()'s findings as SimGPUWarnings at their lines."""
    for file, line, message in lint(py_func):
        warn(file, line, message)
