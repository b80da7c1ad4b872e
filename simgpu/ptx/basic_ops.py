"""Arithmetic semantics of the basic PTX instructions, as a table keyed by opcode.

``lookup(opcode, mods, types)`` has the same contract as ``simgpu.ptx.semantics.lookup``:
it returns a callable taking one numpy array (or 0-d array) per source operand, viewed as the
operand's numpy dtype (:func:`np_dtype`), and returning the destination value in the
destination type's dtype -- or ``None`` when the combination is not covered (the executor then
reports the instruction as unsupported rather than guess).  ``signature(opcode, mods, types)``
gives (destination type, [source types]) -- the PTX type each operand is read as.

Integer arithmetic wraps (numpy fixed-width dtypes; callers run under ``np.errstate(all=
'ignore')``).  Float32 arithmetic is done in float32.  ``fma.rn.f32`` is rounded once: the
float64 product of two float32 values is exact (24+24 < 53 bits); the float64 sum is then
made *round-to-odd* (TwoSum gives the exact error; if the sum is inexact and its last bit is
even, step one ulp towards the exact value), and rounding a round-to-odd value with >= p+2
bits to float32 (p=24) is the correctly rounded result (Boldo & Melquiond 2008).
"""
from __future__ import annotations

import numpy as np

DTYPES = {
    "f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
    "f16x2": np.uint32, "bf16x2": np.uint32, "pred": np.bool_,
    "u8": np.uint8, "b8": np.uint8, "s8": np.int8, "u16": np.uint16, "b16": np.uint16,
    "s16": np.int16, "u32": np.uint32, "b32": np.uint32, "s32": np.int32,
    "u64": np.uint64, "b64": np.uint64, "s64": np.int64,
}


def np_dtype(t):
    return np.dtype(DTYPES[t])


def width(t):
    """Size in bytes of a PTX type (pred: 1)."""
    return np_dtype(t).itemsize


def wider(t):
    return t[0] + str(2 * int(t[1:]))


def is_float(t):
    return t in ("f16", "f32", "f64")


def is_signed(t):
    return t[0] == "s"


# ---- operand signatures ----------------------------------------------------------------
def _sig_same(mods, types):
    t = types[-1]
    return t, None                                  # None: every source has type t


def _sig_mul(mods, types):
    t = types[0]
    if "wide" in mods:
        return wider(t), [t, t]
    return t, [t, t]


def _sig_mad(mods, types):
    t = types[0]
    if "wide" in mods:
        return wider(t), [t, t, wider(t)]
    return t, [t, t, t]


SIGNATURES = {
    "mul": _sig_mul, "mad": _sig_mad,
    "shl": lambda m, t: (t[0], [t[0], "u32"]), "shr": lambda m, t: (t[0], [t[0], "u32"]),
    "setp": lambda m, t: ("pred", [t[0], t[0], "pred"]),
    "selp": lambda m, t: (t[0], [t[0], t[0], "pred"]),
    "slct": lambda m, t: (t[0], [t[0], t[0], t[1]]),
    "cvt": lambda m, t: (t[0], [t[1]]),
    "popc": lambda m, t: ("u32", [t[0]]), "clz": lambda m, t: ("u32", [t[0]]),
    "bfind": lambda m, t: ("u32", [t[0]]),
    "testp": lambda m, t: ("pred", [t[0]]),
    "bfe": lambda m, t: (t[0], [t[0], "u32", "u32"]),
    "bfi": lambda m, t: (t[0], [t[0], t[0], "u32", "u32"]),
}


def signature(opcode, mods, types):
    return SIGNATURES.get(opcode, _sig_same)(mods, types)


# ---- helpers -----------------------------------------------------------------------------
def _ftz(x):
    if x.dtype == np.float32:
        tiny = np.float32(1.17549435e-38)
        return np.where(np.abs(x) < tiny, np.copysign(np.float32(0), x), x).astype(np.float32)
    return x


def _with_ftz(mods, f):
    if "ftz" not in mods:
        return f
    return lambda *a: _ftz(f(*(_ftz(np.asarray(x)) for x in a)))


def _exact_rounding(mods, t):
    """True when the rounding modifiers ask for what numpy does (round to nearest even)."""
    return not any(m in mods for m in ("rz", "rm", "rp"))


def _umulhi64(a, b):
    a, b = np.asarray(a, np.uint64), np.asarray(b, np.uint64)
    m = np.uint64(0xFFFFFFFF)
    s = np.uint64(32)
    al, ah, bl, bh = a & m, a >> s, b & m, b >> s
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    mid = (ll >> s) + (lh & m) + (hl & m)
    return hh + (lh >> s) + (hl >> s) + (mid >> s)


def mul_hi(a, b, t):
    n = int(t[1:])
    if n < 64:
        w = np.int64 if is_signed(t) else np.uint64
        return ((a.astype(w) * b.astype(w)) >> w(n)).astype(np_dtype(t))
    hi = _umulhi64(a.view(np.uint64), b.view(np.uint64))
    if is_signed(t):
        hi = hi - np.where(a < 0, b.view(np.uint64), 0).astype(np.uint64) \
            - np.where(b < 0, a.view(np.uint64), 0).astype(np.uint64)
    return hi.view(np_dtype(t))


def mul_wide(a, b, t):
    w = np_dtype(wider(t))
    return a.astype(w) * b.astype(w)


def fma_f32(a, b, c):
    """Correctly rounded float32 a*b+c (see the module docstring)."""
    p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
    c = np.asarray(c, np.float64)
    s = p + c
    bb = s - p
    e = (p - (s - bb)) + (c - bb)                   # TwoSum: s + e == p + c exactly
    s = np.array(s, np.float64, ndmin=1)
    e = np.broadcast_to(e, s.shape)
    even = (s.view(np.uint64) & np.uint64(1)) == 0
    fix = even & (e != 0) & np.isfinite(s)
    if fix.any():
        s[fix] = np.nextafter(s[fix], np.where(e[fix] > 0, np.inf, -np.inf))
    out = s.astype(np.float32)
    return out if np.ndim(p + c) else out[0]


def fma_f64(a, b, c):
    import math
    if hasattr(math, "fma"):
        f = np.frompyfunc(math.fma, 3, 1)
        return f(a, b, c).astype(np.float64)
    return None


def int_div(a, b, t):
    """C-style truncating division; x/0 gives all ones (what the hardware returns)."""
    zero = b == 0
    bs = np.where(zero, 1, b).astype(a.dtype)
    if is_signed(t):
        q = np.abs(a.astype(np.int64) if a.dtype.itemsize < 8 else a) // np.abs(bs)
        q = np.where((a < 0) != (bs < 0), -q, q)
        if a.dtype.itemsize == 8:                   # INT64_MIN / -1 wraps
            q = np.where((bs == -1), (-a.view(np.uint64)).view(np.int64), q)
    else:
        q = a // bs
    return np.where(zero, np.array(-1).astype(a.dtype) if is_signed(t)
                    else np.iinfo(a.dtype).max, q).astype(a.dtype)


def int_rem(a, b, t):
    """C-style remainder (sign of the dividend); x%0 gives x."""
    q = int_div(a, b, t)
    r = a - q * b
    return np.where(b == 0, a, r).astype(a.dtype)


def shift_left(a, b):
    n = a.dtype.itemsize * 8
    big = b >= n
    out = a << np.minimum(b, n - 1).astype(a.dtype)
    return np.where(big, 0, out).astype(a.dtype)


def shift_right(a, b):
    n = a.dtype.itemsize * 8
    amt = np.minimum(b, n - 1).astype(a.dtype)
    if a.dtype.kind == "i":
        return (a >> amt).astype(a.dtype)           # arithmetic; >= n fills with the sign
    return np.where(b >= n, 0, a >> amt).astype(a.dtype)


def popc(a):
    a = np.asarray(a)
    u = a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.ndim else a.astype(np.uint64)
    c = np.zeros(np.shape(u), np.uint32)
    x = u.astype(np.uint64)
    while np.any(x):
        c += (x & np.uint64(1)).astype(np.uint32)
        x = x >> np.uint64(1)
    return c


def clz(a):
    n = a.dtype.itemsize * 8
    x = a.astype(np.uint64) & np.uint64((1 << n) - 1) if a.dtype.kind == "u" else \
        a.view(np.dtype(f"u{a.dtype.itemsize}")).astype(np.uint64)
    c = np.full(x.shape, n, np.uint32)
    for k in range(n):
        bit = (x >> np.uint64(k)) & np.uint64(1)
        c = np.where(bit != 0, np.uint32(n - 1 - k), c)
    return c


def brev(a):
    n = a.dtype.itemsize * 8
    u = a.view(np.dtype(f"u{a.dtype.itemsize}"))
    out = np.zeros_like(u)
    for k in range(n):
        out |= ((u >> u.dtype.type(k)) & u.dtype.type(1)) << u.dtype.type(n - 1 - k)
    return out.view(a.dtype)


# ---- setp comparisons --------------------------------------------------------------------
def _nan(a, b):
    return np.isnan(a) | np.isnan(b)


COMPARE = {
    "eq": np.equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater,
    "hs": np.greater_equal,
    "ne": lambda a, b: np.not_equal(a, b) & ~_nan(a, b) if a.dtype.kind == "f"
    else np.not_equal(a, b),
    "equ": lambda a, b: np.equal(a, b) | _nan(a, b),
    "neu": lambda a, b: np.not_equal(a, b),
    "ltu": lambda a, b: np.less(a, b) | _nan(a, b),
    "leu": lambda a, b: np.less_equal(a, b) | _nan(a, b),
    "gtu": lambda a, b: np.greater(a, b) | _nan(a, b),
    "geu": lambda a, b: np.greater_equal(a, b) | _nan(a, b),
    "num": lambda a, b: ~_nan(a, b),
    "nan": _nan,
}


def _setp(mods, types):
    cmp = next((m for m in mods if m in COMPARE), None)
    if cmp is None:
        return None
    f = COMPARE[cmp]
    return _with_ftz(mods, lambda a, b: np.asarray(f(a, b), np.bool_))


# ---- cvt ---------------------------------------------------------------------------------
_FLOAT_TO_INT_ROUND = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def _f32_to_bf16(x):
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1))) >> np.uint64(16)
    nan = np.isnan(np.asarray(x, np.float32))
    return np.where(nan, np.uint16(0x7FC0), rounded.astype(np.uint16))


def _cvt(mods, types):
    dst, src = types
    dd, sd = np_dtype(dst), np_dtype(src)
    irnd = next((m for m in mods if m in _FLOAT_TO_INT_ROUND), None)
    if dst == "bf16" and src == "f32" and "rn" in mods:
        return _f32_to_bf16
    if "bf16" in (dst, src) or "x2" in dst + src or "sat" in mods:
        return None
    if is_float(src) and not is_float(dst):               # float -> int: round, saturate
        rnd = _FLOAT_TO_INT_ROUND.get(irnd)
        if rnd is None:
            return None
        lo, hi = np.iinfo(dd).min, np.iinfo(dd).max

        def f2i(a):
            r = rnd(np.asarray(a, np.float64))
            r = np.where(np.isnan(r), 0, np.clip(r, lo, hi))
            big = r >= 2.0 ** 63                           # float64 of hi may round up
            return np.where(big, np.array(hi, dd), r.astype(dd, casting="unsafe")).astype(dd)
        return f2i
    if is_float(dst) and is_float(src):
        if irnd:                                           # round to integral, same type
            return None if dst != src else _with_ftz(mods, lambda a: _FLOAT_TO_INT_ROUND[irnd](a))
        if dd.itemsize < sd.itemsize and not _exact_rounding(mods, dst):
            return None
        return _with_ftz(mods, lambda a: np.asarray(a).astype(dd))
    if is_float(dst):                                      # int -> float
        if not _exact_rounding(mods, dst):
            return None
        return lambda a: np.asarray(a).astype(dd)
    return lambda a: np.asarray(a).astype(dd)              # int -> int: wrap / extend


# ---- the table ---------------------------------------------------------------------------
def _arith(fn):
    """Factory for a float/int op whose numpy form is right for every type and rounding
    mode numpy uses (round to nearest even)."""
    def factory(mods, types):
        if not _exact_rounding(mods, types[-1]) or "sat" in mods:
            return None
        return _with_ftz(mods, fn)
    return factory


def _mul(mods, types):
    t = types[0]
    if "wide" in mods:
        return lambda a, b: mul_wide(a, b, t)
    if "hi" in mods:
        return lambda a, b: mul_hi(a, b, t)
    return _arith(np.multiply)(mods, types)


def _mad(mods, types):
    t = types[0]
    if "wide" in mods:
        return lambda a, b, c: mul_wide(a, b, t) + c
    if "hi" in mods:
        return lambda a, b, c: mul_hi(a, b, t) + c
    if is_float(t):
        return _fma(mods, types)
    return lambda a, b, c: a * b + c


def _fma(mods, types):
    t = types[0]
    if not _exact_rounding(mods, t) or "sat" in mods:
        return None
    if t == "f32":
        return _with_ftz(mods, fma_f32)
    if t == "f64":
        return fma_f64
    return None


def _div(mods, types):
    t = types[0]
    if is_float(t):                        # .rn correctly rounded; .approx/.full are within
        return _arith(np.divide)(mods, types)      # the ISA's error bound of it
    return lambda a, b: int_div(a, b, t)


def _minmax(fmin, imin):
    def factory(mods, types):
        if is_float(types[0]):
            return _with_ftz(mods, fmin) if "NaN" not in mods else None
        return imin
    return factory


def _unary_float(fn):
    def factory(mods, types):
        if not is_float(types[0]):
            return None
        return _with_ftz(mods, lambda a: fn(a).astype(a.dtype))
    return factory


def _testp(mods, types):
    tests = {"finite": np.isfinite, "infinite": np.isinf, "number": lambda a: ~np.isnan(a),
             "notanumber": np.isnan,
             "normal": lambda a: np.isfinite(a) & (np.abs(a) >= np.finfo(a.dtype).tiny),
             "subnormal": lambda a: (a != 0) & (np.abs(a) < np.finfo(a.dtype).tiny)}
    m = next((m for m in mods if m in tests), None)
    return tests[m] if m else None


TABLE = {
    "add": _arith(np.add),
    "sub": _arith(np.subtract),
    "mul": _mul,
    "mad": _mad,
    "fma": _fma,
    "div": _div,
    "rem": lambda m, t: (lambda a, b: int_rem(a, b, t[0])) if not is_float(t[0]) else None,
    "neg": lambda m, t: _with_ftz(m, np.negative),
    "abs": lambda m, t: _with_ftz(m, np.abs),
    "min": _minmax(np.fmin, np.minimum),
    "max": _minmax(np.fmax, np.maximum),
    "and": lambda m, t: np.logical_and if t[0] == "pred" else np.bitwise_and,
    "or": lambda m, t: np.logical_or if t[0] == "pred" else np.bitwise_or,
    "xor": lambda m, t: np.logical_xor if t[0] == "pred" else np.bitwise_xor,
    "not": lambda m, t: np.logical_not if t[0] == "pred" else np.invert,
    "cnot": lambda m, t: lambda a: (a == 0).astype(a.dtype),
    "shl": lambda m, t: shift_left,
    "shr": lambda m, t: shift_right,
    "setp": _setp,
    "selp": lambda m, t: lambda a, b, c: np.where(c, a, b).astype(a.dtype),
    "slct": lambda m, t: lambda a, b, c: np.where(c >= 0, a, b).astype(a.dtype),
    "cvt": _cvt,
    "popc": lambda m, t: popc,
    "clz": lambda m, t: clz,
    "brev": lambda m, t: brev,
    "copysign": lambda m, t: lambda a, b: np.copysign(b, a).astype(b.dtype),
    "testp": _testp,
    "sqrt": _unary_float(np.sqrt),
    "rsqrt": _unary_float(lambda a: 1 / np.sqrt(a)),
    "rcp": _unary_float(lambda a: 1 / a),
    "ex2": _unary_float(np.exp2),
    "lg2": _unary_float(np.log2),
    "sin": _unary_float(np.sin),
    "cos": _unary_float(np.cos),
    "tanh": _unary_float(np.tanh),
}


def lookup(opcode, mods, types):
    """Callable computing ``opcode.mods.types`` (see the module docstring) or None."""
    factory = TABLE.get(opcode)
    if factory is None or not types:
        return None
    try:
        return factory(tuple(mods), tuple(types))
    except (KeyError, ValueError, IndexError):
        return None
