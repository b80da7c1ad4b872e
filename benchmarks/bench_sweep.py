#!/usr/bin/env python3
"""How a simgpu.sweep scales with workers: cases per second for 1, 2 and N workers, measured.

    python benchmarks/bench_sweep.py [--cases 200] [--workers 1,2,4] [--executor auto|ir] [--backend dask,local]

Each case is one simulated launch of a small float32 kernel (a 256-thread block per 8 KiB,
1 to 8 blocks), with the memory and timing models on, as `simgpu.launch` runs it. For each
worker count: start the workers (a Dask LocalCluster of worker processes, one thread each, or
simgpu's own local processes), warm them up (import simgpu, compile the kernel: not timed),
then time a sweep of --cases cases. Printed: cases/s, the speed-up over 1 worker, the median
per-case time on a worker, and the cost formula's prediction (cases x per-case / workers)
beside the measured wall time, so the formula's error (scheduling, start-up, a shared machine)
is visible.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import simgpu  # noqa: E402
from simgpu import cuda  # noqa: E402
from simgpu.sweeps import default_workers  # noqa: E402


def scale_add(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def case(p):
    n = p["blocks"] * 256
    x = np.full(n, 1.5, np.float32)
    y = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    rep = simgpu.launch(scale_add, p["blocks"], 256, (np.float32(2), x, y, out), executor=p["executor"])
    if not np.array_equal(out, np.float32(2) * x + y):
        raise AssertionError("wrong result")
    return rep


def params(n, executor, offset=0):
    return [{"blocks": 1 + i % 8, "i": offset + i, "executor": executor} for i in range(n)]


def run_dask(w, n, executor):
    from dask.distributed import Client, LocalCluster
    with LocalCluster(n_workers=w, threads_per_worker=1, processes=True, dashboard_address=None) as lc, \
            Client(lc) as c:
        simgpu.sweep(case, params(2 * w, executor, 10 ** 6), client=c, progress=False, chunk=1)   # warm-up
        t0 = time.perf_counter()
        tab = simgpu.sweep(case, params(n, executor), client=c, progress=False)
        return tab, time.perf_counter() - t0


def run_local(w, n, executor):
    # simgpu's local processes start (fork) per sweep: the warm-up is in the timed run here
    simgpu.sweep(case, params(1, executor, 10 ** 6), workers=0, progress=False)   # compile in the parent
    t0 = time.perf_counter()
    tab = simgpu.sweep(case, params(n, executor), workers=w, progress=False)
    return tab, time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--workers", default=None, help="comma-separated worker counts (default 1,2,N; N = cores)")
    ap.add_argument("--executor", default="auto")
    ap.add_argument("--backend", default="dask,local")
    a = ap.parse_args(argv)
    ncores = default_workers()
    ws = [int(w) for w in a.workers.split(",")] if a.workers else sorted({1, 2, ncores})
    print(f"simgpu {simgpu.__version__}, python {platform.python_version()}, {ncores} cores usable, "
          f"{platform.node()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"{a.cases} cases per run (one launch each, executor={a.executor})\n")
    print(f"{'backend':8s} {'workers':>7s} {'cases/s':>8s} {'speed-up':>8s} {'per case ms':>11s} "
          f"{'formula s':>9s} {'measured s':>10s} {'failed':>6s}")
    for backend in a.backend.split(","):
        base = None
        for w in ws:
            tab, wall = (run_dask if backend == "dask" else run_local)(w, a.cases, a.executor)
            rate = a.cases / wall
            base = base or rate
            pc = tab.per_case_s
            print(f"{backend:8s} {w:7d} {rate:8.1f} {rate / base:7.2f}x {pc * 1e3:11.1f} "
                  f"{a.cases * pc / w:9.2f} {wall:10.2f} {len(tab.errors):6d}", flush=True)


if __name__ == "__main__":
    main()
