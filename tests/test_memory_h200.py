"""The memory model against the stored H200 measurements (validation/data/h200_ncu.json),
on small cases that simulate in about a second each: coalescing exact, DRAM bytes within
10 %, L2 bytes within 20 % (validation/compare_memory.py runs the whole suite)."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "validation", "data")
pytestmark = pytest.mark.skipif(not os.path.exists(os.path.join(DATA, "h200_ncu.json")),
                                reason="no stored H200 measurements")

CASES = ["copy_f32_coalesced_L2", "copy_f32_offset1_L2", "copy_f32_stride32_L2", "relu_if_f32_L2",
         "transpose_naive_L2", "transpose_tiled_padded_L2", "hist_global_4bins_L2"]


@pytest.fixture(scope="module")
def compared():
    sys.path.insert(0, os.path.join(ROOT, "validation"))
    import compare_memory as cm
    meas = cm.measurements([DATA])
    gpu, _ = cm.calibrated_gpu([DATA])
    cases = {c["name"]: c for c in cm.cases()}
    out = {}
    for name in CASES:
        pred, _ = cm.simulate(cases[name], gpu)
        out[name] = {r[0]: r for r in cm.compare(cases[name], pred, meas[name])}
    return out


@pytest.mark.parametrize("name", CASES)
def test_requests_and_sectors_match_exactly(compared, name):
    for label in ("ld requests", "ld sectors", "st requests", "st sectors", "atom+red requests",
                  "atom+red sectors"):
        if label in compared[name]:
            assert abs(compared[name][label][3]) <= 0.01, (label, compared[name][label])


@pytest.mark.parametrize("name", CASES)
def test_dram_and_l2_bytes_within_target(compared, name):
    assert abs(compared[name]["DRAM bytes (read+write)"][3]) <= 0.10
    assert abs(compared[name]["L2 bytes"][3]) <= 0.20
