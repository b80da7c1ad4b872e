"""CUDA IPC on the modelled GPU (issue 25 item 4; simgpu/host/ipc.py): a handle pickled to
another process opens the same bytes there, live in both directions; within one process it
gives the allocation itself."""
from __future__ import annotations

import concurrent.futures
import multiprocessing as mp
import pickle
import sys

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
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="CUDA IPC: Linux only")


@pytest.fixture
def sim():
    with simgpu.installed(memory=False, sass=False) as s:
        yield s


def test_a_view_made_before_export_shares_the_exported_bytes(sim):
    d = cuda.to_device(np.arange(10, dtype=np.int64))
    view = d[2:6]
    h = d.get_ipc_handle()
    with h as same:                              # opened in the exporting process: the allocation
        assert same.__cuda_array_interface__["data"][0] == d.__cuda_array_interface__["data"][0]
    view.copy_to_device(np.full(4, -1, np.int64))
    np.testing.assert_equal(d.copy_to_host(), [0, 1, -1, -1, -1, -1, 6, 7, 8, 9])


def test_open_twice_and_bad_handles_are_errors(sim):
    d = cuda.to_device(np.arange(4, dtype=np.float32))
    ipch = cuda.current_context().get_ipc_handle(d.gpu_data)
    again = pickle.loads(pickle.dumps(ipch))
    assert again.base is None and again.handle.reserved == ipch.handle.reserved and len(again.handle.reserved) == 64
    again.open()
    with pytest.raises(ValueError, match="already opened"):
        again.open()
    again.close()
    with pytest.raises(ValueError, match="not an IPC memory handle"):
        with cuda.open_ipc_array(b"\0" * 64, shape=4, dtype=np.float32):
            pass
    m = cuda.managed_array(4, np.float32)
    with pytest.raises(SimGPUError, match="managed array cannot be shared"):
        m.get_ipc_handle()


def test_another_process_reads_and_writes_the_same_memory(sim):
    d = cuda.to_device(np.arange(16, dtype=np.int32))
    view = d[4:12]                               # a slice: the handle carries its offset
    h = view.get_ipc_handle()
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as ex:
        seen = ex.submit(_child_add_one, h).result(timeout=600)
    np.testing.assert_equal(seen, np.arange(4, 12) + 1)
    np.testing.assert_equal(d.copy_to_host(), np.r_[np.arange(4), np.arange(4, 12) + 1, np.arange(12, 16)])


def _child_add_one(h):
    import ipc_child
    return ipc_child.add_one_in_child(h)
