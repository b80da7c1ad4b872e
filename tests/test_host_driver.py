"""The driver surface numba's host code calls, on the modelled GPU (issue 25 item 4):
copies through the driver object's entry points, numba's deallocation queue, NRT's memory
system and its allocation statistics, memalloc.  Each test installs and uninstalls."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu.errors import SimGPUError  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()


@pytest.fixture
def sim():
    with simgpu.installed(memory=False, sass=False) as s:
        yield s


class Refused(Exception):
    pass


def test_copies_go_through_the_drivers_entry_points_and_a_replacement_sees_them(sim):
    from numba.cuda.cudadrv.driver import driver
    seen = []
    d = cuda.to_device(np.arange(6, dtype=np.int32))
    original = driver.cuMemcpyDtoH

    def spy(dst, src, size):
        seen.append(size)
        return original(dst, src, size)

    driver.cuMemcpyDtoH = spy
    try:
        assert d.copy_to_host().tolist() == list(range(6))
    finally:
        del driver.cuMemcpyDtoH
    assert seen == [24]

    def refuse(*args):
        raise Refused("no transfers")

    driver.cuMemcpyHtoD = refuse
    try:
        with pytest.raises(Refused):
            cuda.to_device(np.zeros(3))
    finally:
        del driver.cuMemcpyHtoD
    assert cuda.to_device(np.ones(2)).copy_to_host().tolist() == [1.0, 1.0]


def test_device_to_device_copy_and_memset_by_address(sim):
    from numba.cuda.cudadrv.driver import driver
    a = cuda.to_device(np.arange(4, dtype=np.int64))
    b = cuda.device_array(4, np.int64)
    b.copy_to_device(a)
    assert b.copy_to_host().tolist() == [0, 1, 2, 3]
    driver.cuMemsetD8(b.device_ctypes_pointer, 0xFF, 8)
    assert b.copy_to_host().tolist() == [-1, 1, 2, 3]
    with pytest.raises(SimGPUError, match="not inside one allocation"):
        driver.cuMemsetD8(b.device_ctypes_pointer.value + 24, 0, 16)
    with pytest.raises(SimGPUError, match="cuCtxCreate"):
        driver.cuCtxCreate


def test_the_deallocation_queue_follows_numbas_rules(sim):
    deallocs = cuda.current_context().memory_manager.deallocations
    deallocs.clear()
    assert len(deallocs) == 0
    d = cuda.to_device(np.arange(100))
    view = cuda.as_cuda_array(d)
    del d
    assert len(deallocs) == 0           # the view keeps the allocation
    del view
    assert len(deallocs) == 1
    deallocs.clear()
    for _ in range(10):
        cuda.device_array(4)
    assert len(deallocs) == 10
    cuda.device_array(4)                # the 11th: over CUDA_DEALLOCS_COUNT, flushed
    assert len(deallocs) == 0
    with cuda.current_context().defer_cleanup():
        for _ in range(12):
            cuda.device_array(4)
        assert len(deallocs) == 12      # deferred: not flushed
    deallocs.clear()
    assert len(deallocs) == 0


def test_memalloc_gives_device_memory(sim):
    mem = cuda.current_context().memalloc(16)
    assert mem.size == 16 and mem.device_pointer > 0
    arr = cuda.devicearray.DeviceNDArray((2,), None, np.int64, gpu_data=mem)
    arr.copy_to_device(np.array([5, 7]))
    assert arr.copy_to_host().tolist() == [5, 7]


def test_nrt_statistics_are_counted_by_the_kernels_own_nrt_code(sim):
    from numba.cuda import config
    from numba.cuda.memory_management import rtsys
    old = config.CUDA_ENABLE_NRT, config.CUDA_NRT_STATS
    config.CUDA_ENABLE_NRT, config.CUDA_NRT_STATS = True, True
    try:
        rtsys.memsys_enable_stats()
        assert rtsys.memsys_stats_enabled()
        before = rtsys.get_allocation_stats()

        @cuda.jit
        def k(out):
            a = np.zeros(4, dtype=np.float64)
            b = np.ones(3, dtype=np.float64)
            a[1] = 3.0
            out[0] = a.sum() + b.sum()

        out = cuda.to_device(np.zeros(1))
        k[1, 1](out)
        k[1, 1](out)
        assert out.copy_to_host()[0] == 6.0
        after = rtsys.get_allocation_stats()
        assert after.alloc - before.alloc == 4      # two arrays, two launches
        assert after.free - before.free == 4
        assert after.mi_alloc - before.mi_alloc == 4
        rtsys.memsys_disable_stats()
        assert not rtsys.memsys_stats_enabled()
        k[1, 1](out)                                # statistics off: not counted
        rtsys.memsys_enable_stats()
        assert rtsys.get_allocation_stats().alloc == after.alloc
    finally:
        rtsys.memsys_disable_stats()
        config.CUDA_ENABLE_NRT, config.CUDA_NRT_STATS = old
