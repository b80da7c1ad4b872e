"""simgpu.ptx: recursive device functions (frames.py: registers and .param saved per call,
.local frames per call depth), divergent recursion depths across lanes."""
import numpy as np

from simgpu._compat import patch_numpy_for_numba

patch_numpy_for_numba()
from numba import cuda  # noqa: E402

from simgpu.ptx.runner import launch_numba  # noqa: E402


@cuda.jit(device=True)
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def fib_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = fib(x[i])


def test_recursive_fib_per_lane_depths():
    x = (np.arange(40) % 13).astype(np.int64)          # lanes recurse to different depths
    out = np.zeros_like(x)
    launch_numba(fib_kernel, 2, 32, (x, out))
    f = [0, 1]
    while len(f) < 13:
        f.append(f[-1] + f[-2])
    np.testing.assert_array_equal(out, np.array(f)[x])
