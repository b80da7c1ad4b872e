"""The MUFU rules of sem_fmisc against the H100's exhaustive tables and random samples of
validation/ptx_semantics/approx_tables2.py (2026-12-08): a deterministic subset of every table
(every 257th entry plus both ends) and all samples of the forms simgpu reproduces exactly."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "validation", "ptx_semantics"))
import approx2_check as K  # noqa: E402

DATA = os.path.join(ROOT, "validation", "ptx_semantics", "approx", "h100_20261208")
_Z = {}


def _npz(name):
    if name not in _Z:
        _Z[name] = np.load(os.path.join(DATA, name))
    return _Z[name]


def _tables():
    if "tables" not in _Z:
        _Z["tables"] = K.MeasuredTables(DATA)
    return _Z["tables"]


def _subset(key):
    op, inputs, measured = K.table_case(_tables(), key)
    step = 1 if inputs.size <= 1 << 16 else 257      # the 16-bit tables: every input
    idx = np.unique(np.r_[np.arange(0, inputs.size, step), inputs.size - 1])
    return op, inputs[idx], measured[idx]


EXACT_TABLES = ["sqrtftz_1_4", "rsqftz_1_4", "ex2f16_all", "ex2bf16_all", "tanhf16_all", "tanhbf16_all",
                "lg2ftz_1_2", "lg2ftz_2_4", "lg2ftz_05_1"]
EXACT_SAMPLES = ["sqrtftz", "sqrt", "rsqftz", "rsq", "lg2"]


@pytest.mark.parametrize("key", EXACT_TABLES)
def test_table_subset_bit_equal(key):
    op, inputs, measured = _subset(key)
    got = K._fake_run(op, inputs)
    bad = np.nonzero(got != measured)[0]
    assert bad.size == 0, (key, [(hex(inputs[i]), hex(got[i]), hex(measured[i])) for i in bad[:5]])


@pytest.mark.parametrize("op", EXACT_SAMPLES)
def test_samples_bit_equal(op):
    inputs = K.sample_inputs()[f"{op}_in"]
    measured = _npz("approx2_samples.npz")[f"{op}_out"]
    got = K._fake_run(op, inputs)
    bad = np.nonzero(got != measured)[0]
    assert bad.size == 0, (op, [(hex(inputs[i]), hex(got[i]), hex(measured[i])) for i in bad[:5]])


def test_lg2ftz_first_samples_bit_equal():
    """lg2.approx.ftz.f32: the 131,072 random H100 inputs of approx_tables.py (2026-12-07)."""
    inputs, measured = K.first_lg2ftz()
    got = K._fake_run("lg2ftz", inputs)
    assert np.array_equal(got, measured), int((got != measured).sum())


def test_lg2_powers_of_two():
    """The measured rule at powers of two: exact for E >= 0, E + 2^-k below (the unit's F(0) > 0)."""
    from simgpu.ptx import semantics
    fn = semantics.lookup("lg2", ("approx", "ftz"), ("f32",))
    x = np.float32([1.0, 2.0, 2.0 ** 100, 0.5, 0.25, 2.0 ** -3, 2.0 ** -100])
    got = np.asarray(fn(x), np.float64)
    want = [0.0, 1.0, 100.0, -1 + 2.0 ** -23, -2 + 2.0 ** -23, -3 + 2.0 ** -22, -100 + 2.0 ** -17]
    assert got.tolist() == want


def test_sqrt_rule_moves_exponent():
    """The rule itself, away from the measured binades: sqrt(4^k x) = 2^k sqrt(x) and
    rsqrt(4^k x) = 2^-k rsqrt(x) exactly (the unit reads only the mantissa and the parity)."""
    from simgpu.ptx import semantics
    x = np.float32([1.0, 1.5, 2.0, 3.999999])
    for name, mods in (("sqrt", ("approx", "ftz")), ("rsqrt", ("approx", "ftz"))):
        fn = semantics.lookup(name, mods, ("f32",))
        base = np.asarray(fn(x), np.float32)
        for k in (-60, -3, 5, 60):
            got = np.asarray(fn((x * np.float32(4.0) ** k).astype(np.float32)), np.float32)
            want = base * np.float32(2.0) ** (k if name == "sqrt" else -k)
            assert np.array_equal(got.view(np.uint32), want.astype(np.float32).view(np.uint32))


@pytest.mark.parametrize("key,instr", [("ex2f16_all", "ex2.approx.f16x2"), ("ex2bf16_all", "ex2.approx.ftz.bf16x2"),
                                       ("tanhf16_all", "tanh.approx.f16x2"), ("tanhbf16_all", "tanh.approx.bf16x2")])
def test_x2_forms_are_the_half_table_per_lane(key, instr):
    """The packed forms run the half unit once per lane (ptxas: two MUFU.*.F16/BF16 and a PRMT)."""
    from simgpu.ptx import semantics
    _, inputs, measured = K.table_case(_tables(), key)
    rng = np.random.default_rng(27)
    lo, hi = rng.integers(0, 1 << 16, 4096), rng.integers(0, 1 << 16, 4096)
    parts = instr.split(".")
    fn = semantics.lookup(parts[0], tuple(parts[1:-1]), (parts[-1],))
    got = np.asarray(fn(((hi << 16) | lo).astype(np.uint32)), np.uint32)
    want = (measured[hi].astype(np.uint32) << np.uint32(16)) | measured[lo].astype(np.uint32)
    assert np.array_equal(got, want)


H200_EXACT = ["sqrt.approx.f32", "sqrt.approx.ftz.f32", "rsqrt.approx.f32", "rsqrt.approx.ftz.f32",
              "ex2.approx.f16", "ex2.approx.f16x2", "ex2.approx.ftz.bf16", "tanh.approx.f16",
              "tanh.approx.bf16", "tanh.approx.bf16x2", "lg2.approx.f32", "lg2.approx.ftz.f32"]


@pytest.mark.parametrize("name", H200_EXACT)
def test_h100_rules_equal_stored_h200_results(name):
    """The rules from the H100 tables also equal every stored H200 result of 2026-11-30
    (validation/data/h200_ptx_semantics.npz: ~3,000-4,800 inputs each, specials included)."""
    import cases as C
    import compare as P
    npz = os.path.join(ROOT, "validation", "data", "h200_ptx_semantics.npz")
    _, data = P.load(npz)
    case = {c["name"]: c for c in C.CASES}[name]
    ins, gpu = data[name]
    tab = P.table_bits(case, ins)
    assert np.array_equal(tab, gpu), int((tab != gpu).sum())


@pytest.mark.parametrize("op", ["sin", "sinftz", "cos", "cosftz"])
def test_sincos_reduction_and_zeros_match_h100(op):
    """sin/cos.approx.f32: the modelled FMUL.RZ reduction, 2^-25 truncation and quarter-turn zeros
    give every measured zero (with its sign) and every NaN, and stay within 2^-21 of the other
    131,072 H100 results (the unit's value in between is not exact here)."""
    inputs = K.sample_inputs()[f"{op}_in"]
    m = _npz("approx2_samples.npz")[f"{op}_out"]
    got = K._fake_run(op, inputs)
    gf, mf = got.view(np.float32).astype(np.float64), m.view(np.float32).astype(np.float64)
    assert np.array_equal(np.isnan(gf), np.isnan(mf))
    zero = (mf == 0) | (gf == 0)
    assert np.array_equal(got[zero], m[zero])
    fin = ~np.isnan(mf)
    assert np.abs(gf - mf)[fin].max() <= 2.0 ** -21
    assert (got == m).mean() > 0.5
