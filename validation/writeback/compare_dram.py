#!/usr/bin/env python3
"""DRAM bytes, simgpu against ncu on the H200, for the suite (validation/kernels/*.py against
validation/data/h200_ncu.json) or the holdout (validation/holdout/kernels.py against
validation/data/h200_holdout.json).  Issue 22: no parameter is fitted to either set.

  PYTHONPATH=. python validation/writeback/compare_dram.py --set suite|holdout [--only RE]
      [--json OUT] [--max-flops F] [--no-eager]

Per case: predicted and measured DRAM read and write bytes, the model's bytes still dirty in
the L2 at the end, and whether read+write is within 10 %.
"""
import argparse
import importlib.util
import json
import os
import re
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(HERE))
import simgpu  # noqa: E402
import compare_memory as cm  # noqa: E402

R, W = "dram__bytes_read.sum", "dram__bytes_write.sum"


def holdout():
    spec = importlib.util.spec_from_file_location("holdout_kernels", os.path.join(ROOT, "validation", "holdout", "kernels.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules["holdout_kernels"] = mod
    spec.loader.exec_module(mod)
    with open(os.path.join(ROOT, "validation", "data", "h200_holdout.json")) as f:
        data = json.load(f)["cases"]
    meas = {k: v["ncu"]["metrics"] for k, v in data.items() if "ncu" in v}
    return mod.cases(tiny=False), meas


def suite():
    return cm.cases(), cm.measurements([os.path.join(ROOT, "validation", "data")])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", choices=("suite", "holdout"), required=True)
    ap.add_argument("--only", default=None)
    ap.add_argument("--skip", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--no-eager", action="store_true",
                    help="the model before issue 22: l2_dirty_max_bytes=0 (dirty lines leave only when evicted)")
    ap.add_argument("--max-flops", type=float, default=1.1e9, help="as compare_memory.py: skip larger cases")
    ap.add_argument("--include", default="matmul_tiled_bounds_n1000|matmul_naive_n2048|matmul_tiled_n2048",
                    help="as compare_memory.py: simulate these whatever their size")
    a = ap.parse_args()
    cases, meas = holdout() if a.set == "holdout" else suite()
    gpu, note = cm.calibrated_gpu([os.path.join(ROOT, "validation", "data")])
    if a.no_eager:
        gpu = gpu.with_(l2_dirty_max_bytes=0)
    out = {}
    if a.json and os.path.exists(a.json):
        with open(a.json) as f:
            out = json.load(f)
    for c in cases:
        n = c["name"]
        if n not in meas or R not in meas[n] or (a.only and not re.search(a.only, n)) or n in out:
            continue
        if a.skip and re.search(a.skip, n):
            continue
        if (c.get("flops") or 0) > a.max_flops and not (a.include and re.search(a.include, n)):
            continue
        t0 = time.time()
        try:
            rep = simgpu.launch(c["kernel"], c["grid"], c["block"], c["args"](np.random.default_rng(0)),
                                gpu=gpu, timing=False)
        except Exception as e:  # noqa: BLE001
            print(f"{n}: failed {e!r}", flush=True)
            continue
        m = rep.metrics
        pr, pw = m.get(R, 0.0), m.get(W, 0.0)
        qr, qw = meas[n][R], meas[n][W]
        err = (pr + pw - qr - qw) / (qr + qw) if qr + qw else float("inf")
        out[n] = dict(pred_read=pr, pred_write=pw, dirty_end=m.get("simgpu__l2_dirty_bytes_at_end.sum", 0.0),
                      meas_read=qr, meas_write=qw, error=err, ok=abs(err) <= 0.10, sim_s=time.time() - t0)
        print(f"{n:40s} R {pr/1e6:9.2f}/{qr/1e6:9.2f} W {pw/1e6:9.2f}/{qw/1e6:9.2f} dirty {out[n]['dirty_end']/1e6:7.2f} "
              f"err {100*err:+7.1f}% {'ok' if out[n]['ok'] else 'OFF'} ({out[n]['sim_s']:.0f} s)", flush=True)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(out, f, indent=1)
    ok = sum(v["ok"] for v in out.values())
    print(f"{a.set}: {ok} of {len(out)} within 10 % (DRAM read+write)")


if __name__ == "__main__":
    main()
