"""numba.cuda's host semantics that numba-cuda's own tests check, on simgpu's host layer:
device arrays' ``gpu_data`` and numba's DeviceNDArray constructor, the CUDA array interface
(produce and consume, streams and their synchronisation), numba's copying transpose,
``np.asarray`` of a device array, pickled launch configurations, kernel properties from the
cubin, launch bounds, forall's block size and the implicit-copy warning.

Each expectation is numba-cuda's behaviour on a GPU (numba_cuda/numba/cuda/cudadrv/
devicearray.py, api.py, dispatcher.py, kernels/transpose.py)."""
import pickle
import warnings
from unittest.mock import patch

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda, types  # noqa: E402
from numba.cuda.np.numpy_support import carray  # noqa: E402

import simgpu  # noqa: E402
from simgpu.host import kernels as host_kernels  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()


@pytest.fixture
def sim():
    with simgpu.installed(memory=False, sass=False) as s:
        yield s


class Foreign:
    """Another library's array: only a __cuda_array_interface__ (numba.cuda.testing.ForeignArray)."""

    def __init__(self, arr):
        self._arr = arr
        self.__cuda_array_interface__ = arr.__cuda_array_interface__


def test_gpu_data_is_the_arrays_device_memory(sim):
    d = cuda.to_device(np.arange(10, dtype=np.float32))
    ptr = d.__cuda_array_interface__["data"][0]
    assert int(d.gpu_data.device_pointer) == ptr == d.device_ctypes_pointer.value
    assert d.view(np.int32).gpu_data == d.gpu_data          # a view of the same bytes
    assert int(d[3:].gpu_data.device_pointer) == ptr + 12

    @cuda.jit(types.void(types.CPointer(types.float32)))
    def add(p):
        a = carray(p, (1,), dtype=types.float32)
        a[0] += 1.5

    add[1, 1](int(d[2:].gpu_data.device_pointer))           # a raw pointer into the allocation
    np.testing.assert_array_equal(d.copy_to_host()[:4], [0, 1, 3.5, 3])


def test_numbas_constructor_views_gpu_data(sim):
    from numba.cuda.cudadrv import devicearray
    d = cuda.to_device(np.arange(6, dtype=np.float64))
    b = devicearray.DeviceNDArray(shape=(3, 6), strides=(0, 8), dtype=d.dtype, gpu_data=d.gpu_data)
    np.testing.assert_array_equal(b.copy_to_host(), np.broadcast_to(np.arange(6.0), (3, 6)))
    assert b._numba_type_.layout == "A"                       # broadcast: numba types it 'A'
    new = devicearray.DeviceNDArray((2, 3), (24, 8), np.float32)   # a new allocation of the strides' span
    assert new.shape == (2, 3) and new.gpu_data.size == 44 and new.device_ctypes_pointer.value
    host = devicearray.from_array_like(np.zeros((4, 5), np.int16))
    assert isinstance(host, cuda.cudadrv.devicearray.DeviceNDArray) and host.strides == (10, 2)


def test_array_interface_as_numba_produces_it(sim):
    assert cuda.device_array(0).__cuda_array_interface__["data"][0] == 0     # NULL for no elements
    h = np.arange(10.0)
    c = cuda.to_device(h)
    ci, hi = c.__cuda_array_interface__, h.__array_interface__
    rc, rh = c[::-1].__cuda_array_interface__, h[::-1].__array_interface__
    assert rc["data"][0] - ci["data"][0] == rh["data"][0] - hi["data"][0] == 72   # first element
    assert rc["strides"] == (-8,) and ci["strides"] is None
    assert ci["stream"] is None and ci["version"] == 3
    s = cuda.stream()
    assert cuda.device_array(4, stream=s).__cuda_array_interface__["stream"] == int(s.handle)
    m = cuda.mapped_array(4, stream=s)
    assert m.__cuda_array_interface__["stream"] == int(s.handle)
    assert m[1:].__cuda_array_interface__["data"][0] == m.__cuda_array_interface__["data"][0] + 8
    with pytest.raises(NotImplementedError, match="negative strides"):
        c[::-1].copy_to_host()


def test_consuming_an_interface_takes_and_synchronizes_its_stream(sim):
    from numba.cuda.cudadrv import driver
    from numba.cuda.tests.support import override_config
    s = cuda.stream()
    d = cuda.device_array(10, stream=s)
    with patch.object(driver.Stream, "synchronize", return_value=None) as sync:
        c = cuda.as_cuda_array(Foreign(d))
    sync.assert_called_once_with()
    assert c.stream.external and int(c.stream.handle) == int(s.handle)
    assert c.device_ctypes_pointer.value == d.device_ctypes_pointer.value
    assert cuda.as_cuda_array(Foreign(cuda.device_array(3))).stream == 0
    with override_config("CUDA_ARRAY_INTERFACE_SYNC", False):
        with patch.object(driver.Stream, "synchronize", return_value=None) as sync:
            cuda.as_cuda_array(Foreign(d))
        sync.assert_not_called()

    @cuda.jit
    def f(x, y):
        pass

    d2 = cuda.device_array(10, stream=cuda.stream())
    with patch.object(driver.Stream, "synchronize", return_value=None) as sync:
        f[1, 1](Foreign(d), Foreign(d2))                    # a launch consumes both
    assert sync.call_count == 2
    face = dict(d.__cuda_array_interface__, mask=d)
    with pytest.raises(NotImplementedError, match="Masked arrays"):
        cuda.from_cuda_array_interface(face)
    assert isinstance(cuda.external_stream(0x1234), driver.Stream)


def test_transpose_copies_with_numbas_kernel(sim):
    a = np.arange(120, dtype=np.int64).reshape(10, 12)
    d = cuda.to_device(a)
    t = d[::2, ::2].T
    assert t.shape == (6, 5) and t.strides == (40, 8)       # a new C-contiguous array
    np.testing.assert_array_equal(t.copy_to_host(), a[::2, ::2].T)
    assert sim.launches[-1].kernel == "kernel"              # numba.cuda.kernels.transpose's
    assert d.transpose((0, 1)) is d
    with pytest.raises(NotImplementedError, match="non-2D"):
        cuda.to_device(np.arange(3)).T


def test_asarray_copies_to_the_host(sim):
    d = cuda.to_device(np.arange(5, dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(d), np.arange(5))
    assert np.asarray(d, dtype=np.float64).dtype == np.float64
    with pytest.raises(ValueError, match="copy=False"):
        np.asarray(d, copy=False)


def test_pickled_launch_configuration_launches(sim):
    @cuda.jit
    def inc(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    x = cuda.to_device(np.zeros(8, np.int32))
    for config in (inc[1, 8], inc[1, 8, cuda.stream()]):
        again = pickle.loads(pickle.dumps(config))
        again(x)
    np.testing.assert_array_equal(x.copy_to_host(), np.full(8, 2))


def test_const_mem_size_and_launch_bounds(sim):
    from cuda.core._utils.cuda_utils import CUDAError
    arr = np.arange(32, dtype=np.int64)

    @cuda.jit(types.void(types.int64[::1]))
    def use_const(x):
        c = cuda.const.array_like(arr)
        i = cuda.grid(1)
        x[i] = c[i]

    assert use_const.get_const_mem_size() >= arr.nbytes          # specialized: one overload

    @cuda.jit(launch_bounds=128)
    def bounded():
        pass

    bounded[1, 128]()
    with pytest.raises(CUDAError, match="CUDA_ERROR_INVALID_VALUE"):
        bounded[1, 256]()
    kernel = next(iter(bounded.overloads.values()))
    assert kernel.max_threads_per_block == 128
    assert host_kernels.max_potential_block_size(kernel) == 128


def test_forall_block_size_from_occupancy(sim):
    @cuda.jit
    def fill(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = i

    x = cuda.device_array(5000, np.int32)
    fill.forall(x.size)(x)
    np.testing.assert_array_equal(x.copy_to_host(), np.arange(5000))
    # a small kernel fills an H200 SM (2048 threads) with 1024-thread blocks, as the CUDA
    # occupancy API's search picks; numba's grid is then 5 blocks
    assert sim.launches[-1].block[0] == 1024 and sim.launches[-1].grid[0] == 5


def test_implicit_copy_warning(sim):
    @cuda.jit
    def one(r):
        r[0] = 1

    with pytest.warns(Warning, match="Host array used in CUDA kernel"):
        one[1, 1](np.zeros(1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for a in (cuda.device_array(1), cuda.mapped_array(1)):
            one[1, 1](a)
    assert not [w for w in caught if "Host array" in str(w.message)]


def test_scalar_arguments_convert_as_numbas_ctypes(sim):
    @cuda.jit("void(int32[::1], int32, int32)")
    def add(r, a, b):
        r[0] = a + b

    r = np.zeros(1, np.int32)
    add[1, 1](r, np.int64(2**32 + 5), 7)               # c_int32 wraps
    assert r[0] == 12
    with pytest.raises(TypeError):                      # c_int32(12.3): numba refuses a float
        add[1, 1](r, 12.3, 45.6)


def test_device_array_argument_is_at_its_own_address():
    """A view d[1:33] of a float32 device array starts 4 bytes into its allocation: a warp
    reading 32 floats from it touches 5 sectors, as on the GPU (placed afresh, 512-byte
    aligned, the memory model counted 4)."""
    with simgpu.installed() as s:
        @cuda.jit
        def copy(x, y):
            i = cuda.grid(1)
            y[i] = x[i]

        d = cuda.to_device(np.arange(64, dtype=np.float32))
        out = cuda.device_array(32, np.float32)
        copy[1, 32](d[1:33], out)
        np.testing.assert_array_equal(out.copy_to_host(), np.arange(1, 33))
        assert s.launches[-1].report.metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 5


def test_a_forked_child_cannot_use_the_parents_device(sim):
    import concurrent.futures
    import multiprocessing as mp
    from numba.cuda.cudadrv.error import CudaDriverError
    cuda.current_context()                          # the device is in use in this process
    with concurrent.futures.ProcessPoolExecutor(mp_context=mp.get_context("fork")) as exe:
        future = exe.submit(cuda.to_device, np.arange(1))
    with pytest.raises(CudaDriverError, match="CUDA initialized before forking"):
        future.result()
