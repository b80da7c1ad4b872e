"""simgpu.ptx's fp8 pair conversions (ops_fp8.py) against ml_dtypes' float8 types: round to
nearest even, .satfinite clamping, every bit pattern decoded."""
import numpy as np
import pytest

from simgpu.ptx.ops_fp8 import NAN8, decode, encode

ml_dtypes = pytest.importorskip("ml_dtypes")

CASES = [("e4m3x2", "float8_e4m3fn", 448.0), ("e5m2x2", "float8_e5m2", 57344.0)]


@pytest.mark.parametrize("fmt, name, top", CASES)
def test_encode_rounds_to_nearest_even_and_saturates(fmt, name, top):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(50000) * np.exp(rng.uniform(-25, 25, 50000))
    edge = [0.0, -0.0, top, top * 1.03, top * 1.1, 1e30, -1e30, np.inf, -np.inf, 2.0 ** -9,
            2.0 ** -10, 1.5 * 2.0 ** -10, 2.0 ** -17, 2.0 ** -16, 3 * 2.0 ** -17]
    x = np.concatenate([x, edge]).astype(np.float32).astype(np.float64)
    want = np.clip(x, -top, top).astype(getattr(ml_dtypes, name)).view(np.uint8)
    np.testing.assert_array_equal(encode(fmt, x), want)
    assert encode(fmt, np.array([np.nan]))[0] == NAN8


@pytest.mark.parametrize("fmt, name, top", CASES)
def test_decode_every_pattern(fmt, name, top):
    b = np.arange(256, dtype=np.uint8)
    want = b.view(getattr(ml_dtypes, name)).astype(np.float64)
    got = decode(fmt, b)
    assert ((got == want) | (np.isnan(got) & np.isnan(want))).all()
