"""Resolve the names a kernel reads from its globals and closure.

A name resolves to one of:
  Intrinsic(path)   something of numba.cuda / simgpu.cuda / math / numpy / numba, by path
                    ('cuda.threadIdx.x', 'math.sin', 'cast.float32', 'builtin.min', ...)
  a Python constant (int, float, bool, numpy scalar, tuple of those)
  a numpy array     (read as a constant array, as numba.cuda freezes global arrays)
  DeviceFunction    a Python function to inline (numba device function or simgpu.jit)
"""
from __future__ import annotations

import builtins
import math
import types as pytypes
from dataclasses import dataclass

import numpy as np

from .stubs import is_stub, stub_path


@dataclass(frozen=True)
class Intrinsic:
    path: str

    def attr(self, name):
        return Intrinsic(f"{self.path}.{name}")


@dataclass(frozen=True)
class DeviceFunction:
    py_func: object


_NUMPY_TYPES = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "float32", "float64", "intp", "uintp"]
_NUMBA_TYPES = _NUMPY_TYPES + ["boolean", "b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8",
                               "f2", "f4", "f8", "int_", "float_", "double", "half"]
_ALIAS = {"bool_": "boolean", "b1": "boolean", "i1": "int8", "i2": "int16", "i4": "int32",
          "i8": "int64", "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
          "f2": "float16", "f4": "float32", "f8": "float64", "int_": "int64", "float_": "float64",
          "double": "float64", "half": "float16", "intp": "int64", "uintp": "uint64"}

_identity = None


def _module_kind(obj):
    """'cuda', 'math', 'np', 'numba' for the modules kernels reach names through."""
    if isinstance(obj, pytypes.ModuleType):
        name = obj.__name__
        if name == "simgpu.cuda":
            return "cuda"
        if name in ("numba.cuda", "numba_cuda.numba.cuda") or name.endswith("numba.cuda"):
            return "cuda"
        if name == "math":
            return "math"
        if name == "numpy":
            return "np"
        if name == "numba":
            return "numba"
        if name in ("numba.cuda.atomic", "simgpu.cuda.atomic"):
            return "cuda.atomic"
    return None


def _build_identity():
    """Objects that kernels commonly import directly: id -> Intrinsic."""
    table = {}
    for n in dir(math):
        if not n.startswith("_"):
            table[id(getattr(math, n))] = Intrinsic(f"math.{n}")
    for n in _NUMPY_TYPES:
        if hasattr(np, n):
            table[id(getattr(np, n))] = Intrinsic(f"cast.{_ALIAS.get(n, n)}")
    for n in ("sqrt", "exp", "log", "sin", "cos", "tan", "tanh", "abs", "fabs", "floor", "ceil",
              "minimum", "maximum", "isnan", "isinf", "arctan2", "exp2", "log2", "log10", "power"):
        if hasattr(np, n):
            table[id(getattr(np, n))] = Intrinsic(f"np.{n}")
    try:
        import numba
        for n in _NUMBA_TYPES:
            if hasattr(numba, n):
                table[id(getattr(numba, n))] = Intrinsic(f"cast.{_ALIAS.get(n, n)}")
    except ImportError:  # pragma: no cover
        pass
    try:
        from numba import cuda as nb_cuda
        for n in dir(nb_cuda):
            if not n.startswith("_"):
                try:
                    obj = getattr(nb_cuda, n)
                except Exception:
                    continue
                if not isinstance(obj, (int, float, str, pytypes.ModuleType)) and obj is not None:
                    table.setdefault(id(obj), Intrinsic(f"cuda.{n}"))
    except Exception:
        pass
    for n, obj in vars(builtins).items():
        if n in ("min", "max", "abs", "range", "len", "round", "pow", "divmod"):
            table[id(obj)] = Intrinsic(f"builtin.{n}")
        elif n in ("int", "float", "bool", "complex"):
            table[id(obj)] = Intrinsic(f"cast.{ {'int': 'int64', 'float': 'float64', 'bool': 'boolean', 'complex': 'complex128'}[n]}")
    return table


def identity_table():
    global _identity
    if _identity is None:
        _identity = _build_identity()
    return _identity


def classify(obj):
    """What a global/closure object means inside a kernel (see module docstring)."""
    if isinstance(obj, (bool, int, float, np.number, np.bool_)):
        return obj
    if is_stub(obj):
        return Intrinsic(stub_path(obj))
    kind = _module_kind(obj)
    if kind:
        return Intrinsic(kind)
    hit = identity_table().get(id(obj))
    if hit is not None:
        return hit
    if isinstance(obj, np.ndarray):
        return obj
    if isinstance(obj, tuple) and all(isinstance(v, (bool, int, float, np.number)) for v in obj):
        return obj
    if isinstance(obj, np.dtype):
        return Intrinsic(f"cast.{_ALIAS.get(obj.name, obj.name)}")
    try:
        from numba.core import types as nt
        if isinstance(obj, nt.Number) or isinstance(obj, nt.Boolean):
            return Intrinsic(f"cast.{obj.name}")
    except ImportError:  # pragma: no cover
        pass
    py = getattr(obj, "py_func", None)          # numba dispatcher or simgpu Kernel/DeviceFunction
    if py is not None and isinstance(py, pytypes.FunctionType):
        return DeviceFunction(py)
    if isinstance(obj, pytypes.FunctionType):
        return DeviceFunction(obj)
    return None


def lookup(fn, name):
    """Resolve a free name of python function `fn` (closure first, then globals, then builtins)."""
    code = fn.__code__
    if fn.__closure__ and name in code.co_freevars:
        cell = fn.__closure__[code.co_freevars.index(name)]
        try:
            return True, cell.cell_contents
        except ValueError:
            return False, None
    if name in fn.__globals__:
        return True, fn.__globals__[name]
    if hasattr(builtins, name):
        return True, getattr(builtins, name)
    return False, None
