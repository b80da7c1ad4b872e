"""simgpu.install(): unmodified numba.cuda programs on the modelled GPU (simgpu/host/).

The kernels below are written for numba.cuda and know nothing of simgpu; with simgpu
installed, `cuda.jit` kernels run on the compiled path and the host API is simgpu's.
Each test installs and uninstalls (the fixture), so numba.cuda is left as it was.
"""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu.errors import SimGPUError  # noqa: E402
from simgpu.host import DeviceNDArray, session as current_session  # noqa: E402
from simgpu.host import kernels as host_kernels  # noqa: E402
from simgpu.runtime.report import Report  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def sim():
    with simgpu.installed() as s:
        yield s


def add_kernel(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


def scale_in_place(a, x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= a


def test_install_swaps_host_api_and_uninstall_restores():
    from numba.cuda import dispatcher
    original = cuda.to_device, dispatcher._Kernel
    with simgpu.installed():
        assert cuda.to_device is not original[0] and cuda.is_available()
        assert dispatcher._Kernel is not original[1]
        assert cuda.get_current_device().compute_capability == (9, 0)
    assert (cuda.to_device, dispatcher._Kernel) == original


def test_program_results_and_device_array_write_back(sim):
    n = 300
    x, y = np.arange(n, dtype=np.float32), np.full(n, 2, np.float32)
    k = cuda.jit(add_kernel)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    dout = cuda.device_array_like(x)
    assert isinstance(dout, DeviceNDArray) and dout.shape == (n,) and dout.dtype == np.float32
    k[(n + 127) // 128, 128](dx, dy, dout)
    np.testing.assert_array_equal(dout.copy_to_host(), x + y)
    # a device array argument the kernel writes in place holds the result afterwards
    sk = cuda.jit(scale_in_place)
    sk[3, 128](np.float32(3), dx)
    np.testing.assert_array_equal(dx.copy_to_host(), 3 * x)
    assert [r.kernel for r in sim.launches] == ["add_kernel", "scale_in_place"]
    assert {t.kind for t in sim.transfers} == {"HtoD", "DtoH"}


def test_slices_transpose_and_interface(sim):
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    d = cuda.to_device(a)
    np.testing.assert_array_equal(d.T.copy_to_host(), a.T)
    row = d[1]
    assert row.__cuda_array_interface__["data"][0] == d.device_address + 4 * 8
    sk = cuda.jit(scale_in_place)
    sk[1, 32](2.0, row)                     # a view: the kernel writes into d's memory
    expect = a.copy()
    expect[1] *= 2
    np.testing.assert_array_equal(d.copy_to_host(), expect)
    same = cuda.as_cuda_array(d[2])
    np.testing.assert_array_equal(same.copy_to_host(), a[2])
    host = np.zeros_like(a)
    d.copy_to_host(host)
    np.testing.assert_array_equal(host, expect)


def test_stream_and_event_time_is_the_predicted_time(sim, monkeypatch):
    """Events measure the modelled clock: the sum of the launches' predicted times."""
    predicted = iter([3e-6, 5e-6])

    def fake_launch(program, grid, block, args, **kw):
        rep = Report(program.name, sim.gpu, (1, 1, 1), (32, 1, 1))
        rep.metrics["gpu__time_duration.sum"] = next(predicted) * 1e9
        rep.extras["bottleneck"] = "DRAM bandwidth"
        return rep

    monkeypatch.setattr(host_kernels, "launch", fake_launch)
    k = cuda.jit(scale_in_place)
    s = cuda.stream()
    e0, e1 = cuda.event(), cuda.event()
    e0.record(s)
    k[1, 32, s](1.0, np.zeros(4))
    k[1, 32, s](1.0, np.zeros(4))
    e1.record(s)
    assert e0.elapsed_time(e1) == pytest.approx(8e-3)       # ms
    assert cuda.event_elapsed_time(e0, e1) == pytest.approx(8e-3)
    text = sim.summary()
    assert "3.00 us" in text and "DRAM bandwidth" in text and "8.00 us" in text


def test_untimed_launches_show_a_dash(sim):
    k = cuda.jit(scale_in_place)
    k[1, 32](1.0, np.zeros(4))
    rec = sim.launches[-1]
    if rec.time_s is None:                  # the compiled path's timing model has not landed
        assert " - " in sim.summary().splitlines()[2]


def test_forall_eager_signature_and_device_function(sim):
    @cuda.jit(device=True)
    def twice(v):
        return 2 * v

    @cuda.jit("void(float32[:], int32)")
    def fill(x, v):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = twice(v) + i

    d = cuda.device_array(100, np.float32)
    fill.forall(100)(d, 5)                  # 5 is cast to int32 by the signature
    np.testing.assert_array_equal(d.copy_to_host(), 10 + np.arange(100, dtype=np.float32))
    with pytest.raises(TypeError, match="No matching definition"):
        fill[1, 32](np.zeros(3, np.float64), 1)
    assert fill.inspect_asm()                 # numba's own dispatcher: its PTX for the H200
    assert ".target sm_90" in next(iter(fill.inspect_asm().values()))


def test_dynamic_shared_memory_and_random(sim):
    from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float64

    @cuda.jit
    def rev(x):
        buf = cuda.shared.array(0, dtype=np.float32)
        t = cuda.threadIdx.x
        buf[t] = x[t]
        cuda.syncthreads()
        x[t] = buf[cuda.blockDim.x - 1 - t]

    @cuda.jit
    def draw(states, out):
        i = cuda.grid(1)
        out[i] = xoroshiro128p_uniform_float64(states, i)

    x = cuda.to_device(np.arange(64, dtype=np.float32))
    rev[1, 64, 0, 64 * 4](x)
    np.testing.assert_array_equal(x.copy_to_host(), np.arange(64, dtype=np.float32)[::-1])
    states = create_xoroshiro128p_states(64, seed=7)
    out = cuda.device_array(64)
    draw[2, 32](states, out)
    r = out.copy_to_host()
    assert ((r >= 0) & (r < 1)).all() and len(set(r.tolist())) == 64


def test_device_and_detect(sim, capsys):
    dev = cuda.get_current_device()
    assert dev.MULTIPROCESSOR_COUNT == sim.gpu.sm_count and dev.WARP_SIZE == 32
    assert cuda.detect() is True
    assert "H200" in capsys.readouterr().out
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total


def test_clear_errors(sim):
    k = cuda.jit(scale_in_place)
    with pytest.raises(ValueError, match="launch configuration"):
        k(1.0, np.zeros(4))                   # numba's own message
    with pytest.raises(ValueError, match="IPC memory handle is 64 bytes"):
        cuda.open_ipc_array(None, (1,), np.float32)
    with pytest.raises(SimGPUError, match="driver"):
        cuda.current_context().create_module_image(b"")
    with pytest.raises(SimGPUError, match="not device memory"):
        cuda.current_context().get_ipc_handle(np.zeros(2))
    with pytest.raises(ValueError, match="copy=False"):     # numba's __array__ always copies
        np.asarray(cuda.device_array(3), copy=False)
    with pytest.raises(AttributeError, match="no device attribute"):
        cuda.get_current_device().NOT_AN_ATTRIBUTE


def test_simgpu_run_program(tmp_path):
    """`simgpu run` on the example program: its output and one summary line per launch."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "simgpu", "run", "--report", str(tmp_path / "rep"),
                           os.path.join(ROOT, "examples", "numba_program.py"), "1024"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert "sum of 0..1023: 523776 (expected 523776)" in out
    assert "forall scale correct: True" in out
    assert "simgpu: 3 kernel launch(es) on the modelled H200" in out
    assert "block_sums" in out and "8 x 128" in out and "per kernel:" in out
    assert (tmp_path / "rep" / "0001_block_sums.json").exists()
    assert current_session() is not None
    text = (tmp_path / "rep" / "0001_block_sums.txt").read_text()
    assert "buf[t] += buf[t + s]" in text    # issue 23: lineinfo on for whole programs


ADD_ONE = """\
import numpy as np
from numba import cuda


@cuda.jit
def add_one(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


d = cuda.to_device(np.zeros(64, np.float32))
add_one[2, 32](d)
"""


def test_simgpu_run_report_names_source_lines(tmp_path):
    """`simgpu run --report DIR prog.py` (no --check): the per-line tables name the program's
    lines (issue 23: kernels compiled without lineinfo gave one row `line 0` with no source)."""
    from simgpu.host import run_program
    prog = tmp_path / "prog.py"
    prog.write_text(ADD_ONE)
    out = io.StringIO()
    assert run_program(path=str(prog), report_dir=str(tmp_path / "rep"), out=out) == 0
    text = (tmp_path / "rep" / "0001_add_one.txt").read_text()
    by_line = text.split("Memory by source line", 1)[1].split("\n\n", 1)[0]
    assert "      9 " in by_line and "x[i] += 1" in by_line, by_line
    per_thread = text.split("Per thread", 1)[1]
    assert "x[i] += 1" in per_thread, per_thread


CAPTURED = None


def read_captured(out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = CAPTURED[i] * 2


def test_captured_device_array_and_ptxas_resources(sim):
    """numba embeds a captured device array's pointer in the code: simgpu maps the program's
    device arrays at their addresses.  Registers and shared memory come from ptxas."""
    global CAPTURED
    CAPTURED = cuda.to_device(np.arange(8, dtype=np.float32))
    try:
        k = cuda.jit(read_captured)
        out = cuda.device_array(8, np.float32)
        k[1, 32](out)
        np.testing.assert_array_equal(out.copy_to_host(), 2 * np.arange(8, dtype=np.float32))
        regs = k.get_regs_per_thread()
        assert list(regs.values())[0] > 0 and list(k.get_shared_mem_per_block().values()) == [0]
    finally:
        CAPTURED = None


def test_results_only_mode_runs_without_ptxas():
    """install(memory=False, sass=False): no ptxas/nvdisasm per kernel (the numba suite's mode)."""
    with simgpu.installed(memory=False, sass=False) as s:
        k = cuda.jit(add_kernel)
        x = np.arange(40, dtype=np.float64)
        out = cuda.device_array_like(x)
        k[1, 64](x, x, out)
        np.testing.assert_array_equal(out.copy_to_host(), 2 * x)
        rep = s.launches[-1].report
        assert rep.extras["ptx"]["registers"] is None          # ptxas did not run


def test_simgpu_run_one_kernel_form_still_works(tmp_path, capsys):
    """`simgpu run FILE.py::KERNEL --grid G --block B` (options after the target) is unchanged."""
    from simgpu.cli import main
    f = tmp_path / "kern.py"
    f.write_text("import numpy as np\nfrom numba import cuda\n\n"
                 "def inc(x):\n    i = cuda.grid(1)\n    if i < x.size:\n        x[i] += 1\n\n"
                 "def make_args():\n    return (np.zeros(64, np.float32),)\n")
    assert main(["run", f"{f}::inc", "--grid", "2", "--block", "32"]) == 0
    assert "simgpu report: inc" in capsys.readouterr().out


def test_results_only_runs_the_ptx_numba_compiled_once():
    """Results only: the launch runs the PTX numba-cuda compiled when it made the kernel (for
    the device's sm_90a), not a second NVVM compile for sm_90."""
    with simgpu.installed(memory=False, sass=False):
        k = cuda.jit(add_kernel)
        x = np.arange(8, dtype=np.float32)
        out = np.zeros_like(x)
        k[1, 32](x, x, out)
        np.testing.assert_array_equal(out, 2 * x)
        (kernel,) = k.overloads.values()
        assert list(kernel.library._ptx_cache) == [(9, 0, "a")]


def _raises_at_thread_two(ary):
    x = cuda.threadIdx.x
    if x == 2:
        ary.shape[-x]


def test_debug_kernel_exception_is_raised_on_the_host(sim):
    """debug=True: an exception raised in the kernel is raised after the launch, as numba.cuda
    raises it: its class and message, prefixed with the thread and block that raised it."""
    k = cuda.jit(debug=True, opt=False)(_raises_at_thread_two)
    with pytest.raises(IndexError) as e:
        k[1, 3](np.array([0, 1]))
    msg = str(e.value)
    assert "tuple index out of range" in msg and "tid=[0, 0, 2] ctaid=[0, 0, 0]" in msg
    cuda.jit(debug=True, opt=False)(_raises_at_thread_two)[1, 2](np.array([0, 1]))   # no thread 2


def test_child_python_processes_install_simgpu(sim):
    """A Python process the program starts installs simgpu when it imports numba.cuda
    (SIMGPU_INSTALL + simgpu/host/startup on PYTHONPATH); uninstall() takes both back."""
    code = ("import sys\nfrom numba import cuda\n"
            "print(sys.modules['simgpu.host.install'].is_installed(), cuda.get_current_device().name)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "True" and "H200" in out.stdout
    env = subprocess.run([sys.executable, "-c", "import sys; print('numba.cuda' in sys.modules)"],
                         capture_output=True, text=True, timeout=300)
    assert env.stdout.strip() == "False"        # a child that never imports numba.cuda pays nothing


def test_uninstall_restores_the_environment():
    before = (os.environ.get("SIMGPU_INSTALL"), os.environ.get("PYTHONPATH"))
    with simgpu.installed():
        assert "SIMGPU_INSTALL" in os.environ
    assert (os.environ.get("SIMGPU_INSTALL"), os.environ.get("PYTHONPATH")) == before


def _set_record(r):
    r.a = 7
    r.b = r.b * 2


def _copy_in(a):
    a[0] = 3


def test_record_enum_and_in_arguments(sim):
    """A record passed by value (numba copies it to the device and back), an IntEnum member (its
    value), cuda.In (copied in, never back)."""
    import enum

    class Color(enum.IntEnum):
        red = 1
        green = 5

    rec = np.zeros(2, dtype=np.dtype([("a", np.int32), ("b", np.float64)], align=True))
    rec["b"] = 1.5
    cuda.jit(_set_record)[1, 1](rec[1])
    assert rec[1]["a"] == 7 and rec[1]["b"] == 3.0 and rec[0]["a"] == 0

    @cuda.jit
    def colour(out, c):
        out[0] = c

    out = np.zeros(1, np.int64)
    colour[1, 1](out, Color.green)
    assert out[0] == 5
    a = np.zeros(1, np.int64)
    cuda.jit(_copy_in)[1, 1](cuda.In(a))
    assert a[0] == 0
    cuda.jit(_copy_in)[1, 1](cuda.InOut(a))
    assert a[0] == 3



def _sin_into(x, out):
    np.sin(x, out)


def test_fortran_ordered_arrays_keep_their_layout(sim):
    """A kernel compiled for an 'F' array may walk it in memory order (numba's ufunc loops
    do): the launch passes the Fortran-ordered array itself (a C-ordered working copy was
    read transposed)."""
    from numba.cuda import float64, void
    x = np.asfortranarray(np.linspace(0, 1, 12).reshape(3, 4))
    out = np.zeros((3, 4))
    cuda.jit(void(float64[:, :].copy(layout="F"), float64[:, ::1]))(_sin_into)[1, 1](x, out)
    np.testing.assert_allclose(out, np.sin(x))
