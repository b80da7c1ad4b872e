"""Call 7 (data/lecture_h200_call7.json) against the model.

    python validation/lecture/compare7.py

  tiles     360 random shapes (no sweep's): how close cuBLAS's tile is to the best wave
            efficiency among the large Hopper tiles it runs (efficiency = M N over the area of
            the whole waves of tiles on the kernel's persistent grid), and each tile's busy rate
            (kernel alone, a profiled burst: the whole waves' work over the duration)
  holdout   square bf16 N = 112..8176 step 64 (N = 48 mod 64), the second fresh hold-out, run
            once with the model as it stood after call 6 (simgpu.model.gemm unchanged since):
            the issue's metrics on the raw and clock-normalised back-to-back times (as
            compare6.py), and on the profiled kernel-alone durations against the model's kernel
            time at the maximum clock (the bursts run at it), with the tile match
Writes data/lecture_compare7.json.  Nothing here feeds back into the model.
"""
from __future__ import annotations

import json
import math
import os
import statistics as st
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
DATA = os.path.join(HERE, "..", "data")

from compare6 import sweep_metrics  # noqa: E402
from compare_kernels5 import NAME, gpu_seconds  # noqa: E402
from compare_repeats import spearman  # noqa: E402
from simgpu.model.gemm import gemm  # noqa: E402

BIG = [(192, 192), (320, 128), (256, 128), (128, 256), (128, 160), (192, 128), (128, 192), (160, 256),
       (256, 160), (128, 320), (160, 128)]


def kernel_of(events):
    ks = [e for e in events if "nvjet" in e["name"]]
    if not ks:
        return None
    m = NAME.match(ks[-1]["name"])
    grid = ks[-1].get("grid") or [132, 1, 1]
    return {"name": ks[-1]["name"], "tile": (int(m[1]), int(m[2])) if m else None,
            "ctas": grid[0] * grid[1] * grid[2], "seconds": st.median(e["dur_us"] for e in ks) * 1e-6}


def wave_eff(m, n, bm, bn, ctas=132):
    """cuBLAS's BM runs along torch's N (column-major C^T = B^T A^T)."""
    tiles = math.ceil(n / bm) * math.ceil(m / bn)
    return m * n / (math.ceil(tiles / ctas) * ctas * bm * bn)


def tiles(d):
    gaps, rates = [], {}
    for tag, g in d["tiles"].items():
        m, n, k = map(int, tag.split("x"))
        kr = kernel_of(g)
        if not kr or not kr["tile"]:
            continue
        bm, bn = kr["tile"]
        pick = wave_eff(m, n, bm, bn, kr["ctas"])
        best = max(wave_eff(m, n, a, b) for a, b in BIG)
        gaps.append(best - pick)
        waves = math.ceil(math.ceil(n / bm) * math.ceil(m / bn) / kr["ctas"])
        rates.setdefault(f"{bm}x{bn}", []).append(waves * 132 * 2.0 * bm * bn * math.ceil(k / 64) * 64 / kr["seconds"])
    g = np.array(gaps)
    return {"shapes": len(gaps), "pick_within_2pct_of_best_wave_eff": float(np.mean(g < 0.02)),
            "pick_within_5pct": float(np.mean(g < 0.05)), "worst_gap": float(g.max()),
            "busy_tflops_by_tile": {t: {"n": len(v), "median": st.median(v) / 1e12}
                                    for t, v in sorted(rates.items(), key=lambda kv: -len(kv[1]))}}


def kernel_alone(d, ns):
    kern = {n: kernel_of(d["holdout_kernels"].get(str(n), [])) for n in ns}
    ns = [n for n in ns if kern[n] and n >= 1024]
    meas = np.array([2.0 * n ** 3 / kern[n]["seconds"] for n in ns])
    est = {n: gemm(n, n, n, "bf16", sm_clock_hz="max") for n in ns}
    pred = np.array([2.0 * n ** 3 / gpu_seconds(est[n]) for n in ns])
    cl = []
    for i in range(len(ns) - 1):
        dm, dp = 1 - meas[i + 1] / meas[i], 1 - pred[i + 1] / pred[i]
        if dm > 0.05:
            cl.append({"from": ns[i], "drop": float(dm), "predicted_drop": float(dp),
                       "matched": bool(dp > 0.05 and abs(dp - dm) <= 0.3 * dm)})
    match = [est[n].chosen.tile[:2] in (kern[n]["tile"], kern[n]["tile"][::-1]) for n in ns if kern[n]["tile"]]
    return {"sizes": len(ns), "spearman": spearman(meas, pred), "median_abs_err": float(np.median(np.abs(meas / pred - 1))),
            "tile_match": float(np.mean(match)), "cliffs": cl, "cliffs_matched": sum(c["matched"] for c in cl)}


def main():
    d = json.load(open(os.path.join(DATA, "lecture_h200_call7.json")))
    ns = sorted(int(n) for n in d["holdout"])
    res = {"tiles": tiles(d), "holdout": sweep_metrics({"sweep": d["holdout"]}, ns),
           "holdout_kernel_alone": kernel_alone(d, ns)}
    with open(os.path.join(DATA, "lecture_compare7.json"), "w") as f:
        json.dump(res, f, indent=1)
    t = res["tiles"]
    print(f"tiles: {t['shapes']} random shapes; cuBLAS's tile within 2 % of the best wave efficiency among the large "
          f"tiles at {t['pick_within_2pct_of_best_wave_eff']:.2f} of them, within 5 % at {t['pick_within_5pct']:.2f}, "
          f"worst {t['worst_gap']:.3f}")
    print("  busy rate (kernel alone, burst clock) by tile:",
          ", ".join(f"{k} {v['median']:.0f} TF (n={v['n']})" for k, v in t["busy_tflops_by_tile"].items() if v["n"] >= 5))
    m = res["holdout"]
    print(f"HOLD-OUT 2 N = 112..8176 step 64 (first look): reference clock {m['reference_mhz']:.0f} MHz, "
          f"invalid probes {m['invalid_probes']}")
    for k in ("raw", "normalised"):
        a = m[k]
        print(f"  {k:10s} Spearman {a['spearman']:.3f} (N>=2048 {a['spearman_ge2048']:.3f}), median |err| "
              f"{a['median_abs_err']:.3f}, spread {a['spread_median']:.3f}; reproducible cliffs "
              f"{a['reproducible_matched']}/{a['reproducible_cliffs']}; median-curve cliffs "
              f"{a['median_curve_matched']}/{a['median_curve_cliffs']}; false alarms {len(a['predicted_cliffs_not_measured'])}")
    ka = res["holdout_kernel_alone"]
    print(f"  kernel alone vs model at the max clock ({ka['sizes']} sizes >= 1024): Spearman {ka['spearman']:.3f}, "
          f"median |err| {ka['median_abs_err']:.3f}, tile match {ka['tile_match']:.2f}, cliffs {ka['cliffs_matched']}/{len(ka['cliffs'])}")
    for c in ka["cliffs"]:
        print(f"      {c['from']:5d} measured {c['drop']:+.3f} predicted {c['predicted_drop']:+.3f} {'MATCH' if c['matched'] else ''}")
    return res


if __name__ == "__main__":
    main()
