"""Allocations as the CUDA driver makes them (issue 25 item 1): each device allocation takes its
size rounded up as cuMemAlloc rounds it on the H200 (validation/allocation/); a read or write
past an array's end but inside that rounding runs as on the GPU (reads see the bytes there,
poison if never written; writes land there), with a warning naming the array, line, thread and
block, and a memcheck finding under check=True; past the rounding it is a KernelError."""
import json
import os
import warnings

import numpy as np
import pytest
from numba import cuda, float64

import simgpu
from simgpu import KernelError
from simgpu.errors import SimGPUWarning
from simgpu.ptx.memory import driver_span

from compiled_path import compiled_path_available

pytestmark = pytest.mark.skipif(not compiled_path_available()[0], reason="needs numba-cuda and ptxas")
HERE = os.path.dirname(os.path.abspath(__file__))
MEASURED = os.path.join(HERE, "..", "validation", "allocation", "alloc.json")


TPB = 256
TILE = 258        # TPB + 2 (numba wants a literal shape)


def jacobi_halo(a, out, n):
    """A 1D Jacobi step with its tile and halo in shared memory: the last thread of the array
    loads the right halo a[n], 8 bytes past the end, which no output uses."""
    sh = cuda.shared.array(TILE, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < n:
        sh[t + 1] = a[i]
        if t == 0:
            sh[0] = a[i - 1] if i > 0 else a[i]
        if t == TPB - 1 or i == n - 1:
            sh[t + 2] = a[i + 1]            # <- HALO
    cuda.syncthreads()
    if i < n:
        out[i] = 0.5 * (sh[t] + sh[t + 2]) if 0 < i < n - 1 else sh[t + 1]


def blur_rows(img, out, rows, cols, use_tail):
    """Column sums of an image with a tail of `TAIL_ROWS` rows loaded past its end into shared
    memory, used only when use_tail (0 here): as an image blur's last rows."""
    sh = cuda.shared.array(TPB, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s = 0.0
    for r in range(rows):
        s += img[r * cols + i]
    sh[t] = img[rows * cols + i]            # <- TAIL
    cuda.syncthreads()
    if use_tail:
        s += sh[(t + 1) % TPB]
    out[i] = s


def write_past_end(a, out):
    i = cuda.grid(1)
    if i == 0:
        n = a.shape[0]
        a[n + 3] = 7.5                       # <- WRITE
        out[0] = a[n + 3]                    # <- READBACK
        out[1] = a[n + 4]                    # never written: poison


def _line(fn, tag):
    import inspect
    src, first = inspect.getsourcelines(fn)
    return first + next(k for k, s in enumerate(src) if f"<- {tag}" in s)


def _launch(*a, **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        rep = simgpu.launch(*a, timing=False, memory=False, **kw)
    return rep, [str(x.message) for x in w if issubclass(x.category, SimGPUWarning)]


def test_driver_span_is_the_spacing_measured_on_the_h200():
    """Consecutive cuMemAlloc allocations of one size sit driver_span(size) apart on the card."""
    rows = json.load(open(MEASURED))["allocations"]
    checked = 0
    for r in rows:
        d = r["deltas"]
        common = max(set(d), key=d.count)
        if common > 0 and d.count(common) >= 3:      # the sub-allocator's usual step
            assert driver_span(r["size"]) == common, r["size"]
            checked += 1
    assert checked >= 20


def test_jacobi_halo_read_8_bytes_past_the_end_runs_with_the_warning():
    n = 1000                                # 8000 B: cuMemAlloc reserves 8192
    a = np.random.default_rng(1).random(n)
    out = np.zeros(n)
    rep, w = _launch(jacobi_halo, 4, 256, (a, out, n))
    want = np.empty(n)
    want[0] = a[0]
    want[1:-1] = 0.5 * (a[:-2] + a[2:])
    want[-1] = a[-1]
    np.testing.assert_array_equal(out, want)
    (msg,) = w
    assert f"test_alloc_rounding.py:{_line(jacobi_halo, 'HALO')}" in msg
    assert "array 'a' (8000 bytes) at byte 8000" in msg and "8192 bytes" in msg
    assert "thread (231, 0, 0) in block (3, 0, 0)" in msg      # i = 999 reads a[1000]


def test_check_true_files_the_overrun_as_a_memcheck_finding():
    n = 1000
    a, out = np.ones(n), np.zeros(n)
    rep, _ = _launch(jacobi_halo, 4, 256, (a, out, n), check=True)
    (f,) = rep.sanitizer.findings
    assert f.tool == "memcheck" and f.kind == "invalid read" and f.array == "a"
    assert f.loc.endswith(f"test_alloc_rounding.py:{_line(jacobi_halo, 'HALO')}")
    assert f.thread == (231, 0, 0) and f.block == (3, 0, 0)
    assert rep.sanitizer.errors == 1 and "fault" not in rep.extras


@pytest.mark.parametrize("rows,inside", [(48 + 1, True), (32, False)])
def test_a_24_kb_overrun_of_a_large_allocation(rows, inside):
    """Rows of 4096 float64 (32 KiB); the kernel reads 3072 columns of the row past the end
    (24 KiB).  49 rows (1.53 MiB) are rounded to 2 MiB by the driver: inside, it runs.  32 rows
    are 1 MiB exactly, which the driver does not round: a KernelError (on the card the read lands
    in whatever follows; simgpu leaves a gap there)."""
    cols = 3072
    img = np.ones(rows * cols)
    out = np.zeros(cols)
    args = (img, out, rows, cols, 0)
    if inside:
        _, w = _launch(blur_rows, cols // TPB, TPB, args)
        assert np.all(out == rows)
        (msg,) = w
        assert f":{_line(blur_rows, 'TAIL')}" in msg and "2097152 bytes" in msg
        assert f"at byte {rows * cols * 8} to {rows * cols * 8 + 24 * 1024 - 8}" in msg
    else:
        with pytest.raises(KernelError, match="past its rounding") as e:
            _launch(blur_rows, cols // TPB, TPB, args)
        assert f":{_line(blur_rows, 'TAIL')}" in str(e.value.loc)


def test_a_write_inside_the_rounding_lands_and_is_read_back():
    a, out = np.zeros(10), np.zeros(2)
    _, w = _launch(write_past_end, 1, 32, (a, out))
    assert out[0] == 7.5
    assert np.isnan(out[1]) and out[1:2].view(np.uint64)[0] == 0xFFFFFFFFFFFFFFFF   # poison
    assert np.all(a == 0)                   # the array itself is untouched
    assert any(f":{_line(write_past_end, 'WRITE')}" in m and "write of array 'a'" in m for m in w)


def test_past_the_rounding_is_a_kernel_error_at_the_line():
    a, out = np.zeros(1024), np.zeros(1024)     # 8192 B: no rounding to spare
    with pytest.raises(KernelError, match="past its rounding") as e:
        _launch(jacobi_halo, 4, TPB, (a, out, 1024))
    assert f":{_line(jacobi_halo, 'HALO')}" in str(e.value.loc)
    assert e.value.thread == (255, 0, 0) and e.value.block == (3, 0, 0)


def test_a_device_arrays_padding_persists_between_launches():
    """simgpu.install()'s device arrays keep their padding, as the card keeps the bytes: a
    later launch reads what an earlier one wrote past the end."""
    with simgpu.installed():
        d = cuda.to_device(np.zeros(10))
        k = cuda.jit(write_past_end)
        o1, o2 = cuda.to_device(np.zeros(2)), cuda.to_device(np.zeros(2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SimGPUWarning)
            k[1, 32](d, o1)
            k2 = cuda.jit(read_past_end)
            k2[1, 32](d, o2)
        assert o2.copy_to_host()[0] == 7.5
        assert np.all(d.copy_to_host() == 0)


def read_past_end(a, out):
    if cuda.grid(1) == 0:
        out[0] = a[a.shape[0] + 3]
