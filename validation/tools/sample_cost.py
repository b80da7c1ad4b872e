#!/usr/bin/env python3
"""CPU time of a sampled launch (``simgpu.predict(..., sample=True)``) per case: the median of
``time.process_time`` over --reps launches after one untimed launch (the compile), the blocks
run, their warp instructions (unscaled: the work the executor did) and the predicted time.  Run it with PYTHONPATH at each checkout to compare them.

    PYTHONPATH=. python validation/tools/sample_cost.py --kernels validation/holdout \\
        --toolchain <CUDA 13.0.88 wheels> --only 'mandel|stencil' --reps 3 [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from compare_timing import load_cases, use_toolchain      # noqa: E402


def cost(c, reps, executor):
    from simgpu import predict

    def once():
        args = c["args"](np.random.default_rng(0))
        t0 = time.process_time()
        rep = predict(c["kernel"], c["grid"], c["block"], args, sample=True, executor=executor)
        return time.process_time() - t0, rep

    once()
    runs = [once() for _ in range(reps)]
    rep = runs[-1][1]
    return {"cpu_s": statistics.median(t for t, _ in runs), "cpu_s_all": [t for t, _ in runs],
            "executed_blocks": rep.extras.get("sampled_execution", {}).get("executed_blocks"),
            "executed_inst": rep.metrics.get("smsp__inst_executed.sum"),      # the executed blocks' (unscaled)
            "blocks": int(rep.metrics["launch__grid_size"]), "waves": rep.extras["timing"].plan.waves,
            "pred_us": rep.metrics["gpu__time_duration.sum"] / 1e3}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--toolchain", default=None)
    ap.add_argument("--executor", default="ptx")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    use_toolchain(a.toolchain)
    import simgpu
    out = {"simgpu": os.path.dirname(simgpu.__file__), "rows": {}}
    for c in load_cases(a.only, a.kernels):
        r = out["rows"][c["name"]] = cost(c, a.reps, a.executor)
        print(f"{c['name']:40s} {r['waves']:8.2f} waves  {r['executed_blocks']!s:>7}/{r['blocks']:<7} blocks  "
              f"{r['executed_inst']:12,.0f} warp inst  cpu {r['cpu_s']:7.3f} s  pred {r['pred_us']:10.2f} us", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
