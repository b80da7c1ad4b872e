"""`simgpu step FILE.py::kernel`: the terminal face of the warp stepper.

--script runs the same commands as the prompt and prints each state as plain text, so it
can go into class notes; bad input prints a message and never a traceback."""
import subprocess
import sys
import textwrap

import pytest

from simgpu import settings  # noqa: E402
from simgpu.stepper import step
from simgpu.stepper.tui import Session, main, parse_commands


@pytest.fixture(autouse=True)
def ir_stepper(monkeypatch):
    """These tests are about the stepper on simgpu's IR (executor="ir"), whatever the machine's
    default executor; the stepper on the compiled code is tested in test_step_ptx.py."""
    monkeypatch.setenv("SIMGPU_EXECUTOR", "ir")         # the stepper processes the tests start
    with settings.override(executor="ir"):
        yield

KERNEL = textwrap.dedent("""\
    import numpy as np
    from numba import cuda


    def parity(x, out):
        i = cuda.grid(1)
        if i < x.size:
            v = x[i]
            if i % 2 == 0:
                v = v * 2.0
            else:
                v = v + 1.0
            out[i] = v


    def args_parity():
        x = np.arange(64, dtype=np.float32)
        return x, np.zeros_like(x)
    """)
# line numbers in KERNEL: 6 i = ..., 7 if i < x.size, 8 v = x[i], 9 if i % 2, 10 then, 12 else, 13 out[i] = v


@pytest.fixture
def kfile(tmp_path):
    p = tmp_path / "kern.py"
    p.write_text(KERNEL)
    return str(p)


def run(capsys, *argv):
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def states(out):
    """The printed blocks, one per command (the first is the start)."""
    return out.split("\n> ")


def test_script_prints_the_start_and_one_state_per_command(kfile, capsys):
    rc, out, _ = run(capsys, f"{kfile}::parity", "--grid", "2", "--block", "32", "--script", "s s n b 10 c")
    blocks = states(out)
    assert rc == 0 and len(blocks) == 6
    assert "start (nothing executed yet)" in blocks[0] and "->    6 |     i = cuda.grid(1)" in blocks[0]
    assert blocks[1].startswith("s\nparity  block (0, 0, 0)  warp 0  step 1 of ")
    assert "=>    7 |     if i < x.size:" in blocks[3]
    assert blocks[4] == "b 10\nbreakpoint at line 10: v = v * 2.0\n"
    assert "=>*  10 |             v = v * 2.0" in blocks[5]
    assert "  lanes     #.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.  16/32 active" in blocks[5]


def test_the_state_shows_the_stack_the_memory_and_the_variables(kfile, capsys):
    _, out, _ = run(capsys, f"{kfile}::parity", "--block", "32", "--script", "b 8 c")
    last = states(out)[-1]
    assert "  stack     if   at line 7    mask 0xffffffff (32 lanes)  rejoin at the end of the kernel" in last
    assert "  memory    ld global x (4 B x 32 lanes)" in last and "4 sector(s) of 32 B" in last
    assert "  i       [ 0-15]  0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15" in last


def test_print_shows_a_variable_in_every_lane_and_show_limits_the_variables(kfile, capsys):
    _, out, _ = run(capsys, f"{kfile}::parity", "--block", "32", "--grid", "2", "--block-idx", "1",
                    "--show", "v", "--script", "b 13 c p i")
    blocks = states(out)
    assert "\n  i  " not in blocks[-2] and "\n  v       [ 0-15]  64  34  68  36  72" in blocks[-2]
    assert blocks[-1] == ("p i\n  i       [ 0-15] 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47\n"
                          "          [16-31] 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63\n")


def test_back_and_goto_move_through_the_record(kfile, capsys):
    _, out, _ = run(capsys, f"{kfile}::parity", "--block", "32", "--script", "n n u g 0")
    blocks = states(out)
    assert "step 2 of" in blocks[1] and "step 6 of" in blocks[2]
    assert "step 5 of" in blocks[3] and "start (nothing" in blocks[4]


def test_continue_without_breakpoints_runs_to_the_end(kfile, capsys):
    _, out, _ = run(capsys, f"{kfile}::parity", "--block", "32", "--script", "c c q s")
    blocks = states(out)
    assert "(no breakpoint reached; the warp ran to its end)" in blocks[1]
    assert "the warp has finished" in blocks[1]
    assert blocks[2].startswith("c\nerror: the warp has finished")
    assert len(blocks) == 4                       # q stops the script: 's' never runs


@pytest.mark.parametrize("script, message", [
    ("b 3", "error: line 3 has no code in kernel 'parity' (lines with code: 6-10, 12-13)"),
    ("b x", "error: 'b' needs a number, e.g. 'b 14'; got 'x'"),
    ("p nope", "error: no variable 'nope' in kernel 'parity' (variables: i, v)"),
    ("p v", "error: 'v' has no value yet at step 0 (it is first assigned on line 8, step 8)"),
    ("u", "error: already at the start: there is no step to go back to"),
    ("d 9", "error: no breakpoint on line 9 (breakpoints: [])"),
    ("g 1000", "error: step 1000 does not exist"),
    ("jump", "error: unknown command 'jump'"),
])
def test_bad_commands_print_a_message_and_the_session_goes_on(kfile, capsys, script, message):
    rc, out, _ = run(capsys, f"{kfile}::parity", "--block", "32", "--script", script + " s")
    blocks = states(out)
    assert rc == 0 and blocks[1].startswith(f"{script}\n{message}")
    assert "step 1 of" in blocks[2]


@pytest.mark.parametrize("argv, message", [
    (["--warp", "2"], "warp 2 is not in the block: a block of 64 threads has 2 warp(s), numbered 0..1"),
    (["--block-idx", "3"], "block (3, 0, 0) is not in the grid (1, 1, 1)"),
    (["--show", "zz"], "no variable 'zz' in kernel 'parity'"),
    (["--args", "(1,"], "--args '(1,' failed"),
])
def test_bad_launch_options_print_an_error_and_exit_2(kfile, capsys, argv, message):
    rc, out, err = run(capsys, f"{kfile}::parity", "--block", "64", *argv, "--script", "s")
    assert rc == 2 and out == "" and err.startswith("simgpu step: error: ") and message in err


def test_a_missing_kernel_or_file_is_an_error(kfile, capsys):
    assert run(capsys, f"{kfile}::nope", "--script", "s")[0] == 2
    rc, _, err = run(capsys, "no/such/file.py::k", "--script", "s")
    assert rc == 2 and "no such file" in err


def test_colour_only_when_asked_or_on_a_terminal(kfile, capsys):
    _, plain, _ = run(capsys, f"{kfile}::parity", "--block", "32", "--script", "s")
    _, colour, _ = run(capsys, f"{kfile}::parity", "--block", "32", "--color", "always", "--script", "s")
    assert "\x1b[" not in plain and "\x1b[" in colour


def test_args_expression_replaces_args_function(kfile, capsys):
    _, out, _ = run(capsys, f"{kfile}::parity", "--block", "32", "--args",
                    "(np.full(32, 5, np.float32), np.zeros(32, np.float32))", "--script", "c p v")
    assert out.endswith("p v\n  v       [ 0-15] 10  6 10  6 10  6 10  6 10  6 10  6 10  6 10  6\n"
                        "          [16-31] 10  6 10  6 10  6 10  6 10  6 10  6 10  6 10  6\n")


def test_parse_commands_pairs_commands_with_their_arguments():
    assert parse_commands("s s n b 14 c p v back quit") == [
        ("s", None), ("s", None), ("n", None), ("b", "14"), ("c", None), ("p", "v"), ("u", None), ("q", None)]


def test_the_interactive_prompt_reads_commands_and_repeats_the_last_on_enter(kfile):
    from simgpu.stepper.tui import load
    k, args = load(f"{kfile}::parity")
    st = step(k, 1, 32, args)
    inputs = iter(["s", "", "q"])
    lines = []
    Session(st, write=lines.append).interactive(read=lambda prompt: next(inputs))
    assert st.pos == 2 and lines[1] == "type h for help"


def test_python_dash_m_runs_the_stepper(kfile):
    r = subprocess.run([sys.executable, "-m", "simgpu.stepper.tui", f"{kfile}::parity", "--block", "32",
                        "--script", "n"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "=>    6 |     i = cuda.grid(1)" in r.stdout


def test_watch_adds_a_variable_or_temporary_to_every_following_state(kfile, capsys):
    """%t7 is `i % 2 == 0`, computed on line 9: no value on line 8, one per lane after."""
    _, out, _ = run(capsys, f"{kfile}::parity", "--block", "32", "--show", "i",
                    "--script", "w %t7 w zz b 8 c b 13 c")
    blocks = states(out)
    assert blocks[1] == "w %t7\nwatching %t7\n"
    assert blocks[2].startswith("w zz\nerror: no variable 'zz'")
    assert "\n  %t7: (no value yet)" in blocks[4]
    assert "\n  %t7     [ 0-15] T F T F T F" in blocks[6] and "\n  v  " not in blocks[6]
