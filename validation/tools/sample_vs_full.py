#!/usr/bin/env python3
"""Model against model: a sampled launch (``simgpu.predict(..., sample=True)``) beside the same
launch run over every block (``sample=False``), per case: the predicted time, the L1 and L2 hit
rates of the blocks run and the DRAM bytes (the timing model's: a sample's scaled up, with the
write-backs a full run would do), and their ratios sampled / full.  No card data is read: this checks
that wave sampling (timing/sampling.py) reproduces what full detail gives.

    PYTHONPATH=. python validation/tools/sample_vs_full.py --kernels validation/holdout \\
        --toolchain <CUDA 13.0.88 wheels> --only 'spmv_csr_vector|broadcast' [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from compare_timing import load_cases, use_toolchain      # noqa: E402

KEYS = ("time_us", "l1_hit_pct", "l2_hit_pct", "dram_MB")


def one(c, sample, executor):
    from simgpu import predict
    args = c["args"](np.random.default_rng(0))
    t0 = time.process_time()
    rep = predict(c["kernel"], c["grid"], c["block"], args, sample=sample, executor=executor)
    lv, r = rep.bytes_by_level, rep.extras["timing"]
    out = {"time_us": rep.metrics["gpu__time_duration.sum"] / 1e3, "l1_hit_pct": lv["L1"]["hit_rate_pct"],
           "l2_hit_pct": lv["L2"]["hit_rate_pct"],     # the executed blocks' hit rates
           "dram_MB": r.dram_bytes / 1e6}              # the timing model's: scaled, with the write-backs
    out["cpu_s"] = time.process_time() - t0
    out["waves"], out["bottleneck"] = r.plan.waves, r.bottleneck
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kernels", default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--toolchain", default=None)
    ap.add_argument("--executor", default="ptx")
    ap.add_argument("--strata", type=int, default=None, help="sample this many strata of full waves "
                    "(1: the first wave alone, as before stratified sampling; default sampling.STRATA)")
    ap.add_argument("--no-full", action="store_true", help="the sampled launch only")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    use_toolchain(a.toolchain)
    if a.strata is not None:
        from simgpu.timing import sampling
        sampling.stratum_waves.__defaults__ = (a.strata,)
    rows = {}
    for c in load_cases(a.only, a.kernels):
        s = one(c, True, a.executor)
        f = s if a.no_full else one(c, False, a.executor)
        rows[c["name"]] = {"sampled": s, "full": f}
        ratio = "  ".join(f"{k} {s[k]:.4g}/{f[k]:.4g}={s[k] / f[k]:.3f}" if f[k] else f"{k} {s[k]:.4g}/0"
                          for k in KEYS) if not a.no_full else "  ".join(f"{k} {s[k]:.4g}" for k in KEYS)
        print(f"{c['name']:36s} {s['waves']:7.2f} waves  {ratio}  (cpu {s['cpu_s']:.1f}/{f['cpu_s']:.1f} s)",
              flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
