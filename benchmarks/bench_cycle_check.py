"""What the runaway detector's cycle check costs (docs/report.md, *Cycles*): process time of
loop-heavy launches with it on (``exec.budget.CYCLE_FROM = 16``, the default) and off
(``CYCLE_FROM`` past any iteration count: period 1 only, as before), medians of --repeat runs,
on both paths, memory and timing models off (the loop machinery is all that runs).

    PYTHONPATH=. python benchmarks/bench_cycle_check.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from numba import cuda

import simgpu
import simgpu.exec.budget as B


def inner20(x, n):                  # many short loops: every visit of the inner head is checked
    i = cuda.threadIdx.x
    t = 0
    for r in range(n):
        j = 0
        while j < 20 + (r & 1):
            t += x[j & 7]
            j += 1
    x[i] = t


def long_loop(x, n):                # one long loop: 8 more comparisons per power of two
    i = cuda.threadIdx.x
    k = 0
    s = 0
    while k < n:
        s += k
        k += 1
    x[i] = s


def run(k, n, ex):
    x = np.zeros(64, np.int64)
    t = time.process_time()
    simgpu.launch(k, 1, 64, (x, np.int64(n)), executor=ex, timing=False, memory=False)
    return time.process_time() - t


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    default = B.CYCLE_FROM
    for ex in ("ir", "ptx"):
        for k, n in ((inner20, 300), (long_loop, 20000)):
            run(k, 10, ex)                  # compile and warm
            res = {}
            for label, frm in (("on", default), ("off", 10 ** 18)):
                B.CYCLE_FROM = frm
                res[label] = sorted(run(k, n, ex) for _ in range(a.repeat))[a.repeat // 2]
            B.CYCLE_FROM = default
            print(f"{ex:3s} {k.__name__}(n={n}): cycle check on {res['on']:.2f} s, off {res['off']:.2f} s, "
                  f"ratio {res['on'] / res['off']:.3f}", flush=True)


if __name__ == "__main__":
    main()
