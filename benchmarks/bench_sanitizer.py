"""What the sanitizer costs: launch time with check=True over launch time without it.

For a few kernels (vector add: global only; tree reduction: shared memory and barriers;
16x16 tiled matmul: shared tiles, two barriers per tile), on each execution path, the median
of ``--repeat`` timed ``simgpu.launch`` calls with the memory and timing models on (the
default launch) and the same with ``check=True``; prints both medians and their ratio.  The
kernel is compiled and warmed once before timing.

    python benchmarks/bench_sanitizer.py [--repeat 5] [--executor ptx,ir] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import simgpu  # noqa: E402
from simgpu.kernels.elementwise import add_k  # noqa: E402
from simgpu.kernels.matmul import TILE, matmul_tiled  # noqa: E402
from simgpu.kernels.reduction import TREE_TPB, tree_reduce  # noqa: E402


def cases(n=1 << 18):
    """The three classic kernels (vector add and tree reduction over `n` threads, a 128 x 128
    tiled matmul): {name: (kernel, grid, block, args)}."""
    rng = np.random.default_rng(0)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    m = 128
    A, B = rng.random((m, m), dtype=np.float32), rng.random((m, m), dtype=np.float32)
    x = rng.random(n, dtype=np.float32)
    return {
        f"vector add ({n:,} threads)": (add_k, n // 256, 256, (a, b, np.zeros(n, np.float32))),
        f"tree reduction ({n:,} threads)": (tree_reduce, n // TREE_TPB, TREE_TPB,
                                            (x, np.zeros(n // TREE_TPB, np.float32))),
        f"tiled matmul {m}x{m}": (matmul_tiled, (m // TILE, m // TILE), (TILE, TILE),
                                  (A, B, np.zeros((m, m), np.float32), np.int64(m))),
    }


def timed(kernel, grid, block, args, executor, check, repeat):
    simgpu.launch(kernel, grid, block, args, executor=executor, check=check)      # compile, warm
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        rep = simgpu.launch(kernel, grid, block, args, executor=executor, check=check)
        ts.append(time.perf_counter() - t0)
        if check:
            assert rep.sanitizer.errors == 0, rep.sanitizer.summary()
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--executor", default="ptx,ir")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    rows = []
    print(f"{'kernel':34s} {'path':4s} {'off (s)':>9s} {'check=True (s)':>15s} {'ratio':>7s}")
    for name, (k, g, b, args) in cases().items():
        for ex in a.executor.split(","):
            off = timed(k, g, b, args, ex, False, a.repeat)
            on = timed(k, g, b, args, ex, True, a.repeat)
            rows.append({"kernel": name, "executor": ex, "off_s": off, "check_s": on, "ratio": on / off})
            print(f"{name:34s} {ex:4s} {off:9.3f} {on:15.3f} {on / off:6.2f}x", flush=True)
    print(f"median ratio: {statistics.median(r['ratio'] for r in rows):.2f}x "
          f"(medians of {a.repeat} runs; memory and timing models on in both)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d"), "repeat": a.repeat, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
