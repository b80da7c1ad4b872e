"""Case functions for tests/test_sweep*.py, in an importable module (local worker processes and
Dask workers import them by name; lambdas and closures are tested separately)."""
import os

import numpy as np

import simgpu
from simgpu import cuda


def add(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


def launch_add(p):
    """One tiny launch: p["blocks"] blocks of 32 threads; fails on purpose when p["fail"]."""
    if p.get("fail"):
        raise ValueError(f"case {p['blocks']} fails on purpose")
    n = p["blocks"] * 32
    x = np.arange(n, dtype=np.float32)
    y = np.full(n, 2, np.float32)
    out = np.zeros(n, np.float32)
    rep = simgpu.launch(add, p["blocks"], 32, (x, y, out), executor=p.get("executor", "ir"))
    return {"rep": rep, "correct": bool(np.array_equal(out, x + y))}


def launch_report(p):
    n = p["blocks"] * 32
    x = np.ones(n, np.float32)
    return simgpu.launch(add, p["blocks"], 32, (x, x, np.zeros_like(x)), executor="ir")


def square_or_interrupt(p):
    """Squares p["i"]; stops the sweep (as Ctrl-C does) at p["i"] == stop_at, if set."""
    if p["i"] == int(os.environ.get("SIMGPU_TEST_SWEEP_STOP", "-1")):
        raise KeyboardInterrupt
    return {"sq": p["i"] ** 2, "pid": os.getpid()}


def square_or_die(p):
    """Squares p["i"]; the worker process dies (as on a segfault or the OOM killer) when p["die"]."""
    if p.get("die"):
        os._exit(3)
    return {"sq": p["i"] ** 2}
