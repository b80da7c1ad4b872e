"""PTX integer / bit-manipulation semantics (simgpu.ptx.semantics) against Python-int references."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from simgpu.ptx.semantics import lookup, np_dtype

TYPES = ["u16", "s16", "u32", "s32", "u64", "s64"]


def w_of(t):
    return int(t[1:])


def wrap(t, v):
    """Python int v reduced to type t's range (two's complement)."""
    w = w_of(t)
    v &= (1 << w) - 1
    if t[0] == "s" and v >> (w - 1):
        v -= 1 << w
    return v


def ints(t):
    w = w_of(t)
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if t[0] == "s" else (0, (1 << w) - 1)
    return st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0, 1, -1 if lo else 2, lo + 1, hi - 1]))


def arr(t, xs):
    return np.array(xs, dtype=np_dtype(t))


def call(opcode, mods, types, *cols):
    fn = lookup(opcode, tuple(mods), tuple(types))
    assert fn is not None, (opcode, mods, types)
    with warnings.catch_warnings():
        warnings.simplefilter("error")             # no numpy overflow warnings may escape
        return fn(*cols)


def tdiv(a, b):
    """C-style truncating division on Python ints."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


@pytest.mark.parametrize("t", TYPES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_add_sub_mul_wrap(t, data):
    """add/sub/mul.lo wrap modulo 2^width; mul.hi is the upper half of the exact product."""
    rows = data.draw(st.lists(st.tuples(ints(t), ints(t)), min_size=1, max_size=32))
    a, b = arr(t, [r[0] for r in rows]), arr(t, [r[1] for r in rows])
    res = {op: call(op, m, (t,), a, b).tolist() for op, m in
           (("add", ()), ("sub", ()), ("mul", ("lo",)), ("mul", ("hi",)))}
    res["mulhi"] = call("mul", ("hi",), (t,), a, b).tolist()
    w = w_of(t)
    for i, (x, y) in enumerate(rows):
        assert res["add"][i] == wrap(t, x + y)
        assert res["sub"][i] == wrap(t, x - y)
        assert res["mul"][i] == wrap(t, (x * y) >> w)     # last 'mul' entry is .hi
        assert res["mulhi"][i] == wrap(t, (x * y) >> w)
    lo = call("mul", ("lo",), (t,), a, b).tolist()
    assert lo == [wrap(t, x * y) for x, y in rows]


@pytest.mark.parametrize("t", ["u16", "s16", "u32", "s32"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_mul_mad_wide(t, data):
    """mul.wide gives the exact double-width product; mad.wide adds a double-width c, wrapping."""
    rows = data.draw(st.lists(st.tuples(ints(t), ints(t)), min_size=1, max_size=32))
    a, b = arr(t, [r[0] for r in rows]), arr(t, [r[1] for r in rows])
    wt = t[0] + str(2 * w_of(t))
    got = call("mul", ("wide",), (t,), a, b)
    assert got.dtype == np_dtype(wt)
    assert got.tolist() == [x * y for x, y in rows]
    c = arr(wt, [wrap(wt, -(1 << (2 * w_of(t) - 1)) + 5)] * len(rows))
    got = call("mad", ("wide",), (t,), a, b, c).tolist()
    assert got == [wrap(wt, x * y + int(c[0])) for x, y in rows]


@pytest.mark.parametrize("t", TYPES)
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_div_rem(t, data):
    """div/rem truncate toward zero; MIN/-1 = MIN, MIN rem -1 = 0; x/0 and x rem 0 give all ones."""
    rows = data.draw(st.lists(st.tuples(ints(t), ints(t)), min_size=1, max_size=32))
    a, b = arr(t, [r[0] for r in rows]), arr(t, [r[1] for r in rows])
    q, r = call("div", (), (t,), a, b).tolist(), call("rem", (), (t,), a, b).tolist()
    for i, (x, y) in enumerate(rows):
        if y == 0:
            assert q[i] == wrap(t, -1) and r[i] == wrap(t, -1)
        else:
            assert q[i] == wrap(t, tdiv(x, y))
            assert r[i] == wrap(t, x - y * tdiv(x, y))


def test_int_min_div_minus_one():
    """INT64_MIN / -1 wraps to INT64_MIN (and INT32_MIN likewise), remainder 0, no exception/warning."""
    for t in ("s32", "s64"):
        mn = -(1 << (w_of(t) - 1))
        assert call("div", (), (t,), arr(t, [mn]), arr(t, [-1])).tolist() == [mn]
        assert call("rem", (), (t,), arr(t, [mn]), arr(t, [-1])).tolist() == [0]
    assert call("div", (), ("u32",), arr("u32", [7]), arr("u32", [0])).tolist() == [0xFFFFFFFF]


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.tuples(ints("s32"), ints("s32")), min_size=1, max_size=32))
def test_add_sub_sat_s32(rows):
    """add.sat.s32 / sub.sat.s32 clamp the exact result to [INT32_MIN, INT32_MAX]."""
    a, b = arr("s32", [r[0] for r in rows]), arr("s32", [r[1] for r in rows])
    clamp = lambda v: max(-(1 << 31), min((1 << 31) - 1, v))  # noqa: E731
    assert call("add", ("sat",), ("s32",), a, b).tolist() == [clamp(x + y) for x, y in rows]
    assert call("sub", ("sat",), ("s32",), a, b).tolist() == [clamp(x - y) for x, y in rows]


@pytest.mark.parametrize("t", ["b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_shifts_clamp(t, data):
    """shl/shr with amounts 0..2*width+: >= width gives 0 (shl, shr.u/b) or the sign fill (shr.s)."""
    ut = {"b": "u", "u": "u", "s": "s"}[t[0]] + t[1:]
    w = w_of(t)
    rows = data.draw(st.lists(st.tuples(ints(ut), st.one_of(st.integers(0, 2 * w + 3),
                                                             st.sampled_from([w - 1, w, w + 1, 2**32 - 1]))),
                              min_size=1, max_size=32))
    a = arr(t, [wrap(t if t[0] != "b" else "u" + t[1:], r[0]) for r in rows])
    n = arr("u32", [r[1] for r in rows])
    if t[0] == "b":
        got = call("shl", (), (t,), a, n).tolist()
        assert got == [(int(x) << min(k, w)) & ((1 << w) - 1) for x, k in zip(a.tolist(), n.tolist())]
    got = call("shr", (), (t,), a, n).tolist()
    for x, k, g in zip(a.tolist(), n.tolist(), got):
        if t[0] == "s":
            assert g == x >> min(k, w)                      # Python >> is arithmetic
        else:
            assert g == (x >> k if k < w else 0)


@pytest.mark.parametrize("t", ["b32", "b64"])
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_bit_counts(t, data):
    """popc/clz/brev (string-based reference) and bfind (.shiftamt), signed and unsigned."""
    w = w_of(t)
    xs = data.draw(st.lists(ints("u" + str(w)), min_size=1, max_size=32))
    a = arr(t, xs)
    assert call("popc", (), (t,), a).tolist() == [bin(x).count("1") for x in xs]
    assert call("clz", (), (t,), a).tolist() == [w - len(bin(x)) + 2 if x else w for x in xs]
    assert call("brev", (), (t,), a).tolist() == [int(format(x, f"0{w}b")[::-1], 2) for x in xs]
    ut, stp = "u" + str(w), "s" + str(w)
    assert call("bfind", (), (ut,), arr(ut, xs)).tolist() == [x.bit_length() - 1 if x else 0xFFFFFFFF for x in xs]
    sx = [wrap(stp, x) for x in xs]
    want = []
    for v in sx:
        m = v if v >= 0 else ~v                       # most significant non-sign bit
        want.append(m.bit_length() - 1 if m else 0xFFFFFFFF)
    assert call("bfind", (), (stp,), arr(stp, sx)).tolist() == want
    sa = call("bfind", ("shiftamt",), (ut,), arr(ut, xs)).tolist()
    assert sa == [w - x.bit_length() if x else 0xFFFFFFFF for x in xs]


@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_bfe(t, data):
    """bfe: bit-by-bit ISA pseudocode (pos, len & 0xff; sign bit a[min(pos+len-1, msb)] for .s)."""
    w = w_of(t)
    rows = data.draw(st.lists(st.tuples(ints(t), st.integers(0, 300), st.integers(0, 300)), min_size=1, max_size=32))
    got = call("bfe", (), (t,), arr(t, [r[0] for r in rows]), arr("u32", [r[1] for r in rows]),
               arr("u32", [r[2] for r in rows])).tolist()
    for (a, b, c), g in zip(rows, got):
        ua = a & ((1 << w) - 1)
        pos, ln = b & 0xFF, c & 0xFF
        sbit = 0 if (t[0] == "u" or ln == 0) else (ua >> min(pos + ln - 1, w - 1)) & 1
        d = 0
        for i in range(w):
            bit = (ua >> (pos + i)) & 1 if (i < ln and pos + i <= w - 1) else sbit
            d |= bit << i
        assert g == wrap(t, d), (a, b, c)


@pytest.mark.parametrize("t", ["b32", "b64"])
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_bfi(t, data):
    """bfi d, a, b, c, e: b with bits [c, c+e) replaced by a's low bits (ISA loop, & 0xff)."""
    w = w_of(t)
    ut = "u" + str(w)
    rows = data.draw(st.lists(st.tuples(ints(ut), ints(ut), st.integers(0, 300), st.integers(0, 300)),
                              min_size=1, max_size=32))
    got = call("bfi", (), (t,), *[arr(t, [r[i] for r in rows]) for i in (0, 1)],
               arr("u32", [r[2] for r in rows]), arr("u32", [r[3] for r in rows])).tolist()
    for (a, b, c, e), g in zip(rows, got):
        pos, ln = c & 0xFF, e & 0xFF
        f = b
        i = 0
        while i < ln and pos + i <= w - 1:
            f = (f & ~(1 << (pos + i))) | (((a >> i) & 1) << (pos + i))
            i += 1
        assert g == f


PRMT_TABLE = {   # from the PTX ISA table: (d.b3, d.b2, d.b1, d.b0) for selector 0..3
    "f4e": [(3, 2, 1, 0), (4, 3, 2, 1), (5, 4, 3, 2), (6, 5, 4, 3)],
    "b4e": [(5, 6, 7, 0), (6, 7, 0, 1), (7, 0, 1, 2), (0, 1, 2, 3)],
    "rc8": [(0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)],
    "ecl": [(3, 2, 1, 0), (3, 2, 1, 1), (3, 2, 2, 2), (3, 3, 3, 3)],
    "ecr": [(0, 0, 0, 0), (1, 1, 1, 0), (2, 2, 1, 0), (3, 2, 1, 0)],
    "rc16": [(1, 0, 1, 0), (3, 2, 3, 2), (1, 0, 1, 0), (3, 2, 3, 2)],
}


@pytest.mark.parametrize("mode", [None] + sorted(PRMT_TABLE))
@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(ints("u32"), ints("u32"), ints("u32")), min_size=1, max_size=32))
def test_prmt(mode, rows):
    """prmt (default: 4-bit selectors with sign replication; modes: ISA table) on {b, a} bytes."""
    got = call("prmt", (mode,) if mode else (), ("b32",), *[arr("b32", [r[i] for r in rows]) for i in range(3)])
    for (a, b, c), g in zip(rows, got.tolist()):
        src = list(a.to_bytes(4, "little") + b.to_bytes(4, "little"))
        out = []
        for k in range(4):
            if mode is None:
                nib = (c >> (4 * k)) & 0xF
                byte = src[nib & 7]
                if nib & 8:
                    byte = 0xFF if byte & 0x80 else 0
            else:
                byte = src[PRMT_TABLE[mode][c & 3][3 - k]]
            out.append(byte)
        assert g == int.from_bytes(bytes(out), "little")


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("clamp", [True, False])
@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(ints("u32"), ints("u32"), st.integers(0, 2**32 - 1)), min_size=1, max_size=32))
def test_shf(left, clamp, rows):
    """shf.l/r.wrap/clamp: funnel shift of the 64-bit {b, a}."""
    got = call("shf", ("l" if left else "r", "clamp" if clamp else "wrap"), ("b32",),
               *[arr("u32", [r[i] for r in rows]) for i in range(3)]).tolist()
    for (a, b, c), g in zip(rows, got):
        n = min(c, 32) if clamp else c & 31
        v = (b << 32) | a
        want = ((v << n) >> 32) & 0xFFFFFFFF if left else (v >> n) & 0xFFFFFFFF
        assert g == want


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(ints("u32"), ints("u32"), ints("u32"), st.integers(0, 255)), min_size=1, max_size=32))
def test_lop3(rows):
    """lop3.b32: bit i of the result is immLut[(a_i << 2) | (b_i << 1) | c_i]."""
    got = call("lop3", (), ("b32",), *[arr("u32", [r[i] for r in rows]) for i in range(4)]).tolist()
    for (a, b, c, lut), g in zip(rows, got):
        want = 0
        for i in range(32):
            idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1)
            want |= ((lut >> idx) & 1) << i
        assert g == want


@pytest.mark.parametrize("t", ["s16", "s32", "s64"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_abs_neg_min_max(t, data):
    """abs/neg wrap (abs(MIN) = MIN); min/max signed and unsigned."""
    xs = data.draw(st.lists(st.tuples(ints(t), ints(t)), min_size=1, max_size=32))
    a, b = arr(t, [x for x, _ in xs]), arr(t, [y for _, y in xs])
    assert call("abs", (), (t,), a).tolist() == [wrap(t, abs(x)) for x, _ in xs]
    assert call("neg", (), (t,), a).tolist() == [wrap(t, -x) for x, _ in xs]
    assert call("min", (), (t,), a, b).tolist() == [min(x, y) for x, y in xs]
    ut = "u" + t[1:]
    ua, ub = arr(ut, [wrap(ut, x) for x, _ in xs]), arr(ut, [wrap(ut, y) for _, y in xs])
    assert call("max", (), (ut,), ua, ub).tolist() == [max(wrap(ut, x), wrap(ut, y)) for x, y in xs]


def test_logic_and_select():
    """and/or/xor/not/cnot on b32 and pred; selp; slct on s32 and f32 (-0 counts as >= 0)."""
    a, b = arr("b32", [0xF0F0, 0]), arr("b32", [0xFF00, 7])
    assert call("and", (), ("b32",), a, b).tolist() == [0xF000, 0]
    assert call("xor", (), ("b32",), a, b).tolist() == [0x0FF0, 7]
    assert call("not", (), ("b32",), a).tolist() == [0xFFFF0F0F, 0xFFFFFFFF]
    assert call("cnot", (), ("b32",), a).tolist() == [0, 1]
    assert call("or", (), ("pred",), np.array([True, False]), np.array([False, False])).tolist() == [True, False]
    assert call("selp", (), ("s32",), arr("s32", [1, 1]), arr("s32", [2, 2]), np.array([True, False])).tolist() == [1, 2]
    assert call("slct", (), ("s32", "f32"), arr("s32", [1, 1, 1]), arr("s32", [2, 2, 2]),
                np.array([-0.0, -1.0, 3.0], np.float32)).tolist() == [1, 2, 1]
    assert call("slct", (), ("u32", "s32"), arr("u32", [1, 1]), arr("u32", [2, 2]),
                arr("s32", [0, -5])).tolist() == [1, 2]


def test_mul24_sad_madhisat():
    """mul24.lo/hi use 24-bit operands (48-bit product); sad = c + |a-b|; mad.hi.sat.s32 saturates."""
    a, b = arr("s32", [0x00800000, 0x7FFFFF]), arr("s32", [2, 0x7FFFFF])
    # 0x800000 sign-extends to -2^23 for .s32
    assert call("mul24", ("lo",), ("s32",), a, b).tolist() == [wrap("s32", -(1 << 24)), wrap("s32", 0x7FFFFF ** 2)]
    assert call("mul24", ("hi",), ("u32",), arr("u32", [0xFFFFFF]), arr("u32", [0xFFFFFF])).tolist() == \
        [(0xFFFFFF * 0xFFFFFF) >> 16]
    assert call("sad", (), ("u32",), arr("u32", [3]), arr("u32", [10]), arr("u32", [1])).tolist() == [8]
    big = arr("s32", [0x7FFFFFFF])
    assert call("mad", ("hi", "sat"), ("s32",), big, big, big).tolist() == [0x7FFFFFFF]
