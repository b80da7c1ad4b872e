"""Predictions with settled loops (timing/model.py: SETTLED_LOOPS) against the simulation as
before, on suite and holdout kernels at their measured sizes (issue 26, item 2).

Each case runs once, sampled as compare_timing.predict_case runs it (simgpu.predict,
sample=True, the compiled path or with --executor ir the IR path); its timing model then predicts from the same recorded trace
with the loops cut where they have settled (model.settled: the probe) and as before (long
loops at 16/32 iterations, shorter ones in full), each prediction's CPU seconds measured
(``time.process_time``, garbage collection off, the faster of two alternating runs: the
timing model's own cost, not the execution's).  Printed per case:
the predicted time both ways and their difference, whether the probe was kept, the timing
model's CPU seconds both ways; and the cases whose predicted time differs by more than
``--tol`` percent.  Counts and outputs come from the one execution, so they are the same by
construction; the check compares what the timing model makes of it (time, cycles, stalls,
utilisation, the bottleneck's words).

    python validation/tools/settled_loops_check.py --toolchain <CUDA wheels> [--holdout]
        [--only name,name] [--json out.json] [--tol 2] [--executor ptx|ir]
"""
import argparse
import gc
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
VALIDATION = os.path.dirname(HERE)
sys.path.insert(0, VALIDATION)
sys.path.insert(0, os.path.dirname(VALIDATION))


def check_case(c, executor="ptx"):
    import importlib

    import simgpu
    from simgpu.timing import model as M
    L = importlib.import_module("simgpu.runtime.launch")     # (the package exports a function of that name)

    made = []

    class Kept(M.TimingModel):                 # the launch's timing model, kept to predict again
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            made.append(self)

    real = L.TimingModel
    L.TimingModel = Kept
    try:
        args = c["args"](np.random.default_rng(0))
        t0 = time.process_time()
        simgpu.predict(c["kernel"], c["grid"], c["block"], args, sample=True, executor=executor)
        launch_s = time.process_time() - t0
    finally:
        L.TimingModel = real
    tm = made[-1]
    groups = (tm.groups, tm.candidates)
    out = {"launch_cpu_s": launch_s}
    flag = M.SETTLED_LOOPS
    try:
        # twice each, alternating, the faster kept: the first prediction of a launch also pays
        # what the timing model makes once (the memory model's per-instruction statistics)
        for name, on in (("before", False), ("settled", True), ("before", False), ("settled", True)):
            M.SETTLED_LOOPS = on
            tm.groups, tm.candidates = groups
            tm.simulated_sm, tm.result = 0, None
            gc.collect()                        # (a full collection inside one of them: 0.3 s of noise)
            gc.disable()
            t = time.process_time()
            try:
                r = tm.predict()
            finally:
                gc.enable()
            dt = time.process_time() - t
            if name in out:
                out[name]["cpu_s"] = min(out[name]["cpu_s"], dt)
                continue
            out[name] = {"cpu_s": dt, "ns": r.time_s * 1e9, "cycles": r.cycles,
                         "n_sims": r.n_sims, "settled": r.settled_loops, "bottleneck": r.bottleneck,
                         "stalls": r.stalls, "utilisation": r.utilisation, "sm": r.sm}
    finally:
        M.SETTLED_LOOPS = flag
        tm.groups, tm.candidates = groups
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--toolchain", default=None, help="the CUDA wheels ptxas comes from (SIMGPU_TOOLCHAIN)")
    ap.add_argument("--holdout", action="store_true", help="the holdout's kernels too")
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--json", default=None)
    ap.add_argument("--tol", type=float, default=2.0, help="percent: a larger difference is listed")
    ap.add_argument("--executor", default="ptx", help="ptx (the compiled path) or ir")
    a = ap.parse_args()
    if a.toolchain:
        os.environ["SIMGPU_TOOLCHAIN"] = a.toolchain
    import compare_timing as ct
    only = set(filter(None, a.only.split(",")))
    cases = ct.load_cases() + (ct.load_cases(kernels_dir=os.path.join(VALIDATION, "holdout")) if a.holdout else [])
    rows = []
    print(f"{'case':34s} {'before ns':>12s} {'settled ns':>12s} {'diff':>7s} {'kept':>5s} "
          f"{'timing s before':>15s} {'settled':>8s}")
    for c in cases:
        if only and c["name"] not in only:
            continue
        try:
            r = check_case(c, a.executor)
        except Exception as e:          # noqa: BLE001  (printed: a case that fails is a finding)
            print(f"{c['name']:34s} error {type(e).__name__}: {e}"[:200], flush=True)
            continue
        b, s = r["before"], r["settled"]
        d = 100.0 * (s["ns"] / b["ns"] - 1.0) if b["ns"] else 0.0
        print(f"{c['name']:34s} {b['ns']:12.1f} {s['ns']:12.1f} {d:+6.2f}% {str(s['settled']):>5s} "
              f"{b['cpu_s']:15.2f} {s['cpu_s']:8.2f}", flush=True)
        rows.append(dict(case=c["name"], diff_pct=d, **r))
    kept = [r for r in rows if r["settled"]["settled"]]
    far = [r for r in rows if abs(r["diff_pct"]) > a.tol]
    tb = sum(r["before"]["cpu_s"] for r in rows)
    ts = sum(r["settled"]["cpu_s"] for r in rows)
    listed = ", ".join(f"{r['case']} {r['diff_pct']:+.2f}%" for r in far) or "none"
    print(f"{len(rows)} cases, settled loops kept in {len(kept)}; timing model CPU s {tb:.2f} -> {ts:.2f}; "
          f"beyond {a.tol:g} %: {listed}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    return 1 if far else 0


if __name__ == "__main__":
    sys.exit(main())
