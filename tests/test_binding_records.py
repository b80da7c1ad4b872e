"""Record (structured dtype) arguments on the compiled path (runtime/ptx_binding.py).

numba-cuda passes a record array as an array of structured items (data pointer, shape,
strides) and a single record by pointer to its bytes on the device (``_prepare_args``:
``wrap_arg(val).to_device(...)``, ``devrec.ptr``); the kernel's loads and stores at the fields'
offsets must reach the user's record.  The IR path refuses records with a clear error.
"""
import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu.errors import ArgumentError  # noqa: E402
from simgpu.ptx.args import flatten_args  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

REC = np.dtype([("a", np.int16), ("b", np.float32), ("c", np.complex64, (2,)), ("d", np.int8)],
               align=True)


def set_record(r, v):
    r.b = v
    r.c[1] = r.a + 1j
    r.d = r.a - 1


def set_items(ra, v):
    i = cuda.grid(1)
    if i < ra.shape[0]:
        ra[i].b = v * i + ra[i].a
        ra[i].c[0] = 1j * i


def read_record(out, r):
    out[0] = r.a + r.b + r.c[1].real + r.d


def _records(n):
    arr = np.zeros(n, REC)
    arr["a"] = np.arange(n) + 4
    arr["b"] = np.arange(n) * 0.5
    arr["c"][:, 1] = np.arange(n) * 2 + 0.25
    arr["d"] = -np.arange(n)
    return arr


def _same(got, want):
    """Field by field (numpy's copy of an aligned record leaves its padding unset)."""
    for f in REC.names:
        np.testing.assert_array_equal(got[f], want[f], err_msg=f)


def test_a_record_is_passed_by_pointer():
    arr = _records(3)
    values, memory, _ = flatten_args([arr[1], 2.0])
    assert len(values) == 2 and values[0].dtype == np.uint64
    assert int(values[0]) == memory.bases[0]
    assert bytes(memory.bufs[0]) == arr[1].tobytes()


@pytest.mark.parametrize("kind", ["void", "record"])
def test_scalar_record_written_in_place(kind):
    skip_without_compiled_path()
    arr = _records(3)
    host = arr if kind == "void" else arr.view(np.recarray)
    expect = arr.copy()
    expect[1]["b"], expect[1]["c"][1], expect[1]["d"] = 2.5, 5 + 1j, 4
    simgpu.launch(cuda.jit(set_record), 1, 1, (host[1], 2.5), executor="ptx", timing=False)
    _same(arr, expect)                                # only record 1 changed


def test_scalar_record_read():
    skip_without_compiled_path()
    arr, out = _records(3), np.zeros(1, np.float64)
    simgpu.launch(cuda.jit(read_record), 1, 1, (out, arr[2]), executor="ptx", timing=False)
    r = arr[2]
    assert out[0] == np.float64(r["a"] + np.float64(r["b"]) + np.float64(r["c"][1].real) + r["d"])


@pytest.mark.parametrize("step", [1, 2, -1])
def test_record_array(step):
    skip_without_compiled_path()
    arr = _records(8)
    view = arr[::step]
    expect = arr.copy()
    ev = expect[::step]
    for i in range(len(ev)):
        ev[i]["b"] = np.float32(1.5 * i + ev[i]["a"])
        ev[i]["c"][0] = 1j * i
    simgpu.launch(cuda.jit(set_items), 1, 32, (view, 1.5), executor="ptx", timing=False)
    _same(arr, expect)


def test_records_on_the_host_path():
    """numba.cuda's launch (simgpu.install()): a record by pointer, a record array; cuda.In is
    never copied back (test_retrieve_autoconverted_arrays)."""
    skip_without_compiled_path()
    with simgpu.installed():
        k = cuda.jit(set_record)
        arr = _records(2)
        k[1, 1](arr[0], 3.0)
        assert arr[0]["b"] == 3.0 and arr[0]["d"] == 3 and arr[1]["b"] == 0.5
        ka = cuda.jit(set_items)
        arr = _records(4)
        before = arr.copy()
        ka[1, 32](cuda.In(arr), 1.0)
        _same(arr, before)
        ka[1, 32](cuda.InOut(arr), 1.0)
        assert list(arr["b"]) == [4.0, 6.0, 8.0, 10.0]


def test_ir_path_refuses_record_arrays_clearly():
    def copy_a(out, ra):
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = ra.shape[0]        # the frontend refuses field access on its own
    with pytest.raises(ArgumentError, match="record arrays.*IR path.*executor='ptx'"):
        simgpu.launch(copy_a, 1, 32, (np.zeros(3), _records(3)), executor="ir", timing=False)
