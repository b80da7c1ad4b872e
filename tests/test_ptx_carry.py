"""The carry chain (add.cc, addc, sub.cc, subc, mad.cc, madc) and what depends on it: libdevice's
sinf/cosf range reduction of large arguments (Payne-Hanek, a multi-word product built with
mad.lo.cc / madc.hi).  Before the chain was implemented, ``mad.lo.cc.u32`` ran through a
permissive fallback table that dropped the carry and ``madc.hi.u32`` stopped the kernel."""
import math
import os

import numpy as np
import pytest

import simgpu
from simgpu import cuda
from simgpu.ptx import semantics

U32, U64 = (1 << 32) - 1, (1 << 64) - 1
rng = np.random.default_rng(7)


def _vals(w, n=4000):
    m = (1 << w) - 1
    special = [0, 1, 2, m, m - 1, 1 << (w - 1), (1 << (w - 1)) - 1]
    r = rng.integers(0, 1 << 62, n, dtype=np.uint64).astype(object)
    r = [(int(x) * 4 + int(y)) & m for x, y in zip(r, rng.integers(0, 4, n))]
    return np.array(special * 3 + r, dtype=np.uint64 if w == 64 else np.uint32)


@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
@pytest.mark.parametrize("op", ["add", "sub"])
def test_add_sub_carry_chain_matches_big_integers(op, t):
    w = int(t[1:])
    a, b = _vals(w), np.roll(_vals(w), 5)
    cin = (np.arange(a.size) % 2).astype(np.uint32)
    dt = np.dtype(("i" if t[0] == "s" else "u") + str(w // 8))
    first = semantics.lookup(op, ("cc",), (t,))
    chained = semantics.lookup(op + "c", ("cc",), (t,))
    assert semantics.carry_io(op, ("cc",)) == (False, True)
    assert semantics.carry_io(op + "c", ("cc",)) == (True, True)
    assert semantics.carry_io(op + "c", ()) == (True, False)
    d0, c0 = first(a.view(dt), b.view(dt), np.uint32(0))
    d1, c1 = chained(a.view(dt), b.view(dt), cin)
    m = (1 << w) - 1
    for k in range(a.size):
        x, y, ci = int(a[k]), int(b[k]), int(cin[k])
        exact0 = x + y if op == "add" else x - y
        exact1 = x + y + ci if op == "add" else x - (y + ci)
        assert int(d0.view(a.dtype)[k]) == exact0 & m
        assert int(c0[k]) == (exact0 >> w != 0)          # carry out, or borrow
        assert int(d1.view(a.dtype)[k]) == exact1 & m
        assert int(c1[k]) == (exact1 >> w != 0)


@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
@pytest.mark.parametrize("part", ["lo", "hi"])
def test_mad_carry_chain_matches_big_integers(part, t):
    w = int(t[1:])
    a, b, c = _vals(w), np.roll(_vals(w), 3), np.roll(_vals(w), 11)
    cin = (np.arange(a.size) % 2).astype(np.uint32)
    dt = np.dtype(("i" if t[0] == "s" else "u") + str(w // 8))
    madc = semantics.lookup("madc", (part, "cc"), (t,))
    d, co = madc(a.view(dt), b.view(dt), c.view(dt), cin)
    m = (1 << w) - 1

    def signed(v):
        return v - (1 << w) if t[0] == "s" and v >> (w - 1) else v
    for k in range(a.size):
        p = signed(int(a[k])) * signed(int(b[k]))
        pp = (p >> w if part == "hi" else p) & m
        exact = pp + int(c[k]) + int(cin[k])
        assert int(d.view(a.dtype)[k]) == exact & m
        assert int(co[k]) == exact >> w


def test_unknown_carry_forms_are_refused():
    assert semantics.lookup("addc", ("cc",), ("f32",)) is None
    assert semantics.lookup("madc", ("wide",), ("u32",)) is None
    assert semantics.lookup("add", ("cc", "sat"), ("s32",)) is None


def _ulps(got, ref):
    g = got.astype(np.float32).view(np.int32).astype(np.int64)
    r = ref.astype(np.float32).view(np.int32).astype(np.int64)
    g = np.where(g < 0, -(g & 0x7FFFFFFF), g)
    r = np.where(r < 0, -(r & 0x7FFFFFFF), r)
    return np.abs(g - r)


def test_sinf_cosf_of_large_arguments_within_libdevice_bound():
    """libdevice's sinf/cosf are within 2 ulp over the full range (CUDA C Programming Guide,
    "Mathematical Functions", sinf/cosf).  |x| >= 105615 takes the Payne-Hanek path; a dropped
    carry gives answers off by far more (or, before, stopped with 'madc.hi.u32')."""
    def k(x, s, c):
        i = cuda.grid(1)
        if i < x.size:
            s[i] = math.sin(x[i])
            c[i] = math.cos(x[i])
    mags = np.concatenate([rng.uniform(1.1e5, 1e7, 96), 10.0 ** rng.uniform(7, 38, 96),
                           [105615.0, 105616.0, 3.4028235e38, 1e30, 123456789.0]])
    x = (mags * rng.choice([-1, 1], mags.size)).astype(np.float32)
    s, c = np.zeros_like(x), np.zeros_like(x)
    simgpu.launch(k, 2, 128, (x, s, c), executor="ptx")
    xd = x.astype(np.float64)
    # float64 sin/cos of these float32 inputs are accurate to far below a float32 ulp
    assert _ulps(s, np.sin(xd)).max() <= 2
    assert _ulps(c, np.cos(xd)).max() <= 2


H200_SINCOS = os.path.join(os.path.dirname(__file__), "..", "validation", "ptx_semantics", "sincos",
                           "h200_sincos_f32.npz")


def test_sinf_cosf_of_large_arguments_equal_the_h200s():
    """The same kernel on the H200 (validation/ptx_semantics/sincos/): every output bit for bit,
    the Payne-Hanek path (|x| >= 105615, the carry chain) included."""
    def k(x, s, c):
        i = cuda.grid(1)
        if i < x.size:
            s[i] = math.sin(x[i])
            c[i] = math.cos(x[i])
    with np.load(H200_SINCOS) as z:
        x, s_gpu, c_gpu = z["x"], z["sin"], z["cos"]
    s, c = np.zeros_like(x), np.zeros_like(x)
    simgpu.launch(k, -(-x.size // 128), 128, (x, s, c), executor="ptx", timing=False)
    for got, want in ((s, s_gpu), (c, c_gpu)):
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan)
        bad = np.flatnonzero(got[~nan].view(np.uint32) != want[~nan].view(np.uint32))
        assert bad.size == 0, f"{bad.size} differ, first x={x[~nan][bad[0]]!r}"
