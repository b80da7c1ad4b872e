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

from .jitexec import fma_f32_lanes, fma_f64_lanes

RN, RZ, RM, RP = "rn", "rz", "rm", "rp"
FLOAT_RND = (RN, RZ, RM, RP)
INT_RND = {"rni": RN, "rzi": RZ, "rmi": RM, "rpi": RP}

# Canonical NaN bit patterns written for NaN results.
F32_NAN = 0x7FFFFFFF                    # PTX ISA / sm_90: canonical f32 NaN
F16_NAN = 0x7FFF                        # PTX ISA: canonical f16 NaN
BF16_NAN = 0x7FFF                       # PTX ISA: canonical bf16 NaN
F64_NAN = 0xFFF8000000000000            # measured on the H200: f64 NaN made from non-NaN operands
F64_QUIET = 0x0008000000000000          # the f64 quiet bit

# Which NaN operand an f64 op returns (measured on the H200, validation/data/h200_ptx_semantics.json):
# the first NaN in this operand order, quieted, payload and sign kept.
F64_NAN_ORDER = {"add": (1, 0), "sub": (1, 0), "mul": (1, 0), "min": (1, 0), "max": (1, 0),
                 "div": (0, 1), "fma": (1, 2, 0), "sqrt": (0,), "rcp": (0,)}


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
    if fmt.store.kind == "f":                   # no NaN (the common case): the same bits, one test
        s = np.asarray(x, fmt.store)
        if not np.isnan(s).any():
            return s.view(fmt.store)
    u = bits_of(fmt, x)
    em = fmt.bits.type(fmt.expmask)
    man = fmt.bits.type(~(fmt.sign | fmt.expmask) & ((1 << (8 * fmt.bits.itemsize)) - 1))
    isnan = ((u & em) == em) & ((u & man) != 0)
    return from_bits(fmt, np.where(isnan, fmt.bits.type(fmt.nan), u))


def f64_nan_operand(res, args, order):
    """H200 f64 NaN propagation: where an operand is NaN, the result is the first NaN operand in
    ``order`` (operand indices) with its quiet bit set, sign and payload kept; other lanes keep ``res``."""
    out = bits_of(FMT["f64"], res)
    for k in reversed(order):
        u = np.asarray(args[k], np.float64).view(np.uint64)
        out = np.where(np.isnan(args[k]), u | np.uint64(F64_QUIET), out)
    return from_bits(FMT["f64"], out)


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


MIN_NORMAL = {"f32": 2.0 ** -126, "f16": 2.0 ** -14, "bf16": 2.0 ** -126, "f64": 2.0 ** -1022}
# a power of two that lifts every value below the smallest normal whose rounding could reach it
# into the normal range (more than the significand's bits): finish's tininess after rounding
_FTZ_LIFT = {"f32": 2.0 ** 25, "f16": 2.0 ** 12, "bf16": 2.0 ** 9}


def finish(fmt: Fmt, y, mode=RN, ftz=False, sat=False):
    """Shared tail of an arithmetic op: .sat, one rounding, ftz of the result, canonical NaN.

    ``.ftz`` flushes a result that is tiny *after rounding* in IEEE 754's sense: rounded to the
    format's precision with an unbounded exponent, its magnitude is below the smallest normal.
    Measured on the H200: mul.rn.ftz.f32 0x00800000 * 0x3f7fffff, exactly 2^-126 (1 - 2^-24), gives
    +0 (24 bits hold it below 2^-126, though rounding to the subnormal grid would give 2^-126),
    while div.{approx,full}.ftz.f32 0x00800001 / 0x3f800001, whose FMUL.FTZ product is exactly
    2^-126 (1 - 2^-46), gives 2^-126 (24 bits round it up).  ``y`` is exact or rounded to odd in
    53 bits, which keeps its rounding to 24 bits or fewer."""
    if sat:
        y = sat01(y)
    r = round_f64(fmt, y, mode)
    if ftz:
        r = flush(fmt, r)
        lift = _FTZ_LIFT.get(fmt.name)
        if lift is None:
            tiny = np.abs(y) < MIN_NORMAL[fmt.name]
        else:                               # the rounding with an unbounded exponent, scaled up
            with np.errstate(over="ignore", invalid="ignore"):
                big = to_f64(fmt, round_f64(fmt, np.asarray(y, np.float64) * lift, mode))
            tiny = np.abs(big) < MIN_NORMAL[fmt.name] * lift
        r = np.where(tiny, from_bits(fmt, np.where(np.signbit(y), fmt.bits.type(fmt.sign), fmt.bits.type(0))), r)
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
    # a, b finite and c infinite: c (the exact product is finite even where a * b overflows)
    res = np.where(np.isfinite(a) & np.isfinite(b) & np.isinf(c), c, res)
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


def f64_arith(op, mode, args, nan_order=None):
    """add/sub/mul/div/sqrt/fma on float64 with rounding ``mode``.  A NaN operand is returned quieted
    (``F64_NAN_ORDER`` picks which, or ``nan_order``); a NaN from non-NaN operands is ``F64_NAN``."""
    if op == "fma" and mode == RN:
        ops = _fma_operands(args, np.float64)
        if ops is not None:
            r, finite = fma_f64_lanes(*ops)
            if finite:          # one IEEE rounding, as fma_rn_f64's; finite operands: no NaN
                return r
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
    if not np.isnan(res).any():                # no NaN result: no NaN operand either
        return np.asarray(res, np.float64).view(np.float64)
    res = canon_nan(FMT["f64"], res)
    return f64_nan_operand(res, args, nan_order if nan_order is not None else F64_NAN_ORDER[op])


_F32_NATIVE = ("add", "sub", "mul", "fma")


def f32_rn(op, args):
    """add/sub/mul/fma.rn.f32 without .ftz/.sat, as small_arith computes them, faster.

    add/sub/mul: numpy's float32 arithmetic is IEEE binary32, correctly rounded to nearest even
    with gradual underflow -- the value small_arith's one rounding gives.  fma: the product is
    exact in float64 and the sum is rounded to float64 then to float32; that double rounding
    can differ from one correct rounding only when the float64 sum is inexact and lands on a
    float32 rounding midpoint (IEEE rounding is monotonic and every midpoint is a float64),
    and every such sum has its 28 low mantissa bits zero: those lanes (exact sums with few
    bits, zeros) go through small_arith.  NaN results get the canonical pattern."""
    a, b = np.asarray(args[0], np.float32), np.asarray(args[1], np.float32)
    if op == "add":
        r = np.asarray(a + b)
    elif op == "sub":
        r = np.asarray(a - b)
    elif op == "mul":
        r = np.asarray(a * b)
    else:
        c = np.asarray(args[2], np.float32)
        ops = _fma_operands((a, b, c), np.float32)
        if ops is not None:                     # the same values, in one compiled pass
            r, suspect, suspect_any = fma_f32_lanes(*ops)   # (exact sums are no suspects there)
            if not suspect_any:
                return r
        else:
            s = np.asarray(a.astype(np.float64) * b + c)
            r = s.astype(np.float32)
            # NaN and inf sums have their low bits zero too (f32 payloads widen into the high
            # bits; made NaNs are the default pattern): the exact path canonicalises them
            suspect = (s.view(np.uint64) & np.uint64(0x0FFFFFFF)) == 0
        if suspect.any():
            if r.ndim == 0:
                return small_arith(FMT["f32"], op, RN, (a, b, c), exact=True)
            A, B, C = np.broadcast_arrays(a, b, c)
            k = np.flatnonzero(suspect)
            r[k] = small_arith(FMT["f32"], op, RN, (A[k], B[k], C[k]), exact=True)
        return r
    nan = np.isnan(r)
    return canon_nan(FMT["f32"], r) if nan.any() else r


def _fma_operands(args, dtype):
    """(a, b, c, n) for jitexec's compiled fma of a step's lanes: each operand a writable,
    contiguous 1-d `dtype` array of n elements, or of one (a uniform operand: an immediate, a
    scalar register), n > 1 from at least one; None for any other form (the numpy way)."""
    out, n = [], None
    for v in args:
        x = np.asarray(v, dtype)
        if x.ndim == 0:
            out.append(np.full(1, x, dtype))
            continue
        if x.ndim != 1 or not x.flags.c_contiguous or not x.flags.writeable:
            return None
        if len(x) != 1:
            if n is not None and len(x) != n:
                return None
            n = len(x)
        out.append(x)
    if n is None:
        return None
    return out[0], out[1], out[2], n


def small_arith(fmt: Fmt, op, mode, args, ftz=False, sat=False, exact=False):
    """add/sub/mul/div/sqrt/fma/rcp on f32/f16/bf16 storage arrays, one correct rounding.
    (.rn f32 add/sub/mul/fma go through f32_rn unless ``exact``: the same values, faster.)"""
    if not (exact or ftz or sat) and mode == RN and fmt.name == "f32" and op in _F32_NATIVE:
        return f32_rn(op, args)
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
