"""initcheck on global scratch memory: a cuda.device_array that nothing wrote since it was
allocated (simgpu/sanitize/scratch.py), on both paths; no false positive where the host or a
launch (sanitized or not) wrote the memory, through the array or a view of it."""
import inspect
import io

import numpy as np
import pytest

from simgpu._compat import patch_numpy_for_numba

patch_numpy_for_numba()

from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu.host import devicearray as da  # noqa: E402
from simgpu.host import run_program  # noqa: E402
from simgpu.sanitize.scratch import InitMap  # noqa: E402
from simgpu.sass.toolchain import compiled_path_available  # noqa: E402

EXECUTORS = ["ir", pytest.param("ptx", marks=pytest.mark.skipif(
    not compiled_path_available()[0], reason="needs numba-cuda and ptxas"))]


def fill_half(out, n):
    i = cuda.grid(1)
    if i < n // 2:
        out[i] = i * 2.0


def fill(out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = i * 2.0


def use(out, src, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = src[i] + 1.0      # <- read


def accumulate(out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] += 1.0              # <- read


def _line(fn, tag="# <- read"):
    lines, first = inspect.getsourcelines(fn)
    return next(first + k for k, t in enumerate(lines) if tag in t)


def run(kernel, args, executor, check=True, n=64):
    rep = simgpu.launch(kernel, 1, n, args, executor=executor, check=check, timing=False)
    return [] if rep.sanitizer is None else [f for f in rep.sanitizer.findings if f.tool == "initcheck"]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_read_of_unwritten_device_array_is_reported(executor):
    n = 64
    tmp, res = da.device_array(n), da.device_array(n)
    assert run(fill_half, (tmp, np.int64(n)), executor) == []
    found = run(use, (res, tmp, np.int64(n)), executor)
    assert len(found) == 1
    f = found[0]
    assert f.space == "global" and f.array == "'src'" and f.index == "[32]"
    assert tuple(f.thread) == (32, 0, 0) and tuple(f.block) == (0, 0, 0)
    assert f.count == 32
    assert "since it was allocated" in f.message
    if executor == "ir":
        assert f.loc.endswith(f":{_line(use)}")


@pytest.mark.parametrize("executor", EXECUTORS)
def test_read_modify_write_of_fresh_array_is_reported(executor):
    n = 64
    d = da.device_array(n)
    found = run(accumulate, (d, np.int64(n)), executor)
    assert len(found) == 1 and found[0].index == "[0]" and found[0].count == n
    # ... and once written by that launch, the next read is fine
    assert run(accumulate, (d, np.int64(n)), executor) == []


@pytest.mark.parametrize("executor", EXECUTORS)
def test_no_false_positive_where_something_wrote_it(executor):
    n = 64
    res = da.device_array(n)
    # a sanitized launch that writes everything
    a = da.device_array(n)
    assert run(fill, (a, np.int64(n)), executor) == []
    assert run(use, (res, a, np.int64(n)), executor) == []
    # a launch without the sanitizer: the whole argument counts as written (conservative)
    b = da.device_array(n)
    run(fill_half, (b, np.int64(n)), executor, check=False)
    assert run(use, (res, b, np.int64(n)), executor) == []
    # host copies: copy_to_device, to_device(to=), setitem of a slice and of the rest
    c = da.device_array(n)
    c.copy_to_device(np.ones(n))
    assert run(use, (res, c, np.int64(n)), executor) == []
    e = da.device_array(n)
    da.to_device(np.ones(n), to=e)
    assert run(use, (res, e, np.int64(n)), executor) == []
    g = da.device_array(n)
    g[:40] = 1.0
    g[40:] = np.arange(24.0)
    assert run(use, (res, g, np.int64(n)), executor) == []
    # arrays with initial contents are never tracked
    h = da.to_device(np.ones(n))
    assert run(use, (res, h, np.int64(n)), executor) == []
    assert run(use, (res, np.ones(n), np.int64(n)), executor) == []


@pytest.mark.parametrize("executor", EXECUTORS)
def test_views_share_their_allocation(executor):
    n = 64
    d = da.device_array(2 * n)
    res = da.device_array(n)
    assert run(fill, (d[:n], np.int64(n)), executor) == []          # the first half
    assert run(use, (res, d[:n], np.int64(n)), executor) == []
    found = run(use, (res, d[n:], np.int64(n)), executor)            # the second: unwritten
    assert len(found) == 1 and found[0].index == "[0]" and found[0].count == n
    # a strided view: every other element written by the host
    s = da.device_array(2 * n)
    s[::2] = 3.0
    assert run(use, (res, s[::2], np.int64(n)), executor) == []
    found = run(use, (res, s[1::2], np.int64(n)), executor)
    assert len(found) == 1 and found[0].count == n
    # a 2-d array written through two non-contiguous column views by the host, read whole
    # (numba's .T of a device array is a copy, not a view)
    m = da.device_array((8, 8))
    m[:, :4] = np.eye(8)[:, :4]
    m[:, 4:] = np.eye(8)[:, 4:]
    assert run(use, (res, m.reshape(64), np.int64(n)), executor) == []


def fill_left(m):
    i = cuda.threadIdx.x
    for j in range(m.shape[1] // 2):
        m[i, j] = 1.0


def row_sum(out, m):
    i = cuda.threadIdx.x
    s = 0.0
    for j in range(m.shape[1]):
        s += m[i, j]                # <- read
    out[i] = s


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_two_dimensional_layouts(executor, layout):
    if layout == "strided":
        base = da.device_array((8, 16))
        m = base[:, ::2]
    else:
        m = base = da.device_array((8, 8), order=layout)
    res = da.device_array(8)
    rep = simgpu.launch(fill_left, 1, 8, (m,), executor=executor, check=True, timing=False)
    assert rep.sanitizer.counts()["initcheck"] == 0
    rep = simgpu.launch(row_sum, 1, 8, (res, m), executor=executor, check=True, timing=False)
    found = [f for f in rep.sanitizer.findings if f.tool == "initcheck"]
    assert len(found) == 1 and found[0].array == "'m'" and found[0].index == "[0, 4]"
    assert tuple(found[0].thread) == (0, 0, 0)
    m.copy_to_device(np.ones((8, 8)))   # now all written (the strided view's gaps stay not)
    rep = simgpu.launch(row_sum, 1, 8, (res, m), executor=executor, check=True, timing=False)
    assert rep.sanitizer.counts()["initcheck"] == 0
    if layout == "strided":
        rep = simgpu.launch(row_sum, 1, 8, (res, base[:, 1::2]), executor=executor, check=True, timing=False)
        assert rep.sanitizer.counts()["initcheck"] == 1


def test_initmap_is_lazy():
    m = InitMap(1 << 30)
    assert m.bits is None and not m.complete
    m.mark(slice(0, 1 << 30))
    assert m.bits is None and m.complete
    m = InitMap(16)
    m.mark(slice(4, 8))
    assert m.read(slice(0, 16), 16).tolist() == [False] * 4 + [True] * 4 + [False] * 8
    m.mark_where(np.arange(8, 16), np.array([True, False] * 4))
    assert m.read(np.arange(8, 16), 8).tolist() == [True, False] * 4


# -- whole programs: `simgpu run --check` ------------------------------------------------------
PROGRAM = '''
import numpy as np
from numba import cuda


@cuda.jit
def fill_half(out, n):
    i = cuda.grid(1)
    if i < n // 2:
        out[i] = i * 2.0


@cuda.jit
def use(out, src, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = src[i] + 1.0


n = 64
res = cuda.device_array(n)
ok = cuda.device_array(2 * n)
ok[n:] = 1.0                        # the host writes half, a kernel the other half
fill_half[1, 64](ok[:n], np.int64(2 * n))
use[1, 64](res, ok[:n], np.int64(n))
use[1, 64](res, ok[n:], np.int64(n))
BUGGY
print("done", res.copy_to_host()[:2])
'''


@pytest.mark.skipif(not compiled_path_available()[0], reason="whole programs run numba's compiled PTX")
@pytest.mark.parametrize("buggy", [False, True])
def test_whole_program_names_the_source_line(tmp_path, buggy):
    p = tmp_path / "prog.py"
    bug = "tmp = cuda.device_array(n)\nfill_half[1, 64](tmp, np.int64(n))\nuse[1, 64](res, tmp, np.int64(n))"
    p.write_text(PROGRAM.replace("BUGGY", bug if buggy else ""))
    out = io.StringIO()
    rc = run_program(str(p), check=True, out=out)
    text = out.getvalue()
    if not buggy:
        assert rc == 0 and "ERROR SUMMARY: 0 errors" in text
        return
    assert rc == 1 and "ERROR SUMMARY: 1 error" in text
    assert "Uninitialized __global__ memory read of size 8 bytes of 'src'[32]" in text
    # numba compiled the kernels with line info: the finding names the source line, not PTX
    assert f"at {p}:17  `out[i] = src[i] + 1.0`" in text
    assert "PTX line" not in text


def test_strided_allocations_hold_their_whole_span():
    """device_array with explicit strides (device_array_like of a transposed view) used to get
    a buffer of max((n-1)*stride) bytes, not the sum: the array reached past it (heap
    corruption as soon as anything wrote all of it)."""
    host = np.zeros((6, 5)).T                  # shape (5, 6), strides (8, 48)
    d = da.device_array_like(host)
    lo, hi = np.lib.array_utils.byte_bounds(d._ary)
    buf = d._ary
    while isinstance(buf.base, np.ndarray):
        buf = buf.base
    blo, bhi = np.lib.array_utils.byte_bounds(buf)
    assert blo <= lo and hi <= bhi
    d.copy_to_device(np.ones((5, 6)))
    assert d.copy_to_host().sum() == 30
