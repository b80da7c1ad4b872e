"""``cvt`` for :mod:`simgpu.ptx.semantics`: every int/float pair, every rounding mode, .sat/.ftz/.relu/.satfinite."""
from __future__ import annotations

import numpy as np

from . import sem_fp as fp
from .sem_int import INT_T, is_signed, limits, width

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
    if width(st) <= 32:
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


def float_to_int(dt, x64, mode):
    """Round to integral in ``mode``, NaN -> 0, saturate to the destination range (PTX cvt rules)."""
    r = round_integral(x64, mode)
    r = np.where(np.isnan(r), 0.0, r)
    lo, hi = limits(dt)
    if width(dt) == 64:
        big = r >= float(hi + 1)                    # 2^63 or 2^64, exact in float64
        small = r < float(lo)
        safe = np.where(big | small, 0.0, r)
        out = safe.astype(INT_T[dt])
        out = np.where(big, INT_T[dt](hi), out)
        return np.where(small, INT_T[dt](lo), out).astype(INT_T[dt])
    return np.clip(r, lo, hi).astype(np.int64).astype(INT_T[dt])


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
    if relu:
        y = np.where(y < 0, 0.0, y)
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


def build_cvt(mods, types):
    if len(types) != 2 or not set(mods) <= _KNOWN:
        return None
    dt, st = types
    rnd = [m for m in mods if m in fp.FLOAT_RND or m in fp.INT_RND]
    if len(rnd) > 1:
        return None
    rnd = rnd[0] if rnd else None
    ftz, sat = "ftz" in mods, "sat" in mods
    relu, satfinite = "relu" in mods, "satfinite" in mods
    d_int, s_int = dt in INT_T, st in INT_T

    if dt in X2:                                     # cvt.rn.f16x2.f32 d, a, b : a -> upper half
        if st != "f32" or rnd not in fp.FLOAT_RND:
            return None
        fmt = fp.FMT[X2[dt]]

        def pack(a, b):
            def one(v):
                v = np.asarray(v, np.float32)
                if ftz:
                    v = fp.flush(fp.FMT["f32"], v)
                r = _post_float(fmt, v.astype(np.float64), rnd, False, sat, relu, satfinite)
                return np.asarray(r, fmt.store).view(np.uint16).astype(np.uint32)
            return (one(a) << np.uint32(16)) | one(b)
        return pack

    if d_int and s_int:
        if rnd is not None or ftz or relu or satfinite:
            return None
        return lambda x: int_to_int(dt, st, x, sat)

    if s_int and dt in FLOAT_T:
        if rnd in fp.INT_RND:
            return None
        mode = rnd or fp.RN
        fmt = fp.FMT[dt]

        def i2f(x):
            s, e = _int_exact_f64(st, x)
            if dt == "f64":
                y = _f64_directed_from_sum(s, e, mode)
                return fp.sat01(y) if sat else y
            return _post_float(fmt, fp.ro_fix(s, e), mode, ftz, sat, relu, satfinite)
        return i2f

    if st in FLOAT_T and d_int:
        if rnd not in fp.INT_RND:
            return None
        mode = fp.INT_RND[rnd]
        sfmt = fp.FMT[st]

        def f2i(x):
            if ftz and st == "f32":
                x = fp.flush(sfmt, x)
            return float_to_int(dt, fp.to_f64(sfmt, x), mode)
        return f2i

    if st in FLOAT_T and dt in FLOAT_T:
        sfmt, dfmt = fp.FMT[st], fp.FMT[dt]
        narrowing = _ORDER[dt] < _ORDER[st] or {st, dt} == {"f16", "bf16"}
        if rnd in fp.FLOAT_RND and not narrowing and st != dt:
            return None          # widening is exact: PTX allows no float rounding modifier there
        imode = fp.INT_RND.get(rnd)
        fmode = rnd if rnd in fp.FLOAT_RND else fp.RN

        def f2f(x):
            if ftz and st == "f32":
                x = fp.flush(sfmt, x)
            y = fp.to_f64(sfmt, x)
            if imode is not None:
                y = round_integral(y, imode)
            return _post_float(dfmt, y, fmode, ftz, sat, relu, satfinite)
        return f2f
    return None
