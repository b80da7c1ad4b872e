"""Per-launch cost of launching the same kernel again: with the kernel cache (simgpu/ptx/
runner.py's Kernel: the analysed, linked and compiled program kept per module and entry)
against without it (``SIMGPU_PTX_KERNEL_CACHE=0``: every launch analyses, links and compiles
every PTX instruction again, as before the cache), measured in the same run, launches of the
two kinds interleaved so both see the same machine load.  Optionally also numba's CUDA
simulator (``NUMBA_ENABLE_CUDASIM=1``, in a subprocess) on the same kernel source.

    python benchmarks/bench_launch_overhead.py [--launches 30] [--cudasim] [--json out.json]

Cases (small grids: the launch overhead, not the lanes, is what is measured):

* ``math``: 1 block x 64 threads of a kernel calling sin/exp (numba-cuda inlines libdevice:
  about 1,250 PTX instructions), through ``simgpu.ptx.runner.run``;
* ``saxpy``: 2 blocks x 128 threads of saxpy (about 20 PTX instructions), ``runner.run``;
* ``host``: the math kernel as a numba.cuda program launches it under ``simgpu.install()``
  (``kernel[grid, block](device arrays)``: binding, the memory and timing models, the report),
  as numba-cuda's test suite and example programs launch kernels.

Prints the median seconds per launch of each side and their ratio (uncached / cached).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda  # noqa: E402

from simgpu import settings  # noqa: E402


def math_kernel(out, x, n, s):
    i = cuda.grid(1)
    if i < n:
        acc = 0.0
        for j in range(4):
            v = x[(i + j) % n]
            acc += math.sin(v) * s + math.exp(-v * v) / (1.0 + v)
        out[i] = acc


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def math_args(n=64):
    x = np.random.default_rng(0).random(n, dtype=np.float32)
    return (np.zeros(n, np.float32), x, n, np.float32(2)), 1, n


def saxpy_args(n=256):
    rng = np.random.default_rng(0)
    return (np.float32(2), rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32),
            np.zeros(n, np.float32)), n // 128, 128


def timed(fn, cached):
    with settings.override(ptx_kernel_cache=cached):       # $SIMGPU_PTX_KERNEL_CACHE
        t = time.perf_counter()
        fn()
        return time.perf_counter() - t


def interleaved(fn, launches):
    """Median seconds per launch (cached, uncached), the two kinds alternating."""
    fn()                                            # compile, warm the caches
    on, off = [], []
    for _ in range(launches):
        on.append(timed(fn, True))
        off.append(timed(fn, False))
    return statistics.median(on), statistics.median(off)


def runner_case(py, make_args, launches):
    from simgpu.ptx.parser import parse_cached
    from simgpu.ptx.runner import compile_numba, run
    args, grid, block = make_args()
    ptx, name = compile_numba(py, args)
    n_ins = sum(len([s for s in f.body if not isinstance(s, tuple)])
                for f in parse_cached(ptx).functions.values() if f.body)
    return interleaved(lambda: run(ptx, name, grid, block, args), launches), n_ins


def host_case(launches):
    import simgpu
    args, grid, block = math_args()
    with simgpu.installed():
        from numba import cuda as hcuda
        k = hcuda.jit(math_kernel)
        dev = [hcuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        return interleaved(lambda: k[grid, block](*dev), launches)


def cudasim_child(kind, launches):
    """In a process with NUMBA_ENABLE_CUDASIM=1: median seconds per launch."""
    py, make = {"math": (math_kernel, math_args), "saxpy": (saxpy, saxpy_args)}[kind]
    args, grid, block = make()
    k = cuda.jit(py)
    k[grid, block](*args)
    ts = []
    for _ in range(launches):
        t = time.perf_counter()
        k[grid, block](*args)
        ts.append(time.perf_counter() - t)
    print(json.dumps(statistics.median(ts)))


def cudasim(kind, launches):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    code = (f"import sys; sys.path.insert(0, {HERE!r}); import bench_launch_overhead as b; "
            f"b.cudasim_child({kind!r}, {launches})")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=30)
    ap.add_argument("--cudasim", action="store_true", help="also numba's CUDA simulator")
    ap.add_argument("--no-host", action="store_true", help="skip the simgpu.install() case")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    rows = []
    for kind, py, make in (("math", math_kernel, math_args), ("saxpy", saxpy, saxpy_args)):
        (on, off), n_ins = runner_case(py, make, a.launches)
        rows.append(dict(case=f"{kind} (runner.run, {n_ins} PTX instructions)", cached=on,
                         uncached=off, cudasim=cudasim(kind, a.launches) if a.cudasim else None))
    if not a.no_host:
        on, off = host_case(a.launches)
        rows.append(dict(case="math (simgpu.install(), kernel[1, 64])", cached=on, uncached=off,
                         cudasim=None))
    print(f"median seconds per launch over {a.launches} launches of each kind (interleaved)")
    print(f"{'case':48s} {'cached':>10s} {'uncached':>10s} {'uncached/cached':>16s} {'cudasim':>10s}")
    for r in rows:
        sim = f"{r['cudasim']:10.4f}" if r["cudasim"] is not None else f"{'-':>10s}"
        print(f"{r['case']:48s} {r['cached']:10.4f} {r['uncached']:10.4f} "
              f"{r['uncached'] / r['cached']:15.2f}x {sim}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
