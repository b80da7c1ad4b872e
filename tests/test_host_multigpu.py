"""Several GPUs in the modelled system (``simgpu.install(devices=N)``, SIMGPU_DEVICES): numba's
``cuda.gpus``, ``select_device``, ``with cuda.gpus[i]``, per-device memory, default streams and
peer access.  Each test installs and uninstalls."""
from __future__ import annotations

import threading

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu import settings  # noqa: E402
from simgpu.errors import LaunchError, SimGPUError  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()


@cuda.jit
def add_scalar(arr, val):
    i = cuda.grid(1)
    if i < arr.size:
        arr[i] += val


@pytest.fixture
def two():
    with simgpu.installed(memory=False, sass=False, devices=2) as s:
        yield s


def test_one_gpu_by_default_and_a_clear_error_past_it():
    with simgpu.installed(memory=False, sass=False):
        assert len(cuda.gpus) == 1
        with pytest.raises(SimGPUError, match="has 1 GPU .*SIMGPU_DEVICES"):
            cuda.select_device(1)


def test_gpus_contexts_and_arrays_follow_the_current_device(two):
    assert len(cuda.gpus) == 2 and [d.id for d in cuda.list_devices()] == [0, 1]
    h = np.arange(10, dtype=np.float32)
    with cuda.gpus[0]:
        a0 = cuda.to_device(h)
    with cuda.gpus[1]:
        assert cuda.get_current_device().id == 1 and cuda.gpus.current.id == 1
        free1, total = cuda.current_context().get_memory_info()
        a1 = cuda.to_device(h)
        assert cuda.current_context().get_memory_info()[0] == free1 - a1.alloc_size
        add_scalar[1, 10](a1, 2)
    assert cuda.get_current_device().id == 0           # the `with` restored device 0
    with cuda.gpus[0]:
        add_scalar[1, 10](a0, 1)
    np.testing.assert_equal(a0.copy_to_host(), h + 1)
    np.testing.assert_equal(a1.copy_to_host(), h + 2)
    cuda.select_device(1)
    assert cuda.get_current_device().id == 1
    cuda.select_device(0)


def test_another_gpus_array_needs_peer_access(two):
    h = np.arange(8, dtype=np.int64)
    with cuda.gpus[1]:
        remote = cuda.to_device(h)
    with cuda.gpus[0]:
        ctx = cuda.current_context()
        assert ctx.can_access_peer(1) and not ctx.can_access_peer(0)
        with pytest.raises(LaunchError, match="'arr' is a device array on GPU 1.*runs on GPU 0"):
            add_scalar[1, 8](remote, 1)
        ctx.enable_peer_access(cuda.gpus[1].get_primary_context())
        add_scalar[1, 8](remote, 1)
    np.testing.assert_equal(remote.copy_to_host(), h + 1)


def test_peer_copy_between_gpus(two):
    h = np.arange(10, dtype=np.float32)
    with cuda.gpus[0]:
        src = cuda.to_device(h)
    with cuda.gpus[1]:
        dst = cuda.to_device(np.zeros_like(h))
    with cuda.gpus[0]:
        dst.copy_to_device(src)
        np.testing.assert_equal(dst.copy_to_host(), h)


def test_each_gpu_has_its_own_default_stream_clock(two):
    with cuda.gpus[0]:
        s0 = cuda.default_stream()
    with cuda.gpus[1]:
        s1 = cuda.default_stream()
    assert s0 is not s1
    assert s0 is cuda.default_stream()


def test_the_current_device_is_per_host_thread(two):
    seen = []
    with cuda.gpus[1]:
        t = threading.Thread(target=lambda: seen.append(cuda.get_current_device().id))
        t.start()
        t.join()
        assert cuda.get_current_device().id == 1
    assert seen == [0]          # a new thread starts on the selected device, not this thread's `with`


def test_the_devices_setting_is_read_and_checked(monkeypatch):
    monkeypatch.setenv("SIMGPU_DEVICES", "3")
    settings.reload()
    try:
        with simgpu.installed(memory=False, sass=False):
            assert len(cuda.gpus) == 3
        monkeypatch.setenv("SIMGPU_DEVICES", "two")
        settings.reload()
        with pytest.raises(SimGPUError, match="SIMGPU_DEVICES"):
            settings.current()
    finally:
        monkeypatch.delenv("SIMGPU_DEVICES")
        settings.reload()


def test_a_mixed_system_compiles_and_models_each_gpu_as_itself():
    with simgpu.installed(gpu=["H200", "A100"], memory=False, sass=False) as s:
        assert [d.compute_capability for d in cuda.gpus] == [(9, 0), (8, 0)]
        a = np.arange(6, dtype=np.float32)
        with cuda.gpus[1]:
            d = cuda.to_device(a)
            add_scalar[1, 6](d, 1)
            assert cuda.get_current_device().compute_capability == (8, 0)
            np.testing.assert_equal(d.copy_to_host(), a + 1)
        assert s.launches[-1].report.gpu.name.startswith("A100")
        assert s.gpu.name == "H200"                    # back on device 0
