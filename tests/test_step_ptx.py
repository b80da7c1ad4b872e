"""The warp stepper on the compiled code (executor="ptx"): what a teacher sees when stepping
the PTX that numba-cuda compiles -- the line, the active mask, where lanes reconverge, the
PTX and its SASS, the registers written, and the variables from a side-by-side IR run,
labelled as such.  Small launches only."""
import inspect
import json
import math
import re
import shutil
import subprocess

import numpy as np
import pytest
from numba import cuda

from simgpu import settings  # noqa: E402
from simgpu.runtime.executor import default_executor
from simgpu.sass.toolchain import compiled_path_available
from simgpu.stepper import PtxStepper, StepError, Stepper, ptxrec, step
from simgpu.stepper.html import page_data
from simgpu.stepper.text import format_state
from simgpu.stepper.tui import main

pytestmark = pytest.mark.skipif(not compiled_path_available()[0],
                                reason="the compiled path needs numba-cuda and ptxas")


def parity(x, even, odd, out):
    i = cuda.grid(1)
    v = x[i]
    if i % 2 == 0:
        even[i] = v * 2.0
    else:
        odd[i] = v + 1.0
    out[i] = v


def line_of(fn, text):
    src, first = inspect.getsourcelines(fn)
    return first + next(k for k, t in enumerate(src) if text in t)


def parity_args(n=64):
    x = np.arange(n, dtype=np.float32)
    return x, np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)


_CACHE = {}


def stepper(**kw):
    """One launch per option set (the record is immutable; each test resets the position)."""
    key = tuple(sorted(kw.items()))
    if key not in _CACHE:
        _CACHE[key] = step(parity, 1, 64, parity_args(), executor="ptx", **kw)
    st = _CACHE[key]
    st.reset()
    return st


def test_the_compiled_stepper_runs_the_launch_and_starts_at_the_first_line():
    st = stepper()
    assert isinstance(st, PtxStepper) and isinstance(st, Stepper) and st.executor == "ptx"
    s = st.state
    assert s.step == 0 and s.active_mask == 0xFFFFFFFF and s.executor == "ptx" and s.stack == []
    assert all(x.opcode for x in st.steps) and all(x.ptx_line > 0 for x in st.steps)


def test_the_two_sides_of_a_lane_parity_branch_run_with_half_the_lanes_each():
    """Odd lanes (0xaaaaaaaa) on the else-side, even lanes (0x55555555) on the then-side, at
    the user's lines; the branch step names the lanes that jump."""
    st = stepper()
    then_l, else_l, if_l = line_of(parity, "v * 2.0"), line_of(parity, "v + 1.0"), line_of(parity, "if i % 2")
    masks = {ln: {s.mask for s in st.steps if s.line == ln and not s.no_loc} for ln in (then_l, else_l)}
    assert masks == {then_l: {0x55555555}, else_l: {0xAAAAAAAA}}
    br = [s for s in st.steps if s.kind == "bra" and s.taken not in (None, 0, s.mask)]
    assert len(br) == 1 and br[0].line == if_l and br[0].mask == 0xFFFFFFFF
    assert {br[0].taken, br[0].mask & ~br[0].taken} == {0x55555555, 0xAAAAAAAA}


def test_lanes_reconverge_at_the_line_after_the_if_with_all_32_lanes():
    st = stepper()
    out_l, if_l = line_of(parity, "out[i] = v"), line_of(parity, "if i % 2")
    rj = [s for s in st.steps if s.reconverged]
    assert len(rj) == 1 and rj[0].line == out_l and rj[0].mask == 0xFFFFFFFF and rj[0].rejoin_of == (if_l,)
    st.goto(rj[0].index + 1)
    assert st.state.active_mask == 0xFFFFFFFF and st.state.stack == []
    st.goto(rj[0].index)                         # the step before: one side, inside the branch
    (e,) = st.state.stack
    assert (e.kind, e.line, e.mask, e.rejoin_line) == ("branch", if_l, 0xFFFFFFFF, out_l)
    assert st.state.active_mask in (0x55555555, 0xAAAAAAAA)


def test_run_until_a_line_next_line_and_back_in_instruction_mode():
    st = stepper(mode="inst")
    then_l = line_of(parity, "v * 2.0")
    s = st.run(until_line=then_l)
    assert (s.line, s.active_mask) == (then_l, 0x55555555)
    n = st.pos
    s2 = st.next_line()
    assert s2.line != then_l and st.pos > n
    assert all(x.line == s2.line for x in st.steps[n:st.pos])     # one whole line, PTX by PTX
    assert st.back().step == st.pos and st.pos == s2.step - 1
    st.reset()
    first = st.next_line()
    assert all(x.line == first.line for x in st.steps[:first.step])
    st.reset()
    with pytest.raises(StepError):
        st.back()


def test_each_step_shows_its_ptx_its_sass_and_memory():
    st = stepper()
    ld = next(s for s in st.steps if s.opcode == "ld" and s.memory is not None)
    assert ld.text.startswith("ld.global") and ld.sass and any("LDG" in x for x in ld.sass)
    m = ld.memory
    assert (m.space, m.kind, m.array, m.size, m.n_lanes) == ("global", "ld", "x", 4, 32)
    assert len(m.sectors) == 4 and m.lines == 1
    st_even = next(s for s in st.steps if s.opcode == "st" and s.mask == 0x55555555)
    assert st_even.memory.array == "even" and st_even.memory.n_lanes == 16


def test_registers_written_are_read_from_the_compiled_code_per_lane():
    st = stepper()
    assert st.registers_read
    ld = next(s for s in st.steps if s.opcode == "ld" and s.memory is not None and s.memory.array == "x")
    (reg, v), = ld.regs.items()
    assert reg.startswith("%f") and v.tolist() == list(range(32))
    s = st.goto(ld.index + 1)
    assert list(s.registers) == [reg] and st.value(reg).tolist() == list(range(32))
    with pytest.raises(StepError, match="never written"):
        st.value("%nope")


def test_variables_by_name_come_from_the_side_by_side_ir_run_and_say_so():
    st = stepper()
    s = st.run()
    assert "side-by-side" in s.values_from and "IR" in s.values_from
    assert s.values["i"].tolist() == list(range(32))
    assert st.value("v").tolist() == list(range(32))


def test_without_the_ir_run_there_are_registers_only_and_the_state_says_why():
    st = stepper(ir_values=False)
    s = st.run()
    assert s.values == {} and "no variable names" in s.values_from
    with pytest.raises(StepError, match="no variable names"):
        st.value("i")


def test_print_state_shows_the_ptx_instruction_line_mask_and_labels():
    st = stepper()
    br = next(s for s in st.steps if s.kind == "bra" and s.taken not in (None, 0, s.mask))
    text = str(st.goto(br.index + 1))
    assert f"PTX line {br.ptx_line}: " in text and "bra" in text and "the warp diverges" in text
    assert f"line {br.line}:" in text and "sass" in text
    rj = next(s for s in st.steps if s.reconverged)
    text = str(st.goto(rj.index + 1))
    assert "rejoin" in text and "reconvergence" in text and "side-by-side run on simgpu's IR" in text


def test_the_page_holds_the_ptx_record():
    st = stepper()
    page = st.to_html()
    data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
                      .group(1))
    assert data["executor"] == "ptx" and len(data["steps"]) == len(st)
    s0 = data["steps"][0]
    assert s0["text"] == st.steps[0].text and s0["ptx_line"] == st.steps[0].ptx_line
    assert any(d["rejoin"] for d in data["steps"]) and "side-by-side" in data["values_from"]
    assert st.steps[0].text.split()[0] in page
    assert page_data(st)["steps"][5]["line"] == st.steps[5].line


def test_the_page_renders_the_compiled_record_in_headless_chromium(tmp_path):
    chrome = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chrome is None:
        pytest.skip("no headless chromium")
    st = stepper()
    br = next(s for s in st.steps if s.kind == "bra" and s.taken not in (None, 0, s.mask))
    path = tmp_path / "page.html"
    path.write_text(st.to_html().replace("</body>", f"<script>simgpuStep.go({br.index + 2});</script></body>"))
    dom = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", path.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    want = st.goto(br.index + 2)
    assert f'id="status">step {want.step} of {len(st)} - line {want.line} -' in dom
    assert len(re.findall(r'<div class="on">', dom)) == want.n_active == 16
    assert f"PTX line {want.ptx_line}: " in dom


def test_the_default_executor_is_the_machines_default():
    with settings.override(executor="ir"):
        assert default_executor() == "ir"
        st = step(parity, 1, 32, parity_args(32))
        assert st.executor == "ir"
    with pytest.raises(StepError, match="executor"):
        step(parity, 1, 32, parity_args(32), executor="nope")


def test_simgpu_step_in_a_terminal_steps_the_compiled_code(capsys):
    args = "(np.arange(64, dtype=np.float32),) + tuple(np.zeros(64, np.float32) for _ in range(3))"
    then_l = line_of(parity, "v * 2.0")
    assert main([f"{__file__}::parity", "--block", "64", "--executor", "ptx", "--args", args,
                 "--script", f"b {then_l} c p i p %nope"]) == 0
    out = capsys.readouterr().out
    assert f"=>*{then_l:>4} |" in out
    assert "#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.  16/32 run line" in out and "PTX line" in out
    assert "i       [ 0-15]  0  1  2" in out and "error: register %nope is never written" in out


def test_without_the_executors_registers_masks_and_reconvergence_remain(monkeypatch):
    """Should the register file be out of reach, the record keeps what the events carry
    (lines, masks, divergence seen from the lanes that run next, reconvergence) and says
    that it has no register values."""
    monkeypatch.setattr(ptxrec, "_find_executor", lambda ev: None)
    st = step(parity, 1, 32, parity_args(32), executor="ptx", ir_values=False)
    assert not st.registers_read and all(not s.regs for s in st.steps)
    rj = [s for s in st.steps if s.reconverged]
    assert len(rj) == 1 and rj[0].line == line_of(parity, "out[i] = v") and rj[0].mask == 0xFFFFFFFF
    assert rj[0].rejoin_of == (line_of(parity, "if i % 2"),)
    s = st.goto(rj[0].index + 1)
    assert s.registers == {} and "registers could not be read" in format_state(s, st)
    with pytest.raises(StepError, match="registers could not be read"):
        st.value("%r1")


@cuda.jit(device=True)
def twice_sin(v):
    return math.sin(v) * 2.0


def calls(x, out):
    i = cuda.grid(1)
    v = x[i]
    v = twice_sin(v)
    out[i] = v


def test_the_ir_values_of_a_call_line_are_those_after_the_inlined_call_returns():
    """The PTX gives an inlined device function's code the call's line; the IR run's values
    for that line are taken after the call, where the compiled code's result agrees."""
    x = np.linspace(0, 3, 32).astype(np.float32)
    st = step(calls, 1, 32, (x, np.zeros_like(x)), executor="ptx")
    call = line_of(calls, "v = twice_sin(v)")
    s = st.run(until_line=call)
    assert s.line == call and s.ir_step is not None
    np.testing.assert_allclose(s.values["v"], 2 * np.sin(x), rtol=1e-5)
