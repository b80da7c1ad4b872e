"""Semantics of value-producing ops: one table keyed by op name, over lane arrays.

Operands arrive as numpy arrays (one value per lane) or numpy scalars (uniform values)
already converted to the types numba's typing rules chose (`ins.arg_tys`); results are
cast to the instruction's result type.  float32 stays float32 throughout.
"""
from __future__ import annotations

import math

import numpy as np
from numba import vectorize

from ..ir import types as T


def conv(v, ty):
    """Convert a lane value to numba type `ty` (C-style: float->int truncates)."""
    dt = T.np_dtype(ty)
    if isinstance(v, np.ndarray):
        if v.dtype == dt:
            return v
        if dt == np.bool_:
            return v != 0
        return v.astype(dt)
    if isinstance(v, (np.generic, int, float, bool)):
        if dt == np.bool_:
            return np.bool_(v != 0)
        if isinstance(v, np.generic) and v.dtype == dt:
            return v
        if isinstance(v, (int,)) and not isinstance(v, bool) and dt.kind in "iu":
            return np.array(v).astype(dt)[()]
        return np.asarray(v).astype(dt)[()]
    raise TypeError(type(v))


def _pymin(a, b):
    return np.where(b < a, b, a)


def _pymax(a, b):
    return np.where(b > a, b, a)


def _floordiv(a, b):
    return np.floor_divide(a, b)


def _rshift(a, b):
    return np.right_shift(a, b)


def _pow(a, b):
    if np.asarray(a).dtype.kind in "iu" and np.any(np.asarray(b) < 0):
        return np.where(np.asarray(b) < 0, 0, np.power(a, np.abs(b)))
    return np.power(a, b)


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": _floordiv, "mod": np.remainder, "pow": _pow,
    "lshift": np.left_shift, "rshift": _rshift, "and": np.bitwise_and, "or": np.bitwise_or,
    "xor": np.bitwise_xor, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal,
    "min": _pymin, "max": _pymax, "land": np.logical_and, "lor": np.logical_or,
}


def _bool_not(a):
    return np.logical_not(a)


UNARY = {"neg": np.negative, "pos": lambda a: a, "invert": np.invert, "not": _bool_not,
         "abs": np.abs, "truth": lambda a: a != 0 if np.asarray(a).dtype != np.bool_ else a,
         "round": lambda a: np.rint(a)}


@vectorize(["float64(float64)", "float32(float32)"], cache=True)
def _erf(x):
    return math.erf(x)


@vectorize(["float64(float64)", "float32(float32)"], cache=True)
def _erfc(x):
    return math.erfc(x)


@vectorize(["float64(float64)", "float32(float32)"], cache=True)
def _gamma(x):
    return math.gamma(x)


@vectorize(["float64(float64)", "float32(float32)"], cache=True)
def _lgamma(x):
    return math.lgamma(x)


def _ieee_remainder(x, y):
    return x - y * np.rint(x / y)


MATH = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "exp": np.exp, "expm1": np.expm1, "exp2": np.exp2,
    "log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10, "sqrt": np.sqrt,
    "pow": np.power, "atan2": np.arctan2, "hypot": np.hypot, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "fabs": np.fabs, "erf": _erf, "erfc": _erfc, "gamma": _gamma,
    "lgamma": _lgamma, "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "copysign": np.copysign, "fmod": np.fmod, "ldexp": np.ldexp, "radians": np.radians,
    "degrees": np.degrees, "remainder": _ieee_remainder,
}


def _float16_safe(fn):
    """numpy has no float16 loops for numba-compiled ufuncs: compute in float32, round back."""
    def wrapped(*args):
        if any(np.asarray(a).dtype == np.float16 for a in args):
            out = fn(*[np.asarray(a, dtype=np.float32) for a in args])
            return out.astype(np.float16) if np.asarray(out).dtype.kind == "f" else out
        return fn(*args)
    return wrapped


for _k in ("erf", "erfc", "gamma", "lgamma"):
    MATH[_k] = _float16_safe(MATH[_k])


# -- bit intrinsics -----------------------------------------------------------
def _unsigned(a):
    a = np.asarray(a)
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.kind == "i" else a


def popc(a):
    a = np.asarray(a)
    return np.bitwise_count(_unsigned(a)).astype(a.dtype)


def _bit_length(u):
    """Number of significant bits of unsigned ints (0 for 0)."""
    u = u.astype(np.uint64)
    n = np.zeros(u.shape, dtype=np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        big = u >= (np.uint64(1) << np.uint64(s))
        n = n + np.where(big, s, 0)
        u = np.where(big, u >> np.uint64(s), u)
    return n + (u > 0)


def clz(a):
    a = np.asarray(a)
    bits = a.dtype.itemsize * 8
    return (bits - _bit_length(_unsigned(a))).astype(a.dtype)


def ffs(a):
    a = np.asarray(a)
    bits = a.dtype.itemsize * 8
    u = a.astype(np.int64).astype(np.uint64) & np.uint64((1 << bits) - 1)
    low = u & (~u + np.uint64(1))
    return np.where(u == 0, 0, _bit_length(low)).astype(np.uint32)


def brev(a):
    a = np.asarray(a)
    bits = a.dtype.itemsize * 8
    u = a.astype(np.uint64)
    r = np.zeros(u.shape, dtype=np.uint64)
    for i in range(bits):
        r |= ((u >> np.uint64(i)) & np.uint64(1)) << np.uint64(bits - 1 - i)
    return r.astype(a.dtype)


def _fma(a, b, c):
    """a*b+c with one rounding: exact in float64 for float32 inputs."""
    if np.asarray(a).dtype == np.float32:
        return (np.float64(1) * a * b + c).astype(np.float32)
    return a * b + c


# value op -> semantics(ins, operand values converted to ins.arg_tys)
VALUE_OPS = {
    **{op: (lambda f: lambda ins, v: f(v[0], v[1]))(f) for op, f in BINARY.items()},
    **{op: (lambda f: lambda ins, v: f(v[0]))(f) for op, f in UNARY.items()},
    "math": lambda ins, v: MATH[ins.attrs["fn"]](*v),
    "cast": lambda ins, v: conv(v[0], ins.attrs["to"]),
    "select": lambda ins, v: np.where(v[0], v[1], v[2]),
    "fma": lambda ins, v: _fma(v[0], v[1], v[2]),
    "cbrt": lambda ins, v: np.cbrt(v[0]),
    "popc": lambda ins, v: popc(v[0]), "clz": lambda ins, v: clz(v[0]),
    "ffs": lambda ins, v: ffs(v[0]), "brev": lambda ins, v: brev(v[0]),
}


def evaluate(ins, vals):
    """Compute a value op.  `vals` are already converted to ins.arg_tys."""
    sem = VALUE_OPS.get(ins.op)
    if sem is None:
        raise NotImplementedError(ins.op)
    return sem(ins, vals)
