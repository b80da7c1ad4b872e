"""The lessons in examples/: each runs, prints the SIMT efficiency and the simulated cost,
and shows what it claims; the `simgpu step` command in each docstring works as written."""
import importlib.util
import os
import re
import shlex

import pytest

from simgpu.stepper.tui import main as step_main, parse_commands

EXAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, "examples")
LESSONS = ["lesson_divergence", "lesson_relu", "lesson_loop", "lesson_reduction", "lesson_shuffle"]


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_lesson(name, capsys):
    res = load(name).main()
    out = capsys.readouterr().out
    assert "SIMT efficiency" in out and "warp instructions" in out and "smsp__inst_executed.sum" in out
    return res, out


def test_branching_on_lane_parity_idles_half_the_warp_and_on_warp_index_none(capsys):
    res, out = run_lesson("lesson_divergence", capsys)
    (eff_p, cost_p), (eff_w, cost_w) = res["by_parity"], res["by_warp"]
    assert eff_w == 1.0 and eff_p < 0.75 and cost_p > cost_w
    assert res["warp0_parity"] == pytest.approx(eff_p)
    assert "lanes #.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.  16/32 active" in out
    assert "lanes .#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#  16/32 active" in out


def test_relu_as_a_mask_multiply_never_diverges_and_costs_less(capsys):
    res, out = run_lesson("lesson_relu", capsys)
    eff_if, cost_if, ok_if = res["relu_if"]
    eff_m, cost_m, ok_m = res["relu_mask"]
    assert ok_if and ok_m
    assert eff_m == 1.0 and eff_if < 0.9 and cost_m < cost_if
    assert "both sides run, one after the other" in out


def test_a_per_lane_trip_count_runs_the_warp_for_its_longest_lane(capsys):
    res, out = run_lesson("lesson_loop", capsys)
    (eff_l, cost_l), (eff_w, cost_w) = res["trips_by_lane"], res["trips_by_warp"]
    assert eff_w == 1.0 and eff_l < 0.6 and cost_l > 1.5 * cost_w
    assert res["warp0_passes"] == 31
    assert "pass 16: ................################  16/32" in out


def test_sequential_addressing_drops_whole_warps_interleaved_keeps_warps_half_busy(capsys):
    res, out = run_lesson("lesson_reduction", capsys)
    eff_i, cost_i, ok_i = res["reduce_interleaved"]
    eff_s, cost_s, ok_s = res["reduce_sequential"]
    assert ok_i and ok_s and eff_s > eff_i and cost_s < cost_i
    assert res["reduce_interleaved_warp1_adders"] == [16, 8, 4, 2, 1, 0, 0, 0]
    assert res["reduce_sequential_warp1_adders"] == [32, 32, 0, 0, 0, 0, 0, 0]


def test_a_shuffle_reduction_needs_one_barrier_and_fewer_instructions(capsys):
    res, out = run_lesson("lesson_shuffle", capsys)
    eff_sh, cost_sh, bars_sh, ok_sh = res["reduce_shuffle"]
    eff_t, cost_t, bars_t, ok_t = res["reduce_tree"]
    assert ok_sh and ok_t and (bars_sh, bars_t) == (1, 9) and cost_sh < cost_t
    x, _ = load("lesson_shuffle").args_reduce_shuffle()
    assert res["warp0_lane0"] == x[:32].sum()


@pytest.mark.parametrize("name", LESSONS)
def test_the_step_command_in_each_lesson_docstring_works(name, capsys):
    doc = load(name).__doc__
    cmd = re.search(r"^\s*simgpu step (.*)$", doc, re.M).group(1)
    argv = shlex.split(cmd)
    argv[0] = os.path.join(EXAMPLES, argv[0].split("/", 1)[1])
    assert step_main(argv) == 0
    out = capsys.readouterr().out
    script = argv[argv.index("--script") + 1]
    assert "error:" not in out and out.count("\n> ") == len(parse_commands(script))
