"""Independent reference arithmetic for the PTX semantics tests (Python ints, Fractions, struct).

Not a test module by itself (no test functions); the other test_ptx_semantics_* modules import it.
Nothing here uses numpy's float arithmetic: values are decoded from bit patterns by hand, results
are computed exactly on Fractions and encoded back to bits by integer rounding.
"""
from __future__ import annotations

import math
import struct
from fractions import Fraction

# name: (total bits, precision p incl. hidden bit, exponent bits)
FORMATS = {"f64": (64, 53, 11), "f32": (32, 24, 8), "f16": (16, 11, 5), "bf16": (16, 8, 8)}
CANON = {"f32": 0x7FFFFFFF, "f16": 0x7FFF, "bf16": 0x7FFF, "f64": 0xFFF8000000000000}


class Val:
    """A decoded float: kind in {'nan','inf','zero','fin'}, sign, exact Fraction value."""

    def __init__(self, kind, neg, q=Fraction(0)):
        self.kind, self.neg, self.q = kind, neg, q

    def __repr__(self):
        return f"Val({self.kind}, {'-' if self.neg else '+'}, {self.q})"


def decode(fmt, bits):
    n, p, eb = FORMATS[fmt]
    neg = bool(bits >> (n - 1))
    e = (bits >> (p - 1)) & ((1 << eb) - 1)
    m = bits & ((1 << (p - 1)) - 1)
    bias = (1 << (eb - 1)) - 1
    if e == (1 << eb) - 1:
        return Val("nan" if m else "inf", neg)
    if e == 0:
        if m == 0:
            return Val("zero", neg)
        q = Fraction(m, 1 << (p - 2 + bias))
    else:
        q = Fraction((1 << (p - 1)) | m) * Fraction(2) ** (e - bias - (p - 1))
    return Val("fin", neg, -q if neg else q)


def is_subnormal_bits(fmt, bits):
    n, p, eb = FORMATS[fmt]
    return ((bits >> (p - 1)) & ((1 << eb) - 1)) == 0 and (bits & ((1 << (p - 1)) - 1)) != 0


def sign_bit(fmt, neg):
    return (1 << (FORMATS[fmt][0] - 1)) if neg else 0


def inf_bits(fmt, neg):
    n, p, eb = FORMATS[fmt]
    return sign_bit(fmt, neg) | (((1 << eb) - 1) << (p - 1))


def max_bits(fmt, neg):
    return inf_bits(fmt, neg) - 1


def encode(fmt, q: Fraction, mode: str) -> int:
    """Correctly round a nonzero Fraction into ``fmt`` bits (rn ties-to-even, rz, rm, rp)."""
    n, p, eb = FORMATS[fmt]
    bias = (1 << (eb - 1)) - 1
    neg = q < 0
    m = -q if neg else q
    e = 0
    while m >= Fraction(2) ** (e + 1):
        e += 1
    while m < Fraction(2) ** e:
        e -= 1
    emin = 1 - bias
    qe = max(e, emin) - (p - 1)
    scaled = m / Fraction(2) ** qe
    k = scaled.numerator // scaled.denominator
    frac = scaled - k
    up = {"rn": frac > Fraction(1, 2) or (frac == Fraction(1, 2) and k % 2 == 1),
          "rz": False, "rp": frac > 0 and not neg, "rm": frac > 0 and neg}[mode]
    k += up
    if k == 1 << p:
        k, qe = k >> 1, qe + 1
    if k == 0:
        return sign_bit(fmt, neg)
    if k < (1 << (p - 1)):                      # subnormal
        return sign_bit(fmt, neg) | k
    ebits = qe + (p - 1) + bias
    if ebits >= (1 << eb) - 1:                   # overflow
        away = mode == "rn" or (mode == "rp" and not neg) or (mode == "rm" and neg)
        return inf_bits(fmt, neg) if away else max_bits(fmt, neg)
    return sign_bit(fmt, neg) | (ebits << (p - 1)) | (k - (1 << (p - 1)))


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def as_float(v: Val) -> float:
    if v.kind == "nan":
        return math.nan
    if v.kind == "inf":
        return -math.inf if v.neg else math.inf
    if v.kind == "zero":
        return -0.0 if v.neg else 0.0
    return float(v.q)


def ref_arith(fmt, op, bits, mode="rn", ftz=False, sat=False):
    """Reference result bits of add/sub/mul/div/fma/sqrt/rcp on bit patterns ``bits``."""
    vals = [decode(fmt, b) for b in bits]
    if ftz:
        vals = [Val("zero", v.neg) if (v.kind == "fin" and is_subnormal_bits(fmt, b)) else v
                for v, b in zip(vals, bits)]
    r = _ref_value(fmt, op, vals, mode)
    if ftz and is_subnormal_bits(fmt, r):
        r = sign_bit(fmt, bool(r >> (FORMATS[fmt][0] - 1)))
    if sat:
        v = decode(fmt, r)
        if v.kind == "nan" or v.neg:
            r = 0
        elif v.kind == "inf" or (v.kind == "fin" and v.q > 1):
            r = encode(fmt, Fraction(1), "rn")
    return r


def _special(fmt, x: float) -> int:
    if math.isnan(x):
        return CANON[fmt]
    if math.isinf(x):
        return inf_bits(fmt, x < 0)
    return sign_bit(fmt, math.copysign(1, x) < 0)       # only zeros get here


def _ref_value(fmt, op, v, mode):
    if any(x.kind == "nan" for x in v):
        return CANON[fmt]
    fl = [as_float(x) for x in v]
    if op == "sub":
        op, v, fl = "add", [v[0], Val(v[1].kind, not v[1].neg, -v[1].q)], [fl[0], -fl[1]]
    if op == "rcp":
        op, v, fl = "div", [Val("fin", False, Fraction(1)), v[0]], [1.0, fl[0]]
    if op == "sqrt":
        x = v[0]
        if x.kind == "zero":
            return sign_bit(fmt, x.neg)
        if x.neg:
            return CANON[fmt]
        if x.kind == "inf":
            return inf_bits(fmt, False)
        return encode(fmt, sqrt_frac(x.q), mode)
    if op == "div":
        a, b = v
        if b.kind == "zero":
            return CANON[fmt] if a.kind == "zero" else inf_bits(fmt, a.neg != b.neg)
        if a.kind == "inf" or b.kind == "inf":
            return CANON[fmt] if (a.kind == "inf" and b.kind == "inf") else \
                (inf_bits(fmt, a.neg != b.neg) if a.kind == "inf" else sign_bit(fmt, a.neg != b.neg))
        if a.kind == "zero":
            return sign_bit(fmt, a.neg != b.neg)
        return encode(fmt, a.q / b.q, mode)
    if op == "mul":
        a, b = v
        neg = a.neg != b.neg
        if {a.kind, b.kind} == {"inf", "zero"}:
            return CANON[fmt]
        if "inf" in (a.kind, b.kind):
            return inf_bits(fmt, neg)
        if "zero" in (a.kind, b.kind):
            return sign_bit(fmt, neg)
        return encode(fmt, a.q * b.q, mode)
    if op == "add":
        terms = [(v[0].kind, v[0].neg, v[0].q), (v[1].kind, v[1].neg, v[1].q)]
    else:  # fma
        a, b, c = v
        if {a.kind, b.kind} == {"inf", "zero"}:
            return CANON[fmt]
        pk = "inf" if "inf" in (a.kind, b.kind) else ("zero" if "zero" in (a.kind, b.kind) else "fin")
        terms = [(pk, a.neg != b.neg, a.q * b.q), (c.kind, c.neg, c.q)]
    infs = [t for t in terms if t[0] == "inf"]
    if infs:
        if len(infs) == 2 and infs[0][1] != infs[1][1]:
            return CANON[fmt]
        return inf_bits(fmt, infs[0][1])
    total = sum(t[2] for t in terms)
    if total == 0:
        if terms[0][1] == terms[1][1] and all(t[0] == "zero" for t in terms):
            return sign_bit(fmt, terms[0][1])
        if all(t[0] == "zero" for t in terms):
            return sign_bit(fmt, mode == "rm")
        return sign_bit(fmt, mode == "rm")
    return encode(fmt, total, mode)


def sqrt_frac(q: Fraction) -> Fraction:
    """A Fraction strictly inside the same rounding cell as sqrt(q) (exact when q is a square)."""
    s = 700
    num = q.numerator * (1 << (2 * s))
    v = num // q.denominator
    r = math.isqrt(v)
    if r * r * q.denominator == num:
        return Fraction(r, 1 << s)
    return Fraction(2 * r + 1, 1 << (s + 1))
