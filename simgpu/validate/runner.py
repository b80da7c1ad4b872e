"""Run the same kernel source on a CUDA GPU with numba.cuda and time it with CUDA events."""
from __future__ import annotations

import statistics
import types

import numpy as np

from .._compat import load_numba_cuda
from ..frontend.stubs import is_stub, stub_path


def _cuda():
    load_numba_cuda()
    from numba import cuda
    return cuda


def as_numba_function(py_func):
    """The same kernel with simgpu's stand-in `cuda` names replaced by numba.cuda's, so a kernel
    written with `from simgpu import cuda` also compiles under numba.cuda.jit."""
    cuda = _cuda()
    g = py_func.__globals__
    swap = {}
    for name, v in g.items():
        if isinstance(v, types.ModuleType) and v.__name__ == "simgpu.cuda":
            swap[name] = cuda
        elif is_stub(v):
            obj = cuda
            for part in stub_path(v).split(".")[1:]:
                obj = getattr(obj, part)
            swap[name] = obj
    if not swap:
        return py_func
    new_globals = dict(g)
    new_globals.update(swap)
    f = types.FunctionType(py_func.__code__, new_globals, py_func.__name__, py_func.__defaults__,
                           py_func.__closure__)
    f.__module__ = py_func.__module__
    return f


def device_available():
    try:
        cuda = _cuda()
        return bool(cuda.is_available()), ""
    except Exception as e:                                 # numba-cuda missing or broken
        return False, f"{type(e).__name__}: {e}"


def run_on_gpu(py_func, grid, block, args, repeat=50, warmup=3, flush_l2=False):
    """Compile with numba.cuda.jit, copy args to the device, run once for results, then time
    `repeat` launches with CUDA events (median).  Returns a dict; errors are reported in it."""
    out = {"ok": False}
    try:
        cuda = _cuda()
        k = cuda.jit(as_numba_function(py_func))
        dargs = [cuda.to_device(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a for a in args]
        k[grid, block](*dargs)
        cuda.synchronize()
        out["results"] = [d.copy_to_host() if hasattr(d, "copy_to_host") else d for d in dargs]
        flush = cuda.device_array(64 << 20, dtype=np.float32) if flush_l2 else None
        for _ in range(warmup):
            k[grid, block](*dargs)
        cuda.synchronize()
        times = []
        if flush is None:
            # batches of back-to-back launches: one event pair around each batch, so the
            # host's launch overhead overlaps the GPU's work instead of being timed
            batch = max(1, repeat // 5)
            for _ in range(5):
                s, e = cuda.event(), cuda.event()
                s.record()
                for _ in range(batch):
                    k[grid, block](*dargs)
                e.record()
                e.synchronize()
                times.append(cuda.event_elapsed_time(s, e) * 1e6 / batch)   # ms -> ns per launch
        else:
            for _ in range(repeat):
                flush[:] = 0          # overwrite 256 MB: evicts the L2
                s, e = cuda.event(), cuda.event()
                s.record()
                k[grid, block](*dargs)
                e.record()
                e.synchronize()
                times.append(cuda.event_elapsed_time(s, e) * 1e6)
        out.update(ok=True, time_ns=statistics.median(times), times_ns=times,
                   device=str(cuda.get_current_device().name))
        try:
            sig = next(iter(k.overloads))
            out["registers_per_thread"] = k.get_regs_per_thread(sig)
        except Exception:
            pass
    except Exception as e:
        out["error"] = f"{type(e).__name__}: {e}"
    return out
