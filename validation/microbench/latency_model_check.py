#!/usr/bin/env python3
"""simgpu on the stored pointer-chase microbenchmarks (validation/microbench/benches.py,
card data validation/data/h200_microbench.json, H200, 2026-11): does the model charge a
one-thread chase the load-to-use latency of the level that serves it (L1, L2, DRAM, shared)?

  python3 validation/microbench/latency_model_check.py [--json OUT] [--gpu H200]

Same kernels, same footprints and warm-up as on the card; cycles per step = (T(warm + 2S) -
T(warm + S)) / S from the predicted times (every step simulated, sample=False) at the model's clock.  The card's
per-step cycles are the summary's (ncu sm__cycles_elapsed, the same difference).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import benches as B  # noqa: E402  (imports _common first: the numpy patch)

# (name, kernel, footprint bytes, index dtype, card summary key (uint32 chase) or None)
CASES = [("chaseu_8KB", B.mb_chase_u32, 8 * 1024, np.uint32, "L1 hit"),
         ("chaseu_192KB", B.mb_chase_u32, 192 * 1024, np.uint32, "L1 hit (192 KiB footprint)"),
         ("chaseu_1MB", B.mb_chase_u32, 1024 * 1024, np.uint32, "L2 hit"),
         ("chaseu_4MB", B.mb_chase_u32, 4 * 1024 * 1024, np.uint32, "L2 hit (4 MiB)"),
         ("chaseu_128MB", B.mb_chase_u32, 128 * 1024 * 1024, np.uint32, "DRAM (128 MiB random)"),
         ("chase_8KB", B.mb_chase, 8 * 1024, np.int32, None)]


def predict_steps(kernel, arr, steps, gpu):
    from simgpu import predict
    rep = predict(kernel, 1, 1, (arr, np.zeros(1, arr.dtype), np.int64(steps)), sample=False, executor="ptx", gpu=gpu)
    return rep.extras["timing"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", default="H200")
    ap.add_argument("--S", type=int, default=4000)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    card = json.load(open(os.path.join(os.path.dirname(HERE), "data", "h200_microbench.json")))
    est = card["summary"]["latency"]["estimates"]
    out = {"gpu": a.gpu, "S": a.S, "rows": {}}
    for name, kern, nbytes, dt, key in CASES:
        arr, lines = B.chase_array(nbytes)
        arr = arr.astype(dt)
        warm = lines if nbytes <= 64 * 1024 * 1024 else 0
        t0 = time.time()
        r1 = predict_steps(kern, arr, warm + a.S, a.gpu)
        r2 = predict_steps(kern, arr, warm + 2 * a.S, a.gpu)
        per = (r2.cycles - r1.cycles) / a.S
        c = est[key]["cycles_per_step"] if key else None
        out["rows"][name] = {"model_cycles_per_step": per, "card_cycles_per_step": c, "warm_steps": warm,
                             "wall_s": time.time() - t0}
        print(f"{name:14s} model {per:8.1f} cycles/step   card {c if c is None else round(c, 1)!s:>8s}   "
              f"({time.time() - t0:.1f} s)", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
