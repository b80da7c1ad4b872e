"""Float min/max/abs/neg/copysign/testp, the .approx functions, comparisons (setp/set/selp/slct)
and the packed-half (f16x2/bf16x2) helper, for :mod:`simgpu.ptx.semantics`."""
from __future__ import annotations

import os

import numpy as np

from . import sem_fp as fp
from .sem_int import INT_T, as_u
from .types import bits

X2 = {"f16x2": "f16", "bf16x2": "bf16"}


# ----------------------------------------------------------------- packed halves
def split_x2(fmt, u):
    u = np.asarray(u, np.uint32)
    lo = (u & np.uint32(0xFFFF)).astype(np.uint16).view(fmt.store)
    hi = (u >> np.uint32(16)).astype(np.uint16).view(fmt.store)
    return lo, hi


def pack_x2(fmt, lo, hi):
    lo = np.asarray(lo, fmt.store).view(np.uint16).astype(np.uint32)
    hi = np.asarray(hi, fmt.store).view(np.uint16).astype(np.uint32)
    return (hi << np.uint32(16)) | lo


def lift_x2(fmt, fn):
    """Apply a one-half function lane-wise to both halves of packed operands."""
    def f(*args):
        parts = [split_x2(fmt, a) for a in args]
        lo = fn(*[p[0] for p in parts])
        hi = fn(*[p[1] for p in parts])
        return pack_x2(fmt, lo, hi)
    return f


# ----------------------------------------------------------------- min / max / abs / neg / copysign
def minmax(fmt, is_max, nan_prop, ftz):
    """min/max: the non-NaN operand if exactly one is NaN; -0 < +0; .NaN propagates canonical NaN.
    f64 (measured on the H200): both NaN -> b quieted (payload and sign kept); for the (not PTX-valid)
    .NaN.f64 the same rule: the first NaN of b, a, quieted."""
    def f(a, b):
        if ftz:
            a, b = fp.flush(fmt, a), fp.flush(fmt, b)
        a, b = np.broadcast_arrays(np.asarray(a, fmt.store), np.asarray(b, fmt.store))
        x, y = fp.to_f64(fmt, a), fp.to_f64(fmt, b)
        nx, ny = np.isnan(x), np.isnan(y)
        both0 = (x == 0) & (y == 0)
        if is_max:
            pick_a = (x > y) | (both0 & ~np.signbit(x))
        else:
            pick_a = (x < y) | (both0 & np.signbit(x))
        pick_a = (pick_a & ~nx) | ny
        r = np.where(pick_a, a, b)
        nan_out = (nx | ny) if nan_prop else (nx & ny)
        r = np.where(nan_out, fp.from_bits(fmt, fmt.bits.type(fmt.nan)), r)
        r = fp.canon_nan(fmt, r)
        if fmt.name == "f64":       # H200: both NaN -> b quieted (payload and sign kept)
            r = np.where(nan_out, fp.f64_nan_operand(r, (a, b), fp.F64_NAN_ORDER["min"]), r)
        return r
    return f


def absneg(fmt, neg, ftz, keepnan=False, signbit=False):
    """abs/neg: sign-bit operations, except on a NaN (measured on the H200): f32/f16/bf16 (and the
    packed halves) give the canonical NaN; f64 returns the NaN quieted with its sign unchanged.
    ``keepnan`` (``neg.keepnan``/``abs.keepnan``, simgpu's own modifier: a neg/abs ptxas folded
    into its readers' ``-R``/``|R|`` operand modifiers, ``sass_order.folded_absneg``): a NaN
    passes through unchanged (sign, payload, quiet bit), as the FP units read a modified NaN
    operand.  ``signbit`` (``neg.signbit``/``abs.signbit``: one folded into a select, ``FSEL R,
    -R2, R5, P0``): the sign-bit operation on a NaN too, payload and quiet bit kept (measured on
    an H100, validation/ptx_semantics/nan_seq: ``neg_f32_selp``, ``abs_f32_selp``)."""
    def f(a):
        if ftz:
            a = fp.flush(fmt, a)
        u = fp.bits_of(fmt, a)
        s = fmt.bits.type(fmt.sign)
        r = fp.from_bits(fmt, (u ^ s) if neg else (u & ~s))
        if signbit:
            return r
        if keepnan:
            em = fmt.bits.type(fmt.expmask)
            isnan = ((u & em) == em) & ((u & ~(em | s)) != 0)
            return fp.from_bits(fmt, np.where(isnan, u, fp.bits_of(fmt, r)))
        if fmt.name == "f64":
            isnan = np.isnan(np.asarray(a, np.float64))
            return fp.from_bits(fmt, np.where(isnan, u | np.uint64(fp.F64_QUIET), fp.bits_of(fmt, r)))
        return fp.canon_nan(fmt, r)
    return f


def copysign(fmt):
    """copysign d, a, b: b with the sign of a (PTX operand order)."""
    def f(a, b):
        s = fmt.bits.type(fmt.sign)
        return fp.from_bits(fmt, (fp.bits_of(fmt, b) & ~s) | (fp.bits_of(fmt, a) & s))
    return f


def testp(fmt, what):
    """testp: IEEE classes, except that .normal is true for +-0 (measured on the H200, f32 and f64)."""
    def f(a):
        u = fp.bits_of(fmt, a)
        em = fmt.bits.type(fmt.expmask)
        man = u & ~(em | fmt.bits.type(fmt.sign))
        e = u & em
        return {
            "finite": e != em,
            "infinite": (e == em) & (man == 0),
            "number": ~((e == em) & (man != 0)),
            "notanumber": (e == em) & (man != 0),
            "normal": ((e != em) & (e != 0)) | (u & ~fmt.bits.type(fmt.sign) == 0),   # +-0: H200
            "subnormal": (e == 0) & (man != 0),
        }[what]
    return f


# ----------------------------------------------------------------- .approx functions
def _rsqrt(x):
    return 1.0 / np.sqrt(x)


_APPROX = {
    "ex2": np.exp2, "lg2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "rsqrt": _rsqrt, "sqrt": np.sqrt, "rcp": lambda x: 1.0 / x,
}


def approx_unary(fmt, name, ftz):
    """float64 evaluation rounded to nearest: error <= 0.5 ulp + 2^-50 rel, inside every ISA bound."""
    fn = _APPROX[name]

    def f(a):
        if ftz:
            a = fp.flush(fmt, a)
        x = fp.to_f64(fmt, a)
        if fmt.name == "f64":
            r = fp.f64_nan_operand(fp.canon_nan(fmt, fn(x)), (x,), (0,))
            return fp.flush(fmt, r) if ftz else r
        return fp.finish(fmt, fn(x), fp.RN, ftz)
    return f


_HI = np.uint64(0xFFFFFFFF00000000)
_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
_MUFU_F64H = os.path.join(_DATA, "mufu_f64h.npz")
_MUFU_RCP_F32 = os.path.join(_DATA, "mufu_rcp_f32.npz")
_TABLES: dict = {}


def _unpack(path, key):
    with np.load(path) as z:
        first, d = z[f"{key}_first"], z[f"{key}_diff"]
    return np.concatenate([[np.int64(first)], np.int64(first) + np.cumsum(d, dtype=np.int64)])


def _below_normal_scaled(unit, ftz, fix):
    """A MUFU op as ptxas wraps it without .ftz: an input below 2^-126 (FSETP.GEU |x|, 2^-126
    false, NaN too) runs times 2^24 and its result goes through ``fix`` (sqrt, rsqrt, lg2);
    with .ftz the unit alone."""
    def f(a):
        x = np.asarray(a, np.float32)
        if ftz:
            return unit(x)
        low = np.abs(x) < np.float32(2.0 ** -126)
        r = unit(np.where(low, x * np.float32(2.0 ** 24), x).astype(np.float32))
        return np.where(low, fix(r), r).astype(np.float32)
    return f


def mufu_rcp_f32_table():
    """The H100's rcp.approx.ftz.f32 of every x in [1, 2) (2^23 entries, result bits as int64),
    measured exhaustively (validation/ptx_semantics/approx_tables.py, 2026-12-07; data/mufu_rcp_f32.npz)."""
    t = _TABLES.get("rcp32")
    if t is None:
        t = _TABLES["rcp32"] = _unpack(_MUFU_RCP_F32, "rcp")
    return t


def rcp_approx_f32(ftz):
    """rcp.approx{.ftz}.f32 as the hardware computes it (MUFU.RCP).  A normal input 2^E * 1.m (23-bit
    m) gives the measured table entry for m with its exponent moved by -E and the input's sign; a
    result below the normal range flushes to zero of its sign.  Without .ftz ptxas wraps MUFU.RCP
    (read from its SASS; the rule reproduces the H100 samples): a subnormal input is scaled by 2^24
    before and the result by 2^24 after, an input with |x| >= 2^126 by 1/4 before and after (that
    last product rounded to nearest: subnormal results).  Zeros, infinities and NaN as
    :func:`approx_unary` (measured on the H200).  Bit-equal to all 2 x 131,072 random inputs measured
    on an H100 (validation/ptx_semantics/approx/approx_samples.npz)."""
    fmt = fp.FMT["f32"]
    base = approx_unary(fmt, "rcp", ftz)

    def table_rcp(u):
        u = u.astype(np.int64)
        sign = u & 0x80000000
        e = (u >> 23) & 0xFF
        r = mufu_rcp_f32_table()[u & 0x7FFFFF]
        re = ((r >> 23) & 0xFF) - (e - 127)
        out = np.where(re <= 0, sign, sign | (np.clip(re, 0, 254) << 23) | (r & 0x7FFFFF))
        return out.astype(np.uint32).view(np.float32)

    def f(a):
        x = np.asarray(a, np.float32)
        u = x.view(np.uint32)
        e = (u >> np.uint32(23)) & np.uint32(0xFF)
        sub = (e == 0) & ((u & np.uint32(0x7FFFFF)) != 0)
        normal = (e != 0) & (e != 255)
        if ftz:
            return np.where(normal, table_rcp(u), base(x)).astype(np.float32)
        big = normal & (e >= 253)
        scale = np.where(sub, np.float32(2.0 ** 24), np.where(big, np.float32(0.25), np.float32(1.0)))
        xs = np.where(sub | normal, x * scale, np.float32(1.0)).astype(np.float32)
        r = (table_rcp(xs.view(np.uint32)) * scale).astype(np.float32)
        return np.where(sub | normal, r, base(x)).astype(np.float32)
    return f


def mufu_f64h_table(name):
    """The H100's result high word of rcp.approx.ftz.f64 ("rcp": 2^20 entries, input high word
    0x3FF00000|m) or rsqrt.approx.ftz.f64 ("rsqrt": 2^21, high words 0x3FF00000|m then
    0x40000000|m), as int64: every input the unit reads at one exponent (and parity), measured
    exhaustively (validation/ptx_semantics/approx_tables.py, 2026-12-07; stored as first value
    and first differences in data/mufu_f64h.npz)."""
    t = _TABLES.get(name)
    if t is None:
        t = _TABLES[name] = _unpack(_MUFU_F64H, {"rcp": "rcp", "rsqrt": "rsq"}[name])
    return t


_MUFU_EX2_F32 = os.path.join(_DATA, "mufu_ex2_f32.npz")


def mufu_ex2_f32_tables():
    """(positive, negative): the H100's ex2.approx.ftz.f32 of 1 + k 2^-23 halved and of -(1 + k 2^-23)
    doubled, k < 2^23, as float64: 2^(k 2^-23) and 2^-(k 2^-23) as the unit makes them (measured
    exhaustively, validation/ptx_semantics/approx_tables.py, 2026-12-07; data/mufu_ex2_f32.npz)."""
    t = _TABLES.get("ex2")
    if t is None:
        pos = _unpack(_MUFU_EX2_F32, "pos").astype(np.uint32).view(np.float32).astype(np.float64) / 2.0
        neg = _unpack(_MUFU_EX2_F32, "neg").astype(np.uint32).view(np.float32).astype(np.float64) * 2.0
        t = _TABLES["ex2"] = (pos, neg)
    return t


def ex2_approx_f32(ftz):
    """ex2.approx{.ftz}.f32 as the hardware computes it.  The unit (MUFU.EX2, which flushes
    subnormal inputs and results): |x| in fixed point with 23 fraction bits, truncated,
    = n + k 2^-23; the result is 2^n * P[k] for x >= 0 and 2^-n * N[k] for x < 0 (sign and
    magnitude: the negative side has its own table), P and N measured exhaustively on an H100
    (:func:`mufu_ex2_f32_tables`); it reproduces every measured x in [0.5, 1) and [-1, -0.5)
    (2^23 each, from the other two tables) and all random inputs of .ftz bit for bit.  Without
    .ftz ptxas wraps the unit (read from its SASS): x < -126 runs as MUFU.EX2(x / 2) squared by an
    FMUL rounded to nearest, which gives the subnormal results.  Zeros, infinities and NaN as
    :func:`approx_unary`'s (measured specials: H200, 2026-11-30)."""
    fmt = fp.FMT["f32"]
    base = approx_unary(fmt, "ex2", True)

    def unit(a):
        x = fp.flush(fmt, np.asarray(a, np.float32))
        xd = x.astype(np.float64)
        fin = np.isfinite(xd) & (xd != 0) & (np.abs(xd) < 2.0 ** 8)
        ax = np.where(fin, np.abs(xd), 0.0)
        fixed = np.floor(ax * 2.0 ** 23)
        n = np.floor(fixed * 2.0 ** -23)
        k = (fixed - n * 2.0 ** 23).astype(np.int64)
        pos, neg = mufu_ex2_f32_tables()
        val = np.where(xd >= 0, pos[k] * np.exp2(n), neg[k] * np.exp2(-n))
        with np.errstate(over="ignore"):
            r = val.astype(np.float32)
        r = np.where(np.abs(val) < 2.0 ** -126, np.float32(0.0), r)
        return np.where(fin, r, base(x)).astype(np.float32)

    if ftz:
        return unit

    def f(a):
        x = np.asarray(a, np.float32)
        low = x < np.float32(-126.0)                    # FSETP.GEU x, -126 false (NaN: true)
        h = unit(np.where(low, x * np.float32(0.5), x).astype(np.float32))
        sq = fp.small_arith(fmt, "mul", fp.RN, (h, h), False, False)
        return np.where(low, sq, h).astype(np.float32)
    return f


_MUFU_SQRT_F32 = os.path.join(_DATA, "mufu_sqrt_f32.npz")


def mufu_sqrt_f32_table(name):
    """The H100's sqrt.approx.ftz.f32 ("sqrt") or rsqrt.approx.ftz.f32 ("rsqrt") of every x in
    [1, 4) (2^24 entries: [1, 2) then [2, 4), result bits as uint32), measured exhaustively
    (validation/ptx_semantics/approx_tables2.py, 2026-12-08; data/mufu_sqrt_f32.npz)."""
    t = _TABLES.get(name + "32")
    if t is None:
        t = _TABLES[name + "32"] = _unpack(_MUFU_SQRT_F32, {"sqrt": "sqrt", "rsqrt": "rsq"}[name]).astype(np.uint32)
    return t


def sqrt_approx_f32(name, ftz):
    """sqrt.approx{.ftz}.f32 / rsqrt.approx{.ftz}.f32 as the hardware computes them (MUFU.SQRT /
    MUFU.RSQ).  A positive normal input 2^E * 1.m gives the measured table entry for (E odd, m)
    (the input scaled into [1, 4), :func:`mufu_sqrt_f32_table`) with its exponent moved by
    +(E - (E & 1)) / 2 (sqrt) or -(E - (E & 1)) / 2 (rsqrt).  Without .ftz ptxas wraps the unit
    (read from ptxas 13.0.88's SASS for sm_90): |x| < 2^-126 (subnormal or zero) is multiplied by
    2^24 before and the result by 2^-12 (sqrt) or 2^12 (rsqrt) after, both exact.  Zeros,
    negatives, infinities and NaN as :func:`approx_unary` (equal to every such H100 sample).
    Reproduces all 2^24 table inputs and all 4 x 131,072 random H100 inputs (with and without
    .ftz; validation/ptx_semantics/approx2_check.py) bit for bit."""
    fmt = fp.FMT["f32"]
    base = approx_unary(fmt, name, True)
    sgn = 1 if name == "sqrt" else -1

    def unit(x):
        u = x.view(np.uint32).astype(np.int64)
        e = (u >> 23) & 0xFF
        ok = (e != 0) & (e != 255) & (u < 0x80000000)
        odd = (e - 127) & 1
        r = mufu_sqrt_f32_table(name)[(odd << 23) | (u & 0x7FFFFF)].astype(np.int64) \
            + sgn * (((e - 127 - odd) // 2) << 23)
        return np.where(ok, r.astype(np.uint32).view(np.float32), base(x)).astype(np.float32)

    return _below_normal_scaled(unit, ftz, lambda r: r * np.float32(2.0 ** (-12 * sgn)))


_MUFU_TANH_HALF = os.path.join(_DATA, "mufu_tanh_half.npz")


def mufu_tanh_half_table(base):
    """The H100's tanh.approx.f16 / tanh.approx.bf16 (``base`` "f16" / "bf16") of every 16-bit
    input: 65,536 result bit patterns (uint16), measured exhaustively (validation/ptx_semantics/
    approx_tables2.py, 2026-12-08; data/mufu_tanh_half.npz)."""
    t = _TABLES.get("tanh" + base)
    if t is None:
        t = _TABLES["tanh" + base] = _unpack(_MUFU_TANH_HALF, base).astype(np.uint16)
    return t


def half_approx(base, name):
    """ex2.approx.f16, ex2.approx.ftz.bf16, tanh.approx.f16 and tanh.approx.bf16 as the hardware
    computes them (one MUFU.EX2.F16 / .BF16 / MUFU.TANH.F16 / .BF16 each; the x2 forms are one per
    half, read from ptxas 13.0.88's SASS for sm_90).  ex2: the f32 unit's value
    (:func:`ex2_approx_f32` with .ftz) of the widened input, rounded toward zero to the half format,
    with f16 results >= 2^16 giving +inf and NaN giving 0x7fff (f16 and bf16): equal to the H100 on
    all 65,536 inputs of each.  tanh (no simpler rule found: f32 tanh.approx is not exact here) is
    the measured table (:func:`mufu_tanh_half_table`)."""
    fmt = fp.FMT[base]
    if name == "tanh":
        def ftanh(a):
            return mufu_tanh_half_table(base)[fp.bits_of(fmt, a)].view(fmt.store)
        return ftanh
    unit = ex2_approx_f32(True)

    def fex2(a):
        x = fp.to_f64(fmt, a).astype(np.float32)
        r = np.asarray(unit(x), np.float32)
        if base == "bf16":
            out = (r.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
        else:
            with np.errstate(over="ignore", invalid="ignore"):
                h = r.astype(np.float16)
                h = np.where(h.astype(np.float32) > r, np.nextafter(h, np.float16(0)), h)
            out = np.where(r >= np.float32(65536.0), np.uint16(0x7C00), h.view(np.uint16))
        return np.where(np.isnan(r), np.uint16(0x7FFF), out).astype(np.uint16).view(fmt.store)
    return fex2


_MUFU_LG2_F32 = os.path.join(_DATA, "mufu_lg2_f32.npz")


def _rz_f32(y):
    """float64 -> float32 rounded toward zero (finite inputs)."""
    r = y.astype(np.float32)
    return np.where(np.abs(r.astype(np.float64)) > np.abs(y), np.nextafter(r, np.float32(0)), r)


def mufu_lg2_f32_tables():
    """(one, half, fl, ce): the H100's lg2.approx.ftz.f32 of every x in [1, 2) ("one") and in
    [0.5, 1) ("half") as float32 (measured exhaustively, validation/ptx_semantics/approx_tables2.py,
    2026-12-08; data/mufu_lg2_f32.npz), and floor / ceil of F(m) 2^23 (int32), where F(m) is the
    unit's value of log2(1.m): one = RZ(F), half = RZ(F - 1) bound F to an interval narrower than
    2^-25 (at most 2^-36 granularity) that never holds a multiple of 2^-23 in its inside, so floor and
    ceil are exact.  m = 0 is the exception: one[0] = 0 (x = 1 gives exactly 0) while [2, 4) and
    [0.5, 1) measure 0 < F(0) - 2^-24 < 2^-24: fl = 0, ce = 1."""
    t = _TABLES.get("lg2")
    if t is None:
        one = _unpack(_MUFU_LG2_F32, "one").astype(np.uint32).view(np.float32)
        half = _unpack(_MUFU_LG2_F32, "half").astype(np.uint32).view(np.float32)
        s = 2.0 ** 36
        lo_one, lo_half = np.round(one.astype(np.float64) * s).astype(np.int64), \
            np.round((1.0 + half.astype(np.float64)) * s).astype(np.int64)
        u_one = np.round((np.nextafter(one, np.float32(1)) - one).astype(np.float64) * s).astype(np.int64)
        u_half = np.round((half - np.nextafter(half, np.float32(-1))).astype(np.float64) * s).astype(np.int64)
        q = np.int64(1) << 13                                   # 2^-23 in units of 2^-36
        fl = lo_one // q                                        # F in [one, one + ulp) ...
        lo = np.maximum(lo_one, lo_half - u_half + 1)           # ... and in (1 + half - ulp, 1 + half]
        ce = -(-lo // q)
        fl[0], ce[0] = 0, 1
        t = _TABLES["lg2"] = (one, half, fl.astype(np.int32), ce.astype(np.int32))
    return t


def lg2_approx_f32(ftz):
    """lg2.approx{.ftz}.f32 as the hardware computes it (MUFU.LG2).  For a positive normal input
    2^E * 1.m the unit forms E + F(m) exactly (F: its log2 of the mantissa, known from the two
    measured binades, :func:`mufu_lg2_f32_tables`) and rounds it toward zero to float32: E = 0 and
    E = -1 are the measured tables, E >= 1 gives E + floor(F 2^k) 2^-k and E <= -2 gives
    -(|E| - ceil(F 2^k) 2^-k) (2^-k: the result's ulp, k <= 23).  So lg2(2^E) is E for E >= 0 but
    E + 2^-k below (lg2(0.25) = -2 + 2^-23).  The rule reproduces the third measured binade [2, 4)
    (all 2^23) and every random H100 sample (validation/ptx_semantics/approx2_check.py).  Without
    .ftz ptxas wraps the unit (SASS of ptxas 13.0.88, sm_90): |x| < 2^-126 is multiplied by 2^24
    and 24 subtracted from the result (FADD, rounded to nearest).  Zeros, negatives, infinities and
    NaN as :func:`approx_unary`."""
    fmt = fp.FMT["f32"]
    base = approx_unary(fmt, "lg2", True)

    def unit(x):
        u = x.view(np.uint32).astype(np.int64)
        e = (u >> 23) & 0xFF
        m = u & 0x7FFFFF
        ok = (e != 0) & (e != 255) & (u < 0x80000000)
        big = np.where(ok, e - 127, 1).astype(np.float64)
        one, half, fl, ce = mufu_lg2_f32_tables()
        exact = fl[m] == ce[m]
        frac = fl[m] * 2.0 ** -23 + np.where(exact, 0.0, 2.0 ** -30)   # floor and ceil at 2^-23 as F's
        r = _rz_f32(big + frac)
        r = np.where(big == 0, one[m], np.where(big == -1, half[m], r))
        return np.where(ok, r, base(x)).astype(np.float32)

    return _below_normal_scaled(unit, ftz, lambda r: r - np.float32(24.0))


_INV_2PI_F32 = np.float32(0.15915493667125701904)
_SIN_FRAC = 25


def sincos_approx_f32(name, ftz):
    """sin/cos.approx{.ftz}.f32 as ptxas 13.0.88 compiles them for sm_90 (read from its SASS, with
    or without .ftz): y = FMUL.RZ(x, float32(1/(2 pi))) in turns, then MUFU.SIN / MUFU.COS of y.
    Measured on the H100 (approx2_check.py's 4 x 131,072 random inputs): the unit flushes a
    subnormal y, drops whole turns, and reads the rest truncated to 25 fraction bits (the smallest
    non-zero |sin| is sin(2 pi 2^-25); every smaller |y| gives +-0), and the results at whole
    quarter turns are exact zeros with the signs of sin(y) = sign(y) S(|y|), S(1/2) = -0, and
    cos(1/4) = -0, cos(3/4) = +0.  Its value between those points is not known bit for bit (no
    exhaustive table): here sin/cos(2 pi y) of the truncated y, by quadrant in float64, rounded to
    nearest.  Against the H100 samples that is bit-equal on 52 % (sin) / 54 % (cos) and at most
    2^-21.5 absolute from it at every finite x; the correctly rounded sin/cos(x) were equal on
    6 % / 27 % and up to 2^-14.8 away at |x| <= 100 pi (the FMUL.RZ reduction's error), 1.0 for
    huge |x|.  NaN and infinities give the canonical NaN."""
    fmt = fp.FMT["f32"]
    is_sin = name == "sin"

    def f(a):
        x = np.asarray(a, np.float32)
        if ftz:
            x = fp.flush(fmt, x)
        p = x.astype(np.float64) * np.float64(_INV_2PI_F32)
        fin = np.isfinite(p)
        y = fp.flush(fmt, _rz_f32(np.where(fin, p, 0.0))).astype(np.float64)
        y = np.fmod(np.where(np.abs(y) < 2.0 ** 23, y, 0.0 * y), 1.0)     # whole turns dropped (exact)
        t = np.trunc(np.abs(y) * 2.0 ** _SIN_FRAC) * 2.0 ** (2 - _SIN_FRAC)  # |y| in quarter turns
        q = np.floor(t)
        ang = (t - q) * (np.pi / 2)
        s, c = np.sin(ang), np.cos(ang)
        if is_sin:
            r = np.select([q == 0, q == 1, q == 2], [s, c, -s], -c) * np.where(np.signbit(y), -1.0, 1.0)
        else:
            r = np.select([q == 0, q == 1, q == 2], [c, -s, -c], s)
        return fp.finish(fmt, np.where(fin, r, np.nan), fp.RN, False)
    return f


def approx_f64_hi(name):
    """rcp.approx.ftz.f64 / rsqrt.approx.ftz.f64 as the hardware computes them (SASS MUFU.RCP64H /
    MUFU.RSQ64H).  Only the high 32 bits of the input are read (the low word never changed a
    result: 2^20 / 2^21 inputs with random low words on the H100), and the result's low word is 0.
    For a normal input 2^E * 1.m (m: the 20 mantissa bits of the high word) the result is the
    measured table entry for m (rcp) or for (E odd, m) (rsqrt: the input scaled into [1, 4)),
    with its exponent moved by -E (rcp) or -(E - (E & 1)) / 2 (rsqrt) and the input's sign (rcp);
    a result below the normal range flushes to zero of its sign.  The tables were measured
    exhaustively on an H100 (validation/ptx_semantics/approx/, ``mufu_f64h_table``), and the rule
    reproduces all of 65,536 random 64-bit inputs per instruction (every exponent, both signs,
    specials) bit for bit.  Specials as measured on the H200 (2026-11-30): subnormal inputs flush
    to zero of their sign (rcp: +-inf; rsqrt: +-inf), a NaN (and, for rsqrt, a negative input)
    gives 0x7fffffff00000000; 0x7ff0000000000001 (high word infinite) gives +0; +-inf gives +-0."""
    fn = _APPROX[name]
    rcp = name == "rcp"

    def special(u):
        u = u & _HI
        sub = (u & np.uint64(0x7FF0000000000000)) == 0
        u = np.where(sub, u & np.uint64(0x8000000000000000), u)
        y = fn(u.view(np.float64))
        r = y.view(np.uint64) & _HI
        return np.where(np.isnan(y), np.uint64(0x7FFFFFFF00000000), r)

    def f(a):
        u = np.asarray(a, np.float64).view(np.uint64)
        hi = (u >> np.uint64(32)).astype(np.int64)
        sign = hi & 0x80000000
        e = (hi >> 20) & 0x7FF
        m = hi & 0xFFFFF
        table = mufu_f64h_table(name)
        if rcp:
            r, shift = table[m], e - 1023
        else:
            odd = (e - 1023) & 1
            r, shift = table[(odd << 20) | m], (e - 1023 - odd) // 2
        re = ((r >> 20) & 0x7FF) - shift
        sgn = sign if rcp else 0
        out = np.where(re <= 0, sgn, sgn | (np.clip(re, 0, 0x7FE) << 20) | (r & 0xFFFFF))
        normal = (e != 0) & (e != 0x7FF) & ((sign == 0) | rcp)
        res = np.where(normal, out.astype(np.uint64) << np.uint64(32), special(u))
        return res.view(np.float64)
    return f


def div_full_f32(ftz):
    """div.full{.ftz}.f32 as ptxas 13.0 compiles it for sm_90 (read from its SASS; no slow path):
    FSETP |b| > 2^126 -> a and b times 1/4; without .ftz, FSETP.GEU |b| >= 2^-126 false (a
    subnormal or zero b) -> a and b times 2^24; then MUFU.RCP of b (:func:`rcp_approx_f32` with
    .ftz: the unit itself) and FMUL of that by a, rounded to nearest (.ftz: FMUL.FTZ and the
    FSETP.FTZ / FMUL.FTZ scalings, so a subnormal b reaches MUFU.RCP flushed and gives +-inf).
    Every product is an f32 multiply as the hardware rounds it; the ISA's 2-ulp bound holds."""
    fmt = fp.FMT["f32"]
    rcp = rcp_approx_f32(True)

    def mul(x, y):
        return fp.small_arith(fmt, "mul", fp.RN, (x, y), ftz, False)

    def f(a, b):
        a, b = np.broadcast_arrays(np.asarray(a, np.float32), np.asarray(b, np.float32))
        if ftz:
            a, b = fp.flush(fmt, a), fp.flush(fmt, b)
        mag = np.abs(b)
        big = mag > np.float32(2.0 ** 126)
        scale = np.where(big, np.float32(0.25), np.float32(1.0)).astype(np.float32)
        if not ftz:
            small = mag < np.float32(2.0 ** -126)          # GEU is false only for ordered b
            scale = np.where(small, np.float32(2.0 ** 24), scale).astype(np.float32)
        a2 = np.asarray(mul(a, scale), np.float32)
        b2 = np.asarray(mul(b, scale), np.float32)
        return np.asarray(mul(rcp(b2), a2), np.float32)
    return f


def div_approx_f32(full, ftz):
    """div.approx.f32 = a * (1/b): 2^126 < |b| < 2^128 gives 0 (NaN for infinite a, per the ISA, and for
    NaN a, measured on the H200); for finite a and finite nonzero b below that, the product a * r
    rounded to nearest (.ftz: flushed, keeping its sign) with r = rcp.approx of b as the hardware
    makes it (:func:`rcp_approx_f32`; a subnormal b without .ftz: a and b scaled by 2^24 first):
    bit-equal to all 131,072 random pairs measured on an H100 per form.
    div.full.f32: full range; modelled as the correctly rounded quotient (within the 2-ulp bound)."""
    fmt = fp.FMT["f32"]
    rcp = rcp_approx_f32(ftz)

    def f(a, b):
        if ftz:
            a, b = fp.flush(fmt, a), fp.flush(fmt, b)
        x, y = np.broadcast_arrays(fp.to_f64(fmt, a), fp.to_f64(fmt, b))
        q = x / y
        if not full:
            huge = np.isfinite(y) & (np.abs(y) > 2.0 ** 126)
            z = np.where(np.isinf(x) | np.isnan(x), np.nan, np.copysign(0.0, x) * np.copysign(1.0, y))
            q = np.where(huge, z, q)
        out = fp.finish(fmt, q, fp.RN, ftz)
        if full:
            return out
        af, bf = np.broadcast_arrays(np.asarray(a, np.float32), np.asarray(b, np.float32))
        use = np.isfinite(af) & np.isfinite(bf) & (bf != 0) & (np.abs(bf) <= np.float32(2.0 ** 126))
        # a subnormal b (no .ftz): ptxas scales a and b by 2^24 first (its SASS; the H100 samples)
        sb = use & (np.abs(bf) < np.float32(2.0 ** -126))
        af = np.where(sb, af * np.float32(2.0 ** 24), af).astype(np.float32)
        bf = np.where(sb, bf * np.float32(2.0 ** 24), bf).astype(np.float32)
        # the product as mul.rn{.ftz}.f32 (.ftz: tiny after rounding flushed, as measured)
        prod = fp.small_arith(fmt, "mul", fp.RN, (af, rcp(np.where(use, bf, np.float32(1.0)))), ftz, False)
        return np.where(use, prod, out).astype(np.float32)
    return f


# ----------------------------------------------------------------- comparisons
_ORDERED = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal}
_BOOL = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}
CMP_OPS = set(_ORDERED) | {"lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}


def compare(cmp, t, ftz):
    """Predicate a CMP b for PTX type t (None if the combination is not defined)."""
    if t in fp.FMT:
        fmt = fp.FMT[t]

        def fc(a, b):
            if ftz:
                a, b = fp.flush(fmt, a), fp.flush(fmt, b)
            x, y = fp.to_f64(fmt, a), fp.to_f64(fmt, b)
            un = np.isnan(x) | np.isnan(y)
            if cmp == "num":
                return ~un
            if cmp == "nan":
                return un
            if cmp in _ORDERED:
                return _ORDERED[cmp](x, y) & ~un
            if cmp.endswith("u") and cmp[:-1] in _ORDERED:
                return _ORDERED[cmp[:-1]](x, y) | un
            return None
        if cmp not in CMP_OPS or cmp in ("lo", "ls", "hi", "hs"):
            return None
        return fc
    if t in INT_T:
        w = bits(t)
        uns = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
        if cmp in uns:
            op = _ORDERED[uns[cmp]]
            return lambda a, b: op(as_u(a, w), as_u(b, w))
        if cmp in _ORDERED:
            op = _ORDERED[cmp]
            if t[0] == "b":
                return lambda a, b: op(as_u(a, w), as_u(b, w))
            return lambda a, b: op(np.asarray(a, INT_T[t]), np.asarray(b, INT_T[t]))
    return None


def split_cmp_mods(mods):
    """(cmp, boolop, ftz) from setp/set modifiers, or None."""
    cmp = [m for m in mods if m in CMP_OPS]
    bop = [m for m in mods if m in _BOOL]
    rest = set(mods) - set(cmp) - set(bop) - {"ftz"}
    if len(cmp) != 1 or len(bop) > 1 or rest:
        return None
    return cmp[0], (bop[0] if bop else None), "ftz" in mods


def build_setp(mods, types):
    parsed = split_cmp_mods(mods)
    if parsed is None or len(types) != 1:
        return None
    cmp, bop, ftz = parsed
    fc = compare(cmp, types[0], ftz)
    if fc is None:
        return None
    if bop is None:
        return lambda a, b: np.asarray(fc(a, b), bool)
    comb = _BOOL[bop]
    return lambda a, b, c: np.asarray(comb(fc(a, b), np.asarray(c, bool)), bool)


def build_set(mods, types):
    parsed = split_cmp_mods(mods)
    if parsed is None or len(types) != 2 or types[0] not in ("u32", "s32", "f32", "u16", "s16", "f16", "bf16"):
        return None
    cmp, bop, ftz = parsed
    p = build_setp(mods, types[1:])
    if p is None:
        return None
    dt = types[0]

    def out(t):
        t = np.asarray(t, bool)
        if dt == "f32":
            return np.where(t, np.float32(1.0), np.float32(0.0))
        if dt == "f16":                 # 1.0 / 0.0 in the destination's type (PTX ISA: set)
            return np.where(t, np.float16(1.0), np.float16(0.0))
        if dt == "bf16":                # bf16 values are their bits: 1.0 = 0x3F80
            return np.where(t, np.uint16(0x3F80), np.uint16(0))
        if dt in ("u16", "s16"):
            return np.where(t, np.uint16(0xFFFF), np.uint16(0)).view({"u16": np.uint16, "s16": np.int16}[dt])
        return np.where(t, np.uint32(0xFFFFFFFF), np.uint32(0)).view(INT_T[dt])
    if bop is None:
        return lambda a, b: out(p(a, b))
    return lambda a, b, c: out(p(a, b, c))


def build_selp(mods, types):
    if mods or len(types) != 1:
        return None
    return lambda a, b, c: np.where(np.asarray(c, bool), a, b)


def build_slct(mods, types):
    """slct d, a, b, c: a if c >= 0 else b (c f32: -0 >= 0; NaN c -> b, measured on the H200)."""
    if set(mods) - {"ftz"} or len(types) != 2 or types[1] not in ("s32", "f32"):
        return None
    ftz = "ftz" in mods

    def f(a, b, c):
        if types[1] == "f32":
            if ftz:
                c = fp.flush(fp.FMT["f32"], c)
            cond = np.asarray(c, np.float32) >= 0
        else:
            cond = np.asarray(c, np.int32) >= 0
        return np.where(cond, a, b)
    return f
