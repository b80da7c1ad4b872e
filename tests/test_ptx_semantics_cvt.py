"""PTX cvt / setp / set semantics (simgpu.ptx.semantics) against exact Python references."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from simgpu.ptx.semantics import lookup, np_dtype
from test_ptx_semantics_ref import CANON, FORMATS, decode, encode, sign_bit

BITS_DT = {"f32": np.uint32, "f64": np.uint64, "f16": np.uint16, "bf16": np.uint16}
INTS = ["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"]


def irange(t):
    w = int(t[1:])
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if t[0] == "s" else (0, (1 << w) - 1)


def fbits(fmt):
    n, p, eb = FORMATS[fmt]
    bias = (1 << (eb - 1)) - 1
    near_int = st.tuples(st.integers(0, min(bias + 70, (1 << eb) - 2)), st.integers(0, (1 << (p - 1)) - 1),
                         st.booleans()).map(lambda t: (t[2] << (n - 1)) | (t[0] << (p - 1)) | t[1])
    return st.one_of(st.integers(0, (1 << n) - 1), near_int,
                     st.sampled_from([0, 1 << (n - 1), ((1 << eb) - 1) << (p - 1), (((1 << eb) - 1) << (p - 1)) | 1]))


def round_int_ref(q: Fraction, mode):
    fl = math.floor(q)
    frac = q - fl
    if mode == "rzi":
        return math.trunc(q)
    if mode == "rmi":
        return fl
    if mode == "rpi":
        return math.ceil(q)
    if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and fl % 2):
        return fl + 1
    return fl


@pytest.mark.parametrize("src", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("dst", INTS)
@pytest.mark.parametrize("mode", ["rni", "rzi", "rmi", "rpi"])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_float_to_int(src, dst, mode, data):
    """cvt.{rni,rzi,rmi,rpi}.int.float: round to integer, NaN -> 0, saturate to the int range."""
    xs = data.draw(st.lists(fbits(src), min_size=1, max_size=24))
    fn = lookup("cvt", (mode,), (dst, src))
    got = fn(np.array(xs, BITS_DT[src]).view(np_dtype(src)))
    assert got.dtype == np_dtype(dst)
    lo, hi = irange(dst)
    for b, g in zip(xs, got.tolist()):
        v = decode(src, b)
        if v.kind == "nan":
            want = 0
        elif v.kind == "inf":
            want = lo if v.neg else hi
        else:
            want = min(hi, max(lo, round_int_ref(v.q, mode)))
        assert g == want, (hex(b), g, want)


def test_float_to_int_tricky():
    """rni ties to even (0.5 -> 0, 1.5 -> 2, -2.5 -> -2); NaN/inf/out of range saturate; 2^63 -> INT64_MAX."""
    f = np.array([0.5, 1.5, 2.5, -2.5, -0.5, np.nan, np.inf, -np.inf, 3e9, -3e9], np.float32)
    assert lookup("cvt", ("rni",), ("s32", "f32"))(f).tolist() == \
        [0, 2, 2, -2, 0, 0, 2**31 - 1, -2**31, 2**31 - 1, -2**31]
    assert lookup("cvt", ("rzi",), ("u32", "f32"))(f).tolist() == [0, 1, 2, 0, 0, 0, 2**32 - 1, 0, 3000000000, 0]
    d = np.array([2.0**63, -2.0**63, 2.0**64, -1.0, 1e300])
    assert lookup("cvt", ("rzi",), ("s64", "f64"))(d).tolist() == [2**63 - 1, -2**63, 2**63 - 1, -1, 2**63 - 1]
    assert lookup("cvt", ("rzi",), ("u64", "f64"))(d).tolist() == [2**63, 0, 2**64 - 1, 0, 2**64 - 1]


@pytest.mark.parametrize("src", INTS)
@pytest.mark.parametrize("dst", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_int_to_float(src, dst, mode, data):
    """cvt.{rn,rz,rm,rp}.float.int rounds the exact integer once (64-bit sources included)."""
    lo, hi = irange(src)
    xs = data.draw(st.lists(st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0, 1, hi - 1])),
                            min_size=1, max_size=24))
    got = lookup("cvt", (mode,), (dst, src))(np.array(xs, np_dtype(src)))
    assert got.dtype == np_dtype(dst)
    got = np.asarray(got).view(BITS_DT[dst]).tolist()
    for x, g in zip(xs, got):
        want = 0 if x == 0 else encode(dst, Fraction(x), mode)
        assert g == want, (x, hex(g), hex(want))


@pytest.mark.parametrize("src,dst", [("f64", "f32"), ("f64", "f16"), ("f64", "bf16"), ("f32", "f16"),
                                     ("f32", "bf16"), ("f16", "f32"), ("bf16", "f32"), ("f32", "f64"),
                                     ("f16", "f64")])
@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_float_to_float(src, dst, mode, data):
    """Narrowing cvt is correctly rounded in each direction (overflow -> inf or max); widening is exact;
    NaN -> the destination's canonical NaN."""
    widening = FORMATS[dst][1] > FORMATS[src][1] and FORMATS[dst][2] >= FORMATS[src][2]
    mods = () if widening else (mode,)
    if widening and mode != "rn":
        return
    xs = data.draw(st.lists(fbits(src), min_size=1, max_size=24))
    got = lookup("cvt", mods, (dst, src))(np.array(xs, BITS_DT[src]).view(np_dtype(src)))
    got = np.asarray(got).view(BITS_DT[dst]).tolist()
    n, p, eb = FORMATS[dst]
    for b, g in zip(xs, got):
        v = decode(src, b)
        if v.kind == "nan":
            want = CANON[dst]
        elif v.kind == "inf":
            want = sign_bit(dst, v.neg) | (((1 << eb) - 1) << (p - 1))
        elif v.kind == "zero":
            want = sign_bit(dst, v.neg)
        else:
            want = encode(dst, v.q, mode)
        assert g == want, (hex(b), hex(g), hex(want))


def test_f32_to_f16_ties_and_pack():
    """cvt.rn.f16.f32 ties to even; cvt.rn.f16x2.f32 d, a, b puts a in the upper half."""
    cv = lookup("cvt", ("rn",), ("f16", "f32"))
    x = np.array([1 + 2.0**-11, 1 + 3 * 2.0**-11, 65520.0, 65519.0], np.float32)
    assert cv(x).tolist() == [1.0, 1 + 2.0**-9, np.inf, 65504.0]
    pk = lookup("cvt", ("rn",), ("f16x2", "f32"))
    assert int(pk(np.float32(1.0), np.float32(2.0))) == (0x3C00 << 16) | 0x4000
    assert int(lookup("cvt", ("rz",), ("f16", "f32"))(np.array([1e6], np.float32)).view(np.uint16)[0]) == 0x7BFF
    bf = lookup("cvt", ("rn",), ("bf16", "f32"))
    assert bf(np.array([np.nan, 1 + 2.0**-8, 1 + 3 * 2.0**-8], np.float32)).tolist() == [0x7FFF, 0x3F80, 0x3F82]


def test_float_integral_rounding_ftz_sat():
    """cvt.rni.f32.f32 (ties to even, sign kept), .ftz flushes subnormals, .sat clamps to [0,1]."""
    x = np.array([2.5, -0.5, 3.5, -7.25], np.float32)
    r = lookup("cvt", ("rni",), ("f32", "f32"))(x)
    assert r.tolist() == [2.0, -0.0, 4.0, -7.0] and np.signbit(r[1])
    sub = np.array([0x80000003], np.uint32).view(np.float32)
    r = lookup("cvt", ("ftz",), ("f32", "f32"))(sub)
    assert int(r.view(np.uint32)[0]) == 0x80000000
    r = lookup("cvt", ("sat",), ("f32", "f32"))(np.array([-3.0, 0.25, 7.0, np.nan], np.float32))
    assert r.tolist() == [0.0, 0.25, 1.0, 0.0]
    r = lookup("cvt", ("rn", "sat"), ("f32", "s32"))(np.array([-3, 0, 1, 5], np.int32))
    assert r.tolist() == [0.0, 0.0, 1.0, 1.0]


@pytest.mark.parametrize("src", INTS)
@pytest.mark.parametrize("dst", INTS)
@pytest.mark.parametrize("sat", [False, True])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_int_to_int(src, dst, sat, data):
    """cvt.int.int wraps (sign- or zero-extends from the source type); .sat clamps to the destination."""
    lo, hi = irange(src)
    xs = data.draw(st.lists(st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0])), min_size=1, max_size=24))
    got = lookup("cvt", ("sat",) if sat else (), (dst, src))(np.array(xs, np_dtype(src)))
    assert got.dtype == np_dtype(dst)
    dlo, dhi = irange(dst)
    w = int(dst[1:])
    for x, g in zip(xs, got.tolist()):
        if sat:
            want = min(dhi, max(dlo, x))
        else:
            want = x & ((1 << w) - 1)
            if dst[0] == "s" and want >> (w - 1):
                want -= 1 << w
        assert g == want


# ----------------------------------------------------------------- setp / set
def cmp_ref(op, x, y):
    un = math.isnan(x) or math.isnan(y)
    base = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}
    if op == "num":
        return not un
    if op == "nan":
        return un
    if op in base:
        return base[op] and not un
    return base[op[:-1]] or un


FCMP = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]


@pytest.mark.parametrize("op", FCMP)
@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(st.floats(width=32), st.floats(width=32)), min_size=1, max_size=32))
def test_setp_float(op, rows):
    """setp.CMP.f32: ordered comparisons are false with a NaN operand, unordered ones true; num/nan."""
    a = np.array([r[0] for r in rows], np.float32)
    b = np.array([r[1] for r in rows], np.float32)
    got = lookup("setp", (op,), ("f32",))(a, b)
    assert got.dtype == np.bool_
    assert got.tolist() == [cmp_ref(op, x, y) for x, y in rows]
    got = lookup("setp", (op,), ("f64",))(a.astype(np.float64), b.astype(np.float64))
    assert got.tolist() == [cmp_ref(op, x, y) for x, y in rows]


def test_setp_nan_and_combine_and_set():
    """setp.ne is false for NaN, setp.neu true; setp.lt.and combines with c; set.lt.u32.f32 = 0xffffffff."""
    n, one = np.float32(np.nan), np.float32(1.0)
    assert not lookup("setp", ("ne",), ("f32",))(n, one)
    assert lookup("setp", ("neu",), ("f32",))(n, one)
    f = lookup("setp", ("lt", "and"), ("s32",))
    assert f(np.array([1, 1], np.int32), np.array([2, 2], np.int32), np.array([True, False])).tolist() == [True, False]
    assert lookup("setp", ("lo",), ("s32",))(np.int32(-1), np.int32(1)) == np.False_    # unsigned compare
    assert int(lookup("set", ("lt",), ("u32", "f32"))(np.float32(1), np.float32(2))) == 0xFFFFFFFF
    assert float(lookup("set", ("lt",), ("f32", "f32"))(np.float32(1), np.float32(2))) == 1.0
    sub = np.array([1], np.uint32).view(np.float32)
    assert lookup("setp", ("eq", "ftz"), ("f32",))(sub, np.array([0.0], np.float32))[0]


def test_lookup_unknown_is_none():
    """Unsupported or malformed combinations return None instead of raising."""
    assert lookup("frobnicate", (), ("f32",)) is None
    assert lookup("cvt", ("rni",), ("f32", "s32")) is None         # int->float takes rn/rz/rm/rp
    assert lookup("cvt", (), ("s32", "f32")) is None                # float->int needs an int rounding
    assert lookup("add", ("sat",), ("u32",)) is None
    assert lookup("mul", ("wide",), ("s64",)) is None
    assert lookup("add", ("bogus",), ("f32",)) is None
    assert np_dtype("bf16") == np.uint16 and np_dtype("pred") == np.bool_ and np_dtype("f16x2") == np.uint32
