"""A JSON-able fingerprint of a kernel's Python function, for keying the PTX cache.

numba compiles what the function's code says plus the *values* of the globals and closure
variables it reads (they become constants; ``cuda.const.array_like(ARR)`` bakes an array into
the PTX) and any device functions it calls.  ``function_fingerprint`` therefore covers:

* the source text (or, when there is none, the bytecode with the names, variables and
  constants it indexes: ``code_fingerprint``), file and first line
  (line numbers end up in the PTX ``.loc`` directives);
* every global / closure value the code (and nested code) names: scalars by value, numpy
  arrays by dtype, shape and a hash of their bytes, tuples element-wise, called functions and
  numba dispatchers recursively (depth-limited), modules by name plus the attributes the code
  names on them; builtin functions, ufuncs, classes and other callables that carry a name by
  their module and qualified name (``operator.add`` and ``operator.floordiv`` read through
  one closure variable compile to different kernels); enum members by class, name and value;
* default argument values.

Objects of other kinds count by type name only - numba cannot compile code that depends on
their state anyway.
"""
from __future__ import annotations

import enum
import hashlib
import inspect
import types as pytypes

import numpy as np

from .toolchain import py_function

_MAX_DEPTH = 4


def _code_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, pytypes.CodeType):
            names |= _code_names(c)
    return names


def value_fingerprint(v, names=(), depth=0, seen=None):
    """JSON-able description of a value a kernel reads; equal values give equal fingerprints."""
    seen = set() if seen is None else seen
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return [type(v).__name__, repr(v)]
    if isinstance(v, np.generic):
        return ["np", v.dtype.str, repr(v.item())]
    if isinstance(v, np.ndarray):
        return ["ndarray", v.dtype.str, list(v.shape),
                hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()]
    if isinstance(v, (tuple, list)) and len(v) <= 1000:
        return [type(v).__name__] + [value_fingerprint(x, names, depth + 1, seen) for x in v]
    if isinstance(v, pytypes.ModuleType):
        attrs = {}
        if depth < _MAX_DEPTH:
            for n in sorted(names):
                a = getattr(v, n, None)
                if a is not None and not isinstance(a, pytypes.ModuleType):
                    attrs[n] = value_fingerprint(a, (), depth + 1, seen)
        return ["module", v.__name__, attrs]
    f = py_function(v)
    if isinstance(f, pytypes.FunctionType):
        if id(f) in seen or depth >= _MAX_DEPTH:
            return ["function", f.__module__, f.__qualname__]
        return ["function", function_fingerprint(f, depth + 1, seen)]
    try:
        from numba.core import types as nbtypes
        if isinstance(v, nbtypes.Type):
            return ["numba-type", str(v)]
    except ImportError:
        pass
    if isinstance(v, enum.Enum):            # numba compiles the member's value in
        return ["enum", type(v).__module__, type(v).__qualname__, v.name,
                value_fingerprint(v.value, (), depth + 1, seen)]
    named = _named(v)
    if named is not None:       # operator.add, math.sin, np.sin, a class: numba compiles *which* one
        return ["named", type(v).__qualname__, *named]
    return ["object", type(v).__module__, type(v).__qualname__]


def _named(v):
    """(module, qualified name) of a builtin function, ufunc, class or other object that names
    itself, else None."""
    if not isinstance(v, (type, pytypes.BuiltinFunctionType, pytypes.BuiltinMethodType, np.ufunc)) \
            and "__qualname__" not in getattr(v, "__dict__", {}) and not hasattr(type(v), "__call__"):
        return None
    name = getattr(v, "__qualname__", None) or getattr(v, "__name__", None)
    if not isinstance(name, str):
        return None
    module = getattr(v, "__module__", None)
    owner = getattr(v, "__self__", None)        # a builtin method: its object's type too
    if owner is not None and not isinstance(owner, pytypes.ModuleType):
        module = f"{module}:{type(owner).__module__}.{type(owner).__qualname__}"
    return [module if isinstance(module, str) else None, name]


def function_fingerprint(func, depth=0, seen=None):
    """JSON-able fingerprint of Python function ``func`` (or a numba dispatcher's py_func)."""
    func = py_function(func)
    seen = set() if seen is None else seen
    seen.add(id(func))
    code = func.__code__
    try:
        body = inspect.getsource(func)
    except (OSError, TypeError):        # exec'd code: no source; what the bytecode says
        body = code_fingerprint(code)
    names = _code_names(code)
    glob = {n: value_fingerprint(func.__globals__[n], names, depth, seen)
            for n in sorted(names) if n in func.__globals__}
    cells = func.__closure__ or ()
    closure = {n: value_fingerprint(c.cell_contents, names, depth, seen)
               for n, c in zip(code.co_freevars, cells) if _cell_filled(c)}
    return {"name": f"{func.__module__}.{func.__qualname__}", "file": code.co_filename,
            "line": code.co_firstlineno, "body": body, "globals": glob, "closure": closure,
            "defaults": value_fingerprint(func.__defaults__, names, depth, seen)}


def code_fingerprint(code):
    """A code object without its source: the bytecode and everything its instructions index
    into -- the names (``cuda.atomic.min`` and ``cuda.atomic.max`` differ only there), the
    variable names and the constants, nested code objects the same way."""
    consts = [code_fingerprint(c) if isinstance(c, pytypes.CodeType) else repr(c) for c in code.co_consts]
    return [code.co_code.hex(), consts, list(code.co_names), list(code.co_varnames),
            list(code.co_freevars), list(code.co_cellvars)]


def _cell_filled(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True
