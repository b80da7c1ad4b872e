"""The SM simulation's inline clock (simgpu/timing/sim.py, ``sim.INLINE_CLOCK``) off vs on,
measured in the same run, every model on (memory + timing), on the cases of
bench_compiled_blocks.py (loop-heavy kernels with few warps and two classic wide ones).

Each timed run is one ``simgpu.launch`` (executor="ptx", compiled runs on) after a warm-up
launch; the two sides alternate, ``--repeat`` times each; CPU seconds (``time.process_time``)
of the whole launch and of the timing prediction alone (``simulate_sm``), medians and ratios.
The predictions are checked equal on both sides (every numeric metric) before timing.

    python benchmarks/bench_inline_clock.py [--repeat 3] [--only NAME]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import bench_compiled_blocks as b  # noqa: E402
from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu.timing import sim  # noqa: E402

_sim_seconds = [0.0]
_simulate_sm = sim.simulate_sm


def _timed_simulate_sm(*a, **k):
    t = time.process_time()
    try:
        return _simulate_sm(*a, **k)
    finally:
        _sim_seconds[0] += time.process_time() - t


def once(name, inline):
    fn, grid, block, args = b.cases()[name]
    a = [x.copy() for x in args]
    sim.INLINE_CLOCK = inline
    _sim_seconds[0] = 0.0
    t = time.process_time()
    rep = simgpu.launch(cuda.jit(fn), grid, block, a, executor="ptx", memory=True, timing=True)
    total = time.process_time() - t
    return total, _sim_seconds[0], {k: v for k, v in rep.metrics.items() if isinstance(v, (int, float, str))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    on = sim.INLINE_CLOCK
    sim.simulate_sm = _timed_simulate_sm
    import simgpu.timing.model as model
    if getattr(model, "simulate_sm", None) is _simulate_sm:
        model.simulate_sm = _timed_simulate_sm
    print(f"{'case':50s} {'off s':>7s} {'on s':>7s} {'ratio':>6s} {'sim off':>8s} {'sim on':>7s} {'ratio':>6s}")
    for name in b.cases():
        if a.only and a.only not in name:
            continue
        b.warm(name)
        m0, m1 = once(name, False)[2], once(name, on)[2]
        if m0 != m1:
            raise SystemExit(f"{name}: predictions differ with the inline clock")
        t = {False: [], True: []}
        for _ in range(a.repeat):
            for side in (False, True):
                t[side].append(once(name, side and on)[:2])
        (w0, s0), (w1, s1) = [(statistics.median(x[0] for x in t[s]), statistics.median(x[1] for x in t[s]))
                              for s in (False, True)]
        print(f"{name:50s} {w0:7.3f} {w1:7.3f} {w0 / w1:6.2f} {s0:8.3f} {s1:7.3f} {s0 / max(s1, 1e-9):6.2f}",
              flush=True)
    sim.INLINE_CLOCK = on


if __name__ == "__main__":
    main()
