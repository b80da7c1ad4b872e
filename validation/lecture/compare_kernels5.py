"""The model's kernel choice and GPU time against call 5's cuBLAS kernel names and profiler
durations (data/lecture_h200_kernels5.json), and the issue's metrics against the median of the
5 repeats (data/lecture_h200_repeats.json, through compare_repeats.analyse).

    python validation/lecture/compare_kernels5.py

  tile match     the model's chosen (BM, BN), either orientation, equals the tile in cuBLAS's
                 kernel name (nvjet_sm90_tst_<BM>x<BN>_64x<stages>_<cluster>_...)
  GPU time       the model's max(compute, L2, HBM) + kernel floor (no host floor) against the
                 median profiler duration of 3 calls (the kernel alone, memset not counted)
Writes data/lecture_compare_kernels5.json.  Nothing here feeds back into the model.
"""
from __future__ import annotations

import json
import os
import re
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
DATA = os.path.join(HERE, "..", "data")

from compare_repeats import analyse, spearman  # noqa: E402
from simgpu.model.gemm import gemm  # noqa: E402

NAME = re.compile(r"nvjet_sm90_tst_(\d+)x(\d+)_64x(\d+)_(\d)x(\d)_([hv])_bz_(coop[AB]_)?NN([NT])")


def cublas_kernels():
    d = json.load(open(os.path.join(DATA, "lecture_h200_kernels5.json")))["gemm_square_bf16"]
    out = {}
    for n, ev in d.items():
        if n.startswith("_"):
            continue
        ks = [e for e in ev if e["cat"] == "kernel"]
        m = NAME.match(ks[-1]["name"])
        out[int(n)] = {"name": ks[-1]["name"], "tile": (int(m[1]), int(m[2])) if m else None,
                       "stages": int(m[3]) if m else None, "cluster": (int(m[4]), int(m[5])) if m else None,
                       "grid": ks[-1].get("grid"), "memset": any(e["cat"] == "gpu_memset" for e in ev),
                       "gpu_s": statistics.median(e["dur_us"] for e in ks) * 1e-6}
    return out


def gpu_seconds(est):
    c = est.chosen
    return max(c.compute_s, c.l2_s, c.hbm_s) + c.floor_s


def main():
    cub = cublas_kernels()
    ns = sorted(cub)
    est = {n: gemm(n, n, n, "bf16") for n in ns}
    match = {n: est[n].chosen.tile[:2] in (cub[n]["tile"], cub[n]["tile"][::-1]) for n in ns if cub[n]["tile"]}
    big = [n for n in ns if n >= 1024]
    # where the tiles differ: is cuBLAS's own tile (when the catalogue has it) as fast in the model?
    def own(n):
        t = cub[n]["tile"]
        alt = [c for c in est[n].candidates if c.tile[:2] in (t, t[::-1]) and c.family == "sm90"]
        return min(c.seconds for c in alt) / est[n].seconds if alt else None
    diff = [n for n in big if not match[n]]
    eq = [n for n in diff if own(n) is not None and own(n) <= 1.02]
    missing = [n for n in diff if own(n) is None]
    meas = np.array([cub[n]["gpu_s"] for n in ns])
    pred = np.array([gpu_seconds(est[n]) for n in ns])
    sel = np.array([n >= 1024 for n in ns])
    tf_m = np.array([2.0 * n ** 3 for n in ns]) / meas
    tf_p = np.array([2.0 * n ** 3 for n in ns]) / pred
    res = {"tile_match_all": sum(match.values()) / len(match),
           "tile_match_ge1024": sum(match[n] for n in big) / len(big),
           "gpu_time_spearman_ge1024": spearman(tf_m[sel], tf_p[sel]),
           "gpu_time_median_abs_err_ge1024": float(np.median(np.abs(pred[sel] / meas[sel] - 1))),
           "persistent_grid_le_sms": sum(np.prod(cub[n]["grid"]) <= 132 for n in ns) / len(ns),
           "memset_from": min(n for n in ns if cub[n]["memset"]),
           "mismatch_ge1024": len(diff), "mismatch_within_2pct_in_model": len(eq),
           "mismatch_tile_not_in_catalogue": len(missing)}
    # back-to-back median time (5 repeats, sustained clocks) over the kernel-alone duration
    rep0 = {r["n"]: statistics.median(r["seconds"]) for r in
            json.load(open(os.path.join(DATA, "lecture_h200_repeats.json")))["square_bf16"]}
    ratio = {n: rep0[n] / cub[n]["gpu_s"] for n in ns if n in rep0 and n >= 1536}
    res["repeats_over_kernel_time"] = {
        f"{lo}-{hi}": float(np.median([v for n, v in ratio.items() if lo <= n < hi]))
        for lo, hi in ((1536, 3072), (3072, 4608), (4608, 6144), (6144, 8193))}
    # profiler GPU-time cliffs on the step-64 sweep (kernel alone, one short burst)
    step = [n for n in ns if n % 64 == 0]
    tm = np.array([2.0 * n ** 3 / cub[n]["gpu_s"] for n in step])
    tp = np.array([2.0 * n ** 3 / gpu_seconds(est[n]) for n in step])
    res["profiler_cliffs"] = [{"from": step[i], "drop": float(1 - tm[i + 1] / tm[i]),
                               "predicted_drop": float(1 - tp[i + 1] / tp[i])}
                              for i in range(len(step) - 1) if 1 - tm[i + 1] / tm[i] > 0.05 and step[i] >= 1024]
    pc = res["profiler_cliffs"]
    res["profiler_cliffs_matched"] = sum(c["predicted_drop"] > 0.05 and abs(c["predicted_drop"] - c["drop"]) <= 0.3 * c["drop"]
                                         for c in pc)
    # the metrics on the median of the 5 repeats (back-to-back, host floor included)
    rep = json.load(open(os.path.join(DATA, "lecture_h200_repeats.json")))["square_bf16"]
    rn = np.array([r["n"] for r in rep])
    reps = np.array([r["tflops"] for r in rep]).T
    a = analyse(rn, reps, np.array([gemm(n, n, n, "bf16").tflops for n in rn]))
    res["repeats"] = {k: a[k] for k in ("spearman", "spearman_ge2048", "median_abs_err", "reproducible_cliffs",
                                         "reproducible_matched", "median_curve_cliffs", "median_curve_matched",
                                         "predicted_cliffs_not_measured")}
    res["repeats"]["reproducible"] = [c for c in a["cliffs"] if c["reproducible"]]
    # medians at each reproducible cliff: the repeats' (sustained) vs the profiler's (short burst)
    med = dict(zip(rn.tolist(), np.median(reps, 0).tolist()))
    res["reproducible_cliffs_profiler"] = [
        {"from": c["from"], "to": c["to"], "repeats_drop": c["median_drop"],
         "profiler_drop": 1 - (2.0 * c["to"] ** 3 / cub[c["to"]]["gpu_s"]) / (2.0 * c["from"] ** 3 / cub[c["from"]]["gpu_s"]),
         "model_kernel_drop": 1 - (c["to"] ** 3 / gpu_seconds(est[c["to"]])) / (c["from"] ** 3 / gpu_seconds(est[c["from"]])),
         "kernel_from": cub[c["from"]]["name"], "kernel_to": cub[c["to"]]["name"],
         "repeats_over_profiler_time": [2.0 * x ** 3 / med[x] / 1e12 / cub[x]["gpu_s"] for x in (c["from"], c["to"])]}
        for c in res["repeats"]["reproducible"]]
    res["table"] = [{"n": n, "cublas": cub[n]["name"], "cublas_tile": cub[n]["tile"], "grid": cub[n]["grid"],
                     "model": est[n].kernel, "tile_match": match.get(n), "gpu_us": cub[n]["gpu_s"] * 1e6,
                     "model_gpu_us": gpu_seconds(est[n]) * 1e6} for n in ns]
    with open(os.path.join(DATA, "lecture_compare_kernels5.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"tile match: all sizes {res['tile_match_all']:.2f}, N >= 1024 {res['tile_match_ge1024']:.2f}; "
          f"grid <= 132 CTAs (persistent) at {res['persistent_grid_le_sms']:.2f} of sizes; memset from N = {res['memset_from']}")
    print(f"tiles differ at {res['mismatch_ge1024']} sizes >= 1024: the model's time for cuBLAS's tile within 2 % of "
          f"its pick at {res['mismatch_within_2pct_in_model']}, cuBLAS's tile not in the catalogue at "
          f"{res['mismatch_tile_not_in_catalogue']}")
    print("back-to-back median (5 repeats) / kernel-alone time, median by N range:",
          ", ".join(f"{k} {v:.2f}" for k, v in res["repeats_over_kernel_time"].items()))
    print(f"GPU time vs profiler (N >= 1024): Spearman {res['gpu_time_spearman_ge1024']:.3f}, "
          f"median |err| {res['gpu_time_median_abs_err_ge1024']:.3f}")
    r = res["repeats"]
    print(f"median of repeats: Spearman {r['spearman']:.3f} (N>=2048 {r['spearman_ge2048']:.3f}), median |err| "
          f"{r['median_abs_err']:.3f}; reproducible cliffs matched {r['reproducible_matched']}/{r['reproducible_cliffs']}; "
          f"median-curve cliffs matched {r['median_curve_matched']}/{r['median_curve_cliffs']}; "
          f"false alarms {r['predicted_cliffs_not_measured']}")
    for c in res["reproducible_cliffs_profiler"]:
        print(f"  cliff {c['from']}->{c['to']}: repeats {c['repeats_drop']:+.3f}, profiler {c['profiler_drop']:+.3f}, "
              f"model kernel time {c['model_kernel_drop']:+.3f}; "
              f"repeats time / kernel time {c['repeats_over_profiler_time'][0]:.2f} -> {c['repeats_over_profiler_time'][1]:.2f}; "
              f"{c['kernel_from'][15:45]} -> {c['kernel_to'][15:45]}")
    print(f"profiler (kernel-alone) cliffs N >= 1024: {len(pc)}, matched at the same N within 30 % depth: "
          f"{res['profiler_cliffs_matched']}")
    print("profiler cliffs (N >= 1024, step 64):",
          ", ".join(f"{c['from']} {c['drop']:+.2f} (pred {c['predicted_drop']:+.2f})" for c in res["profiler_cliffs"]))
    return res


if __name__ == "__main__":
    main()
