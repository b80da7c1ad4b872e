"""Kernels numba-cuda refuses (issue 23): simgpu's diagnosis comes first, numba's text is trimmed to
the part naming the user's line, no ANSI codes off a terminal, SIMGPU_NUMBA_ERRORS=full gives
numba's whole error (simgpu/runtime/compile_errors.py)."""
import io
import traceback

import numpy as np
import pytest
from numba import cuda, float32

import simgpu
from simgpu.host import run_program
from simgpu.runtime.compile_errors import strip_ansi, trim_numba_text

from compiled_path import skip_without_compiled_path

skip_without_compiled_path()


def list_literal(x, out):
    i = cuda.grid(1)
    vals = [x[i], x[i] * 2]                                  # line +2
    out[i] = vals[0]


def try_except(x, out):
    try:                                                     # line +1
        out[0] = x[0]
    except Exception:
        out[0] = 0


def shared_of_argument(x, out, n):
    s = cuda.shared.array(n, float32)                        # line +1
    s[0] = x[0]
    out[0] = s[0]


# the constructs students write, the line of each (from its def) and simgpu's diagnosis
CONSTRUCTS = [(list_literal, 2, "'List' expressions are not supported in kernels"),
              (try_except, 1, "'Try' is not supported in kernels"),
              (shared_of_argument, 1, "an array shape must be a constant known when the kernel is compiled")]
IDS = [c[0].__name__ for c in CONSTRUCTS]


def _args(fn):
    base = (np.ones(8, np.float32), np.zeros(8, np.float32))
    return base + ((4,) if fn is shared_of_argument else ())


def _where(fn, k):
    return f"{__file__}:{fn.__code__.co_firstlineno + k}:"


@pytest.mark.parametrize("fn,k,said", CONSTRUCTS, ids=IDS)
def test_simgpus_diagnosis_first_and_numbas_text_trimmed(fn, k, said):
    with pytest.raises(Exception) as e:
        simgpu.launch(fn, 1, 8, _args(fn), executor="ptx", timing=False)
    text = "".join(traceback.format_exception(e.value))
    message = str(e.value)
    assert message.startswith(_where(fn, k)) and said in message.splitlines()[0], message
    assert len(text.splitlines()) < 20, text            # was 107-121 lines: numba's frames
    assert "\x1b[" not in text
    if type(e.value).__module__.startswith("numba"):      # numba's type kept, its text after ours
        assert "numba-cuda's " in message and "SIMGPU_NUMBA_ERRORS=full" in message
        assert message.index(said) < message.index("numba-cuda's ")
        assert "candidate implementations" not in message


PROGRAM = """\
import numpy as np
from numba import cuda, float32


@cuda.jit
def k(x, n):
{body}


k[1, 8](cuda.to_device(np.ones(8, np.float32)), 4)
"""
BODIES = {"list literal": ("    vals = [x[0], x[0] * 2]\n    x[0] = vals[1]", "'List' expressions"),
          "try/except": ("    try:\n        x[0] = 1\n    except Exception:\n        x[0] = 2", "'Try' is not"),
          "shared of an argument": ("    s = cuda.shared.array(n, float32)\n    s[0] = x[0]",
                                    "an array shape must be a constant")}


@pytest.mark.parametrize("name", BODIES)
def test_simgpu_run_program_says_simgpus_reading_first(name, tmp_path, capsys):
    """The same constructs in a whole program (`simgpu run prog.py`, numba's own dispatcher
    compiles): the program's frame, simgpu's one frame, simgpu's diagnosis at the program's line."""
    body, said = BODIES[name]
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM.format(body=body))
    assert run_program(path=str(prog), out=io.StringIO()) == 1
    err = capsys.readouterr().err
    tb = err[err.index("Traceback (most recent call last):"):]
    lines = tb.rstrip().splitlines()
    assert len(lines) < 16, tb
    assert str(prog) in lines[1] and "numba_cuda" not in tb and "runpy" not in tb, tb
    first = next(ln for ln in lines if not ln.startswith(" ") and ln != lines[0])
    assert f"{prog}:7:" in first and said in first, tb
    assert "\x1b[" not in tb


def test_ansi_codes_only_on_a_terminal():
    colored = "\x1b[1m\x1b[1mNo implementation of function Function(<function shared.array>) found for signature:\n" \
              " \n >>> array(int64, class(float32))\n \nThere are 2 candidate implementations:\n" \
              "  - Of which 2 did not match due to:\n  Overload of function 'array': File: numba/cuda/cudadecl.py: " \
              "Line 28.\n\x1b[0m\x1b[1mDuring: typing of call at /u/prog.py (7)\x1b[0m\n" \
              '\x1b[1m\nFile "/u/prog.py", line 7:\x1b[0m\n\x1b[1mdef k(x, n):\n    s = cuda.shared.array(n, float32)\n' \
              "    ^\x1b[0m\n"

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    assert strip_ansi(colored, io.StringIO()) == strip_ansi(colored, io.StringIO()).replace("\x1b", "")
    assert "\x1b[" not in strip_ansi(colored, io.StringIO())
    assert strip_ansi(colored, Terminal()) == colored
    assert trim_numba_text(colored, "/u/prog.py").splitlines() == [
        "No implementation of function Function(<function shared.array>) found for signature:",
        ">>> array(int64, class(float32))",
        "During: typing of call at /u/prog.py (7)",
        'File "/u/prog.py", line 7:',
        "def k(x, n):",
        "    s = cuda.shared.array(n, float32)",
        "    ^"]
