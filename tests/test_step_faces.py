"""Pictures of a stepped warp: the lanes x time figure and the self-contained HTML replay."""
import json
import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from numba import cuda

from simgpu import settings  # noqa: E402
from simgpu.stepper.plot import lane_matrix, warp_lanes
from simgpu.stepper import step
from simgpu.stepper.html import page_data


@pytest.fixture(autouse=True)
def ir_stepper():
    """These tests are about the stepper on simgpu's IR (executor="ir"), whatever the machine's
    default executor; the stepper on the compiled code is tested in test_step_ptx.py."""
    with settings.override(executor="ir"):
        yield


def parity(x, out):
    i = cuda.grid(1)
    if i < x.size:
        if i % 2 == 0:
            out[i] = x[i] * 2.0
        else:
            out[i] = x[i] + 1.0


def stepper(block=32):
    x = np.arange(64, dtype=np.float32)
    return step(parity, 1, block, (x, np.zeros_like(x)))


def test_lane_matrix_colours_active_lanes_by_line_and_marks_idle_and_missing_lanes():
    """Columns are steps; the then-side column has even lanes on its line and odd lanes idle
    (-1); in a block of 40 threads, warp 1's lanes 8..31 hold no thread (-2)."""
    st = stepper()
    m, lines = lane_matrix(st)
    assert m.shape == (32, len(st))
    k = next(j for j, s in enumerate(st.steps) if s.text.startswith("%") and s.mask == 0x55555555)
    assert m[0::2, k].tolist() == [m[0, k]] * 16 and m[1::2, k].tolist() == [-1] * 16
    assert [ln for _, ln in lines] == sorted({s.line for s in st.steps}, key=[s.line for s in st.steps].index)
    x = np.arange(40, dtype=np.float32)
    m2, _ = lane_matrix(step(parity, 1, 40, (x, np.zeros_like(x)), warp=1))
    assert (m2[8:] == -2).all() and (m2[:8, 0] >= 0).all()


def test_warp_lanes_returns_a_figure_and_writes_a_png(tmp_path):
    st = stepper()
    st.goto(6)
    path = tmp_path / "lanes.png"
    fig = warp_lanes(st, path=str(path))
    ax = fig.axes[0]
    assert "SIMT efficiency" in ax.get_title() and ax.get_ylabel() == "lane"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    then = parity.__code__.co_firstlineno + 4
    assert f"line {then}: out[i] = x[i] * 2.0" in labels
    assert labels[-1] == "idle lane (masked off)"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_page_is_self_contained_and_holds_the_record():
    st = stepper()
    page = st.to_html()
    assert "<script src" not in page and "http" not in page.replace("http-equiv", "")
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
                      .group(1).replace("<\\/", "</"))
    assert len(data["steps"]) == len(st) and data["changes"][0] == {}
    assert page_data(st)["steps"][0]["line"] == st.steps[0].line


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
        if p:
            return p
    return None


@pytest.mark.skipif(chromium() is None, reason="no headless Chromium here (apt-get install chromium to run it)")
def test_the_page_renders_and_steps_in_headless_chromium(tmp_path):
    """Click 'step' three times and 'next line' once: the page shows the state after the
    rest of the `if` line and the whole next line, as Stepper.next_line does."""
    st = stepper()
    clicks = ("<script>for (let k = 0; k < 3; k++) document.getElementById('step').click();"
              "document.getElementById('next').click();</script></body>")
    path = tmp_path / "page.html"
    path.write_text(st.to_html().replace("</body>", clicks))
    for _ in range(3):
        st.step()
    want = st.next_line()
    r = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                        path.as_uri()], capture_output=True, text=True, timeout=120)
    dom = r.stdout
    assert f'id="status">step {want.step} of {len(st)} - line {want.line} -' in dom
    cur = re.search(r'class="cur" id="curline">\s*(\d+) \|', dom)
    assert cur and int(cur.group(1)) == want.line
    on = len(re.findall(r'<div class="on">', dom))
    assert on == want.n_active
