"""simgpu vs numba's CUDA simulator on the same kernel sources.

Each side runs at a size it can finish; we compare *rates* (threads/s, or multiply-adds/s
for the matmul whose per-thread work grows with size).  The simulator runs in a
subprocess with NUMBA_ENABLE_CUDASIM=1.  simgpu runs with memory counting on.
Prints the median of `--repeat` runs for each side and the ratio.

    python benchmarks/bench_vs_cudasim.py [--repeat 3] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

# name: (kernel in simgpu.kernels, size for cudasim, size for simgpu, work unit)
CASES = {
    "vector add": ("vadd", 4096, 1 << 24, "threads"),
    "tree reduction (shared, barriers)": ("tree_reduce", 1024, 1 << 22, "threads"),
    "16x16 tiled matmul": ("matmul_tiled_shape", 32, 512, "multiply-adds"),
}


def make(kernel, n, rng):
    if kernel == "vadd":
        a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        return (-(-n // 256),), (256,), (a, b, np.zeros(n, np.float32)), n
    if kernel == "tree_reduce":
        x = rng.random(n, dtype=np.float32)
        return (-(-n // 128),), (128,), (x, np.zeros(-(-n // 128), np.float32)), n
    A, B = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    g = -(-n // 16)
    return (g, g), (16, 16), (A, B, np.zeros((n, n), np.float32)), n ** 3


def run_here(kernel, n, sim):
    rng = np.random.default_rng(0)
    grid, block, args, work = make(kernel, n, rng)
    import simgpu.kernels
    fn = getattr(simgpu.kernels, kernel)
    if sim == "cudasim":
        from numba import cuda
        from simgpu.validate.runner import as_numba_function   # simgpu's stand-in cuda -> numba's
        k = cuda.jit(as_numba_function(fn))
        t = time.perf_counter()
        k[grid, block](*args)
    else:
        import simgpu
        t = time.perf_counter()
        simgpu.launch(fn, grid, block, args, memory=True)
    return work / (time.perf_counter() - t)


def run_cudasim(kernel, n):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    code = (f"import sys; sys.path.insert(0, {HERE!r}); import bench_vs_cudasim as b; "
            f"print(b.run_here({kernel!r}, {n}, 'cudasim'))")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    return float(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smaller simgpu sizes")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    run_here("vadd", 1024, "simgpu")              # warm up (numba-compiled helpers)
    rows = []
    for title, (kernel, n_sim, n_ours, unit) in CASES.items():
        if a.quick:
            n_ours = {"vadd": 1 << 20, "tree_reduce": 1 << 18, "matmul_tiled": 128}[kernel]
        theirs = statistics.median(run_cudasim(kernel, n_sim) for _ in range(a.repeat))
        ours = statistics.median(run_here(kernel, n_ours, "simgpu") for _ in range(a.repeat))
        rows.append(dict(case=title, unit=unit, cudasim_size=n_sim, simgpu_size=n_ours,
                         cudasim_rate=theirs, simgpu_rate=ours, ratio=ours / theirs))
    print(f"{'kernel':36s} {'unit/s':>14s} {'numba cudasim':>14s} {'simgpu':>14s} {'ratio':>9s}")
    for r in rows:
        print(f"{r['case']:36s} {r['unit']:>14s} {r['cudasim_rate']:14,.0f} {r['simgpu_rate']:14,.0f} "
              f"{r['ratio']:8,.0f}x")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
