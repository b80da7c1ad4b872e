"""Types: numba's own typing rules, asked of numba's CUDA typing context.

simgpu types every operation the way numba.cuda does (a float32 times a Python float
literal is float64; int32 + int32 is int64; math.floor(float32) is float32 on CUDA).
The oracle is numba-cuda's typing context when installed, else numba's CPU context with
the CUDA differences patched in.  Answers are cached per (function, argument types).
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numba.core import types as nt

from ..errors import TypingError
from .._compat import load_numba_cuda

INT64, INT32, FLOAT32, FLOAT64, BOOL = nt.int64, nt.int32, nt.float32, nt.float64, nt.boolean
UINT32, UINT64, FLOAT16 = nt.uint32, nt.uint64, nt.float16


@dataclass(frozen=True)
class ArrayType:
    dtype: object          # numba scalar type
    ndim: int
    space: str             # 'global' | 'shared' | 'local' | 'const'

    def __str__(self):
        return f"{self.space} array({self.dtype}, {self.ndim}d)"


@lru_cache(maxsize=None)
def _from_numpy(dt):
    from numba.np.numpy_support import from_dtype
    if dt == np.bool_:
        return BOOL
    return from_dtype(dt)


def from_numpy(dt) -> nt.Type:
    return _from_numpy(np.dtype(dt))


@lru_cache(maxsize=None)
def np_dtype(t) -> np.dtype:
    if t == BOOL:
        return np.dtype(np.bool_)
    from numba.np.numpy_support import as_dtype
    return as_dtype(t)


def typeof_value(v):
    """The numba type of a Python/numpy constant as numba would type a literal."""
    if isinstance(v, (bool, np.bool_)):
        return BOOL
    if isinstance(v, np.generic):
        return from_numpy(v.dtype)
    if isinstance(v, int):
        return INT64 if -2**63 <= v < 2**63 else UINT64
    if isinstance(v, float):
        return FLOAT64
    raise TypeError(type(v))


_ctx = None


def _context():
    global _ctx
    if _ctx is None:
        load_numba_cuda()
        try:
            from numba.cuda.descriptor import cuda_target
            _ctx = cuda_target.typing_context
        except Exception:  # numba-cuda not installed: CPU rules + CUDA patches
            from numba.core.registry import cpu_target
            _ctx = cpu_target.typing_context
        _ctx.refresh()
    return _ctx


_FLOAT_ROUNDING = {math.floor, math.ceil, math.trunc}


@lru_cache(maxsize=None)
def resolve(fn, arg_types: tuple):
    """Return (converted argument types, result type) for fn(*args) under numba's rules,
    or None when numba has no implementation."""
    ctx = _context()
    try:
        sig = ctx.resolve_function_type(fn, arg_types, {})
    except Exception:
        sig = None
    if sig is None:
        return None
    ret = sig.return_type
    if fn in _FLOAT_ROUNDING and isinstance(arg_types[0], nt.Float) and isinstance(ret, nt.Integer):
        ret = arg_types[0]   # CUDA types floor/ceil/trunc of a float as that float
    args = tuple(sig.args) if len(sig.args) == len(arg_types) else arg_types
    return args, ret


def unify(a, b):
    if a is None:
        return b
    if b is None or a == b:
        return a
    if isinstance(a, ArrayType) or isinstance(b, ArrayType):
        return None
    u = _context().unify_types(a, b)
    if u is None or isinstance(u, nt.Optional):
        return None
    if isinstance(u, nt.Literal):
        u = u.literal_type
    return u


def is_int(t):
    return isinstance(t, nt.Integer)


def is_float(t):
    return isinstance(t, nt.Float)


def is_bool(t):
    return t == BOOL


BINOPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow,
    "lshift": operator.lshift, "rshift": operator.rshift, "and": operator.and_,
    "or": operator.or_, "xor": operator.xor,
    "lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge,
    "eq": operator.eq, "ne": operator.ne,
}
UNOPS = {"neg": operator.neg, "pos": operator.pos, "invert": operator.invert, "not": operator.not_}


def binop_type(op, a, b, loc=None):
    r = resolve(BINOPS[op], (a, b))
    if r is None:
        raise TypingError(f"numba has no '{op}' for ({a}, {b})", loc)
    return r


def unop_type(op, a, loc=None):
    if op == "not":
        return (a,), BOOL
    r = resolve(UNOPS[op], (a,))
    if r is None:
        raise TypingError(f"numba has no '{op}' for {a}", loc)
    return r
