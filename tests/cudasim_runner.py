"""Run a kernel under numba's CUDA simulator (the oracle): one from simgpu.kernels or
tests/kernels_core.py, named "module:function".

Usage (in a subprocess with NUMBA_ENABLE_CUDASIM=1): python cudasim_runner.py in.npz out.npz
in.npz holds: kernel "module:name", grid, block, and args arg0..argN; out.npz gets the args after the run.
"""
import importlib
import sys

import numpy as np

if __name__ == "__main__":
    from numba import cuda
    from simgpu.validate.runner import as_numba_function   # simgpu's stand-in cuda -> numba's
    data = np.load(sys.argv[1], allow_pickle=False)
    modname, name = str(data["kernel"]).split(":")
    grid = tuple(int(v) for v in np.atleast_1d(data["grid"]))
    block = tuple(int(v) for v in np.atleast_1d(data["block"]))
    n = int(data["nargs"])
    args = []
    for k in range(n):
        a = data[f"arg{k}"]
        args.append(a.copy() if a.ndim else a[()])
    fn = getattr(importlib.import_module(modname), name)
    fn = getattr(fn, "py_func", fn)
    cuda.jit(as_numba_function(fn))[grid, block](*args)
    np.savez(sys.argv[2], **{f"arg{k}": np.asarray(a) for k, a in enumerate(args)})
