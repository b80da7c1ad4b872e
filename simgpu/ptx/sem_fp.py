"""Floating-point core of :mod:`simgpu.ptx.semantics`: formats, exact rounding, error-free transforms.

Every small-format result (f32, f16, bf16) is produced the same way: the exact operands are
widened to float64, the operation yields a float64 value ``y`` that is either the exact result
or the exact result rounded *to odd* in 53 bits (``ro``), or (division, square root) the
correctly rounded float64 result, which for 24-bit operands never lands on a 24-bit rounding
boundary unless it is exact; ``y`` is then rounded once to the destination format in the
requested direction.  53 >= 24 + 2, so this single final rounding equals the correctly rounded
result in every IEEE direction (no double-rounding).  float64 results use numpy (which is IEEE
round-to-nearest-even), Boldo-Melquiond's emulated FMA (TwoProduct/TwoSum + round-to-odd), and
exact ``fractions.Fraction`` arithmetic for directed rounding and the rare FMA operand ranges
where the error-free transforms could under/overflow.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

RN, RZ, RM, RP = "rn", "rz", "rm", "rp"
FLOAT_RND = (RN, RZ, RM, RP)
INT_RND = {"rni": RN, "rzi": RZ, "rmi": RM, "rpi": RP}

# Canonical NaN bit patterns written for NaN results.
F32_NAN = 0x7FFFFFFF                    # PTX ISA / sm_90: canonical f32 NaN
F16_NAN = 0x7FFF                        # PTX ISA: canonical f16 NaN
BF16_NAN = 0x7FFF                       # PTX ISA: canonical bf16 NaN
F64_NAN = 0xFFF8000000000000            # unverified on hardware (CUDART_NAN's pattern)


class Fmt:
    """A floating-point storage format: numpy storage dtype, its bit dtype and field masks."""

    def __init__(self, name, store, bits, sign, expmask, nan, max_finite):
        self.name, self.store, self.bits = name, np.dtype(store), np.dtype(bits)
        self.sign, self.expmask, self.nan, self.max_finite = sign, expmask, nan, max_finite


FMT = {
    "f32": Fmt("f32", np.float32, np.uint32, 0x80000000, 0x7F800000, F32_NAN, float(np.finfo(np.float32).max)),
    "f64": Fmt("f64", np.float64, np.uint64, 0x8000000000000000, 0x7FF0000000000000, F64_NAN,
               float(np.finfo(np.float64).max)),
    "f16": Fmt("f16", np.float16, np.uint16, 0x8000, 0x7C00, F16_NAN, 65504.0),
    "bf16": Fmt("bf16", np.uint16, np.uint16, 0x8000, 0x7F80, BF16_NAN, float.fromhex("0x1.fep127")),
}


def bits_of(fmt: Fmt, x):
    return np.asarray(x, fmt.store).view(fmt.bits)


def from_bits(fmt: Fmt, u):
    return np.asarray(u, fmt.bits).view(fmt.store)


def to_f64(fmt: Fmt, x) -> np.ndarray:
    """Exact widening of a storage array to float64."""
    x = np.asarray(x, fmt.store)
    if fmt.name == "bf16":
        return (x.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


def flush(fmt: Fmt, x):
    """ftz: subnormal values (storage array) become zero of the same sign."""
    u = bits_of(fmt, x)
    sub = (u & fmt.bits.type(fmt.expmask)) == 0
    return from_bits(fmt, np.where(sub, u & fmt.bits.type(fmt.sign), u))


def canon_nan(fmt: Fmt, x):
    """Replace every NaN (storage array) with the format's canonical NaN pattern."""
    u = bits_of(fmt, x)
    em = fmt.bits.type(fmt.expmask)
    man = fmt.bits.type(~(fmt.sign | fmt.expmask) & ((1 << (8 * fmt.bits.itemsize)) - 1))
    isnan = ((u & em) == em) & ((u & man) != 0)
    return from_bits(fmt, np.where(isnan, fmt.bits.type(fmt.nan), u))


# ----------------------------------------------------------------- error-free transforms
def two_sum(a, b):
    """s = fl(a+b), e exact error (a+b = s+e), valid when nothing overflows; e = 0 for non-finite s."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, np.where(np.isfinite(s), e, 0.0)


def _split(a):
    c = 134217729.0 * a
    h = c - (c - a)
    return h, a - h


def two_prod(a, b):
    """p = fl(a*b), e exact error (Dekker/Veltkamp), valid for |a|,|b| < 2^995 and no underflow."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def ro_fix(s, e):
    """Round-to-odd of the exact s+e given s = RN(s+e): move an even s one ulp toward s+e."""
    u = s.view(np.uint64)
    adj = (e != 0) & ((u & np.uint64(1)) == 0)
    return np.where(adj, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)


def ro_add(a, b):
    s, e = two_sum(a, b)
    return ro_fix(s, e)


# ----------------------------------------------------------------- rounding of float64 values
def _directed(y, r, mode):
    """r = RN(y) in r's format; return y rounded in ``mode`` (r or its neighbour)."""
    if mode == RN:
        return r
    rb = r.astype(np.float64)
    if mode == RZ:
        bad, toward = np.abs(rb) > np.abs(y), 0.0
    elif mode == RM:
        bad, toward = rb > y, -np.inf
    else:
        bad, toward = rb < y, np.inf
    return np.where(bad, np.nextafter(r, np.asarray(toward, r.dtype)), r)


def ro_f64_to_f32(y):
    r = y.astype(np.float32)
    inexact = r.astype(np.float64) != y
    even = (r.view(np.uint32) & np.uint32(1)) == 0
    return np.where(inexact & even & ~np.isnan(y),
                    np.nextafter(r, np.where(y > r, np.float32(np.inf), np.float32(-np.inf))), r)


def round_f64(fmt: Fmt, y, mode=RN):
    """Round float64 values (exact or rounded-to-odd) to ``fmt`` in direction ``mode``; NaN canonical."""
    y = np.asarray(y, np.float64)
    if fmt.name == "f64":
        r = y
    elif fmt.name == "f32":
        r = _directed(y, y.astype(np.float32), mode)
    elif fmt.name == "f16":
        r = _directed(y, ro_f64_to_f32(y).astype(np.float16), mode)
    else:  # bf16 from the rounded-to-odd f32 bits
        u = ro_f64_to_f32(y).view(np.uint32)
        hi, lo = u >> np.uint32(16), u & np.uint32(0xFFFF)
        neg = (hi & np.uint32(0x8000)) != 0
        if mode == RN:
            up = (lo > 0x8000) | ((lo == 0x8000) & ((hi & np.uint32(1)) == 1))
        elif mode == RZ:
            up = np.zeros(u.shape, bool)
        elif mode == RP:
            up = (lo != 0) & ~neg
        else:
            up = (lo != 0) & neg
        r = np.where(np.isnan(y), np.uint32(BF16_NAN), hi + up.astype(np.uint32)).astype(np.uint16)
    return canon_nan(fmt, r)


def sat01(y):
    """.sat: clamp to [0, 1]; NaN and values <= 0 (incl. -0) give +0.0."""
    y = np.asarray(y, np.float64)
    return np.where(np.isnan(y) | (y <= 0), 0.0, np.minimum(y, 1.0))


def finish(fmt: Fmt, y, mode=RN, ftz=False, sat=False):
    """Shared tail of an arithmetic op: .sat, one rounding, ftz of the result, canonical NaN."""
    if sat:
        y = sat01(y)
    r = round_f64(fmt, y, mode)
    if ftz:
        r = flush(fmt, r)
    return canon_nan(fmt, r)


# ----------------------------------------------------------------- exact fallback (float64)
def _round_fraction_f64(q: Fraction, mode: str) -> float:
    neg = q < 0
    m = -q if neg else q
    n, d = m.numerator, m.denominator
    e = n.bit_length() - d.bit_length()
    if (n << max(0, -e)) < (d << max(0, e)):
        e -= 1                                   # now 2^e <= m < 2^(e+1)
    away = mode == RN or (mode == RP and not neg) or (mode == RM and neg)
    if e >= 1024:
        return (-1.0 if neg else 1.0) * (math.inf if away else FMT["f64"].max_finite)
    qe = max(e, -1022) - 52
    num, den = (n, d << qe) if qe >= 0 else (n << -qe, d)
    k, r = divmod(num, den)
    if mode == RN:
        k += (2 * r > den) or (2 * r == den and (k & 1))
    elif r and away:
        k += 1
    if k.bit_length() + qe > 1024:
        return (-1.0 if neg else 1.0) * math.inf
    v = math.ldexp(k, qe)
    return -v if neg else v


def exact_f64(op, mode, args, mask, fma_like=False):
    """For the masked elements (all finite), compute ``op`` exactly on Fractions and round.

    ``op`` takes Fractions and returns (exact Fraction, sign_if_zero) where sign_if_zero is the
    IEEE sign of an exact zero result: True negative, False positive, None = addends' rule.
    """
    out = {}
    for i in np.flatnonzero(mask):
        vals = [float(a.flat[i]) for a in args]
        q, zsign = op(*vals)
        if q == 0:
            neg = zsign if zsign is not None else (mode == RM)
            out[i] = -0.0 if neg else 0.0
        else:
            out[i] = _round_fraction_f64(q, mode)
    return out


def fma_rn_f64(a, b, c):
    """Correctly rounded fma(a, b, c) in float64 (Boldo-Melquiond emulation + exact fallback)."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, c)))
    res = a * b + c                                    # right for non-finite and zero a*b
    fin = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    prod_nz = (a != 0) & (b != 0)
    res = np.where(fin & prod_nz & (c == 0), a * b, res)
    ea, eb, ec = np.frexp(a)[1], np.frexp(b)[1], np.frexp(c)[1]
    work = fin & prod_nz & (c != 0)
    safe = work & (ea < 990) & (eb < 990) & (ea + eb > -900) & (ea + eb < 1000) & (ec > -900) & (ec < 1000)
    uh, ul = two_prod(a, b)
    th, tl = two_sum(c, uh)
    z = th + ro_add(tl, ul)
    res = np.where(safe, z, res)
    slow = work & ~safe
    if slow.any():
        res = np.array(res, copy=True)
        fix = exact_f64(lambda x, y, w: (Fraction(x) * Fraction(y) + Fraction(w), None), RN, (a, b, c), slow)
        for i, v in fix.items():
            res.flat[i] = v
    return res


def _frac_ops():
    F = Fraction

    def zero_add(x, y):
        return (math.copysign(1, x) < 0) if math.copysign(1, x) == math.copysign(1, y) else None

    return {
        "add": lambda x, y: (F(x) + F(y), zero_add(x, y)),
        "sub": lambda x, y: (F(x) - F(y), zero_add(x, -y)),
        "mul": lambda x, y: (F(x) * F(y), (math.copysign(1, x) * math.copysign(1, y)) < 0),
        "div": lambda x, y: (F(x) / F(y), (math.copysign(1, x) * math.copysign(1, y)) < 0),
        "fma": lambda x, y, w: (F(x) * F(y) + F(w),
                                zero_add(math.copysign(1, x) * math.copysign(1, y), w)),
    }


_FRAC = _frac_ops()


def _sqrt_directed(a, mode):
    """sqrt of float64 a > 0 in a directed mode: RN root then compare its square exactly."""
    r = math.sqrt(a)
    fr, fa = Fraction(r), Fraction(a)
    sq = fr * fr
    if sq == fa:
        return r
    if (mode == RP and sq < fa):
        return math.nextafter(r, math.inf)
    if mode in (RZ, RM) and sq > fa:
        return math.nextafter(r, 0.0)
    return r


def f64_arith(op, mode, args):
    """add/sub/mul/div/sqrt/fma on float64 with rounding ``mode``; canonical NaN."""
    args = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in args))
    a = args[0]
    if op == "add":
        res = a + args[1]
    elif op == "sub":
        res = a - args[1]
    elif op == "mul":
        res = a * args[1]
    elif op == "div":
        res = a / args[1]
    elif op == "sqrt":
        res = np.sqrt(a)
    else:
        res = fma_rn_f64(*args)
    if mode != RN:
        fin = np.logical_and.reduce([np.isfinite(v) for v in args])
        res = np.array(res, copy=True)
        if op == "sqrt":
            for i in np.flatnonzero(fin & (a > 0)):
                res.flat[i] = _sqrt_directed(float(a.flat[i]), mode)
        else:
            if op == "div":
                fin = fin & (args[1] != 0)
            for i, v in exact_f64(_FRAC[op], mode, args, fin).items():
                res.flat[i] = v
    return canon_nan(FMT["f64"], res)


def small_arith(fmt: Fmt, op, mode, args, ftz=False, sat=False):
    """add/sub/mul/div/sqrt/fma/rcp on f32/f16/bf16 storage arrays, one correct rounding."""
    if ftz:
        args = [flush(fmt, v) for v in args]
    xs = np.broadcast_arrays(*(to_f64(fmt, v) for v in args))
    a = xs[0]
    zero_pair = None
    if op in ("add", "sub"):
        b = xs[1] if op == "add" else -xs[1]
        s, e = two_sum(a, b)
        y, zero_pair = ro_fix(s, e), (a, b)
    elif op == "mul":
        y = a * xs[1]                               # exact: <= 2*24 bits, no range issue
    elif op == "fma":
        p = a * xs[1]                               # exact
        s, e = two_sum(p, xs[2])
        y, zero_pair = ro_fix(s, e), (p, xs[2])
    elif op == "div":
        y = a / xs[1]
    elif op == "rcp":
        y = 1.0 / a
    else:  # sqrt
        y = np.sqrt(a)
    if zero_pair is not None and mode == RM:
        p, q = zero_pair
        y = np.where((y == 0) & (np.signbit(p) != np.signbit(q)), -0.0, y)
    return finish(fmt, y, mode, ftz, sat)
