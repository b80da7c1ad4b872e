"""Accuracy cannot regress silently: every prediction for the stored H200 suite is recomputed
and held to the accuracy targets against the stored measurements (validation/data/).

These tests simulate all 85 suite kernels (several minutes on a 2-core machine); they run in
the normal test run (CI) and can be skipped locally with `-m "not validation"`.
Kernels the model is known to miss by more than 2x are listed with the reason; a new one
fails the test, and so does a listed one that the model starts getting right (update the list).
"""
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "validation"))

pytestmark = pytest.mark.validation

# kernel -> why the timing model misses it by more than 2x (docs/timing.md)
KNOWN_TIMING_OUTLIERS = {
    "hist_global_L2": "ncu's duration is 2.1x the CUDA-event time for hot global atomics "
                      "(h200_timing.json; atom2_hist256 in h200_microbench2.json reproduces it)",
    "hist_global_DRAM": "the same: ncu 138.3 ms, CUDA events 66.2 ms",
}
# for these the un-profiled (CUDA event) time is the reference the model must meet
NCU_PERTURBED = ("hist_global_L2", "hist_global_DRAM")


@pytest.fixture(scope="module")
def timing_rows():
    import compare_timing as ct
    cases = ct.load_cases()
    measured = ct.load_measured(os.path.join(ROOT, "validation", "data"), {c["name"] for c in cases})
    rows = []
    for c in cases:
        m = measured.get(c["name"], {}).get("ns")
        if m is None:
            continue
        p = ct.predict_case(c)
        rows.append((c["name"], p["ns"], m, measured[c["name"]].get("event_ns")))
    return rows


def test_every_suite_kernel_has_a_measurement_and_a_prediction(timing_rows):
    assert len(timing_rows) >= 30


def test_timing_median_absolute_error_within_15_percent(timing_rows):
    errs = [abs(p - m) / m for _, p, m, _ in timing_rows]
    assert float(np.median(errs)) <= 0.15


def test_no_kernel_off_by_more_than_2x_except_the_documented_ones(timing_rows):
    off = {name for name, p, m, _ in timing_rows if not 0.5 <= p / m <= 2.0}
    assert off - set(KNOWN_TIMING_OUTLIERS) == set(), "new kernels off by more than 2x"
    assert set(KNOWN_TIMING_OUTLIERS) - off == set(), "fixed: remove them from KNOWN_TIMING_OUTLIERS"


def test_kernels_ncu_slows_down_are_predicted_against_event_time(timing_rows):
    ev = {name: (p, e) for name, p, _, e in timing_rows}
    for name in NCU_PERTURBED:
        p, e = ev[name]
        assert e is not None and 0.8 <= p / e <= 1.25, (name, p, e)
