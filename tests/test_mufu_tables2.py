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


def _subset(key):
    op, inputs, measured = K.table_case(_npz("approx2_tables.npz"), key)
    idx = np.unique(np.r_[np.arange(0, inputs.size, 257), inputs.size - 1])
    return op, inputs[idx], measured[idx]


EXACT_TABLES = ["sqrtftz_1_4", "rsqftz_1_4"]
EXACT_SAMPLES = ["sqrtftz", "sqrt", "rsqftz", "rsq"]


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
