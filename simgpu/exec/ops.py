"""Semantics of value-producing ops: one table keyed by op name, over lane arrays.

Operands arrive as numpy arrays (one value per lane) or numpy scalars (uniform values)
already converted to the types numba's typing rules chose (`ins.arg_tys`); results are
cast to the instruction's result type.  float32 stays float32 throughout.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numba import vectorize

from ..ir import types as T


def conv(v, ty):
    """Convert a lane value to numba type `ty` (C-style: float->int truncates, saturating as
    the GPU's cvt.rzi does)."""
    dt = T.np_dtype(ty)
    if isinstance(v, np.ndarray):
        if v.dtype == dt:
            return v
        if dt == np.bool_:
            return v != 0
        if v.dtype.kind == "f" and dt.kind in "iu":
            return float_to_int(v, dt, v.dtype == np.float64)
        return v.astype(dt)
    if isinstance(v, (np.generic, int, float, bool)):
        if dt == np.bool_:
            return np.bool_(v != 0)
        if isinstance(v, np.generic) and v.dtype == dt:
            return v
        if isinstance(v, (int,)) and not isinstance(v, bool) and dt.kind in "iu":
            return np.array(v).astype(dt)[()]
        if isinstance(v, (float, np.floating)) and dt.kind in "iu":
            return float_to_int(v, dt, not isinstance(v, (np.float32, np.float16)))[()]
        return np.asarray(v).astype(dt)[()]
    raise TypeError(type(v))


def _pymin(a, b):
    """Python's min(a, b): b if b < a else a (a NaN first operand stays)."""
    return np.where(b < a, b, a)


def _pymax(a, b):
    """Python's max(a, b): b if b > a else a."""
    return np.where(b > a, b, a)


def _fmin(a, b):
    """libdevice fmin: a NaN operand is ignored, -0.0 < +0.0."""
    r = np.where(np.isnan(a), b, np.where(b < a, b, a))
    return np.where((a == b) & (a == 0), np.where(np.signbit(a), a, b), r)


def _fmax(a, b):
    """libdevice fmax: a NaN operand is ignored, +0.0 > -0.0."""
    r = np.where(np.isnan(a), b, np.where(b > a, b, a))
    return np.where((a == b) & (a == 0), np.where(np.signbit(a), b, a), r)


def _np_minmax(which):
    """np.minimum / np.maximum as numba compiles them: a NaN operand wins (the first one)."""
    def f(a, b):
        keep_a = (a <= b) if which == "min" else (a >= b)
        r = np.where(keep_a, a, b)
        if np.asarray(r).dtype.kind != "f":
            return r
        return np.where(np.isnan(a) | np.isnan(b), np.where(np.isnan(a), a, b), r)
    return f


def _minmax_op(which):
    """min/max as numba-cuda compiles them: two float32/float64 operands (attrs['ieee'], set by
    the type rule) libdevice fmin/fmax; np.minimum/np.maximum (attrs['numpy']) keep a NaN;
    otherwise Python's comparison."""
    py, npf = BINARY[which], _np_minmax(which)
    ieee = _fmin if which == "min" else _fmax

    def sem(ins, v):
        a = ins.attrs
        return (npf if a.get("numpy") else ieee if a.get("ieee") else py)(v[0], v[1])
    return sem


def _floordiv(a, b):
    """Python's floor division; numba returns 0 for MIN // -1 (and for division by zero)."""
    r = np.floor_divide(a, b)
    dt = np.asarray(r).dtype
    if dt.kind == "i":
        r = np.where((a == np.iinfo(dt).min) & (b == -1), dt.type(0), r)
    return r


def _shift_amount(a, b):
    """(amount, operand width): the GPU's shl/shr take the amount as a u32 and clamp it to
    the width (NVVM truncates a 64-bit amount)."""
    dt = np.asarray(a).dtype
    amt = np.asarray(b).astype(np.int64).astype(np.uint64) & np.uint64(0xFFFFFFFF)
    return amt, dt.itemsize * 8, dt


def _lshift(a, b):
    amt, bits, dt = _shift_amount(a, b)
    r = np.left_shift(a, np.minimum(amt, bits - 1).astype(dt))
    return np.where(amt >= bits, dt.type(0), r)


def _rshift(a, b):
    amt, bits, dt = _shift_amount(a, b)
    r = np.right_shift(a, np.minimum(amt, bits - 1).astype(dt))   # signed: the sign fills
    return r if dt.kind == "i" else np.where(amt >= bits, dt.type(0), r)


def float_to_int(f, dt, from_f64=True):
    """A float -> integer dtype `dt` as the GPU converts (cvt.rzi): truncate, saturate at the
    type's range; a NaN gives the sign-bit pattern when the source is float64 or the destination
    64-bit, else 0 (measured on the H200: simgpu/ptx/sem_cvt.py nan_to_int)."""
    dt = np.dtype(dt)
    info = np.iinfo(dt)
    f = np.asarray(f, dtype=np.float64)
    lo, hi = float(info.min), float(info.max) + 1.0
    nan = np.isnan(f)
    ok = ~nan & (f > lo) & (f < hi)
    r = np.where(ok, f, 0.0).astype(dt)
    r = np.where(f >= hi, dt.type(info.max), np.where(f <= lo, dt.type(info.min), r))
    if from_f64 or dt.itemsize == 8:
        sign = np.array(1 << (dt.itemsize * 8 - 1), dtype=f"u{dt.itemsize}").view(dt)
        r = np.where(nan, sign, r)
    return r.astype(dt)


def _int_power(a, b, dt):
    """numba's int_power_impl (a ** b for an integer exponent b), lane-wise: exponentiation by
    squaring in the result type; an integer result passes through float64 (numba's
    `1.0 / r if invert else r`); 0 ** -n is MIN, other |a| > 1 ** -n is 0; |b| > 0x10000 is
    math.pow."""
    a = np.asarray(a).astype(dt)
    b = np.asarray(b)
    neg = b < 0
    e = np.where(neg, -b, b) if b.dtype.kind == "i" else b
    big = e > 0x10000
    left = np.where(big, 0, e).astype(np.uint64)
    r = np.ones(np.broadcast(a, b).shape, dtype=dt)
    base = a
    while np.any(left != 0):
        r = np.where((left & np.uint64(1)) != 0, r * base, r).astype(dt)
        left = left >> np.uint64(1)
        base = (base * base).astype(dt)
    a64 = a.astype(np.float64)
    f = np.where(neg, 1.0 / r.astype(np.float64), r.astype(np.float64))
    f = np.where(big, np.power(a64, b.astype(np.float64)), f)
    if dt.kind == "f":
        return np.where(neg | big, f.astype(dt), r)
    f = np.where(neg & (a != 1) & (a != -1), 0.0, f)
    out = float_to_int(f, dt)
    return np.where(neg & (a == 0), dt.type(np.iinfo(dt).min), out)


def _round_ndigits(x, nd):
    """numba-cuda's round(x, ndigits) (cpython/builtins.py round_ndigits), lane-wise: scale by a
    power of ten in float64, rint in x's type, scale back."""
    dt = np.asarray(x).dtype
    xf = np.asarray(x).astype(np.float64)
    nd = np.asarray(nd).astype(np.int64)
    pos = nd >= 0
    pow1 = _int_power(np.float64(10.0), np.where(pos, np.where(nd > 22, nd - 22, nd), -nd),
                      np.dtype(np.float64))
    pow2 = np.where(pos & (nd > 22), 1e22, 1.0)
    y = np.where(pos, (xf * pow1) * pow2, xf / pow1)
    # rint in x's type, compiled (measured on the compiled path) as cvt.rni.s64.f64 then back:
    # saturated at +-2^63, and -0.0 comes back as +0.0
    ry = float_to_int(np.rint(y.astype(dt).astype(np.float64)), np.int64).astype(np.float64)
    r = np.where(pos, (ry / pow2) / pow1, ry * pow1)
    r = np.where((pos & np.isinf(y)) | np.isinf(xf) | np.isnan(xf), xf, r)
    return r.astype(dt)


def _round(ins, v):
    """round(x): rint (typed to an integer); round(x, ndigits): numba's round_ndigits."""
    if len(v) == 1:
        return np.rint(v[0])
    return _round_ndigits(v[0], v[1])


def _pow(ins, v):
    a, b = v
    if np.asarray(b).dtype.kind in "iu":        # computed in the result type (uint64 ** int64:
        rt = ins.__dict__.get("result_ty")      # int64), as numba's int_power_impl does
        return _int_power(a, b, T.np_dtype(rt) if rt is not None else np.asarray(a).dtype)
    r = np.power(a, b)
    if np.any(b == 0.5):        # numpy's fast path is sqrt; C's pow (libdevice): pow(-inf, .5)
        a = np.asarray(a)       # is +inf and pow(-0.0, .5) is +0.0
        r = np.where((b == 0.5) & (a == -np.inf), np.inf, np.where((b == 0.5) & (a == 0), 0.0, r))
    return r.astype(np.result_type(np.asarray(a).dtype, np.asarray(b).dtype))


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": _floordiv, "mod": np.remainder,
    "lshift": _lshift, "rshift": _rshift, "and": np.bitwise_and, "or": np.bitwise_or,
    "xor": np.bitwise_xor, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal,
    "min": _pymin, "max": _pymax, "land": np.logical_and, "lor": np.logical_or,
}


def _bool_not(a):
    return np.logical_not(a)


UNARY = {"neg": np.negative, "pos": lambda a: a, "invert": np.invert, "not": _bool_not,
         "abs": np.abs, "truth": lambda a: a != 0 if np.asarray(a).dtype != np.bool_ else a,
         }


def _ufunc_on_first_call(fn):
    """numba's ufunc of `fn` (float64 and float32 loops), compiled -- or loaded from numba's
    cache -- when first called, not when this module is imported (0.4-0.6 s of every start)."""
    made = []

    def call(x):
        if not made:
            made.append(vectorize(["float64(float64)", "float32(float32)"], cache=True)(fn))
        return made[0](x)
    call.__name__ = call.__qualname__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call


@_ufunc_on_first_call
def _erf(x):
    return math.erf(x)


@_ufunc_on_first_call
def _erfc(x):
    return math.erfc(x)


@_ufunc_on_first_call
def _gamma(x):
    return math.gamma(x)


@_ufunc_on_first_call
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


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _sum_round_odd(a, b):
    """a + b in float64 rounded to odd (an inexact result gets an odd last bit), so that a
    second rounding to a narrower type is the correct rounding of the exact sum."""
    s, e = _two_sum(a, b)
    even = (np.asarray(s).view(np.uint64) & np.uint64(1)) == 0
    fix = even & (e != 0) & np.isfinite(s)
    return np.where(fix, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)


def _split(a):
    c = 134217729.0 * a                       # Veltkamp: 2**27 + 1
    hi = c - (c - a)
    return hi, a - hi


def _fma64(a, b, c):
    """Correctly rounded a*b+c in float64 (Boldo & Melquiond's emulated FMA: an exact product,
    TwoSum, a sum rounded to odd); lanes out of its safe range are computed exactly with
    fractions."""
    a, b, c = (np.asarray(v, dtype=np.float64) for v in (a, b, c))
    uh = a * b
    (ah, al), (bh, bl) = _split(a), _split(b)
    ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl
    th, tl = _two_sum(c, uh)
    z = th + _sum_round_odd(tl, ul)
    finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    z = np.where(finite, z, a * b + c)          # an inf or NaN operand: the plain IEEE result
    mag = np.maximum(np.abs(a), np.abs(b))
    odd = finite & (~np.isfinite(z) | (mag > 2.0 ** 500) | ((uh != 0) & (np.abs(uh) < 2.0 ** -900)) |
                    ((c != 0) & (np.abs(c) < 2.0 ** -900)))
    if np.any(odd):                             # rare: exact, one lane at a time
        A, B, C, O = np.broadcast_arrays(a, b, c, odd)
        z = np.array(np.broadcast_to(z, A.shape))
        for i in np.flatnonzero(O):
            z.flat[i] = _fma_exact(float(A.flat[i]), float(B.flat[i]), float(C.flat[i]))
    return z


def _fma_exact(a, b, c):
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return a * b + c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    try:
        r = float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf
    return r if r != 0 or exact != 0 else (a * b + c)       # keep IEEE's signed zero


def fused_mul_add(a, b, c):
    """a*b+c rounded once in the operands' float type (the GPU's fma.rn)."""
    dt = np.result_type(np.asarray(a).dtype, np.asarray(b).dtype, np.asarray(c).dtype)
    if dt == np.float64:
        with np.errstate(all="ignore"):
            return _fma64(a, b, c)
    s = np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)   # exact product
    s = s + np.asarray(c, dtype=np.float64)     # (float64 loops: mixed-type ones are slower)
    r = s.astype(dt)
    # rounding the float64 sum again is exact unless it landed on a midpoint of `dt` (or in its
    # subnormal range): only those lanes need the sum rounded to odd
    low = 52 - np.finfo(dt).nmant
    bits = np.asarray(s).view(np.uint64) & np.uint64((1 << low) - 1)
    suspect = bits == np.uint64(1 << (low - 1))
    suspect |= np.abs(r) < np.finfo(dt).tiny
    if suspect.any():
        p = np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)
        r = np.where(suspect, _sum_round_odd(p, np.asarray(c, np.float64)).astype(dt), r)
    return r


def _fma(a, b, c):
    """cuda.fma: a*b+c with one rounding."""
    return fused_mul_add(a, b, c)


# value op -> semantics(ins, operand values converted to ins.arg_tys)
VALUE_OPS = {
    **{op: (lambda f: lambda ins, v: f(v[0], v[1]))(f) for op, f in BINARY.items()},
    "pow": _pow, "min": _minmax_op("min"), "max": _minmax_op("max"), "round": _round,
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
    r = sem(ins, vals)
    if isinstance(r, np.ndarray) and r.ndim == 0:      # np.where of uniform values: a scalar
        r = r[()]
    return r
