"""End-to-end: numba-cuda PTX executed by simgpu.ptx, compared with numpy references."""
import numpy as np
import pytest

from simgpu._compat import patch_numpy_for_numba

patch_numpy_for_numba()
from numba import cuda, float32, int32  # noqa: E402

from simgpu.ptx.basic_ops import fma_f32  # noqa: E402
from simgpu.ptx.runner import launch_numba  # noqa: E402


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def test_saxpy_matches_fused_float32():
    """saxpy over a ragged last block equals float32 fma(a, x, y) bit for bit (NVVM fuses
    a*x+y into fma.rn.f32) and leaves nothing written past the threads that pass the guard."""
    rng = np.random.default_rng(0)
    n = 1000
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    out = np.full(n + 0, -1, np.float32)
    a = np.float32(2.5)
    launch_numba(saxpy, (n + 127) // 128, 128, (a, x, y, out))
    np.testing.assert_array_equal(out, fma_f32(np.full(n, a), x, y))
