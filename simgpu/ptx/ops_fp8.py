"""cvt to and from the 8-bit float pairs (``.e4m3x2``, ``.e5m2x2``; cuda_fp8.hpp's intrinsics,
linked into numba's fp8 kernels):

* ``cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b``: a -> the upper byte of d, b -> the
  lower; ``.f16x2`` source ``d, a``: a's upper half -> the upper byte;
* ``cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a``: the upper byte -> the upper half (exact).

Rounding to nearest even in one step from the source value; ``.satfinite`` (required by PTX
for these) clamps results beyond the largest finite value, infinities included, to it (e4m3:
448, e5m2: 57344); NaN becomes 0x7F (PTX ISA; the NaN patterns are not measured on the H200).
e4m3: bias 7, no infinities, 0x7F/0xFF NaN; e5m2: bias 15, IEEE-like (the top byte of a half).
"""
from __future__ import annotations

import numpy as np

from simgpu.ptx.instrs import build_arith, guarded, reader, unsupported, writer

#: name -> (exponent bits, mantissa bits, bias, largest finite value)
FORMATS = {"e4m3x2": (4, 3, 7, 448.0), "e5m2x2": (5, 2, 15, 57344.0)}
NAN8 = 0x7F
F16_NAN = 0x7FFF


def encode(fmt, x):
    """float64 values -> fp8 bits (uint8): round to nearest even, satfinite."""
    e_bits, m, bias, top = FORMATS[fmt]
    x = np.asarray(x, np.float64)
    sign = np.signbit(x)
    a = np.abs(x)
    nan = np.isnan(x)
    a = np.where(nan | np.isinf(a), top, a)
    emin = 1 - bias
    _, e = np.frexp(np.where(a > 0, a, 1.0))            # a = f * 2**e, f in [0.5, 1)
    E = np.maximum(e - 1, emin)
    q = np.ldexp(1.0, E - m)
    v = np.rint(a / q) * q                               # exact scaling; rint: half to even
    v = np.minimum(v, top)
    _, e2 = np.frexp(np.where(v > 0, v, 1.0))
    e2 = e2 - 1
    normal = (v >= np.ldexp(1.0, emin))
    exp_field = np.where(normal, e2 + bias, 0)
    mant = np.where(normal, v / np.ldexp(1.0, e2 - m) - (1 << m), v / np.ldexp(1.0, emin - m))
    bits = (exp_field.astype(np.int64) << m) | mant.astype(np.int64)
    bits = np.where(v == 0, 0, bits) | (sign.astype(np.int64) << 7)
    return np.where(nan, NAN8, bits).astype(np.uint8)


def decode(fmt, b):
    """fp8 bits -> float64 values (NaN for e4m3's 0x7F/0xFF and e5m2's NaNs)."""
    e_bits, m, bias, _ = FORMATS[fmt]
    b = np.asarray(b, np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    ef = (b >> m) & ((1 << e_bits) - 1)
    mf = b & ((1 << m) - 1)
    val = np.where(ef == 0, np.ldexp(mf.astype(np.float64), 1 - bias - m),
                   np.ldexp((mf + (1 << m)).astype(np.float64), ef - bias - m))
    if fmt == "e4m3x2":
        nan = (ef == 15) & (mf == 7)
        inf = np.zeros_like(nan)
    else:
        nan = (ef == 31) & (mf != 0)
        inf = (ef == 31) & (mf == 0)
    val = np.where(inf, np.inf, val)
    return np.where(nan, np.nan, sign * val)


def _f16_bits(v):
    h = np.asarray(v, np.float64).astype(np.float16).view(np.uint16)
    return np.where(np.isnan(v), np.uint16(F16_NAN), h).astype(np.uint32)


def build_cvt(ctx, ins):
    """cvt with an fp8 pair type (in ins.mods: the parser knows no fp8 types); any other cvt
    goes to the arithmetic table."""
    fmt = next((m for m in ins.mods if m in FORMATS), None)
    if fmt is None:
        return build_arith(ctx, ins)
    other = ins.types[0] if ins.types else None
    text = ins.text
    to_fp8 = text.find("." + fmt) < text.find("." + other) if other else False
    relu = "relu" in ins.mods
    guard = guarded(ctx, ins)
    if to_fp8:
        if "satfinite" not in ins.mods or "rn" not in ins.mods or other not in ("f32", "f16x2"):
            return unsupported(ctx, ins, "cvt to an fp8 pair takes .rn.satfinite from .f32 or .f16x2")
        wd = writer(ctx, ins.operands[0], "b16")
        if other == "f32":
            ra, rb = reader(ctx, ins.operands[1], "f32"), reader(ctx, ins.operands[2], "f32")

            def values(ex, sub):
                return ra(ex, sub).astype(np.float64), rb(ex, sub).astype(np.float64)
        else:
            rp = reader(ctx, ins.operands[1], "b32")

            def values(ex, sub):
                p = np.asarray(rp(ex, sub), np.uint32)
                hi = (p >> np.uint32(16)).astype(np.uint16).view(np.float16).astype(np.float64)
                lo = (p & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
                return hi, lo

        def run(ex, lanes, pc):
            sub = guard(ex, lanes)
            if sub is None or len(sub):
                hi, lo = values(ex, sub)
                if relu:
                    hi, lo = (np.where(v < 0, 0.0, v) for v in (hi, lo))
                d = (encode(fmt, hi).astype(np.uint16) << np.uint16(8)) | encode(fmt, lo).astype(np.uint16)
                wd(ex, d, sub)
            ex.advance(lanes)
        return run
    if other != "f16x2" or "rn" not in ins.mods:
        return unsupported(ctx, ins, "cvt from an fp8 pair gives .rn.f16x2")
    wd = writer(ctx, ins.operands[0], "b32")
    ra = reader(ctx, ins.operands[1], "b16")

    def run_from(ex, lanes, pc):
        sub = guard(ex, lanes)
        if sub is None or len(sub):
            a = np.asarray(ra(ex, sub), np.uint16)
            hi, lo = decode(fmt, a >> np.uint16(8)), decode(fmt, a & np.uint16(0xFF))
            if relu:
                hi, lo = (np.where(v < 0, 0.0, v) for v in (hi, lo))
            wd(ex, (_f16_bits(hi) << np.uint32(16)) | _f16_bits(lo), sub)
        ex.advance(lanes)
    return run_from


HANDLERS = {"cvt": build_cvt}
