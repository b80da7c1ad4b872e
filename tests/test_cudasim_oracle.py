"""The same kernel source gives the same results under simgpu and numba's CUDA simulator."""
import os
import subprocess
import sys

import numpy as np
import pytest

import simgpu
from simgpu.kernels import histogram16, matmul_tiled_shape, tree_reduce, vadd
from kernels_core import grid2d, loops_and_control, typing_f64, use_device_fn

HERE = os.path.dirname(__file__)
rng = np.random.default_rng(7)


def _cudasim(kernel, grid, block, args, tmp_path):
    inp, out = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(inp, kernel=f"{kernel.__module__}:{kernel.__name__}", grid=np.array(grid), block=np.array(block),
             nargs=len(args), **{f"arg{k}": np.asarray(a) for k, a in enumerate(args)})
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    r = subprocess.run([sys.executable, os.path.join(HERE, "cudasim_runner.py"), str(inp), str(out)],
                       cwd=HERE, env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        pytest.skip(f"numba's CUDA simulator is unavailable here: {r.stderr[-300:]}")
    d = np.load(out)
    return [d[f"arg{k}"] for k in range(len(args))]


CASES = [
    (vadd, 2, 64, lambda: (rng.random(100, dtype=np.float32), rng.random(100, dtype=np.float32),
                           np.zeros(100, np.float32))),
    (tree_reduce, 3, 128, lambda: (rng.random(300, dtype=np.float32), np.zeros(3, np.float32))),
    (matmul_tiled_shape, (2, 2), (16, 16), lambda: (rng.random((20, 20), dtype=np.float32),
                                                    rng.random((20, 20), dtype=np.float32),
                                                    np.zeros((20, 20), np.float32))),
    (histogram16, 2, 128, lambda: (rng.integers(0, 100, 200).astype(np.int32), np.zeros(16, np.int32))),
    (use_device_fn, 1, 64, lambda: ((rng.random(50, dtype=np.float32) - 0.5) * 3, np.zeros(50, np.float32))),
    (loops_and_control, 1, 64, lambda: (rng.integers(0, 12, 40).astype(np.int64), np.zeros(40, np.int64))),
    (grid2d, (2, 2), (8, 8), lambda: (np.zeros((12, 14), np.int64),)),
    (typing_f64, 1, 32, lambda: (rng.random(20, dtype=np.float32), np.zeros(20, np.float32))),
]


@pytest.mark.parametrize("kernel,grid,block,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_same_results_as_numba_cudasim(kernel, grid, block, make, tmp_path):
    args = make()
    ref = _cudasim(kernel, grid, block, args, tmp_path)
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    simgpu.launch(kernel, grid, block, mine)
    for a, b in zip(mine, ref):
        if a.dtype.kind == "f":
            # cudasim evaluates with numpy's (NEP 50) promotion, not numba's typing; allow rounding
            assert np.allclose(a, b, rtol=1e-6, atol=1e-6)
        else:
            assert np.array_equal(a, b)
