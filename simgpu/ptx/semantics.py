"""Bit-exact semantics of PTX arithmetic instructions (NVIDIA Hopper, sm_90) as vectorised numpy functions.

Interface (used by the PTX executor)::

    np_dtype(t)                     -> numpy dtype holding a value of PTX type t
    lookup(opcode, mods, types)     -> callable or None

``mods`` are the non-type modifiers in written order, ``types`` the type suffixes in written order
(``cvt.rzi.s32.f32`` -> ("cvt", ("rzi",), ("s32", "f32"))).  The callable takes one numpy array
(or scalar) per source operand, already viewed as ``np_dtype`` of its PTX type (shift amounts,
bfe/bfi positions, prmt selectors and lop3's immLut are u32/b32), and returns an array of the
destination's dtype (bool for predicates).  ``None`` means "not supported here".

Exactness rules
---------------
"Measured on the H200" below means checked bit for bit against an NVIDIA H200 (sm_90, driver
580.159.04, CUDA 13.0 ptxas, 2026-11-30): 577 instruction cases run with inline PTX over special
bit patterns and seeded random inputs (validation/ptx_semantics/; report
validation/data/h200_ptx_semantics.json, stored inputs and results
validation/data/h200_ptx_semantics.npz, replayed by tests/test_ptx_semantics_h200.py).  The table
reproduces every stored result of the exact instructions.

* Integers wrap exactly in their width.  ``div``/``rem`` truncate toward zero; ``MIN / -1`` wraps
  to MIN and ``MIN rem -1`` is 0.  Division *or remainder* by zero is unspecified in the PTX ISA;
  here it gives all ones (u: 0xff..., s: -1), measured on the H200 for div/rem .u16/.s16/.u32/.s32/
  .u64/.s64 (the nvcc/ptxas division sequence ends with ``@!P LOP3 d, RZ, b, RZ, 0x33`` = ~0).
  ``shl``/``shr`` clamp amounts >= width to the width: shl/shr.u/shr.b give 0, shr.s the sign fill.
  ``add.sat.s32``/``sub.sat.s32``/``mad.hi.sat.s32`` clamp to [INT32_MIN, INT32_MAX].
  ``bfe``/``bfi``: the 32-bit forms use position and length & 0xff (PTX ISA); the 64-bit forms use
  the full u32 operands (measured on the H200: e.g. length 0x100 extracts 64 bits, not 0).
* IEEE ops (add/sub/mul/fma/div/sqrt/rcp with .rn/.rz/.rm/.rp) are correctly rounded, bit-exact:
  f32/f16/bf16 through an exact or round-to-odd float64 intermediate then one rounding (see
  ``sem_fp``); f64 .rn by numpy (IEEE RNE) and a Boldo-Melquiond emulated FMA (TwoProduct,
  TwoSum, round-to-odd), directed f64 modes by exact ``fractions.Fraction`` arithmetic per lane.
  An exact zero sum is +0, except -0 under .rm (IEEE 754).  ``.sat`` clamps to [0, 1]; NaN and -0
  give +0.  f16/bf16 ops: computed in float64, rounded once (RNE).
* ``.ftz`` (f32; f16 where PTX allows it) flushes subnormal inputs to zero of the same sign, and
  flushes a result that is tiny *after rounding with an unbounded exponent* (IEEE 754), even when
  rounding to the subnormal grid would reach the smallest normal (measured on the H200:
  mul.rn.ftz.f32 0x00800000 * 0x3f7fffff = 2^-126 (1 - 2^-24), 24 bits below 2^-126, gives +0,
  not 0x00800000; likewise 0x00ffffff * 0x3f000000, and div.rn.ftz / div.full.ftz /
  div.approx.ftz.f32 0x00ffffff / 2 -> 0; but div.{full,approx}.ftz.f32 0x00800001 / 0x3f800001,
  whose FMUL.FTZ product is 2^-126 (1 - 2^-46), rounds to 24 bits as 2^-126 and gives 0x00800000).  The measured inputs that
  reach this case are products and quotients (mul.rn.ftz.f32: 8, mul.rn.ftz.sat.f32: 6,
  div.{rn,full,approx}.ftz.f32: 3 each);
  fma/rcp/cvt with .ftz follow the same rule by analogy (no stored input rounds up to 2^-126 there;
  add/sub cannot: a subnormal sum of normals is exact).
* NaN results of f32/f16/bf16 ops carry the canonical pattern: f32 0x7fffffff, f16 0x7fff, bf16
  0x7fff (PTX ISA; measured on the H200, NaN operands included).  f64 (measured on the H200): a NaN
  made from non-NaN operands (inf - inf, 0 * inf, 0/0, sqrt(-1), ...) is 0xfff8000000000000; a NaN
  operand is returned quieted (quiet bit set, sign and payload kept), the first NaN in the order
  add/sub/mul/min/max: b, a; div: a, b; fma/mad: b, c, a (rcp/sqrt/cvt.rXi.f64.f64/
  rsqrt.approx.f64: the operand).  ``sem_fp.F64_NAN_ORDER``.
* abs/neg are sign-bit operations except on a NaN (measured on the H200): f32 (also .ftz), f16,
  bf16, f16x2, bf16x2 give the canonical NaN; f64 returns the NaN quieted with its sign unchanged.
  copysign keeps a NaN's payload (measured, f32/f64).
* min/max: if exactly one operand is NaN the other is returned; both NaN -> canonical NaN (f64:
  b quieted, measured on the H200); min(-0, +0) = -0, max(-0, +0) = +0.  ``.NaN``: any NaN operand
  -> canonical NaN.
* cvt float->int: the given integer rounding (rni/rzi/rmi/rpi), saturation to the destination range
  (PTX: float-to-int is always saturating).  NaN (measured on the H200): every f64 source gives the
  sign-bit pattern of the destination width, unsigned included (0x80, 0x8000, 0x80000000,
  0x8000000000000000); f32 and f16 sources into 64-bit types give 0x8000000000000000; f32/f16/bf16
  into <= 32-bit types give 0 (measured: f64 and f32 into all eight integer types, f16 into
  s32/u32/s16/u8/s64, bf16 into s32/u16; u64.f16 and 64-bit.bf16 follow the rule unmeasured).
  int->float and narrowing float->float: correctly rounded in rn/rz/rm/rp.  int->int: wraps /
  sign- or zero-extends, ``.sat`` clamps.  ``cvt.rn.f16x2.f32 d, a, b`` packs a into the upper
  half.  ``.relu`` maps negative values *and -0* to +0 (measured on the H200: fma.rn.relu.f16/bf16/
  f16x2, cvt.rn.relu.{f16,bf16,f16x2}.f32, cvt.rn.relu.satfinite.bf16x2.f32), NaN to the canonical
  NaN; ``.satfinite`` maps +-inf to +-max finite.
* cvt float->float of a NaN (measured on the H200): with f64 on either side the payload is kept,
  quieted and shifted to the destination's mantissa (low bits dropped when narrowing), sign kept:
  cvt.f64.f32(0x7f800001) = 0x7ff8000020000000, cvt.f64.f16(0x7c01) = 0x7ff8040000000000,
  cvt.rn.f32.f64(0x7ff4000000000000) = 0x7fe00000, cvt.rn.f16.f64 -> 0x7f00, cvt.rn.bf16.f64 ->
  0x7fe0; cvt.ftz.f64.f32 of any NaN gives 0x7fffffffe0000000 (the f32 canonical NaN widened);
  cvt.f32.bf16 is a plain 16-bit shift (an sNaN stays an sNaN); among f32/f16/bf16 otherwise the
  destination's canonical NaN; ``.sat`` gives +0.
* setp/set: ordered comparisons are false and the unordered (equ, neu, ltu, leu, gtu, geu) true
  when either operand is NaN; num / nan test for NaN; lo/ls/hi/hs compare unsigned.  With a
  .and/.or/.xor modifier the callable takes the predicate c as a third source.
  slct.f32 with NaN c selects b (measured on the H200).  testp.subnormal is false for zero;
  testp.normal is *true* for +-0 (measured on the H200, f32 and f64).

``.approx`` ops (compared within these bounds by the tests, not bit-exactly).  The f32/f16/bf16 ones
are evaluated in float64 and rounded to nearest, so the table's error is <= 0.5 ulp, inside each
bound.  Bounds: the PTX ISA's (section 9.7.3, quoted from memory), then what the H200 measured
(validation/data/h200_ptx_semantics.json, H200, 2026-11-30; 24073 inputs per f32 case, every bf16/f16):
  rcp.approx.f32      ISA max 1 ulp; H200 0.96 ulp
  div.approx.f32      ISA max 2 ulp for 2^-126 <= |b| <= 2^126; H200 1.72 ulp there.  For
                      2^126 < |b| < 2^128 the result is 0, NaN if a is infinite (ISA) or NaN
                      (measured: 0x7fffffff).  div.full.f32: ISA max 2 ulp, full range; H200 1.62 ulp
  sqrt.approx.f32     ISA max relative error 2^-23; H200 2^-23.34
  rsqrt.approx.f32    ISA max relative error 2^-22.9; H200 2^-23.10
  ex2.approx.f32      ISA max 2 ulp, full range; H200 1.76 ulp (ftz 1.93)
  lg2.approx.f32      ISA max absolute error 2^-22.6 for x in [0.5, 2); H200 2^-22.44 there:
                      the quoted bound is slightly exceeded
  sin/cos.approx.f32  ISA max absolute error 2^-20.9 in [-pi, pi] (H200 2^-21.58 sin, 2^-21.29
                      cos) and 2^-20.5 in [-100pi, 100pi]: H200 2^-14.77 sin, 2^-14.82 cos there,
                      far above the quoted bound (the error grows with |x|)
  tanh.approx.f32     ISA max relative error 2^-10.987; H200 2^-16.53
  ex2.approx.f16/bf16, tanh.approx.f16/bf16: ISA ~2^-9.9 / 2^-7 relative; H200 1 ulp (2^-10.0 /
                      2^-7.02).  ex2.approx.ftz.bf16 flushes subnormal results (measured:
                      ex2(-128) = 2^-128 gives +0; without .ftz 0x0020)
  rsqrt.approx.f64    ISA: no bound; H200 within 1 ulp.  Here the correctly rounded value.
  rcp.approx.ftz.f64, rsqrt.approx.ftz.f64: ISA "gross approximation", no bound.  The hardware
                      uses only the high 32 bits of the input and returns 0 in the low word
                      (MUFU.RCP64H / RSQ64H; max relative error 2^-19.98 / 2^-20.14).  Bit-exact:
                      ``sem_fmisc.approx_f64_hi`` reads the result mantissa from tables measured
                      exhaustively on an H100 (every high-word mantissa; rsqrt: and exponent
                      parity), equal to all stored H200 results and to 65,536 random H100 inputs
                      each; NaN, and rsqrt of a negative, give 0x7fffffff00000000;
                      0x7ff0000000000001 (high word +inf) gives +0; subnormal inputs and results
                      are flushed.
  sqrt/rsqrt/lg2.approx{.ftz}.f32, ex2.approx.f16{,x2}, ex2.approx.ftz.bf16{,x2},
  tanh.approx.{f16,bf16}{,x2}: bit-exact since 2026-12-08 (``sem_fmisc.sqrt_approx_f32``,
                      ``lg2_approx_f32``, ``half_approx``: exhaustive H100 tables of MUFU.SQRT /
                      RSQ / LG2 / EX2.F16 / EX2.BF16 / TANH.F16 / TANH.BF16, ptxas' wrappers read
                      from its SASS; validation/ptx_semantics/approx2_check.py).
  sin/cos.approx{.ftz}.f32: ptxas' FMUL.RZ by 1/(2 pi) and the unit's 2^-25 truncation modelled
                      (``sem_fmisc.sincos_approx_f32``), the unit's value correctly rounded: within
                      2^-21.5 of the H100 everywhere, 52-54 % bit-equal.
  rcp.approx{.ftz}.f32, div.approx{.ftz}.f32: bit-exact, not within a bound: ``sem_fmisc.rcp_approx_f32``
                      (MUFU.RCP from an exhaustive H100 table of [1, 2), with ptxas' scaling for
                      subnormal and huge inputs without .ftz) and div.approx = a * rcp(b) rounded
                      (issue 25: 131,072 random H100 inputs each, all equal).  The bound rows above
                      for rcp.approx.f32/div.approx.f32 describe the hardware, which this now is.
Without ``.ftz`` the f32 approx ops support subnormals (sm_20+); with it inputs and results are
flushed.  Special values follow IEEE: ex2(-inf)=+0, lg2(+-0)=-inf, lg2(x<0)=NaN, sin(inf)=NaN,
rsqrt(+-0)=+-inf, tanh(+-inf)=+-1 (bit-equal to the H200 on every stored special input).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from . import sem_cvt, sem_fmisc, sem_int
from . import sem_fp as fp
from .types import FLOATS, INT_T, bits, np_dtype  # noqa: F401  (np_dtype: part of the interface)

SMALL = ("f32", "f16", "bf16")


def _float_mods(mods, allowed=("ftz", "sat")):
    """(mode, ftz, sat) from float modifiers, or None if anything unknown / repeated."""
    rnd = [m for m in mods if m in fp.FLOAT_RND]
    if len(rnd) > 1 or set(mods) - set(rnd) - set(allowed):
        return None
    return (rnd[0] if rnd else fp.RN), "ftz" in mods, "sat" in mods


def _float_arith(op, mods, t, allowed=("ftz", "sat")):
    """add/sub/mul/fma/div/sqrt/rcp for a float type (packed types lane-wise)."""
    parsed = _float_mods(mods, allowed)
    if parsed is None or t not in FLOATS:
        return None
    mode, ftz, sat = parsed
    if t == "f64":
        if ftz or sat:
            return None
        if op == "rcp":
            return lambda a: fp.f64_arith("div", mode, (np.float64(1.0), a))
        return lambda *a: fp.f64_arith(op, mode, a)
    base = sem_fmisc.X2.get(t, t)
    fmt = fp.FMT[base]
    fn = lambda *a: fp.small_arith(fmt, op, mode, a, ftz, sat)  # noqa: E731
    return sem_fmisc.lift_x2(fmt, fn) if t in sem_fmisc.X2 else fn


def _one_type(types):
    return types[0] if len(types) == 1 else None


def b_addsub(sub):
    def build(mods, types):
        t = _one_type(types)
        if "cc" in mods:
            return b_carry("sub" if sub else "add")(mods, types)
        if t in INT_T:
            if set(mods) - {"sat"} or ("sat" in mods and t != "s32"):
                return None
            return lambda a, b: sem_int.add(t, a, b, "sat" in mods, sub)
        return _float_arith("sub" if sub else "add", mods, t)
    return build


def b_mul(mods, types):
    t = _one_type(types)
    if t in INT_T:
        if len(mods) != 1:
            return None
        m = mods[0]
        if m == "lo":
            return lambda a, b: sem_int.mul_lo(t, a, b)
        if m == "hi":
            return lambda a, b: sem_int.mul_hi(t, a, b)
        if m == "wide" and bits(t) <= 32:
            return lambda a, b: sem_int.mul_wide(t, a, b)
        return None
    return _float_arith("mul", mods, t)


def b_mad(mods, types):
    t = _one_type(types)
    if "cc" in mods:
        return b_carry("mad")(mods, types)
    if t in INT_T:
        m = [x for x in mods if x in ("lo", "hi", "wide")]
        sat = "sat" in mods
        if len(m) != 1 or set(mods) - {m[0], "sat"} or (sat and (t != "s32" or m[0] != "hi")):
            return None
        mul = b_mul((m[0],), types)
        if mul is None:
            return None
        if sat:
            return lambda a, b, c: sem_int.sat_s32_add(sem_int.mul_hi(t, a, b), c)
        rt = sem_int.SIGNED[2 * bits(t)] if m[0] == "wide" and t[0] == "s" else None
        tw = ("s" if t[0] == "s" else "u") + str(2 * bits(t)) if m[0] == "wide" else t
        return lambda a, b, c: sem_int.add(tw, mul(a, b), np.asarray(c, rt) if rt else c)
    return _float_arith("fma", mods, t)


def b_fma(mods, types):
    return _float_arith("fma", mods, _one_type(types), ("ftz", "sat", "relu")) if "relu" not in mods else \
        _relu(_float_arith("fma", tuple(m for m in mods if m != "relu"), _one_type(types)), _one_type(types))


def _relu(fn, t):
    """.relu on f16/bf16(x2) results: negative and -0 -> +0 (-0 measured on the H200), NaN -> canonical NaN."""
    if fn is None or t not in ("f16", "bf16", "f16x2", "bf16x2"):
        return None
    fmt = fp.FMT[sem_fmisc.X2.get(t, t)]

    def one(r):
        v = fp.to_f64(fmt, r)
        zero = fp.from_bits(fmt, fmt.bits.type(0))
        return np.where(v <= 0, zero, r).astype(fmt.store)
    if t in sem_fmisc.X2:
        return lambda *a: sem_fmisc.lift_x2(fmt, one)(fn(*a))
    return lambda *a: one(fn(*a))


def b_div(mods, types):
    t = _one_type(types)
    if t in INT_T:
        return None if mods else (lambda a, b: sem_int.div_rem(t, a, b, False))
    if "approx" in mods or "full" in mods:
        if t != "f32" or set(mods) - {"approx", "full", "ftz"} or ("approx" in mods) == ("full" in mods):
            return None
        if "full" in mods:
            return sem_fmisc.div_full_f32("ftz" in mods)
        return sem_fmisc.div_approx_f32(False, "ftz" in mods)
    if t not in ("f32", "f64"):
        return None
    return _float_arith("div", mods, t, ("ftz",))


def b_rem(mods, types):
    t = _one_type(types)
    if t in INT_T and not mods:
        return lambda a, b: sem_int.div_rem(t, a, b, True)
    return None


def b_unary_ieee(op, approx_name):
    def build(mods, types):
        t = _one_type(types)
        if "approx" in mods:
            if set(mods) - {"approx", "ftz"}:
                return None
            ftz = "ftz" in mods
            if t == "f64" and op == "rcp" and ftz:
                return sem_fmisc.approx_f64_hi("rcp")
            if t == "f32":
                if op == "rcp":
                    return sem_fmisc.rcp_approx_f32(ftz)
                if op == "sqrt":
                    return sem_fmisc.sqrt_approx_f32("sqrt", ftz)
                return sem_fmisc.approx_unary(fp.FMT[t], approx_name, ftz)
            return None
        if t not in ("f32", "f64"):
            return None
        return _float_arith(op, mods, t, ("ftz",))
    return build


def b_approx(name, types_ok):
    def build(mods, types):
        t = _one_type(types)
        if "approx" not in mods or set(mods) - {"approx", "ftz"} or t not in types_ok:
            return None
        ftz = "ftz" in mods
        if t == "f64" and name == "rsqrt":
            return sem_fmisc.approx_f64_hi(name) if ftz else sem_fmisc.approx_unary(fp.FMT["f64"], name, False)
        if t == "f32" and name == "ex2":
            return sem_fmisc.ex2_approx_f32(ftz)
        if t == "f32" and name in ("sin", "cos"):
            return sem_fmisc.sincos_approx_f32(name, ftz)
        if t == "f32" and name == "lg2":
            return sem_fmisc.lg2_approx_f32(ftz)
        if t == "f32" and name == "rsqrt":
            return sem_fmisc.sqrt_approx_f32("rsqrt", ftz)
        base = sem_fmisc.X2.get(t, t)
        if (name, base, ftz) in (("ex2", "f16", False), ("ex2", "bf16", True), ("tanh", "f16", False),
                                 ("tanh", "bf16", False)):
            fn = sem_fmisc.half_approx(base, name)
            return sem_fmisc.lift_x2(fp.FMT[base], fn) if t in sem_fmisc.X2 else fn
        # .ftz: f32, and bf16 (ex2.approx.ftz.bf16: subnormal results flushed, measured on the H200)
        fn = sem_fmisc.approx_unary(fp.FMT[base], name, ftz and base in ("f32", "bf16"))
        return sem_fmisc.lift_x2(fp.FMT[base], fn) if t in sem_fmisc.X2 else fn
    return build


def b_minmax(is_max):
    def build(mods, types):
        t = _one_type(types)
        if t in INT_T:
            if mods:
                return None
            f = np.maximum if is_max else np.minimum
            return lambda a, b: f(np.asarray(a, INT_T[t]), np.asarray(b, INT_T[t]))
        if t not in FLOATS or set(mods) - {"ftz", "NaN"}:
            return None
        fmt = fp.FMT[sem_fmisc.X2.get(t, t)]
        fn = sem_fmisc.minmax(fmt, is_max, "NaN" in mods, "ftz" in mods)
        return sem_fmisc.lift_x2(fmt, fn) if t in sem_fmisc.X2 else fn
    return build


def b_absneg(neg):
    def build(mods, types):
        t = _one_type(types)
        if t in INT_T and t[0] == "s" and not mods:
            w = bits(t)
            u = sem_int.UNSIGNED[w]
            if neg:
                return lambda a: (u(0) - sem_int.as_u(a, w)).view(INT_T[t])
            return lambda a: np.where(np.asarray(a) < 0, (u(0) - sem_int.as_u(a, w)), sem_int.as_u(a, w)).view(INT_T[t])
        own = {"keepnan", "signbit"} & set(mods)     # simgpu's own: how ptxas folded it (sass_order)
        if t not in FLOATS or set(mods) - {"ftz", "keepnan", "signbit"} or len(own) > 1 or (own and t not in ("f32", "f64")):
            return None
        fmt = fp.FMT[sem_fmisc.X2.get(t, t)]
        fn = sem_fmisc.absneg(fmt, neg, "ftz" in mods, "keepnan" in mods, "signbit" in mods)
        return sem_fmisc.lift_x2(fmt, fn) if t in sem_fmisc.X2 else fn
    return build


def b_logic(kind):
    def build(mods, types):
        t = _one_type(types)
        if mods or t not in ("pred", "b16", "b32", "b64"):
            return None
        if t == "pred":
            f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor,
                 "not": np.logical_not, "cnot": np.logical_not}[kind]
            return lambda *a: np.asarray(f(*[np.asarray(x, bool) for x in a]), bool)
        dt = INT_T[t]
        if kind == "cnot":
            return lambda a: np.where(np.asarray(a, dt) == 0, dt(1), dt(0))
        f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "not": np.invert}[kind]
        return lambda *a: np.asarray(f(*[np.asarray(x, dt) for x in a]), dt)
    return build


def _typed(check, make):
    """Builder for ops with no modifiers and a single type satisfying ``check``."""
    def build(mods, types):
        t = _one_type(types)
        return make(t) if (not mods and t is not None and check(t)) else None
    return build


def _bits(t):
    return t in ("b32", "b64", "u32", "u64", "s32", "s64")


def b_shift(left):
    def build(mods, types):
        t = _one_type(types)
        if mods or t not in INT_T or bits(t) < 16 or (left and t[0] != "b"):
            return None
        if left:
            return lambda a, n: sem_int.shl(t, a, n)
        if t[0] == "s":
            return lambda a, n: _sign_fill(t, a, n)
        return lambda a, n: sem_int.shr(t, a, n)
    return build


def _sign_fill(t, a, n):
    """shr.s; by width-1 or more (compiled code's sign mask) of lanes none of which is negative:
    0 for every lane, returned as one value (the executor keeps it uniform)."""
    w = bits(t)
    if a.ndim and n.ndim == 0 and int(n) >= w - 1 and not (a < 0).any():
        return np.zeros((), INT_T[t])
    return sem_int.shr(t, a, n)


def b_shf(mods, types):
    if len(mods) != 2 or mods[0] not in ("l", "r") or mods[1] not in ("wrap", "clamp") \
            or _one_type(types) not in ("b32", "u32", "s32"):
        return None
    left, clamp = mods[0] == "l", mods[1] == "clamp"
    dt = INT_T[types[0]]
    return lambda a, b, c: sem_int.shf(left, clamp, a, b, c).view(dt)


def b_bfind(mods, types):
    t = _one_type(types)
    if set(mods) - {"shiftamt"} or t not in ("u32", "u64", "s32", "s64"):
        return None
    return lambda a: sem_int.bfind(t, a, "shiftamt" in mods)


def b_prmt(mods, types):
    if _one_type(types) != "b32" or len(mods) > 1 or (mods and mods[0] not in sem_int._PRMT_MODES):
        return None
    mode = mods[0] if mods else None
    return lambda a, b, c: sem_int.prmt(mode, a, b, c)


def b_mul24(hi_only_mad=False):
    def build(mods, types):
        t = _one_type(types)
        if t not in ("u32", "s32") or len(mods) != 1 or mods[0] not in ("lo", "hi"):
            return None
        hi = mods[0] == "hi"
        if hi_only_mad:
            return lambda a, b, c: sem_int.add(t, sem_int.mul24(t, hi, a, b), c)
        return lambda a, b: sem_int.mul24(t, hi, a, b)
    return build


def b_sad(mods, types):
    t = _one_type(types)
    if mods or t not in INT_T or t[0] == "b":
        return None
    w = bits(t)

    def f(a, b, c):
        a, b = np.asarray(a, INT_T[t]), np.asarray(b, INT_T[t])
        ua, ub = sem_int.as_u(a, w), sem_int.as_u(b, w)
        d = np.where(a >= b, ua - ub, ub - ua)
        return (d + sem_int.as_u(c, w)).view(INT_T[t])
    return f


def b_copysign(mods, types):
    t = _one_type(types)
    return sem_fmisc.copysign(fp.FMT[t]) if (not mods and t in ("f32", "f64")) else None


def b_testp(mods, types):
    t = _one_type(types)
    ok = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")
    if len(mods) != 1 or mods[0] not in ok or t not in ("f32", "f64"):
        return None
    return sem_fmisc.testp(fp.FMT[t], mods[0])


# ---- the carry chain (PTX ISA 9.7.1.x: add.cc, addc, sub.cc, subc, mad.cc, madc) ----------
CARRY_TYPES = ("u32", "s32", "u64", "s64")


def carry_io(opcode: str, mods: tuple[str, ...]) -> tuple[bool, bool] | None:
    """(reads CC.CF, writes CC.CF) of an instruction of the carry chain; None for any other.
    Its semantics function takes the sources and then the carry in (0 where it reads none) and
    returns ``(d, carry out)``."""
    if opcode in ("addc", "subc", "madc"):
        return True, "cc" in mods
    if opcode in ("add", "sub", "mad") and "cc" in mods:
        return False, True
    return None


def b_carry(kind):
    def build(mods, types):
        t = _one_type(types)
        rest = set(mods) - {"cc"}
        if t not in CARRY_TYPES:
            return None
        if kind == "mad":
            if len(rest) != 1 or not rest <= {"lo", "hi"}:
                return None
            mul = sem_int.mul_hi if "hi" in rest else sem_int.mul_lo
            return lambda a, b, c, cin: sem_int.add_carry(t, mul(t, a, b), c, cin)
        if rest:
            return None
        return lambda a, b, cin: sem_int.add_carry(t, a, b, cin, kind == "sub")
    return build


_TABLE: dict[str, Callable] = {
    "add": b_addsub(False), "sub": b_addsub(True), "mul": b_mul, "mad": b_mad, "fma": b_fma,
    "div": b_div, "rem": b_rem,
    "addc": b_carry("add"), "subc": b_carry("sub"), "madc": b_carry("mad"),
    "rcp": b_unary_ieee("rcp", "rcp"), "sqrt": b_unary_ieee("sqrt", "sqrt"),
    "rsqrt": b_approx("rsqrt", ("f32", "f64")),
    "ex2": b_approx("ex2", ("f32", "f16", "bf16", "f16x2", "bf16x2")),
    "tanh": b_approx("tanh", ("f32", "f16", "bf16", "f16x2", "bf16x2")),
    "lg2": b_approx("lg2", ("f32",)), "sin": b_approx("sin", ("f32",)), "cos": b_approx("cos", ("f32",)),
    "min": b_minmax(False), "max": b_minmax(True), "abs": b_absneg(False), "neg": b_absneg(True),
    "copysign": b_copysign, "testp": b_testp,
    "and": b_logic("and"), "or": b_logic("or"), "xor": b_logic("xor"), "not": b_logic("not"),
    "cnot": b_logic("cnot"),
    "shl": b_shift(True), "shr": b_shift(False), "shf": b_shf,
    "brev": _typed(lambda t: t in ("b32", "b64"), lambda t: lambda a: sem_int.brev(t, a)),
    "popc": _typed(lambda t: t in ("b32", "b64"), lambda t: lambda a: sem_int.popc(t, a)),
    "clz": _typed(lambda t: t in ("b32", "b64"), lambda t: lambda a: sem_int.clz(t, a)),
    "bfind": b_bfind,
    "bfe": _typed(_bits, lambda t: lambda a, b, c: sem_int.bfe(t, a, b, c)),
    "bfi": _typed(lambda t: t in ("b32", "b64"), lambda t: lambda a, b, c, d: sem_int.bfi(t, a, b, c, d)),
    "prmt": b_prmt,
    "lop3": _typed(lambda t: t == "b32", lambda t: sem_int.lop3),
    "mul24": b_mul24(False), "mad24": b_mul24(True), "sad": b_sad,
    "selp": sem_fmisc.build_selp, "slct": sem_fmisc.build_slct,
    "set": sem_fmisc.build_set, "setp": sem_fmisc.build_setp,
    "cvt": sem_cvt.build_cvt,
}


def _wrap(fn):
    def call(*args):
        with np.errstate(all="ignore"):
            r = fn(*[np.asarray(a) for a in args])
        return tuple(np.asarray(x) for x in r) if isinstance(r, tuple) else np.asarray(r)
    call.__wrapped__ = fn
    return call


def lookup(opcode: str, mods: tuple[str, ...], types: tuple[str, ...]) -> Callable | None:
    """The semantics function of ``opcode.mods.types``, or None if it is not supported."""
    build = _TABLE.get(opcode)
    if build is None:
        return None
    try:
        fn = build(tuple(mods), tuple(types))
    except (KeyError, ValueError):
        return None
    return None if fn is None else _wrap(fn)
