"""Arrays of every layout as kernel arguments (runtime/binding.py, ptx/args.py).

numba compiles a kernel for the layout of the array it is given ('C', 'F', or 'A' with
strides); the compiled path must hand the kernel that very array -- its bytes at a device
address, element 0's address, its own strides -- or an 'F' kernel reads a C-order copy
transposed.  The IR path indexes F-contiguous arrays and strided views in place with their
element strides.  Every result is compared with numpy's.
"""
import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu.ptx.args import byte_span, flatten_args  # noqa: E402
from simgpu.runtime.binding import DeviceAddresses, global_array  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402


def fill2d(a, b):
    i, j = cuda.grid(2)
    if i < a.shape[0] and j < a.shape[1]:
        a[i, j] = b[i, j] * 2 + i * 100 + j


def fill3d(a):
    i, j, k = cuda.threadIdx.x, cuda.threadIdx.y, cuda.threadIdx.z
    if i < a.shape[0] and j < a.shape[1] and k < a.shape[2]:
        a[i, j, k] = i * 100 + j * 10 + k


LAYOUTS = {
    "C": lambda: np.zeros((5, 7), np.float32),
    "F": lambda: np.asfortranarray(np.zeros((5, 7), np.float32)),
    "transpose": lambda: np.zeros((7, 5), np.float32).T,
    "steps": lambda: np.zeros((10, 21), np.float32)[::2, ::3],
    "negative": lambda: np.zeros((5, 9), np.float32)[::-1, 1:8],
}


def _expected(b):
    return b * 2 + np.arange(5)[:, None] * 100 + np.arange(7)[None, :]


def _source():
    return np.asfortranarray(np.arange(35, dtype=np.float32).reshape(5, 7) - 3)


# -- in place, without running anything ------------------------------------------------------
def test_byte_span_of_strided_views():
    base = np.arange(60, dtype=np.int32).reshape(6, 10)
    for view in (base[::2, 1::3], base[::-1, ::-2], base.T[2:, :4]):
        span, off = byte_span(view)
        assert np.shares_memory(span, base)
        first = view.__array_interface__["data"][0]
        assert span.__array_interface__["data"][0] + off == first
        for idx in np.ndindex(view.shape):      # every element lies inside the span
            o = off + sum(i * s for i, s in zip(idx, view.strides))
            assert 0 <= o <= span.nbytes - 4
            assert span[o:o + 4].view(np.int32)[0] == view[idx]


def test_flatten_args_passes_the_arrays_own_strides():
    a = np.zeros((4, 6), np.float64)[::-1, ::2]
    values, memory, copies = flatten_args([a])
    assert copies == []
    data, shape, strides = int(values[4]), [int(v) for v in values[5:7]], [int(v) for v in values[7:9]]
    assert shape == [4, 3] and strides == list(a.strides)
    assert data == memory.bases[0] + 3 * 48        # element 0 is the last row of the buffer


@pytest.mark.parametrize("compiled", [False, True])
def test_f_order_and_views_stay_in_place(compiled):
    for name in ("F", "transpose", "steps"):
        a = LAYOUTS[name]()
        h = global_array("a", a, a, DeviceAddresses(), compiled=compiled)
        assert h.work is a, name      # no copy: the kernel works on the user's array
        if not compiled and name == "F":
            assert h.elem_strides == (1, 5)


def test_ir_path_copies_negative_strides_and_writes_back():
    a = LAYOUTS["negative"]()
    h = global_array("a", a, a, DeviceAddresses())
    assert h.work is not a and h.work.flags.c_contiguous


# -- both paths, compared with numpy -----------------------------------------------------------
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("executor", ["ir", "ptx"])
def test_layouts_on_both_paths(executor, layout):
    if executor == "ptx":
        skip_without_compiled_path()
    a, b = LAYOUTS[layout](), _source()
    base = a.base if a.base is not None else a
    base[...] = -12345                          # a sentinel no result takes
    simgpu.launch(cuda.jit(fill2d), (1, 1), (8, 8), (a, b), executor=executor, timing=False)
    np.testing.assert_array_equal(a, _expected(b))
    assert np.count_nonzero(base != -12345) == a.size       # nothing outside the view written


def test_fill3d_fortran_on_the_host_path():
    """numba-cuda's test_fill3d_threadidx: an F-ordered 3-D array through cuda.to_device."""
    skip_without_compiled_path()
    with simgpu.installed():
        k = cuda.jit(fill3d)
        for order in ("C", "F"):
            host = np.zeros((3, 4, 5), np.int32, order=order)
            d = cuda.to_device(host)
            k[1, (3, 4, 5)](d)
            np.testing.assert_array_equal(d.copy_to_host(), np.fromfunction(
                lambda i, j, k: i * 100 + j * 10 + k, (3, 4, 5), dtype=np.int32))
            h2 = np.zeros((4, 5, 3), np.int32).transpose(2, 0, 1)     # an 'A' view of numpy's
            k[1, (3, 4, 5)](h2)
            np.testing.assert_array_equal(h2, np.fromfunction(
                lambda i, j, k: i * 100 + j * 10 + k, (3, 4, 5), dtype=np.int32))
