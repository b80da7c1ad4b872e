"""Run the same kernel source on a CUDA GPU with numba.cuda and time it with CUDA events."""
from __future__ import annotations

import statistics

import numpy as np


def _cuda():
    np.row_stack = getattr(np, "row_stack", np.vstack)   # numba 0.68.0 calls it; numpy 2.5 removed it
    from numba import cuda
    return cuda


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
        k = cuda.jit(py_func)
        dargs = [cuda.to_device(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a for a in args]
        k[grid, block](*dargs)
        cuda.synchronize()
        out["results"] = [d.copy_to_host() if hasattr(d, "copy_to_host") else d for d in dargs]
        flush = cuda.device_array(64 << 20, dtype=np.float32) if flush_l2 else None
        for _ in range(warmup):
            k[grid, block](*dargs)
        times = []
        for _ in range(repeat):
            if flush is not None:
                flush[:] = 0          # overwrite 256 MB: evicts the L2
            s, e = cuda.event(), cuda.event()
            s.record()
            k[grid, block](*dargs)
            e.record()
            e.synchronize()
            times.append(cuda.event_elapsed_time(s, e) * 1e6)   # ms -> ns
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
