"""A user's mistake is a clear simgpu error pointing at the kernel's line, never a traceback
from simgpu's internals."""
import numpy as np
import pytest
from numba import cuda, float32

import simgpu


def oob_global(x):
    i = cuda.grid(1)
    x[i + 1] = 0


def oob_shared(x):
    s = cuda.shared.array(32, float32)
    s[cuda.threadIdx.x + 1] = 1.0
    x[0] = s[0]


def oob_local(x):
    a = cuda.local.array(4, float32)
    for k in range(5):
        a[k] = 1.0
    x[0] = a[0]


def partial_barrier(x):
    if cuda.threadIdx.x < 16:
        cuda.syncthreads()
    x[cuda.grid(1)] = cuda.syncthreads_count(1)


def list_comp(x):
    y = [v for v in range(3)]


def runaway(x):
    i = 0
    while x[0] < 1:
        i += 1


def big_shared(x):
    s = cuda.shared.array(20000, float32)   # read: numba-cuda's LTO drops a shared array never read
    s[0] = 1
    x[0] = s[int(x[1])]


def ok(x):
    x[cuda.grid(1)] = 1


def test_out_of_bounds_global_names_array_index_thread_block_and_line():
    with pytest.raises(simgpu.KernelError) as e:
        simgpu.launch(oob_global, 2, 32, (np.zeros(64),))
    msg = str(e.value)
    assert "test_errors.py:12" in msg and "'x'" in msg and "index 64" in msg
    assert "block (1, 0, 0)" in msg and "thread (31, 0, 0)" in msg and "oob_global" in msg


def test_out_of_bounds_shared():
    with pytest.raises(simgpu.KernelError, match=r"index 32 is out of bounds for shared array"):
        simgpu.launch(oob_shared, 1, 32, (np.zeros(4, np.float32),))


def test_out_of_bounds_local():
    with pytest.raises(simgpu.KernelError, match=r"index 4 is out of bounds for local array"):
        simgpu.launch(oob_local, 1, 32, (np.zeros(4, np.float32),))


def test_barrier_in_divergent_code():
    """Threads that skip a barrier may exit (the hardware does not wait for exited threads:
    tests/test_sanitize_learners.py's falloff_barrier); reaching another barrier instead is
    refused, naming both."""
    with pytest.raises(simgpu.KernelError, match=r"skipped the barrier at .*test_errors.py:30") as e:
        simgpu.launch(partial_barrier, 1, 64, (np.zeros(64),))
    assert "test_errors.py:31" in str(e.value)


def test_unsupported_construct_is_dsl_error_with_hint():
    with pytest.raises(simgpu.DSLError) as e:
        simgpu.launch(list_comp, 1, 32, (np.zeros(3),))
    assert "test_errors.py:35:" in str(e.value) and "hint:" in str(e.value)


def test_runaway_loop_without_progress_is_stopped():
    with pytest.raises(simgpu.KernelError, match="makes no progress"):
        simgpu.launch(runaway, 1, 32, (np.zeros(3),))


@pytest.mark.parametrize("block,grid,match", [
    (2048, 1, "max_threads_per_block"),
    ((1, 1, 128), 1, "max_block_dim"),
    (32, (1, 70000), "max_grid_dim"),
])
def test_launch_limits(block, grid, match):
    with pytest.raises(simgpu.LaunchError, match=match):
        simgpu.launch(ok, grid, block, (np.zeros(10**6),))


def test_shared_memory_limit():
    with pytest.raises(simgpu.LaunchError, match="static_shared_mem_per_block_bytes"):
        simgpu.launch(big_shared, 1, 32, (np.zeros(3),))


def test_wrong_number_of_arguments():
    with pytest.raises(simgpu.ArgumentError, match="takes 1 argument"):
        simgpu.launch(ok, 1, 32, (np.zeros(32), 3))


def test_wrong_kind_of_argument():
    with pytest.raises(simgpu.ArgumentError, match="cannot pass a str"):
        simgpu.launch(ok, 1, 32, ("hello",))


def test_typing_error_points_at_line():
    def float_index(x):
        x[1.5] = 0
    with pytest.raises(simgpu.TypingError, match="array indices must be integers"):
        simgpu.launch(float_index, 1, 32, (np.zeros(3),))


def test_unknown_gpu():
    with pytest.raises(simgpu.SimGPUError, match="unknown GPU"):
        simgpu.launch(ok, 1, 32, (np.zeros(32),), gpu="Z9000")


# -- the same mistakes on the compiled path --------------------------------------------------
@pytest.mark.parametrize("kernel,args,err,match", [
    (oob_global, (np.zeros(64),), simgpu.KernelError,
     r"test_errors.py:\d+: in kernel 'oob_global': out-of-bounds global access.*512-byte allocation \(x\).* "
     r"in block \(1, 0, 0\) thread \(31, 0, 0\)"),
    (big_shared, (np.zeros(3),), simgpu.LaunchError, "static_shared_mem_per_block_bytes"),
    (runaway, (np.zeros(3),), simgpu.KernelError, r"test_errors.py:\d+: .*makes no progress"),
])
def test_compiled_path_errors_name_the_line_thread_and_block(kernel, args, err, match):
    with pytest.raises(err, match=match):
        simgpu.launch(kernel, 2, 32, args, executor="ptx", timing=False)


# -- issue 23: a user's error ends in simgpu's message, after the user's frames ------------------
# (imported here, so the kernels above keep their line numbers)
import os  # noqa: E402
import traceback  # noqa: E402

from simgpu import settings  # noqa: E402
from simgpu.cli import main  # noqa: E402

SIMGPU = os.path.dirname(os.path.abspath(simgpu.__file__)) + os.sep


def _frames(err):
    return traceback.extract_tb(err.__traceback__)


@pytest.mark.parametrize("executor", ["ir", "ptx"])
@pytest.mark.parametrize("entry", ["launch", "jit"])
def test_a_kernel_error_shows_the_users_frames_and_one_of_simgpus(executor, entry):
    """No chained MemFault ("During handling of the above exception"), no internal frames: the
    test's own frame, then the one simgpu frame that raises, then the message."""
    with pytest.raises(simgpu.KernelError) as e:
        if entry == "launch":
            simgpu.launch(oob_global, 2, 32, (np.zeros(64),), executor=executor, timing=False)
        else:
            simgpu.jit(oob_global)[2, 32](np.zeros(64), executor=executor, timing=False)
    text = "".join(traceback.format_exception(e.value))
    assert "During handling" not in text and "direct cause" not in text, text
    ours = [f for f in _frames(e.value) if f.filename.startswith(SIMGPU)]
    assert len(ours) == 1, text
    assert _frames(e.value)[0].filename == __file__
    assert text.rstrip().splitlines()[-1].startswith("simgpu.errors.KernelError: ")


def test_check_true_returns_the_report_with_the_out_of_bounds_finding():
    rep = simgpu.launch(oob_global, 2, 32, (np.zeros(64),), executor="ptx", timing=False, check=True)
    (f,) = [f for f in rep.sanitizer.findings if f.tool == "memcheck"]
    assert "out-of-bounds" in f.message and f.loc.endswith("test_errors.py:12")
    assert rep.sanitizer.errors == 1 and "Stopped by a fault" in str(rep)


def test_simgpu_traceback_full_keeps_the_internal_frames():
    with settings.override(traceback="full"), pytest.raises(simgpu.KernelError) as e:
        simgpu.launch(oob_global, 2, 32, (np.zeros(64),), executor="ptx", timing=False)
    assert len([f for f in _frames(e.value) if f.filename.startswith(SIMGPU)]) > 3


PROGRAM = """\
import numpy as np
from numba import cuda


@cuda.jit
def shift(x):
    i = cuda.grid(1)
    x[i + 1] = 0


shift[2, 32](cuda.to_device(np.zeros(64)))
"""


def test_simgpu_run_prog_error_ends_in_the_message_after_the_programs_frames(tmp_path, capsys):
    """`simgpu run prog.py`: no cli.py or runpy frames, no "0 kernel launch(es)" line first; exit 1."""
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    assert main(["run", str(prog)]) == 1
    out, err = capsys.readouterr()
    assert "kernel launch(es)" not in out, out
    assert "cli.py" not in err and "runpy" not in err, err
    lines = err.rstrip().splitlines()
    lines = lines[lines.index("Traceback (most recent call last):"):]      # (numba's warnings before it)
    assert str(prog) in lines[1], err
    assert lines[-1].startswith("simgpu.errors.KernelError: ") and "prog.py:8" in lines[-1], err
    assert len([ln for ln in lines if ln.startswith("  File ")]) == 2, err   # the program's, simgpu's


# The tests above pin the IR path's messages (its frontend's DSLErrors, its bounds checks by
# array and index); the compiled path's own errors are the test just above.
EXECUTOR = "ir"


def test_there_is_one_simgpu_warning_class():
    """A user's filter on simgpu.SimGPUWarning catches the frontend's lint and the host's notes."""
    import importlib
    import simgpu
    one = importlib.import_module("simgpu.errors").SimGPUWarning
    assert simgpu.SimGPUWarning is one
    for mod in ("simgpu.frontend.lint", "simgpu.host", "simgpu.host.session"):
        assert importlib.import_module(mod).SimGPUWarning is one, mod
