"""The styled HTML report (issue 23, item 10): `simgpu run --report DIR` writes a page in the
stepper's look with the per-line tables; headless Chromium opens it and finds the source lines
in its per-line table."""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import simgpu
from simgpu.kernels import matmul_tiled_shape

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
        if p:
            return p
    return None


def test_the_page_is_styled_self_contained_and_has_the_per_line_tables():
    m = 32
    A, B = np.ones((m, m), np.float32), np.ones((m, m), np.float32)
    rep = simgpu.launch(matmul_tiled_shape, (2, 2), (16, 16), (A, B, np.zeros((m, m), np.float32)))
    page = rep.to_html()
    assert "<style>" in page and "<pre>" not in page and "http" not in page
    lines = re.search(r'<table class="vals" id="lines">(.*?)</table>', page, re.S).group(1)
    assert "sA[ty, tx] = A[row, t * TILE + tx]" in lines and "acc += sA[ty, k] * sB[k, tx]" in lines
    assert "L2 (bytes)" in lines and "warp instructions" in lines
    assert 'id="per-thread"' in page and 'id="metrics"' in page and ">ns<" in page
    for title in ("Timing", "Memory", "Instructions"):
        assert f"<h2>{title}" in page


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    """`simgpu run --report DIR examples/numba_program.py`, kernels compiled with line info."""
    out = tmp_path_factory.mktemp("rep")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = ("import sys; from simgpu.host import run_program; "
            f"sys.exit(run_program(path={os.path.join(ROOT, 'examples', 'numba_program.py')!r}, argv=['1024'], "
            f"report_dir={str(out)!r}, lineinfo=True))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return out


def test_simgpu_run_report_writes_the_styled_page(report_dir):
    page = (report_dir / "0001_block_sums.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and 'id="lines"' in page and "<pre>" not in page


@pytest.mark.skipif(chromium() is None, reason="no headless Chromium here (apt-get install chromium to run it)")
def test_chromium_shows_the_per_line_table_with_source_lines(report_dir):
    path = report_dir / "0001_block_sums.html"
    r = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", path.as_uri()],
                       capture_output=True, text=True, timeout=120)
    dom = r.stdout
    table = re.search(r'<table class="vals" id="lines">(.*?)</table>', dom, re.S)
    assert table, dom[:2000]
    sources = [re.sub(r"<[^>]+>", "", s) for s in re.findall(r'<td class="src">(.*?)</td>', table.group(1), re.S)]
    assert "buf[t] += buf[t + s]" in sources and "cuda.syncthreads()" in sources
    assert all(sources), "a per-line row without its source line"
