"""Shared and local memory start poisoned (0xFF: NaN floats, -1 integers), never zeros, on
both paths; poison= picks the byte or zeros.  The refused-but-correct barrier pattern runs
without the sanitizer too.  initcheck on local memory."""
import numpy as np
import pytest

from simgpu._compat import patch_numpy_for_numba

patch_numpy_for_numba()

from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu.errors import LaunchError  # noqa: E402
from simgpu.sass.toolchain import compiled_path_available  # noqa: E402

EXECUTORS = ["ir", pytest.param("ptx", marks=pytest.mark.skipif(
    not compiled_path_available()[0], reason="needs numba-cuda and ptxas"))]


def read_shared(outf, outi):
    sf = cuda.shared.array(4, np.float32)
    si = cuda.shared.array(4, np.int32)
    t = cuda.threadIdx.x
    outf[t] = sf[t]
    outi[t] = si[t]


def read_local(out, k):
    a = cuda.local.array(8, np.float64)
    a[0] = 1.0
    out[cuda.threadIdx.x] = a[k]


def falloff(a, out, n):
    s = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 32 + t
    if i < n:
        s[t] = a[i]
        cuda.syncthreads()
        out[i] = s[(t + 1) % 32] if i + 1 < n else s[t]


@pytest.mark.parametrize("executor", EXECUTORS)
def test_shared_memory_starts_as_nan_and_minus_one(executor):
    f, i = np.zeros(4, np.float32), np.zeros(4, np.int32)
    simgpu.launch(read_shared, 1, 4, (f, i), executor=executor, timing=False)
    assert np.isnan(f).all() and (i == -1).all()


@pytest.mark.parametrize("executor", EXECUTORS)
def test_poison_byte_is_configurable(executor):
    f, i = np.zeros(4, np.float32), np.zeros(4, np.int32)
    simgpu.launch(read_shared, 1, 4, (f, i), executor=executor, timing=False, poison=0xCD)
    assert (i == np.int32(-842150451)).all()                # 0xCDCDCDCD
    simgpu.launch(read_shared, 1, 4, (f, i), executor=executor, timing=False, poison=None)
    assert (f == 0).all() and (i == 0).all()


def test_bad_poison_is_a_launch_error():
    with pytest.raises(LaunchError, match="poison"):
        simgpu.launch(read_shared, 1, 4, (np.zeros(4, np.float32), np.zeros(4, np.int32)),
                      executor="ir", poison=300)


def test_local_memory_starts_poisoned_and_initcheck_names_it():
    out = np.zeros(2)
    rep = simgpu.launch(read_local, 1, 2, (out, np.int64(3)), executor="ir", timing=False, check=True)
    assert np.isnan(out).all()
    (f,) = rep.sanitizer.findings
    assert f.tool == "initcheck" and f.space == "local" and "'a'[3]" in f.message
    rep = simgpu.launch(read_local, 1, 2, (out, np.int64(0)), executor="ir", timing=False, check=True)
    assert (out == 1).all() and len(rep.sanitizer) == 0


@pytest.mark.parametrize("executor", EXECUTORS)
def test_falloff_barrier_runs_without_the_sanitizer(executor):
    n = 45
    a = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    simgpu.launch(falloff, 2, 32, (a, out, n), executor=executor, timing=False)
    i = np.arange(n)
    want = np.where(i + 1 < n, a[(i // 32) * 32 + (i % 32 + 1) % 32], a[i])
    np.testing.assert_array_equal(out[:n], want)
    assert (out[n:] == 0).all()
