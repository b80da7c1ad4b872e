"""Call 6 (data/lecture_h200_call6.json) against the model: what moves the back-to-back times,
and the mystery-plot metrics on a re-measured check sweep and on a sweep never seen before.

    python validation/lecture/compare6.py

  diag      22 sizes, 3 repeats each: the spread (max - min) / median of the repeats' eager
            times, raw and as SM cycles (time x the clock probe read right after the sample);
            eager over graph replay (the host's share); eager over the profiled 20-call burst
            (sustained over burst); how often NVML reported the software power cap
  sweeps    square bf16, 3 repeats, step 64: (a) N = 64..8192, the check sweep of calls 1 and 4,
            measured again; (b) N = 80..8144 (N = 16 mod 64), never measured before and never
            looked at while building the model (this script is its first use).  Each with the
            issue's metrics (compare_repeats.analyse: Spearman, median |error|, cliffs = a
            > 5 % drop from N to N + 64, matched = predicted at the same N with depth within
            30 %) on (1) the raw times and (2) clock-normalised times: time x probe clock /
            reference clock, for N >= 1536 only (there the eager loop is GPU-bound: within 15 %
            of the graph replay in diag), the reference being the median valid probe clock of
            the sweep; a probe reading above the card's 1980 MHz maximum is invalid and that
            repeat is left out of the normalised series at that N.
  itself    the same cliff metric with one measurement of the card as the "model" of another
            (calls 1 and 4 against call 6 and back): what the metric allows the GPU itself
  bursts    the model's kernel time at the sustained clock and at sm_clock_hz="max" against the
            kernel-alone durations of calls 5 and 6 (profiled bursts)
Writes data/lecture_compare6.json.  Nothing here feeds back into the model.
"""
from __future__ import annotations

import json
import os
import statistics as st
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
DATA = os.path.join(HERE, "..", "data")

from compare_kernels5 import cublas_kernels, gpu_seconds  # noqa: E402
from compare_repeats import analyse  # noqa: E402
from simgpu.model.gemm import gemm  # noqa: E402

MAX_MHZ = 1980.0          # the card's maximum SM clock (nvidia-smi clocks.max.sm)
GPU_BOUND_FROM = 1536


def valid(mhz):
    return mhz is not None and 0 < mhz <= MAX_MHZ + 10


def diag(d):
    rows = []
    for n, v in sorted(d["diag"].items(), key=lambda kv: int(kv[0])):
        runs = v["runs"]
        raw, cyc, graph = [], [], []
        power_cap = tot = 0
        for r in runs:
            t = st.median(x["s"] for x in r["eager"])
            pm = [x["probe_mhz"] for x in r["eager"] if valid(x["probe_mhz"])]
            raw.append(t)
            if pm:
                cyc.append(t * st.median(pm) * 1e6)
            graph += [x["s"] for x in r.get("graph", [])]
            for x in r["eager"]:
                if x.get("nvml"):
                    tot += 1
                    power_cap += bool(x["nvml"]["reasons"] & 4)
        prof = [x["dur_us"] * 1e-6 for x in v.get("profiled", []) if "nvjet" in x["name"]]
        sp = lambda a: (max(a) - min(a)) / st.median(a) if len(a) > 1 else float("nan")  # noqa: E731
        rows.append({"n": int(n), "eager_us": st.median(raw) * 1e6, "spread_raw": sp(raw), "spread_cycles": sp(cyc),
                     "eager_over_graph": st.median(raw) / st.median(graph) if graph else None,
                     "eager_over_burst": st.median(raw) / st.median(prof) if prof else None,
                     "power_cap_fraction": power_cap / tot if tot else None})
    return rows


def repeat_tflops(sw, ns):
    """[repeat, N] TFLOP/s of a swept square sweep's repeats, in repeat order."""
    return np.array([[2.0 * n ** 3 / r["seconds"] / 1e12 for r in sorted(sw[str(n)], key=lambda r: r["rep"])]
                     for n in ns]).T


def sweep_metrics(d, ns):
    sw = d["sweep"]
    pred = np.array([gemm(n, n, n, "bf16").tflops for n in ns])
    reps = repeat_tflops(sw, ns)
    out = {"raw": analyse(np.array(ns), reps, pred)}
    clocks = [r["probe_mhz"] for n in ns for r in sw[str(n)] if valid(r["probe_mhz"])]
    ref = st.median(clocks)
    norm = []
    for i, n in enumerate(ns):
        raw = list(reps[:, i])
        runs = sorted(sw[str(n)], key=lambda r: r["rep"])
        if n < GPU_BOUND_FROM or not any(valid(r["probe_mhz"]) for r in runs):
            norm.append(raw)    # host-bound, or no valid probe at this N: the raw times stand
            continue
        row = [x * ref / r["probe_mhz"] if valid(r["probe_mhz"]) else np.nan for x, r in zip(raw, runs)]
        # a repeat with no valid clock: the median of the others stands in (keeps the array whole;
        # it adds no information, and "reproducible" then rests on the valid repeats)
        good = [x for x in row if not np.isnan(x)]
        norm.append([x if not np.isnan(x) else float(np.median(good)) for x in row])
    out["no_valid_probe_sizes"] = [n for n in ns if n >= GPU_BOUND_FROM
                                   and not any(valid(r["probe_mhz"]) for r in sw[str(n)])]
    out["normalised"] = analyse(np.array(ns), np.array(norm).T, pred)
    out["reference_mhz"] = ref
    out["invalid_probes"] = sum(1 for n in ns for r in sw[str(n)] if n >= GPU_BOUND_FROM and not valid(r["probe_mhz"]))
    for k in ("raw", "normalised"):
        a = out[k]
        big = [c for c in a["cliffs"] if c["from"] >= 1024 and c["median_drop"] > 0.05]
        a["cliffs_ge1024"] = len(big)
        a["cliffs_ge1024_matched"] = sum(c["matched"] for c in big)
    return out


def bursts(d):
    """The model's kernel time (no host floor) at the sustained clock and at the card's maximum
    clock, against kernel-alone durations: call 5's profiled 3-call bursts (every N >= 1024, step
    32) and call 6's 20-call bursts (the first 10 calls, before the power limit bites)."""
    meas = {("call 5", n): c["gpu_s"] for n, c in cublas_kernels().items() if n >= 1024}
    for n, v in d["diag"].items():
        ks = [x["dur_us"] for x in v.get("profiled", []) if "nvjet" in x["name"]][:10]
        if ks:
            meas[("call 6", int(n))] = st.median(ks) * 1e-6
    out = {}
    for call in ("call 5", "call 6"):
        for clk in ("sustained", "max"):
            err = [gpu_seconds(gemm(n, n, n, "bf16", sm_clock_hz=clk)) / t - 1 for (c, n), t in meas.items() if c == call]
            out[f"{call} {clk}"] = {"sizes": len(err), "median_abs_err": float(np.median(np.abs(err))),
                                    "median_signed_err": float(np.median(err))}
    return out


def hardware_against_itself(d):
    """The issue's cliff metric with one measurement of the card standing in for the model: call
    4's median of 5 repeats (2026-11-30) and call 1's single sweep as "predictions" of call 6's
    step-64 sweep, and call 6's median as one of call 4's.  The same card, driver and library:
    what matching cliffs "within 30 % depth" can reach when the predictor is the GPU itself."""
    c4 = json.load(open(os.path.join(DATA, "lecture_h200_repeats.json")))["square_bf16"]
    c1 = {r["n"]: r["tflops"] for r in json.load(open(os.path.join(DATA, "lecture_h200.json")))["check"]["square_bf16"]}
    sw = d["sweep"]
    ns = sorted(int(n) for n in sw if int(n) % 64 == 0)
    reps6 = repeat_tflops(sw, ns)
    c4m = {r["n"]: float(np.median(r["tflops"])) for r in c4}
    out = {}
    for name, pred in (("call 4 median -> call 6", [c4m[n] for n in ns]), ("call 1 -> call 6", [c1[n] for n in ns])):
        a = analyse(np.array(ns), reps6, np.array(pred))
        out[name] = {k: a[k] for k in ("spearman", "median_abs_err", "median_curve_matched", "median_curve_cliffs",
                                       "reproducible_matched", "reproducible_cliffs")}
    c6m = {n: float(np.median(reps6[:, i])) for i, n in enumerate(ns)}
    n4 = np.array([r["n"] for r in c4])
    a = analyse(n4, np.array([r["tflops"] for r in c4]).T, np.array([c6m[n] for n in n4]))
    out["call 6 median -> call 4"] = {k: a[k] for k in ("spearman", "median_abs_err", "median_curve_matched",
                                                         "median_curve_cliffs", "reproducible_matched",
                                                         "reproducible_cliffs")}
    return out


def main():
    d = json.load(open(os.path.join(DATA, "lecture_h200_call6.json")))
    res = {"diag": diag(d), "bursts": bursts(d), "hardware_against_itself": hardware_against_itself(d)}
    check = sorted(int(n) for n in d["sweep"] if int(n) % 64 == 0)
    fresh = sorted(int(n) for n in d["sweep"] if int(n) % 64 == 16)
    res["check_step64"] = sweep_metrics(d, check)
    res["holdout_16mod64"] = sweep_metrics(d, fresh)
    with open(os.path.join(DATA, "lecture_compare6.json"), "w") as f:
        json.dump(res, f, indent=1)
    print("diag (3 repeats a size): spread raw / as cycles, eager/graph, eager/burst, power-cap share")
    for r in res["diag"]:
        print(f"  {r['n']:5d} {r['eager_us']:8.1f} us  {r['spread_raw']:.3f} / {r['spread_cycles']:.3f}  "
              f"{r['eager_over_graph']:.2f}  {r['eager_over_burst']:.2f}  {r['power_cap_fraction']:.2f}")
    dg = res["diag"]
    print(f"  median spread raw {np.median([r['spread_raw'] for r in dg]):.3f}, as cycles "
          f"{np.nanmedian([r['spread_cycles'] for r in dg]):.3f}; median eager/burst "
          f"{np.median([r['eager_over_burst'] for r in dg]):.2f}; power cap in "
          f"{np.mean([r['power_cap_fraction'] for r in dg]):.2f} of NVML windows")
    print("kernel alone (profiled bursts) against the model's kernel time at the sustained / maximum SM clock:")
    for k, v in res["bursts"].items():
        print(f"  {k:18s} {v['sizes']:4d} sizes: median |err| {v['median_abs_err']:.3f} (signed {v['median_signed_err']:+.3f})")
    print("the H200 against itself (one measurement as the 'model' of another, the issue's cliff metric):")
    for k, v in res["hardware_against_itself"].items():
        print(f"  {k:24s} Spearman {v['spearman']:.3f}, median |err| {v['median_abs_err']:.3f}, cliffs "
              f"{v['median_curve_matched']}/{v['median_curve_cliffs']}, reproducible {v['reproducible_matched']}/{v['reproducible_cliffs']}")
    for key, title in (("check_step64", "check sweep N = 64..8192 step 64 (re-measured)"),
                       ("holdout_16mod64", "HOLD-OUT N = 80..8144 step 64 (first look)")):
        m = res[key]
        print(f"{title}: reference clock {m['reference_mhz']:.0f} MHz, invalid probes {m['invalid_probes']}")
        for k in ("raw", "normalised"):
            a = m[k]
            print(f"  {k:10s} Spearman {a['spearman']:.3f} (N>=2048 {a['spearman_ge2048']:.3f}), median |err| "
                  f"{a['median_abs_err']:.3f}, spread {a['spread_median']:.3f}; reproducible cliffs "
                  f"{a['reproducible_matched']}/{a['reproducible_cliffs']}; median-curve cliffs "
                  f"{a['median_curve_matched']}/{a['median_curve_cliffs']} (N>=1024: "
                  f"{a['cliffs_ge1024_matched']}/{a['cliffs_ge1024']}); false alarms {len(a['predicted_cliffs_not_measured'])}")
            for c in a["cliffs"]:
                if c["median_drop"] > 0.05 and c["from"] >= 1024:
                    print(f"      {c['from']:5d}->{c['to']:5d} measured {c['median_drop']:+.3f} "
                          f"{'REPRO' if c['reproducible'] else '     '} predicted {c['predicted_drop']:+.3f} "
                          f"{'MATCH' if c['matched'] else ''}")
    return res


if __name__ == "__main__":
    main()
