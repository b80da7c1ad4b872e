"""``cvt`` for :mod:`simgpu.ptx.semantics`: every int/float pair, every rounding mode, .sat/.ftz/.relu/.satfinite."""
from __future__ import annotations

import numpy as np

from . import sem_fp as fp
from .sem_int import INT_T, UNSIGNED, is_signed, limits
from .types import bits

FLOAT_T = ("f16", "bf16", "f32", "f64")
X2 = {"f16x2": "f16", "bf16x2": "bf16"}
_ORDER = {"f16": 0, "bf16": 0, "f32": 1, "f64": 2}
_KNOWN = {"ftz", "sat", "relu", "satfinite"} | set(fp.FLOAT_RND) | set(fp.INT_RND)


def round_integral(x64, mode):
    """Round float64 values to an integral value in ``mode`` (IEEE roundToIntegral, sign kept)."""
    return {fp.RN: np.rint, fp.RZ: np.trunc, fp.RM: np.floor, fp.RP: np.ceil}[mode](x64)


def _int_exact_f64(st, x):
    """An integer array as (s, e): s = RN(value) in float64, e = exact remainder (e = 0 for <= 32 bits)."""
    x = np.asarray(x)
    if bits(st) <= 32:
        s = x.astype(np.float64)
        return s, np.zeros_like(s)
    if is_signed(st):
        hi = (x.astype(np.int64) >> np.int64(32)).astype(np.float64)
    else:
        hi = (x.astype(np.uint64) >> np.uint64(32)).astype(np.float64)
    lo = (x.astype(np.uint64) & np.uint64(0xFFFFFFFF)).astype(np.float64)
    return fp.two_sum(hi * 4294967296.0, lo)


def _f64_directed_from_sum(s, e, mode):
    if mode == fp.RN:
        return s
    if mode == fp.RZ:
        adj, toward = (e != 0) & (np.signbit(e) != np.signbit(s)), 0.0
    elif mode == fp.RM:
        adj, toward = e < 0, -np.inf
    else:
        adj, toward = e > 0, np.inf
    return np.where(adj, np.nextafter(s, toward), s)


def nan_to_int(dt, st):
    """cvt float->int of a NaN, measured on the H200 (validation/data/h200_ptx_semantics.json): the
    destination's sign-bit pattern (0x80, 0x8000, 0x80000000, 0x8000000000000000; unsigned too) for
    every f64 source and for every 64-bit destination, else 0 (f32/f16/bf16 into <= 32 bits).
    Measured: f64 -> all eight integer types, f32 -> all eight, f16 -> s64 (u64 and bf16 -> 64-bit
    follow the same rule by analogy, unmeasured)."""
    w = bits(dt)
    return (1 << (w - 1)) if (st == "f64" or w == 64) else 0


def float_to_int(dt, x64, mode, st="f32"):
    """Round to integral in ``mode``, NaN -> ``nan_to_int``, saturate to the destination range (PTX cvt)."""
    r = round_integral(x64, mode)
    nan = np.isnan(r)
    r = np.where(nan, 0.0, r)
    lo, hi = limits(dt)
    if bits(dt) == 64:
        big = r >= float(hi + 1)                    # 2^63 or 2^64, exact in float64
        small = r < float(lo)
        safe = np.where(big | small, 0.0, r)
        out = safe.astype(INT_T[dt])
        out = np.where(big, INT_T[dt](hi), out)
        out = np.where(small, INT_T[dt](lo), out).astype(INT_T[dt])
    else:
        out = np.clip(r, lo, hi).astype(np.int64).astype(INT_T[dt])
    nb = nan_to_int(dt, st)
    if nb:
        out = np.where(nan, np.array(nb, UNSIGNED[bits(dt)]).view(INT_T[dt]), out)
    return out


def int_to_int(dt, st, x, sat):
    x = np.asarray(x)
    if not sat:
        return x.astype(INT_T[dt])                  # C cast: wrap / sign- or zero-extend
    lo, hi = limits(dt)
    if is_signed(st):
        v = x.astype(np.int64)
        return np.clip(v, max(lo, -(1 << 63)), min(hi, (1 << 63) - 1)).astype(INT_T[dt])
    v = x.astype(np.uint64)
    return np.minimum(v, np.uint64(hi)).astype(INT_T[dt])


def _post_float(fmt, y, mode, ftz, sat, relu, satfinite):
    """Round float64 ``y`` (exact or rounded-to-odd) into ``fmt`` with the cvt modifiers."""
    if relu:                                         # -0 -> +0 too (measured on the H200)
        y = np.where(y <= 0, 0.0, y)
    if fmt.name == "f64":
        r = fp.sat01(y) if sat else y
        r = fp.canon_nan(fmt, r)
    else:
        r = fp.finish(fmt, y, mode, ftz and fmt.name == "f32", sat)
    if satfinite:
        v = fp.to_f64(fmt, r)
        lim = fp.round_f64(fmt, np.float64(fmt.max_finite))
        r = np.where(np.isinf(v) & (v > 0), lim, r)
        neg = fp.round_f64(fmt, np.float64(-fmt.max_finite))
        r = np.where(np.isinf(v) & (v < 0), neg, r).astype(fmt.store)
    return r


_MANT = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52}


def nan_payload(sfmt, dfmt, x, quiet=True):
    """A NaN carried between float formats (measured on the H200 for cvt with f64 on either side and
    for cvt.f32.bf16): sign kept, the source mantissa (with its quiet bit set if ``quiet``) shifted to
    the destination's width (low bits dropped when narrowing).  Non-NaN lanes give garbage; mask them."""
    u = fp.bits_of(sfmt, x).astype(np.uint64)
    ms, md = _MANT[sfmt.name], _MANT[dfmt.name]
    m = u & np.uint64((1 << ms) - 1)
    if quiet:
        m = m | np.uint64(1 << (ms - 1))
    m = (m << np.uint64(md - ms)) if md >= ms else (m >> np.uint64(ms - md))
    sign = np.where((u & np.uint64(sfmt.sign)) != 0, np.uint64(dfmt.sign), np.uint64(0))
    return fp.from_bits(dfmt, (sign | np.uint64(dfmt.expmask) | m).astype(dfmt.bits))


class _Cvt:
    """The modifiers of one cvt instruction, decoded once."""

    def __init__(self, mods, dt, st, rnd):
        self.dt, self.st, self.rnd = dt, st, rnd
        self.ftz, self.sat = "ftz" in mods, "sat" in mods
        self.relu, self.satfinite = "relu" in mods, "satfinite" in mods


def _cvt_pack_x2(c):
    """cvt.rn.f16x2.f32 d, a, b : a -> upper half."""
    if c.st != "f32" or c.rnd not in fp.FLOAT_RND:
        return None
    fmt = fp.FMT[X2[c.dt]]

    def one(v):
        v = np.asarray(v, np.float32)
        if c.ftz:
            v = fp.flush(fp.FMT["f32"], v)
        r = _post_float(fmt, v.astype(np.float64), c.rnd, False, c.sat, c.relu, c.satfinite)
        return np.asarray(r, fmt.store).view(np.uint16).astype(np.uint32)

    return lambda a, b: (one(a) << np.uint32(16)) | one(b)


def _cvt_int_int(c):
    if c.rnd is not None or c.ftz or c.relu or c.satfinite:
        return None
    return lambda x: int_to_int(c.dt, c.st, x, c.sat)


def _cvt_int_float(c):
    if c.rnd in fp.INT_RND:
        return None
    mode = c.rnd or fp.RN
    fmt = fp.FMT[c.dt]

    def i2f(x):
        s, e = _int_exact_f64(c.st, x)
        if c.dt == "f64":
            y = _f64_directed_from_sum(s, e, mode)
            return fp.sat01(y) if c.sat else y
        return _post_float(fmt, fp.ro_fix(s, e), mode, c.ftz, c.sat, c.relu, c.satfinite)
    return i2f


def _cvt_float_int(c):
    if c.rnd not in fp.INT_RND:
        return None
    mode = fp.INT_RND[c.rnd]
    sfmt = fp.FMT[c.st]

    def f2i(x):
        if c.ftz and c.st == "f32":
            x = fp.flush(sfmt, x)
        return float_to_int(c.dt, fp.to_f64(sfmt, x), mode, c.st)
    return f2i


def _float_float_nan(c, sfmt, dfmt, x, y, r):
    """NaN results of a float -> float cvt, as measured on the H200."""
    nan = np.isnan(y)
    if not nan.any():
        return r
    if "f64" in (c.st, c.dt):
        # H200: the NaN's payload travels, quieted and shifted (cvt.ftz.f64.f32: made canonical
        # in f32 first, so every NaN gives 0x7fffffffe0000000)
        if c.ftz and c.st == "f32":
            return np.where(nan, nan_payload(sfmt, dfmt, fp.canon_nan(sfmt, x), quiet=False), r)
        return np.where(nan, nan_payload(sfmt, dfmt, x), r)
    if c.st == "bf16" and c.dt == "f32":                  # H200: a plain shift (sNaN stays sNaN)
        return np.where(nan, nan_payload(sfmt, dfmt, x, quiet=False), r)
    return r


def _cvt_float_float(c):
    sfmt, dfmt = fp.FMT[c.st], fp.FMT[c.dt]
    narrowing = _ORDER[c.dt] < _ORDER[c.st] or {c.st, c.dt} == {"f16", "bf16"}
    if c.rnd in fp.FLOAT_RND and not narrowing and c.st != c.dt:
        return None          # widening is exact: PTX allows no float rounding modifier there
    imode = fp.INT_RND.get(c.rnd)
    fmode = c.rnd if c.rnd in fp.FLOAT_RND else fp.RN

    def f2f(x):
        if c.ftz and c.st == "f32":
            x = fp.flush(sfmt, x)
        y = fp.to_f64(sfmt, x)
        if imode is not None:
            y = round_integral(y, imode)
        r = _post_float(dfmt, y, fmode, c.ftz, c.sat, c.relu, c.satfinite)
        if c.sat or c.relu:
            return r
        return _float_float_nan(c, sfmt, dfmt, x, y, r)
    return f2f


def build_cvt(mods, types):
    """cvt.<mods>.<dst>.<src>: the builder for its kind of conversion, or None if not valid PTX."""
    if len(types) != 2 or not set(mods) <= _KNOWN:
        return None
    dt, st = types
    rnd = [m for m in mods if m in fp.FLOAT_RND or m in fp.INT_RND]
    if len(rnd) > 1:
        return None
    c = _Cvt(mods, dt, st, rnd[0] if rnd else None)
    d_int, s_int = dt in INT_T, st in INT_T
    if dt in X2:
        return _cvt_pack_x2(c)
    if d_int and s_int:
        return _cvt_int_int(c)
    if s_int and dt in FLOAT_T:
        return _cvt_int_float(c)
    if st in FLOAT_T and d_int:
        return _cvt_float_int(c)
    if st in FLOAT_T and dt in FLOAT_T:
        return _cvt_float_float(c)
    return None
