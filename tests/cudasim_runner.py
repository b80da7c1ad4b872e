"""Run kernels from tests/kernels_core.py under numba's CUDA simulator (the oracle).

Usage (in a subprocess with NUMBA_ENABLE_CUDASIM=1): python cudasim_runner.py in.npz out.npz
in.npz holds: kernel name, grid, block, and args arg0..argN; out.npz gets the args after the run.
"""
import sys

import numpy as np

if __name__ == "__main__":
    from numba import cuda
    import kernels_core
    data = np.load(sys.argv[1], allow_pickle=False)
    name = str(data["kernel"])
    grid = tuple(int(v) for v in np.atleast_1d(data["grid"]))
    block = tuple(int(v) for v in np.atleast_1d(data["block"]))
    n = int(data["nargs"])
    args = []
    for k in range(n):
        a = data[f"arg{k}"]
        args.append(a.copy() if a.ndim else a[()])
    fn = getattr(kernels_core, name)
    fn = getattr(fn, "py_func", fn)
    cuda.jit(fn)[grid, block](*args)
    np.savez(sys.argv[2], **{f"arg{k}": np.asarray(a) for k, a in enumerate(args)})
