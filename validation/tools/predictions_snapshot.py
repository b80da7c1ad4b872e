"""Every metric and predicted time of the stored suite (validation/kernels/) and the hold-out
set (validation/holdout/), as JSON, so that a refactoring can be shown to change no prediction:

    python validation/tools/predictions_snapshot.py --executor ptx -o before.json   # on the old tree
    python validation/tools/predictions_snapshot.py --executor ptx -o after.json    # on the new one
    python validation/tools/predictions_snapshot.py --diff before.json after.json

Sampled predictions (simgpu.predict(sample=True)), as tests/test_validation_accuracy.py makes
them; --only a,b picks cases by name; --holdout includes validation/holdout/.

Keep a snapshot out of validation/data/ as plain JSON (store it there compressed, .json.xz): its
cases hold predicted metrics under the card's names, and compare_timing.load_measured and
compare_memory.measurements read every validation/data/**/*.json as measurements -- session
32's snapshot_strata22_*.json replaced the card's numbers of 24 cases and failed
tests/test_memory_h200.py on copy_f32_coalesced_L2.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def snapshot(executor, only=None, holdout=False):
    import compare_timing as ct
    import simgpu
    dirs = [None] + ([os.path.join(os.path.dirname(HERE), "holdout")] if holdout else [])
    out = {}
    for d in dirs:
        for c in ct.load_cases(kernels_dir=d):
            if only and c["name"] not in only:
                continue
            args = c["args"](np.random.default_rng(0))
            try:
                rep = simgpu.predict(c["kernel"], c["grid"], c["block"], args, sample=True,
                                     executor=executor)
            except Exception as e:          # noqa: BLE001  (recorded: a change of error is a change)
                out[c["name"]] = {"error": f"{type(e).__name__}: {e}"[:300]}
                continue
            m = {k: float(v) for k, v in rep.metrics.items() if isinstance(v, (int, float))}
            m["time_ns"] = rep.extras["timing"].time_s * 1e9
            m["bottleneck"] = rep.extras["timing"].bottleneck
            out[c["name"]] = m
            print(f"{c['name']}: {m['time_ns']:.1f} ns", flush=True)
    return out


def diff(a, b):
    with open(a) as f:
        A = json.load(f)
    with open(b) as f:
        B = json.load(f)
    n = 0
    for k in sorted(set(A) | set(B)):
        x, y = A.get(k), B.get(k)
        if x is None or y is None:
            print(f"{k}: only in {'after' if x is None else 'before'}")
            n += 1
            continue
        for m in sorted(set(x) | set(y)):
            u, v = x.get(m), y.get(m)
            same = u == v or (isinstance(u, float) and isinstance(v, float) and
                              (math.isnan(u) and math.isnan(v)))
            if not same:
                print(f"{k} {m}: {u} -> {v}")
                n += 1
    print(f"{len(set(A) & set(B))} cases compared, {n} differences")
    return n


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--executor", default="ptx")
    ap.add_argument("--only", default="")
    ap.add_argument("--holdout", action="store_true")
    ap.add_argument("-o", "--out")
    ap.add_argument("--diff", nargs=2)
    a = ap.parse_args()
    if a.diff:
        sys.exit(1 if diff(*a.diff) else 0)
    snap = snapshot(a.executor, set(a.only.split(",")) if a.only else None, a.holdout)
    with open(a.out, "w") as f:
        json.dump(snap, f, indent=1, sort_keys=True)
