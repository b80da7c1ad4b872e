"""The launches `simgpu demo` runs: five classic kernels from the library on the modelled GPU."""
import numpy as np

from .elementwise import saxpy
from .matmul import TILE, matmul_coalesced, matmul_tiled_shape
from .reduction import TPB, reduce_sum
from .transpose import transpose_padded_checked


def demo_launches(scale=1):
    """(title, kernel, grid, block, args, check) for `simgpu demo`."""
    rng = np.random.default_rng(0)
    n = 1 << 20
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    m = 256
    A, B = rng.random((m, m), dtype=np.float32), rng.random((m, m), dtype=np.float32)
    C1, C2 = np.zeros((m, m), np.float32), np.zeros((m, m), np.float32)
    r = np.zeros(1, np.float32)
    t_in = rng.random((1024, 1024), dtype=np.float32)
    t_out = np.zeros_like(t_in)
    g = (m + TILE - 1) // TILE
    return [
        ("saxpy: 1M elements, 12 MB moved (the Timing section names its bottleneck)", saxpy, n // TPB, TPB,
         (np.float32(2), x, y, out),
         lambda: np.allclose(out, 2 * x + y)),
        ("naive matmul 256x256 (coalesced B)", matmul_coalesced, (g, g), (TILE, TILE), (A, B, C1),
         lambda: np.allclose(C1, A @ B, rtol=1e-4)),
        ("tiled matmul 256x256, 16x16 shared tiles", matmul_tiled_shape, (g, g), (TILE, TILE), (A, B, C2),
         lambda: np.allclose(C2, A @ B, rtol=1e-4)),
        ("tree reduction of 1M floats", reduce_sum, n // TPB, TPB, (x, r),
         lambda: np.isclose(r[0], x.sum(dtype=np.float64), rtol=1e-4)),
        ("padded shared-memory transpose 1024x1024", transpose_padded_checked, (32, 32), (32, 32), (t_in, t_out),
         lambda: np.array_equal(t_out, t_in.T)),
    ]
