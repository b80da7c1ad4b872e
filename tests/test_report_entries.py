"""Report entries that puzzled a newcomer (issue 23, item 8): no "line 0" row for the store NVVM
puts after an if/else, "useful" over 100 % explained, a demo title that claims no bound, and a
unit for every metric (docs/report.md)."""
import os
import re

import numpy as np

import simgpu
from simgpu.kernels import matmul_coalesced, matmul_tiled_shape
from simgpu.kernels.demo import demo_launches
from simgpu.units import metric_unit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _matmul(kernel, m=32, timing=False):
    rng = np.random.default_rng(0)
    A, B = rng.random((m, m), dtype=np.float32), rng.random((m, m), dtype=np.float32)
    C = np.zeros((m, m), np.float32)
    rep = simgpu.launch(kernel, (m // 16, m // 16), (16, 16), (A, B, C), timing=timing)
    assert np.allclose(C, A @ B, rtol=1e-4)
    return rep


def test_no_line_0_row_for_a_shared_memory_kernel():
    rep = _matmul(matmul_tiled_shape, timing=True)
    rows = {r["line"]: r for r in rep.by_line()}
    assert all(r["source"] for r in rows.values())
    assert not any(ln == 0 and "shared_requests" in r for ln, r in rows.items())
    stores = [r for r in rows.values() if r["source"].startswith(("sA[ty, tx] =", "sB[ty, tx] ="))]
    assert len(stores) == 2 and all(r.get("shared_requests", 0) > 0 for r in stores)
    text = str(rep)
    table = text.split("Memory by source line")[1].split("\n\n")[0]
    assert not re.search(r"^\s+0\s", table, re.M), table
    pt = rep.per_thread.by_line          # the per-thread table counts those stores at their lines too
    written = [line for line, row in pt.items() if row.get(("shared", "writes")) and row[("shared", "writes")].max]
    assert len(written) == 2 and 0 not in {ln for _, ln in written}


def test_useful_over_100_percent_is_explained():
    text = str(_matmul(matmul_coalesced))
    useful = [int(v) for v in re.findall(r"(\d+)%\s+[\d.]+ %", text)]
    assert max(useful) > 100
    assert "lanes of a warp read the same bytes" in text


def test_demo_titles_claim_no_bound():
    assert not any("-bound" in title for title, *_ in demo_launches())


def test_every_metric_has_a_unit_and_a_line_in_the_docs():
    doc = open(os.path.join(ROOT, "docs", "report.md"), encoding="utf-8").read()
    table = doc.split("### Metrics and their units")[1].split("\n\n", 2)[2].split("\n\n")[0]
    patterns = []
    for cell in re.findall(r"`([^`]+)`", table):
        rx = re.escape(cell).replace(r"\*", r"[A-Za-z0-9_]*")
        rx = re.sub(r"\\\{([^}]*)\\\}", lambda m: "(" + m.group(1).replace(",", "|") + ")", rx)
        patterns.append(re.compile(rx + "$"))
    rep = _matmul(matmul_tiled_shape, timing=True)
    assert "ns" in rep.small_timing_section() and metric_unit("gpu__time_duration.sum") == "ns"
    for name in rep.metrics:
        assert metric_unit(name), name
        assert any(p.match(name) for p in patterns), f"{name} is not in docs/report.md's table of units"
    assert "<th>unit</th>" in rep._repr_html_()
