"""Errors and sanitizer summaries name a closure kernel (GPU-Puzzles' style) as the report's
title does: the function that makes it (`map_test`), not `call`; on both paths."""
import numpy as np
import pytest

from simgpu._compat import patch_numpy_for_numba

patch_numpy_for_numba()

from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu.errors import KernelError  # noqa: E402
from simgpu.sass.toolchain import compiled_path_available  # noqa: E402

EXECUTORS = ["ir", pytest.param("ptx", marks=pytest.mark.skipif(
    not compiled_path_available()[0], reason="needs numba-cuda and ptxas"))]


def map_test(cuda):
    def call(out, a, size):
        i = cuda.threadIdx.x
        out[i] = a[i] + 10          # no guard: threads past the end read out of bounds
    return call


def shared_test(cuda):
    def call(out, a, size):
        sh = cuda.shared.array(8, np.float32)
        i = cuda.threadIdx.x
        if i < size:
            sh[i] = a[i]
        out[i] = sh[(i + 1) % 8]    # no barrier: a race
    return call


@pytest.mark.parametrize("executor", EXECUTORS)
def test_kernel_error_names_the_maker(executor):
    a, out = np.arange(4, dtype=np.float32), np.zeros(8, np.float32)
    with pytest.raises(KernelError) as e:
        # 256 threads: past a's 512-byte rounding (inside it the compiled path runs, as the GPU)
        simgpu.launch(map_test(cuda), 1, 256, (out, a, np.int32(4)), executor=executor, timing=False)
    assert "in kernel 'map_test'" in str(e.value)
    assert "'call'" not in str(e.value)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_sanitizer_summary_names_the_maker(executor):
    a, out = np.arange(8, dtype=np.float32), np.zeros(8, np.float32)
    rep = simgpu.launch(shared_test(cuda), 1, 8, (out, a, np.int32(8)), executor=executor, timing=False,
                        check="racecheck")
    assert rep.sanitizer.counts()["racecheck"] >= 1
    assert "-- kernel shared_test" in rep.sanitizer.summary()
