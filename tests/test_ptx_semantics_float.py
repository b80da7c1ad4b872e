"""PTX float semantics (simgpu.ptx.semantics) against an exact Fraction reference, bit for bit."""
from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from simgpu.ptx.semantics import lookup, np_dtype
from test_ptx_semantics_ref import CANON, FORMATS, decode, f32_bits, f64_bits, f64_nan_operand, ref_arith

BITS_DT = {"f32": np.uint32, "f64": np.uint64, "f16": np.uint16, "bf16": np.uint16}


def specials(fmt):
    n, p, eb = FORMATS[fmt]
    sgn = 1 << (n - 1)
    emask = ((1 << eb) - 1) << (p - 1)
    base = [0, 1, 2, (1 << (p - 1)) - 1, 1 << (p - 1), emask, emask | 1, emask | (1 << (p - 2)),
            emask - 1, (((1 << (eb - 1)) - 1) << (p - 1)), (((1 << (eb - 1)) - 1) << (p - 1)) | 1,
            (((1 << (eb - 1))) << (p - 1))]
    return base + [b | sgn for b in base]


def fbits(fmt):
    n = FORMATS[fmt][0]
    return st.one_of(st.integers(0, (1 << n) - 1), st.sampled_from(specials(fmt)),
                     st.integers(0, (1 << n) - 1).map(lambda b: b & ~(((1 << FORMATS[fmt][2]) - 1) << (FORMATS[fmt][1] - 1))))


def close_bits(fmt):
    """Pairs of operands near each other (cancellation, ties)."""
    n = FORMATS[fmt][0]
    return st.tuples(st.integers(0, (1 << n) - 1), st.integers(-3, 3), st.booleans()).map(
        lambda t: (t[0], min(max(t[0] + t[1], 0), (1 << n) - 1) ^ ((1 << (n - 1)) if t[2] else 0)))


def run(opcode, mods, ptype, fmt, cols):
    fn = lookup(opcode, tuple(mods), (ptype,))
    assert fn is not None, (opcode, mods, ptype)
    args = [np.array(c, dtype=BITS_DT[fmt]).view(np_dtype(ptype)) for c in cols]
    out = fn(*args)
    assert out.dtype == np_dtype(ptype)
    return [int(x) for x in np.asarray(out).view(BITS_DT[fmt]).ravel()]


def check(opcode, mods, fmt, rows, mode="rn", ftz=False, sat=False, op=None):
    nargs = len(rows[0])
    cols = [[r[i] for r in rows] for i in range(nargs)]
    got = run(opcode, mods, fmt, fmt, cols)
    for r, g in zip(rows, got):
        want = ref_arith(fmt, op or opcode, r, mode, ftz, sat)
        assert g == want, f"{opcode}.{'.'.join(mods)}.{fmt} {[hex(x) for x in r]}: got {g:#x} want {want:#x}"


MODES = ["rn", "rz", "rm", "rp"]


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("ftz", [False, True])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_f32_binary_correctly_rounded(op, mode, ftz, data):
    """add/sub/mul/div.{rn,rz,rm,rp}{.ftz}.f32 equal the exactly computed, once-rounded result
    (canonical NaN, IEEE signed zeros, ftz flush of subnormal inputs and results)."""
    rows = data.draw(st.lists(st.one_of(st.tuples(fbits("f32"), fbits("f32")), close_bits("f32")),
                              min_size=1, max_size=24))
    check(op, [mode] + (["ftz"] if ftz else []), "f32", rows, mode, ftz)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("ftz", [False, True])
@settings(max_examples=80, deadline=None)
@given(rows=st.lists(st.tuples(fbits("f32"), fbits("f32"), fbits("f32")), min_size=1, max_size=24))
def test_f32_fma_single_rounding(mode, ftz, rows):
    """fma.{rnd}{.ftz}.f32 rounds a*b+c once (no double rounding through float64)."""
    check("fma", [mode] + (["ftz"] if ftz else []), "f32", rows, mode, ftz)


@pytest.mark.parametrize("op", ["sqrt", "rcp"])
@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(fbits("f32")), min_size=1, max_size=24))
def test_f32_sqrt_rcp_correctly_rounded(op, mode, rows):
    """sqrt.rnd.f32 and rcp.rnd.f32 are correctly rounded in every direction."""
    check(op, [mode], "f32", rows, mode)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(fbits("f32"), fbits("f32")), min_size=1, max_size=16))
def test_f32_sat(rows):
    """add.sat.f32 clamps to [0, 1]; NaN and negative results give +0."""
    check("add", ["rn", "sat"], "f32", rows, "rn", False, True)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "fma", "sqrt"])
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_f64_rn_correctly_rounded(op, data):
    """.rn.f64 add/sub/mul/div/fma/sqrt are correctly rounded (fma: single rounding)."""
    n = {"sqrt": 1, "fma": 3}.get(op, 2)
    rows = data.draw(st.lists(st.tuples(*[fbits("f64")] * n), min_size=1, max_size=24))
    check(op, ["rn"], "f64", rows, "rn")


@pytest.mark.parametrize("op", ["add", "mul", "div", "fma", "sqrt"])
@pytest.mark.parametrize("mode", ["rz", "rm", "rp"])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_f64_directed(op, mode, data):
    """.rz/.rm/.rp.f64 are correctly rounded in their direction (incl. overflow to max/inf)."""
    n = {"sqrt": 1, "fma": 3}.get(op, 2)
    rows = data.draw(st.lists(st.tuples(*[fbits("f64")] * n), min_size=1, max_size=8))
    check(op, [mode], "f64", rows, mode)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(st.tuples(st.floats(width=64, allow_nan=False, allow_infinity=False),
                               st.floats(width=64, allow_nan=False, allow_infinity=False),
                               st.floats(width=64, allow_nan=False, allow_infinity=False)),
                     min_size=1, max_size=16))
def test_f64_fma_finite(rows):
    """fma.rn.f64 on finite operands of every magnitude equals float(Fraction(a*b+c))-style rounding."""
    rows = [tuple(f64_bits(x) for x in r) for r in rows]
    check("fma", ["rn"], "f64", rows)


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "fma"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_half_formats_rn(fmt, op, data):
    """f16/bf16 add/sub/mul/fma.rn round once with ties-to-even; NaN -> 0x7fff."""
    n = 3 if op == "fma" else 2
    rows = data.draw(st.lists(st.tuples(*[fbits(fmt)] * n), min_size=1, max_size=24))
    check(op, ["rn"], fmt, rows)


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)),
                     min_size=1, max_size=8))
def test_packed_x2_lanewise(fmt, rows):
    """fma.rn.f16x2/bf16x2 apply the scalar op to the low and the high halves independently."""
    ptype = fmt + "x2"
    fn = lookup("fma", ("rn",), (ptype,))
    out = fn(*[np.array([r[i] for r in rows], np.uint32) for i in range(3)])
    for r, g in zip(rows, out.tolist()):
        lo = ref_arith(fmt, "fma", [x & 0xFFFF for x in r])
        hi = ref_arith(fmt, "fma", [x >> 16 for x in r])
        assert g == (hi << 16) | lo


# ----------------------------------------------------------------- hand-picked tricky cases
def _f32(x):
    return np.array([x], np.float32)


def test_fma_f32_double_rounding_case():
    """a*b = 1+2^-11+2^-24 is an f32 midpoint; +-2^-80 must break the tie (float64 sum would lose it)."""
    fma = lookup("fma", ("rn",), ("f32",))
    a = _f32(1 + 2.0 ** -12)
    up = fma(a, a, _f32(2.0 ** -80))[0]
    down = fma(a, a, _f32(-(2.0 ** -80)))[0]
    assert up == np.float32(1 + 2.0 ** -11 + 2.0 ** -23)
    assert down == np.float32(1 + 2.0 ** -11)
    assert fma(a, a, _f32(0.0))[0] == np.float32(1 + 2.0 ** -11)       # the tie itself: even


def test_fma_f64_double_rounding_case():
    """(1+2^-26)(1+2^-27) = 1+3*2^-27+2^-53 is a float64 midpoint; +2^-200 rounds it up, while
    numpy's a*b+c rounds the product to even first and loses the 2^-200."""
    fma = lookup("fma", ("rn",), ("f64",))
    a, b = np.array([1 + 2.0 ** -26]), np.array([1 + 2.0 ** -27])
    lo = 1 + 3 * 2.0 ** -27
    assert fma(a, b, np.array([2.0 ** -200]))[0] == lo + 2.0 ** -52
    assert (a * b + 2.0 ** -200)[0] == lo                                # the naive way is wrong
    assert fma(a, b, np.array([-(2.0 ** -200)]))[0] == lo
    assert fma(a, b, np.array([0.0]))[0] == lo                           # the tie itself: even


def test_f32_division_correctly_rounded_known():
    """div.rn.f32: 1/3, 2/3 and a quotient that is an exact midpoint in float64 terms."""
    div = lookup("div", ("rn",), ("f32",))
    for a, b in [(1.0, 3.0), (2.0, 3.0), (1.0, 10.0), (16777215.0, 16777216.0 * 2)]:
        want = f32_bits_of_fraction(a, b)
        assert int(div(_f32(a), _f32(b)).view(np.uint32)[0]) == want


def f32_bits_of_fraction(a, b):
    from fractions import Fraction
    from test_ptx_semantics_ref import encode
    return encode("f32", Fraction(a) / Fraction(b), "rn")


def test_rm_exact_zero_sign():
    """x + (-x) is +0 in rn/rz/rp and -0 in rm (f32, f64, fma)."""
    for t, dt in (("f32", np.float32), ("f64", np.float64)):
        for mode, neg in (("rn", False), ("rz", False), ("rp", False), ("rm", True)):
            r = lookup("add", (mode,), (t,))(np.array([1.5], dt), np.array([-1.5], dt))[0]
            assert r == 0 and bool(np.signbit(r)) == neg, (t, mode)
            r = lookup("fma", (mode,), (t,))(np.array([2.0], dt), np.array([3.0], dt), np.array([-6.0], dt))[0]
            assert r == 0 and bool(np.signbit(r)) == neg, (t, mode)


def test_canonical_nan_patterns():
    """NaN results are 0x7fffffff (f32), 0x7fff (f16/bf16); f64: 0xfff8000000000000 for invalid ops, the NaN
    operand quieted otherwise (both measured on an H200)."""
    add32 = lookup("add", ("rn",), ("f32",))
    r = add32(np.array([0xFFC01234], np.uint32).view(np.float32), _f32(1.0))
    assert int(r.view(np.uint32)[0]) == 0x7FFFFFFF
    r = lookup("add", ("rn",), ("f32",))(_f32(np.inf), _f32(-np.inf))
    assert int(r.view(np.uint32)[0]) == 0x7FFFFFFF
    r = lookup("mul", ("rn",), ("f64",))(np.array([np.inf]), np.array([0.0]))
    assert int(r.view(np.uint64)[0]) == CANON["f64"]
    # f64 NaN operands come back quieted with sign and payload (H200: add prefers b, div prefers a)
    n1, n2 = np.array([0xFFF0000000000123, 0x7FF8000012345678], np.uint64).view(np.float64)
    r = lookup("add", ("rn",), ("f64",))(n1[None], n2[None])
    assert int(r.view(np.uint64)[0]) == 0x7FF8000012345678
    r = lookup("div", ("rn",), ("f64",))(n1[None], n2[None])
    assert int(r.view(np.uint64)[0]) == 0xFFF8000000000123
    r = lookup("add", ("rn",), ("f16",))(np.array([np.inf], np.float16), np.array([-np.inf], np.float16))
    assert int(r.view(np.uint16)[0]) == 0x7FFF


def test_ftz_subnormals():
    """.ftz flushes subnormal inputs, and results whose exact value is subnormal, to zero of the same sign."""
    tiny = np.array([0x00000005], np.uint32).view(np.float32)
    ntiny = np.array([0x80000005], np.uint32).view(np.float32)
    add = lookup("add", ("rn", "ftz"), ("f32",))
    assert int(add(tiny, _f32(0.0)).view(np.uint32)[0]) == 0
    assert int(add(ntiny, _f32(-0.0)).view(np.uint32)[0]) == 0x80000000
    mul = lookup("mul", ("rn", "ftz"), ("f32",))
    r = mul(_f32(2.0 ** -100), _f32(-(2.0 ** -30)))            # -2^-130: subnormal result
    assert int(r.view(np.uint32)[0]) == 0x80000000
    r = lookup("mul", ("rn",), ("f32",))(_f32(2.0 ** -100), _f32(-(2.0 ** -30)))
    assert float(r[0]) == -(2.0 ** -130)
    # the flush is decided on the exact product (H200, validation/data/h200_ptx_semantics.json):
    # 2^-126 * (1 - 2^-24) rounds to 2^-126 but .ftz gives +0
    a, b = np.array([0x00800000, 0x3F7FFFFF], np.uint32).view(np.float32)
    assert int(mul(a[None], b[None]).view(np.uint32)[0]) == 0
    assert int(lookup("mul", ("rn",), ("f32",))(a[None], b[None]).view(np.uint32)[0]) == 0x00800000
    div = lookup("div", ("rn", "ftz"), ("f32",))
    assert int(div(np.array([0x80FFFFFF], np.uint32).view(np.float32), _f32(2.0)).view(np.uint32)[0]) == 0x80000000


def test_f16_ties_to_even():
    """f16 add.rn: 1 + 2^-11 (a tie) -> 1, (1+2^-10) + 2^-11 -> 1+2^-9."""
    add = lookup("add", ("rn",), ("f16",))
    h = lambda x: np.array([x], np.float16)  # noqa: E731
    assert add(h(1.0), h(2.0 ** -11))[0] == 1.0
    assert add(h(1.0 + 2.0 ** -10), h(2.0 ** -11))[0] == 1.0 + 2.0 ** -9


# ----------------------------------------------------------------- min / max
def _ref_minmax(fmt, a, b, is_max, nanprop):
    va, vb = decode(fmt, a), decode(fmt, b)
    if va.kind == "nan" and vb.kind == "nan" or (nanprop and "nan" in (va.kind, vb.kind)):
        # f64: the NaN operand quieted, b first (measured on an H200: validation/data/h200_ptx_semantics.json)
        return f64_nan_operand("min", (a, b)) if fmt == "f64" else CANON[fmt]
    if va.kind == "nan":
        return b
    if vb.kind == "nan":
        return a
    key = lambda v, bits: ((-math.inf if v.neg else math.inf) if v.kind == "inf" else v.q, 0 if v.neg else 1)  # noqa
    ka, kb = key(va, a), key(vb, b)
    if ka == kb:
        return a
    return (a if ka > kb else b) if is_max else (a if ka < kb else b)


@pytest.mark.parametrize("fmt", ["f32", "f64", "f16", "bf16"])
@pytest.mark.parametrize("is_max", [False, True])
@pytest.mark.parametrize("nanprop", [False, True])
@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_minmax(fmt, is_max, nanprop, data):
    """min/max return the non-NaN operand (both NaN: canonical; f64: b quieted), -0 < +0; .NaN propagates
    canonical NaN."""
    rows = data.draw(st.lists(st.tuples(fbits(fmt), fbits(fmt)), min_size=1, max_size=24))
    mods = ["NaN"] if nanprop else []
    got = run("max" if is_max else "min", mods, fmt, fmt, [[r[0] for r in rows], [r[1] for r in rows]])
    for r, g in zip(rows, got):
        assert g == _ref_minmax(fmt, r[0], r[1], is_max, nanprop), [hex(x) for x in r]


def test_minmax_signed_zero_and_nan():
    """min(-0,+0) = -0, max(-0,+0) = +0 in either order; min(NaN, 2) = 2."""
    mn, mx = lookup("min", (), ("f32",)), lookup("max", (), ("f32",))
    z, nz = _f32(0.0), _f32(-0.0)
    for a, b in ((z, nz), (nz, z)):
        assert np.signbit(mn(a, b)[0]) and not np.signbit(mx(a, b)[0])
    assert mn(_f32(np.nan), _f32(2.0))[0] == 2.0
    assert int(lookup("min", ("NaN",), ("f32",))(_f32(np.nan), _f32(2.0)).view(np.uint32)[0]) == 0x7FFFFFFF


# ----------------------------------------------------------------- approx
def ULP32(x):
    """Spacing of float32 numbers at |x| (2^-149 below the normal range)."""
    x = abs(x)
    if x < 2.0 ** -126:
        return 2.0 ** -149
    return 2.0 ** (math.floor(math.log2(x)) - 23)
APPROX_BOUNDS = {   # name: (reference, checker(ref, got, x) -> bool)
    "ex2": (lambda x: 2.0 ** x, lambda r, g, x: abs(g - r) <= 2 * ULP32(r)),
    # lg2: the unit's log2 of the mantissa (within the ISA's 2^-22.6), plus the exponent, truncated
    # toward zero as the H100 does (modelled bit for bit since 2026-12-08): up to 1 ulp of the result
    # on top, e.g. lg2(0.0546875) = -4.19264460 against -4.19264508
    "lg2": (math.log2, lambda r, g, x: abs(g - r) <= 2.0 ** -22.6 + ULP32(r)),
    # sin/cos: the ISA's bound on [-pi, pi]; beyond it the hardware's own error (ptxas' FMUL.RZ
    # reduction, modelled since 2026-12-08): H200 2^-14.77 on [-100 pi, 100 pi] (semantics docstring)
    "sin": (math.sin, lambda r, g, x: abs(g - r) <= (2.0 ** -20.5 if abs(x) <= math.pi else 2.0 ** -14.5)),
    "cos": (math.cos, lambda r, g, x: abs(g - r) <= (2.0 ** -20.5 if abs(x) <= math.pi else 2.0 ** -14.5)),
    "tanh": (math.tanh, lambda r, g, x: abs(g - r) <= 2.0 ** -10.987 * abs(r) + 2.0 ** -149),
    "rsqrt": (lambda x: 1 / math.sqrt(x), lambda r, g, x: abs(g - r) <= 2.0 ** -22.9 * r),
    "sqrt": (math.sqrt, lambda r, g, x: abs(g - r) <= 2.0 ** -23 * r),
    "rcp": (lambda x: 1 / x, lambda r, g, x: abs(g - r) <= ULP32(r)),
}


@pytest.mark.parametrize("name", sorted(APPROX_BOUNDS))
@pytest.mark.parametrize("ftz", [False, True])
@settings(max_examples=100, deadline=None)
@given(xs=st.lists(st.floats(width=32, allow_nan=False, allow_infinity=False), min_size=1, max_size=16))
def test_approx_within_isa_bounds(name, ftz, xs):
    """X.approx{.ftz}.f32 stays within the PTX ISA's documented error bound of the true function
    (sin/cos beyond [-pi, pi]: within the error the H200 measured there, which exceeds the ISA's)."""
    ref, ok = APPROX_BOUNDS[name]
    if name in ("sin", "cos"):
        xs = [x for x in xs if abs(x) <= 100 * math.pi]
    if name in ("lg2", "rsqrt", "sqrt"):
        xs = [abs(x) for x in xs if x != 0]
    if name == "rcp":
        xs = [x for x in xs if x != 0]
    if name == "ex2":
        xs = [x for x in xs if -126 < x < 128]
    if ftz:
        xs = [x for x in xs if x == 0 or abs(x) >= 2.0 ** -126]
    if not xs:
        return
    fn = lookup(name, ("approx",) + (("ftz",) if ftz else ()), ("f32",))
    got = fn(np.array(xs, np.float32))
    for x, g in zip(xs, got.tolist()):
        r = ref(float(np.float32(x)))
        if ftz and 0 < abs(r) < 2.0 ** -126:
            assert g == 0
            continue
        if abs(r) >= 2.0 ** 128 * (1 - 2.0 ** -25):     # beyond float32: overflows to inf
            assert math.isinf(g) and (g > 0) == (r > 0)
            continue
        assert ok(r, g, x), (name, x, g, r)


def test_approx_special_values():
    """ex2(-inf)=0, lg2(0)=-inf, lg2(-1)=NaN, sin(inf)=NaN, rsqrt(-0)=-inf, tanh(inf)=1; div.approx huge b."""
    f = lambda n: lookup(n, ("approx",), ("f32",))  # noqa: E731
    assert f("ex2")(_f32(-np.inf))[0] == 0
    assert f("lg2")(_f32(0.0))[0] == -np.inf
    assert int(f("lg2")(_f32(-1.0)).view(np.uint32)[0]) == 0x7FFFFFFF
    assert np.isnan(f("sin")(_f32(np.inf))[0])
    assert f("rsqrt")(_f32(-0.0))[0] == -np.inf
    assert f("tanh")(_f32(np.inf))[0] == 1.0
    d = lookup("div", ("approx",), ("f32",))
    assert d(_f32(1.0), _f32(2.0 ** 127))[0] == 0.0
    assert np.isnan(d(_f32(np.inf), _f32(2.0 ** 127))[0])
    assert lookup("div", ("full",), ("f32",))(_f32(1.0), _f32(2.0 ** 127))[0] == np.float32(2.0 ** -127)


def test_approx_special_values_h200():
    """.approx specials measured on an H200 (validation/data/h200_ptx_semantics.json): div.approx of a NaN by
    2^126 < |b| < 2^128 is 0x7fffffff; ex2.approx.ftz.bf16 flushes subnormal results; rcp/rsqrt.approx.ftz.f64
    use the input's high word and return a zero low word (NaN -> 0x7fffffff00000000, 0x7ff0000000000001 -> +0)."""
    d = lookup("div", ("approx",), ("f32",))
    assert int(d(np.array([0x7F800001], np.uint32).view(np.float32), _f32(2.0 ** 127)).view(np.uint32)[0]) == 0x7FFFFFFF
    ex2 = lookup("ex2", ("approx", "ftz"), ("bf16",))
    assert ex2(np.array([0xC300, 0xC2FD, 0xC2F0], np.uint16)).tolist() == [0, 0, 0x0380]   # 2^-128, 2^-126.6, 2^-120
    assert lookup("ex2", ("approx",), ("bf16",))(np.array([0xC300], np.uint16)).tolist() == [0x0020]
    u = lambda *v: np.array(v, np.uint64).view(np.float64)  # noqa: E731
    rcp = lookup("rcp", ("approx", "ftz"), ("f64",))
    rsq = lookup("rsqrt", ("approx", "ftz"), ("f64",))
    x = u(0x7FF8000012345678, 0x7FF0000000000001, 0x000FFFFFFFFFFFFF, 0x4010000000000000, 0x3FF0000012345678,
          0xFFF0000000000123)
    assert rcp(x).view(np.uint64).tolist() == [0x7FFFFFFF00000000, 0, 0x7FF0000000000000, 0x3FD0000000000000,
                                              0x3FF0000000000000, 0x8000000000000000]
    assert rsq(x).view(np.uint64).tolist()[:5] == [0x7FFFFFFF00000000, 0, 0x7FF0000000000000, 0x3FE0000000000000,
                                                   0x3FF0000000000000]
    assert rsq(u(0xBFF0000000000000)).view(np.uint64).tolist() == [0x7FFFFFFF00000000]
    r = rcp(u(*np.random.default_rng(0).integers(0x0010000000000000, 0x7FE0000000000000, 200, dtype=np.uint64)))
    assert not (r.view(np.uint64) & np.uint64(0xFFFFFFFF)).any()


@settings(max_examples=100, deadline=None)
@given(xs=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=32))
def test_testp(xs):
    """testp.* classify f32 bit patterns like struct-decoded Python floats; zero is not subnormal and, as on the
    H200, is normal."""
    xs = xs + [0, 0x80000000, 1, 0x00800000]
    a = np.array(xs, np.uint32).view(np.float32)
    res = {k: lookup("testp", (k,), ("f32",))(a) for k in
           ("finite", "infinite", "number", "notanumber", "normal", "subnormal")}
    for i, b in enumerate(xs):
        x = struct.unpack("<f", struct.pack("<I", b))[0]
        sub = x != 0 and abs(x) < 2.0 ** -126
        assert res["finite"][i] == math.isfinite(x)
        assert res["infinite"][i] == math.isinf(x)
        assert res["notanumber"][i] == math.isnan(x) and res["number"][i] != math.isnan(x)
        assert res["subnormal"][i] == sub
        # +-0 counts as normal (measured on an H200: validation/data/h200_ptx_semantics.json)
        assert res["normal"][i] == (math.isfinite(x) and not sub)


def test_abs_neg_copysign():
    """abs/neg flip/clear the sign bit; copysign d, a, b takes b's magnitude and a's sign."""
    a = _f32(-2.5)
    assert lookup("abs", (), ("f32",))(a)[0] == 2.5
    assert lookup("neg", (), ("f32",))(a)[0] == 2.5
    assert lookup("copysign", (), ("f32",))(_f32(-1.0), _f32(3.0))[0] == -3.0
    assert f32_bits(float(lookup("neg", (), ("f32",))(_f32(0.0))[0])) == 0x80000000


def test_abs_neg_nan():
    """abs/neg of a NaN (measured on an H200, validation/data/h200_ptx_semantics.json): f32/f16/bf16 give the
    canonical NaN; f64 returns the NaN quieted with its sign unchanged."""
    n32 = np.array([0xFF812345], np.uint32).view(np.float32)
    for op in ("abs", "neg"):
        assert int(lookup(op, (), ("f32",))(n32).view(np.uint32)[0]) == 0x7FFFFFFF
        h = np.array([0xFC01], np.uint16).view(np.float16)
        assert int(lookup(op, (), ("f16",))(h).view(np.uint16)[0]) == 0x7FFF
        got = int(lookup(op, (), ("bf16x2",))(np.array([0x3F80FF81], np.uint32))[0])
        assert got == (0xBF807FFF if op == "neg" else 0x3F807FFF)
        n64 = np.array([0xFFF0000000000123], np.uint64).view(np.float64)
        assert int(lookup(op, (), ("f64",))(n64).view(np.uint64)[0]) == 0xFFF8000000000123


def test_f32_fma_compiled_lanes_as_numpy():
    """fma.rn.f32 over a step's lanes (contiguous float32 arrays: sem_fp's compiled pass)
    gives the bits of the same operands in other forms (a strided view, read-only copies:
    the numpy path), on random bits, specials, and exact sums that take the exact path."""
    from simgpu.ptx import sem_fp
    rng = np.random.default_rng(26)
    n = 4096
    cols = [rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32) for _ in range(3)]
    sp = np.array(specials("f32"), dtype=np.uint32)
    for c in cols:
        c[: 3 * len(sp)] = np.resize(sp, 3 * len(sp))
        rng.shuffle(sp)
    x = np.float32(1.5).view(np.uint32)
    cols[0][-64:], cols[1][-64:], cols[2][-64:] = x, x, np.float32(-2.25).view(np.uint32)   # exact sum 0
    # 3 * (5592407 * 2**-25) = 0.5 + 5 * 2**-25 exactly: a float32 rounding midpoint; c = +-2**-60
    # makes the float64 sum inexact on that midpoint (double rounding would go wrong), c = 0 or an
    # exact 2**-24 keeps it exact
    tie = [np.float32(3.0), np.float32(5592407 * 2.0 ** -25)]
    for j, cv in enumerate((2.0 ** -60, -2.0 ** -60, 0.0, 2.0 ** -24, -2.0 ** -24)):
        lo = n - 128 + 8 * j
        cols[0][lo:lo + 8] = tie[0].view(np.uint32)
        cols[1][lo:lo + 8] = tie[1].view(np.uint32)
        cols[2][lo:lo + 8] = np.float32(cv).view(np.uint32)
    args = [c.view(np.float32) for c in cols]
    assert sem_fp._fma_operands(args, np.float32) is not None
    fn = lookup("fma", ("rn",), ("f32",))
    got = np.asarray(fn(*args)).view(np.uint32)
    slow = []
    for a in args:
        v = np.repeat(a, 2)[::2]                   # a strided view: not the compiled form
        assert sem_fp._fma_operands((v, v, v), np.float32) is None
        slow.append(v)
    want = np.asarray(fn(*slow)).view(np.uint32)
    assert got.tolist() == want.tolist()
    for u in (0, 5, n - 1):                        # uniform operands (immediates): compiled too
        for j in range(3):
            one = list(args)
            one[j] = args[j][u]
            s1 = list(slow)
            s1[j] = np.full(n, args[j][u])[::1].repeat(2)[::2]
            g = np.asarray(fn(*one)).view(np.uint32)
            assert g.tolist() == np.asarray(fn(*s1)).view(np.uint32).tolist()
    for i in [0, 1, 2, 5, 40, n - 1] + list(range(n - 128, n - 88, 8)):
        assert int(got[i]) == ref_arith("f32", "fma", [int(c[i]) for c in cols], "rn", False, False)


def test_f64_fma_compiled_lanes_as_numpy():
    """fma.rn.f64 over a step's lanes (contiguous float64 arrays: llvm.fma in jitexec) gives
    the bits of sem_fp's numpy emulation (fma_rn_f64) on random bits, specials (a non-finite
    operand sends the step the numpy way), subnormals, extreme exponents and cancellations."""
    from simgpu.ptx import sem_fp
    rng = np.random.default_rng(26)
    n = 4096
    cols = [rng.integers(0, 1 << 64, n, dtype=np.uint64) for _ in range(3)]
    cols[2][:1024] = (cols[0][:1024] ^ np.uint64(1 << 63))          # c near -a: cancellations
    cols[1][:1024] = np.float64(1.0).view(np.uint64)
    sp = np.array(specials("f64"), dtype=np.uint64)
    fin = [int(x) for x in sp if np.isfinite(np.uint64(x).view(np.float64))]
    for c in cols:
        c[1024:1024 + 3 * len(fin)] = np.resize(np.array(fin, np.uint64), 3 * len(fin))
        rng.shuffle(fin)
    args = [c.view(np.float64) for c in cols]
    ok = np.isfinite(args[0]) & np.isfinite(args[1]) & np.isfinite(args[2])
    finite = [a[ok].copy() for a in args]
    assert sem_fp._fma_operands(finite, np.float64) is not None
    fn = lookup("fma", ("rn",), ("f64",))
    got = np.asarray(fn(*finite)).view(np.uint64)
    with np.errstate(all="ignore"):                         # (the emulation's overflowing steps)
        want = np.asarray(sem_fp.fma_rn_f64(*finite)).view(np.uint64)
        mixed = np.asarray(fn(*args)).view(np.uint64)        # specials too: the numpy path
    assert got.tolist() == want.tolist()
    assert mixed[ok].tolist() == want.tolist()
    for i in (0, 1, 1024, 1030, len(got) - 1):
        assert int(got[i]) == ref_arith("f64", "fma", [int(f.view(np.uint64)[i]) for f in finite], "rn", False, False)
    for u in (0, 1030):                            # uniform operands (immediates): compiled too
        for j in range(3):
            one = list(finite)
            one[j] = np.float64(finite[j][u])
            with np.errstate(all="ignore"):
                w = np.asarray(sem_fp.fma_rn_f64(*one)).view(np.uint64)
            assert np.asarray(fn(*one)).view(np.uint64).tolist() == w.tolist()
