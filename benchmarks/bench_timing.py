#!/usr/bin/env python3
"""How long the timing model takes to predict big launches, and what sampling costs in accuracy.

  python3 benchmarks/bench_timing.py [--quick]

Targets (issue 4): a 16M-thread elementwise kernel in under 10 s and a 1024^3 naive matmul in
under 60 s on the 2-core development machine.  Each is run three ways:
  launch      simgpu.launch: every block through the interpreter and the memory model, then
              the timing model (loops and waves sampled in the simulation)
  sampled     simgpu.predict(sample=True): only the waves the model simulates run
  timing-only the timing model's own share (simulation + recording), from the launch run
The sampling error table compares detail="auto" with detail="full" (every loop iteration and
every wave of SM 0 simulated) on smaller launches.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import simgpu  # noqa: E402
from simgpu.hardware import H200  # noqa: E402
from simgpu.kernels import matmul_naive, saxpy_inplace, sin_loop  # noqa: E402
from simgpu import predict
from simgpu.timing import TimingModel  # noqa: E402


def _timed(f):
    t = time.time()
    r = f()
    return r, time.time() - t


def speed(quick):
    rng = np.random.default_rng(0)
    n = 1 << 24
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    N = 1024
    A, B = rng.random((N, N), dtype=np.float32), rng.random((N, N), dtype=np.float32)
    jobs = [("elementwise saxpy, 16M threads", saxpy_inplace, (n // 256,), (256,), (np.float32(2), x, y), 10),
            ("naive matmul 1024^3", matmul_naive, (N // 32, N // 8), (32, 8),
             (A, B, np.zeros((N, N), np.float32), np.int32(N)), 60)]
    simgpu.launch(saxpy_inplace, (4,), (256,), (np.float32(2), x[:1024], y[:1024]))      # compile caches
    print(f"{'prediction':34s} {'mode':10s} {'wall s':>8s} {'target':>7s}  predicted")
    for name, k, g, b, args, target in jobs:
        for mode in (("sampled",) if quick else ("sampled", "launch")):
            if mode == "launch":
                tm = TimingModel(H200)
                rep, t = _timed(lambda: simgpu.launch(k, g, b, args, observers=(tm,), timing=False))
                (_, ts) = _timed(lambda: tm.fill_report(rep))
                t += ts
                extra = f"   (timing model alone: {ts:.1f} s to simulate)"
            else:
                rep, t = _timed(lambda: predict(k, g, b, args, sample=True))
                extra = ""
            r = rep.extras["timing"]
            ok = "ok" if t < target else "SLOW"
            print(f"{name:34s} {mode:10s} {t:8.1f} {target:>5d} s  {r.time_s * 1e6:,.1f} us, {r.bottleneck[:40]} "
                  f"[{ok}]{extra}", flush=True)


def sampling_error():
    rng = np.random.default_rng(1)
    cases = [
        ("saxpy 8 waves", saxpy_inplace, (132 * 8 * 8,), (256,),
         lambda: (np.float32(2), rng.random(132 * 8 * 8 * 256, dtype=np.float32),
                  rng.random(132 * 8 * 8 * 256, dtype=np.float32))),
        ("sin loop 256 it, 1 wave + 5", sin_loop, (132 * 8 + 5,), (256,),
         lambda: (rng.random((132 * 8 + 5) * 256, dtype=np.float32), np.zeros((132 * 8 + 5) * 256, np.float32), np.int32(256))),
        ("naive matmul 256^3", matmul_naive, (8, 32), (32, 8),
         lambda: (rng.random((256, 256), dtype=np.float32), rng.random((256, 256), dtype=np.float32),
                  np.zeros((256, 256), np.float32), np.int32(256))),
    ]
    print(f"\n{'sampling error':34s} {'full detail':>12s} {'sampled':>12s} {'error':>7s}  sims")
    for name, k, g, b, mk in cases:
        args = mk()
        out = {}
        for det in ("full", "auto"):
            tm = TimingModel(H200, detail=det)
            simgpu.launch(k, g, b, args, observers=(tm,), timing=False)
            out[det] = tm.predict()
        f, a = out["full"].cycles, out["auto"].cycles
        print(f"{name:34s} {f:12,.0f} {a:12,.0f} {100 * (a / f - 1):+6.1f}%  {out['auto'].n_sims}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="sampled predictions only")
    a = ap.parse_args()
    speed(a.quick)
    sampling_error()
