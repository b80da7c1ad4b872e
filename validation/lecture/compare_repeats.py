"""The mystery plot against the REPEATED square bf16 sweep (call 4): which cliffs are real.

    python validation/lecture/compare_repeats.py

Reads data/lecture_h200_repeats.json (5 repeats of N = 64..8192 step 64, interleaved in one
random order) and, for comparison, call 1's single sweep (data/lecture_h200.json).

  median      per N, the median over the repeats; spread = (max - min) / median
  cliff       the issue's definition: a drop of more than 5 % from N to N + 64
  reproducible cliff   a drop of more than 5 % in EVERY repeat, and the ranges of the repeats
              at N and at N + 64 do not overlap (the drop is beyond the repeat spread)
  noise cliff a > 5 % drop in the median or in call 1's sweep that is not reproducible

Targets evaluated on the median curve: Spearman, median |error|, and the fraction of
reproducible cliffs predicted at the same N with depth within 30 %.  Writes
data/lecture_compare_repeats.json.  Nothing here feeds back into the model.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
DATA = os.path.join(HERE, "..", "data")

from simgpu.model.attention import attention  # noqa: E402
from simgpu.model.gemm import gemm  # noqa: E402


def spearman(a, b):
    ra = np.argsort(np.argsort(a)).astype(float)
    rb = np.argsort(np.argsort(b)).astype(float)
    return float(np.corrcoef(ra, rb)[0, 1])


def analyse(ns, reps, pred):
    """ns: sizes; reps: array [R, len(ns)] of TFLOP/s; pred: predicted TFLOP/s."""
    med = np.median(reps, axis=0)
    lo, hi = reps.min(axis=0), reps.max(axis=0)
    out = {"spearman": spearman(med, pred), "median_abs_err": float(np.median(np.abs(med / pred - 1))),
           "spread_median": float(np.median((hi - lo) / med)), "spread_max": float(np.max((hi - lo) / med))}
    big = ns >= 2048
    out["spearman_ge2048"] = spearman(med[big], pred[big])
    cl = []
    for i in range(len(ns) - 1):
        drops = 1 - reps[:, i + 1] / reps[:, i]
        dmed = 1 - med[i + 1] / med[i]
        repro = bool(np.all(drops > 0.05) and hi[i + 1] < lo[i])
        if not (repro or dmed > 0.05 or np.any(drops > 0.05)):
            continue
        dp = 1 - pred[i + 1] / pred[i]
        ok = bool(dp > 0.05 and abs(dp - dmed) <= 0.3 * dmed)
        cl.append({"from": int(ns[i]), "to": int(ns[i + 1]), "median_drop": float(dmed),
                   "drops": [float(x) for x in drops], "reproducible": repro, "predicted_drop": float(dp),
                   "matched": ok, "n_repeats_over_5pct": int(np.sum(drops > 0.05))})
    rc = [c for c in cl if c["reproducible"]]
    out["cliffs"] = cl
    out["reproducible_cliffs"] = len(rc)
    out["reproducible_matched"] = sum(c["matched"] for c in rc)
    out["median_curve_cliffs"] = sum(c["median_drop"] > 0.05 for c in cl)
    out["median_curve_matched"] = sum(c["matched"] for c in cl if c["median_drop"] > 0.05)
    # predicted cliffs that the measurement does not have (false alarms), on the median curve
    fa = [int(ns[i]) for i in range(len(ns) - 1) if 1 - pred[i + 1] / pred[i] > 0.05
          and not 1 - med[i + 1] / med[i] > 0.05]
    out["predicted_cliffs_not_measured"] = fa
    return out


def attention_call4():
    """Call 4's SDPA times (3 repeats each, medians) against the model: math/flash and
    causal/non-causal ratios, and the host cost of one call."""
    d = json.load(open(os.path.join(DATA, "lecture_h200_attention2.json")))
    med = {k: float(np.median(v)) for k, v in d["times_s"].items() if all(isinstance(x, float) for x in v)}
    rows = []
    for T in (1024, 2048, 4096, 8192):
        for c in (0, 1):
            r = {"T": T, "causal": bool(c)}
            for be in ("flash", "efficient", "math"):
                r[f"{be}_us"] = med[f"{T}|{c}|{be}"] * 1e6
                r[f"{be}_pred_us"] = attention(1, 16, T, 64, backend=be, causal=bool(c)).seconds * 1e6
            r["math_over_flash"] = r["math_us"] / r["flash_us"]
            r["math_over_flash_pred"] = r["math_pred_us"] / r["flash_pred_us"]
            rows.append(r)
    for r in rows:
        if r["causal"]:
            nc = [x for x in rows if x["T"] == r["T"] and not x["causal"]][0]
            r["flash_causal_over_full"] = r["flash_us"] / nc["flash_us"]
            r["flash_causal_over_full_pred"] = r["flash_pred_us"] / nc["flash_pred_us"]
    return {"rows": rows, "host_cost": d["host_cost"]}


def main():
    rep = json.load(open(os.path.join(DATA, "lecture_h200_repeats.json")))
    rows = rep["square_bf16"]
    ns = np.array([r["n"] for r in rows])
    reps = np.array([r["tflops"] for r in rows]).T             # [R, N]
    pred = np.array([gemm(n, n, n, "bf16").tflops for n in ns])
    kern = [gemm(n, n, n, "bf16").kernel for n in ns]
    res = {"repeats": analyse(ns, reps, pred)}
    one = json.load(open(os.path.join(DATA, "lecture_h200.json")))["check"]["square_bf16"]
    m1 = {r["n"]: r["tflops"] for r in one}
    call1 = np.array([m1[n] for n in ns])
    # call 1's cliffs, judged against the repeats
    c1 = []
    for i in range(len(ns) - 1):
        if 1 - call1[i + 1] / call1[i] > 0.05:
            rc = [c for c in res["repeats"]["cliffs"] if c["from"] == ns[i]]
            c1.append({"from": int(ns[i]), "drop_call1": float(1 - call1[i + 1] / call1[i]),
                       "reproducible_in_call4": bool(rc and rc[0]["reproducible"])})
    res["call1_cliffs"] = c1
    res["call1_vs_median"] = {"median_abs_diff": float(np.median(np.abs(call1 / np.median(reps, 0) - 1))),
                              "spearman_call1_vs_median": spearman(call1, np.median(reps, 0))}
    res["mid_bf16"] = rep.get("mid_bf16")
    res["long_bf16"] = rep.get("long_bf16")
    res["table"] = [{"n": int(n), "median_tflops": float(np.median(reps[:, i])), "min": float(reps[:, i].min()),
                     "max": float(reps[:, i].max()), "predicted": float(pred[i]), "kernel": kern[i]}
                    for i, n in enumerate(ns)]
    res["attention_call4"] = attention_call4()
    with open(os.path.join(DATA, "lecture_compare_repeats.json"), "w") as f:
        json.dump(res, f, indent=1)
    a = res["repeats"]
    print(f"repeats: {reps.shape[0]}; spread (max-min)/median: median {a['spread_median']:.3f}, max {a['spread_max']:.3f}")
    print(f"median curve vs model: Spearman {a['spearman']:.3f} (N>=2048 {a['spearman_ge2048']:.3f}), "
          f"median |err| {a['median_abs_err']:.3f}")
    print(f"reproducible cliffs: {a['reproducible_cliffs']}, matched {a['reproducible_matched']}; "
          f"median-curve cliffs {a['median_curve_cliffs']}, matched {a['median_curve_matched']}")
    print(f"call 1 cliffs: {len(c1)}, reproducible in call 4: {sum(c['reproducible_in_call4'] for c in c1)} "
          f"({', '.join(str(c['from']) for c in c1 if c['reproducible_in_call4'])})")
    print(f"call 1 vs call-4 median: median |diff| {res['call1_vs_median']['median_abs_diff']:.3f}")
    print("cliffs (from->to: median drop, drops per repeat, reproducible, predicted drop, matched):")
    for c in a["cliffs"]:
        print(f"  {c['from']:5d}->{c['to']:5d}: {c['median_drop']:+.3f} "
              f"[{' '.join(f'{x:+.2f}' for x in c['drops'])}] {'REPRO' if c['reproducible'] else 'noise'} "
              f"pred {c['predicted_drop']:+.3f} {'MATCH' if c['matched'] else ''}")
    print(f"predicted cliffs the median curve does not have: {a['predicted_cliffs_not_measured']}")
    for r in res["attention_call4"]["rows"]:
        extra = (f"; flash causal/full measured {r['flash_causal_over_full']:.2f} predicted "
                 f"{r['flash_causal_over_full_pred']:.2f}" if r["causal"] else "")
        print(f"SDPA T={r['T']} causal={int(r['causal'])}: flash {r['flash_us']:.1f} us (pred {r['flash_pred_us']:.1f}), "
              f"efficient {r['efficient_us']:.1f} ({r['efficient_pred_us']:.1f}), math {r['math_us']:.0f} "
              f"({r['math_pred_us']:.0f}); math/flash {r['math_over_flash']:.1f} vs {r['math_over_flash_pred']:.1f}{extra}")
    for k, v in res["attention_call4"]["host_cost"].items():
        print(f"host cost {k}: back-to-back {v.get('loop_s', 0) * 1e6:.1f} us, graph-replayed "
              f"{(v.get('graph_s') or 0) * 1e6:.1f} us, host clock only {v.get('host_only_s', 0) * 1e6:.1f} us")
    return res


if __name__ == "__main__":
    main()
