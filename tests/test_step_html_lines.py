"""The stepper's HTML replay page steps as the terminal does (issue 23, item 4): line mode by
default on the compiled path (a step is one visit of a source line, the lanes shown are the
lanes that run it, a step stops at the line's first instruction, `ret` is the kernel's exit),
instruction mode one key away, SIMT efficiency as compiled and as written.

The page's script is run in node with a small stand-in for the DOM (skipped without node),
and the page in headless Chromium (skipped without it); both compare with the Python stepper
on the lesson's warp (examples/lesson_relu.py::relu_if, block of 128, warp 0)."""
import json
import os
import re
import shutil
import subprocess

import pytest

from simgpu.sass.toolchain import compiled_path_available
from simgpu.stepper import step
from simgpu.stepper.html import page_data
from simgpu.stepper.tui import load

pytestmark = pytest.mark.skipif(not compiled_path_available()[0],
                                reason="the compiled path needs numba-cuda and ptxas")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELU = os.path.join(ROOT, "examples", "lesson_relu.py") + "::relu_if"
IF_L, THEN_L, ELSE_L = 26, 27, 29          # lines of examples/lesson_relu.py::relu_if
_ST = []


def relu():
    if not _ST:
        kernel, args = load(RELU)
        _ST.append(step(kernel, 1, 128, args, executor="ptx"))
    st = _ST[0]
    st.set_mode("line")
    st.reset()
    return st


def _py_walk(st, mode, n):
    """(pos, status text pieces) of the Python stepper after each of n steps in `mode`."""
    st.set_mode(mode)
    st.reset()
    out = []
    for _ in range(n):
        if st.done:
            break
        s = st.step()
        out.append(s.step)
    st.set_mode("line")
    return out


def test_the_page_holds_the_visits_and_both_efficiencies():
    st = relu()
    d = page_data(st)
    assert d["mode"] == "line"
    assert [tuple(v) for v in d["visits"]] == [(v.start, v.end, v.mask, v.place, v.line) for v in st.visits]
    assert len(d["visit_of"]) == len(st) and d["visit_of"][-1] == len(st.visits) - 1
    assert d["steps"][-1]["place"] == "exit"
    assert d["as_written"][len(st)] == pytest.approx(st.efficiency()["as written"])
    assert round(100 * d["as_written"][len(st)], 1) == 74.2      # the lesson's number (IR path)


NODE_DOM = r"""
const fs = require('fs');
const page = fs.readFileSync(process.argv[2], 'utf8');
const data = page.match(/<script type="application\/json" id="data">([\s\S]*?)<\/script>/)[1];
const js = page.match(/<script>([\s\S]*?)<\/script>\s*<\/body>/)[1];
function el(id) {
  const e = {id, textContent: '', className: '', value: 0, max: 0, children: [], onclick: null, oninput: null,
             appendChild(c) { this.children.push(c); }};
  Object.defineProperty(e, 'innerHTML', {set(v) { this.children = []; this._html = v; }, get() { return this._html || ''; }});
  return e;
}
const els = {};
global.document = {
  getElementById(id) { if (!els[id]) { els[id] = el(id); if (id === 'data') els[id].textContent = data; } return els[id]; },
  createElement() { return el(''); },
  addEventListener() {},
};
global.window = {};
eval(js);
const S = window.simgpuStep;
const snap = () => ({pos: S.pos, mode: S.mode, status: els.status.textContent, active: els.active.textContent,
  visit: els.visit.textContent, label: els.ilabel.textContent, inst: els.inst.textContent,
  on: els.lanes.children.filter(c => c.className === 'on').length,
  cur: (els.src.children.find(c => c.className === 'cur') || {}).textContent});
const out = {start: snap(), line: [], back: [], inst: []};
for (let k = 0; k < 40 && S.pos < S.N; k++) { S.step(); out.line.push(snap()); }
for (let k = 0; k < 40 && S.pos > 0; k++) { S.back(); out.back.push(snap()); }
S.setMode('inst');
for (let k = 0; k < 5; k++) { S.step(); out.inst.push(snap()); }
console.log(JSON.stringify(out));
"""


def test_the_page_steps_by_line_as_the_terminal_does_in_node(tmp_path):
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("no node to run the page's script")
    st = relu()
    page = tmp_path / "page.html"
    st.to_html(page)
    script = tmp_path / "dom.js"
    script.write_text(NODE_DOM)
    r = subprocess.run([node, str(script), str(page)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["start"]["mode"] == "line" and "[line stepping]" in got["start"]["status"]
    # line mode: the same stops as the Python stepper's step(), each at a line's first instruction
    line_stops = _py_walk(st, "line", 40)
    assert [g["pos"] for g in got["line"]] == line_stops
    for g, n in zip(got["line"], line_stops):
        s = st.goto(n)
        assert g["on"] == bin(s.line_mask).count("1")
        what = {"exit": "the kernel's exit", "entry": "the kernel's entry"}.get(s.place, f"line {s.line}")
        assert g["active"].startswith(f"{bin(s.line_mask).count('1')}/32 run {what} on this visit")
        assert g["visit"].startswith(f"steps {s.line_steps[0]}-{s.line_steps[1]} ")
        assert f"as compiled {100 * s.simt_efficiency:.1f} %" in g["status"]
        assert f"as written {100 * s.as_written:.1f} % (simgpu's IR)" in g["status"]
        assert g["cur"].startswith(f"{s.line:4d} | ")
    by_line = {st.goto(n).line: g for g, n in zip(got["line"], line_stops)}
    # the lesson: 32 lanes at the if, stopped at its first instruction; 18 run the else, 14 the if-side
    assert by_line[IF_L]["on"] == 32 and by_line[IF_L]["label"] == "first of line"
    assert by_line[ELSE_L]["on"] == 18 and by_line[THEN_L]["on"] == 14
    end = got["line"][-1]
    assert end["pos"] == len(st) and "the kernel's exit" in end["active"] and "the kernel's exit" in end["inst"]
    assert "as written 74.2 %" in end["status"] and "as compiled 95.5 %" in end["status"]
    # back follows the mode: the previous visit's first instruction, then the start
    assert [g["pos"] for g in got["back"]] == [n for n in reversed([0] + line_stops[:-1])]
    # instruction mode, one call away: one instruction a step, the step's own mask
    assert [g["pos"] for g in got["inst"]] == [1, 2, 3, 4, 5] and got["inst"][0]["mode"] == "inst"
    assert "[instruction stepping]" in got["inst"][0]["status"]
    assert got["inst"][0]["on"] == bin(st.steps[0].mask).count("1")


def test_the_page_in_headless_chromium_stops_at_the_if_with_32_lanes(tmp_path):
    chrome = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chrome is None:
        pytest.skip("no headless chromium")
    st = relu()
    stops = _py_walk(st, "line", 40)
    k = next(j for j, n in enumerate(stops) if st.goto(n).line == IF_L)
    path = tmp_path / "page.html"
    path.write_text(st.to_html().replace("</body>", "<script>" + "simgpuStep.step();" * (k + 1) + "</script></body>"))
    dom = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", path.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    s = st.goto(stops[k])
    assert f'id="status">step {s.step} of {len(st)} - line {IF_L} -' in dom
    assert len(re.findall(r'<div class="on">', dom)) == 32
    assert "32/32 run line 26 on this visit" in dom and "first of line" in dom


def test_the_lanes_plot_steps_as_the_terminal_does():
    """st.plot(): a column per visit of a line in line mode (the lanes that run the line), per
    instruction in instruction mode; the exit in its own colour; both efficiencies in the title."""
    from simgpu.stepper.plot import lane_matrix
    st = relu()
    fig = st.plot()
    ax = fig.axes[0]
    assert ax.images[0].get_array().shape[:2] == (32, len(st.visits))
    assert "as compiled 95.5 %" in ax.get_title() and "as written 74.2 % (simgpu's IR)" in ax.get_title()
    assert ax.get_xlabel().startswith("visit of a source line")
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "the kernel's exit (ret, epilogue)" in labels
    m, keys = lane_matrix(st, "line")
    col = {v.line: j for j, v in enumerate(st.visits) if v.place == "body"}
    assert (m[:, col[IF_L]] >= 0).sum() == 32
    assert (m[:, col[ELSE_L]] >= 0).sum() == 18 and (m[:, col[THEN_L]] >= 0).sum() == 14
    assert keys[m[0, -1]][1] == "exit"
    inst = st.plot(mode="inst").axes[0]
    assert inst.images[0].get_array().shape[:2] == (32, len(st))
    assert inst.get_xlabel() == "PTX instruction (step)"
    with pytest.raises(ValueError, match="'line'"):
        st.plot(mode="lines")
