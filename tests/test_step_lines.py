"""Line stepping on the compiled path and the two views of one warp (issue 23, item 4):
a step is one visit of a source line with the lanes that run it; a breakpoint stops at the
line's first instruction; `ret` is the kernel's exit, not the last line; SIMT efficiency
as compiled and as written; `st.compare()` / `--side-by-side` with the if-converted lines.
Repro: `simgpu step examples/lesson_relu.py::relu_if --block 128 --script "b 26 c" --color never`."""
import inspect
import math
import os
import re
import shlex

import numpy as np
import pytest
from numba import cuda

from simgpu.sass.toolchain import compiled_path_available
from simgpu.stepper import StepError, step, step_ir
from simgpu.stepper.text import format_state
from simgpu.stepper.tui import load, main

pytestmark = pytest.mark.skipif(not compiled_path_available()[0],
                                reason="the compiled path needs numba-cuda and ptxas")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELU = os.path.join(ROOT, "examples", "lesson_relu.py") + "::relu_if"
IF_L, THEN_L, ELSE_L = 26, 27, 29          # lines of examples/lesson_relu.py::relu_if
_CACHE = {}


def relu(mode=None):
    """warp 0 of block 0 of relu_if, one block of 128 (the repro's launch)."""
    if mode not in _CACHE:
        kernel, args = load(RELU)
        _CACHE[mode] = step(kernel, 1, 128, args, executor="ptx", mode=mode)
    st = _CACHE[mode]
    st.reset()
    return st


def line_of(fn, text):
    src, first = inspect.getsourcelines(fn)
    return first + next(k for k, t in enumerate(src) if text in t)


def test_the_lesson_lines_are_where_the_tests_think():
    kernel, _ = load(RELU)
    assert (line_of(kernel, "if v > 0"), line_of(kernel, "out[i] = v"), line_of(kernel, "out[i] = 0.0")) == \
        (IF_L, THEN_L, ELSE_L)


# -- line stepping is the default; instruction stepping is a mode -----------------------------
def test_on_the_compiled_path_a_step_is_one_visit_of_a_line_with_the_lanes_that_run_it():
    st = relu()
    assert st.mode == "line"
    seen = []
    while not st.done:
        s = st.step()
        seen.append((s.place, s.line, s.line_mask))
    then_m = next(m for p, ln, m in seen if ln == THEN_L)
    assert [(p, ln) for p, ln, _ in seen] == [
        ("entry", 22), ("body", 23), ("body", 24), ("body", 25), ("body", IF_L), ("body", ELSE_L),
        ("body", THEN_L), ("exit", 22)]
    masks = dict(((p, ln), m) for p, ln, m in seen)
    assert masks[("body", IF_L)] == 0xFFFFFFFF                   # the whole warp reaches the if
    assert masks[("body", ELSE_L)] == 0xFFFFFFFF & ~then_m and 0 < bin(then_m).count("1") < 32
    assert masks[("exit", 22)] == 0xFFFFFFFF                     # the lanes rejoin at the exit


def test_instruction_stepping_is_one_call_away_and_back_follows_the_mode():
    st = relu()
    st.step()
    p = st.pos
    st.set_mode("inst")
    try:
        assert st.step().step == p + 1 and st.back().step == p
        st.set_mode("line")
        st.step()
        assert st.back().step == p                              # back to the visit's first instruction
        with pytest.raises(StepError, match="mode 'word'"):
            st.set_mode("word")
    finally:
        st.set_mode("line")


def test_the_tui_switches_mode_with_one_key(capsys):
    assert main([RELU, "--block", "128", "--executor", "ptx", "--color", "never", "--script", "s m s s m s"]) == 0
    out = capsys.readouterr().out
    assert "instruction stepping: a step is one instruction" in out and "[instruction stepping]" in out
    assert out.count("line stepping: a step is one visit") == 1


def sin_and_div(x, n, out):
    i = cuda.grid(1)
    v = math.sin(x[i])                  # |x| = 1e6 in lanes 0, 4, 8, ...: libdevice's slow path
    q = n[i] // 3
    out[i] = v + q


def test_library_code_inside_a_line_does_not_split_it_into_partial_masks():
    """libdevice's sin takes its slow path (Payne-Hanek) in 8 lanes, and its stack set-up
    carries the previous line's .loc: the sin line is still one visit of all 32 lanes."""
    x = np.linspace(0, 3, 32).astype(np.float32)
    x[::4] = 1e6
    st = step(sin_and_div, 1, 32, (x, np.arange(32, dtype=np.int64) - 16, np.zeros(32, np.float32)),
              executor="ptx")
    sin_l = line_of(sin_and_div, "math.sin")
    assert any(s.line == sin_l and s.mask == 0x11111111 for s in st.steps)       # the slow path
    body = [(v.line, v.mask) for v in st.visits if v.place == "body"]
    assert body == [(sin_l - 1, 0xFFFFFFFF), (sin_l, 0xFFFFFFFF), (sin_l + 1, 0xFFFFFFFF),
                    (sin_l + 2, 0xFFFFFFFF)]


# -- a breakpoint stops at the line's first instruction ----------------------------------------
def test_the_repro_b_26_c_stops_at_the_first_instruction_of_line_26_before_the_split(capsys):
    assert main([RELU, "--block", "128", "--script", "b 26 c", "--color", "never"]) == 0
    out = capsys.readouterr().out.split("\n> c\n")[1]
    assert re.search(r"=>\*  26 \|\s+if v > 0:", out)
    assert "32/32 run line 26 on this visit" in out
    if "PTX line" in out:                                        # the machine's default: compiled
        assert re.search(r"first of line PTX line \d+: setp", out)


def test_run_stops_at_the_first_instruction_of_the_visit():
    st = relu()
    s = st.run(breakpoints={IF_L})
    v = st.visit_at()
    assert s.line == IF_L and st.pos == v.start + 1 and s.instruction.startswith("setp")
    assert s.active_mask == s.line_mask == 0xFFFFFFFF
    s = st.run(breakpoints={IF_L, ELSE_L})
    assert s.line == ELSE_L and st.pos == st.visit_at().start + 1


# -- ret and the epilogue in their own place -------------------------------------------------
@pytest.mark.parametrize("mode", ["line", "inst"])
def test_until_an_if_side_line_stops_there_not_at_the_end_of_the_warp(mode):
    st = relu(mode)
    s = st.run(until_line=THEN_L)
    assert s.line == THEN_L and not s.done and 0 < bin(s.active_mask).count("1") < 32
    ret = st.steps[-1]
    assert ret.opcode == "ret" and ret.place == "exit" and ret.line != THEN_L


def test_the_exit_is_named_as_such_in_the_text():
    st = relu()
    out = format_state(st.goto(len(st)), st)
    assert "the kernel's exit: ret" in out and "=>   22 |" in out
    assert "rejoin the warp here, at the kernel's exit" in out


# -- SIMT efficiency as compiled and as written ----------------------------------------------
def test_simt_efficiency_both_ways_each_by_nsight_computes_definition():
    st = relu()
    kernel, args = load(RELU)
    ir = step_ir(kernel, 1, 128, args)
    eff = st.efficiency()
    # as written: the IR path's own count, the lesson's 74.2 %
    assert eff["as written"] == pytest.approx(ir.run().simt_efficiency) == pytest.approx(23 / 31)
    # as compiled: thread instructions / (32 * warp instructions) over the SASS of the PTX executed
    w = np.array([s.weight for s in st.steps])
    act = np.array([bin(s.mask).count("1") for s in st.steps])
    assert eff["as compiled"] == pytest.approx((w * act).sum() / (32 * w.sum()))
    assert round(100 * eff["as compiled"], 1) == 95.5
    end = st.goto(len(st))
    assert end.as_written == pytest.approx(eff["as written"])
    assert "as compiled 95.5 %" in str(end) and "as written 74.2 %" in str(end)


# -- side by side ----------------------------------------------------------------------------
def test_compare_shows_both_traces_line_by_line():
    cmp = relu().compare()
    rows = {(r.place, r.line): r for r in cmp.rows}
    w, c = rows[("body", THEN_L)].written, rows[("body", THEN_L)].compiled
    assert w.mask == c.mask and 0 < w.n_active < 32
    assert rows[("exit", 22)].written is None and rows[("exit", 22)].compiled.mask == 0xFFFFFFFF
    assert cmp.if_converted == []                                  # this branch stays a branch
    text = str(cmp)
    assert "as written   74.2 %" in text and "as compiled  95.5 %" in text


def relu_sel(x, out):
    i = cuda.grid(1)
    v = x[i]
    if v > 0:
        y = v
    else:
        y = 0.0
    out[i] = y


def test_compare_notes_a_branch_the_compiler_if_converted():
    x = np.random.default_rng(0).standard_normal(32).astype(np.float32)
    cmp = step(relu_sel, 1, 32, (x, np.zeros_like(x)), executor="ptx").compare()
    if_l = line_of(relu_sel, "if v > 0")
    assert cmp.if_converted == [if_l]
    row = next(r for r in cmp.rows if r.line == if_l)
    assert row.splits_written and not row.splits_compiled and row.compiled.mask == 0xFFFFFFFF
    assert "if-converted" in str(cmp)


def test_side_by_side_on_the_command_line(capsys):
    assert main([RELU, "--block", "128", "--side-by-side", "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "as written (simgpu's IR) and as compiled" in out and "as written   74.2 %" in out


def test_the_ir_stepper_says_compare_needs_the_compiled_path():
    kernel, args = load(RELU)
    with pytest.raises(StepError, match="executor='ptx'"):
        step_ir(kernel, 1, 32, args).compare()


# -- the README's lesson commands -----------------------------------------------------------
def test_the_readme_lesson_commands_show_the_split_and_both_views(capsys):
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    cmds = re.findall(r"`(simgpu step examples/lesson_relu\.py::relu_if[^`]*)`", readme)
    assert any("--side-by-side" in c for c in cmds) and any("--script" in c for c in cmds)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for c in cmds:
            assert main(shlex.split(c)[2:] + ["--color", "never"]) == 0
    finally:
        os.chdir(cwd)
    out = capsys.readouterr().out
    assert "as written (simgpu's IR) and as compiled" in out
    assert "32/32 run line 26" in out and "18/32 run line 29" in out and "14/32 run line 27" in out
