"""simgpu.model.gemm(timing="dobench") against call 1's do_bench sweeps (issue 24's targets).

    PYTHONPATH=. python validation/gemm_dobench/compare.py [--seen-only] [--plots DIR]

The split into a part looked at while building and a held-out part was fixed before the data
was opened (README.md): seen = square_a, step1_a (N 4000..4160), the rectangular (N, K) pairs of
even index, decode x(B x 8192) @ W, waves M x 8192 x 2048; held out = square_b and square_c,
step1_b (N 6080..6200), the pairs of odd index and the vocab heads, decode W(8192^2) @ X(8192 x B),
waves M x 4096 x 4096.  Each figure is given three ways: the do_bench model with its own kernel
choice ("heuristic"), the do_bench model costing the kernel the profiler named for that shape
("table": cuBLAS's picks, read from the same call's torch.profiler), and the back-to-back model
(timing="loop", the old default) for reference.  --seen-only prints the seen part alone (what
was used while building).  Writes compare.json and compare_output.txt beside this file.
"""
from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from simgpu.model.attention import attention             # noqa: E402
from simgpu.model.gemm import gemm, quantize_fp8   # noqa: E402

DATA = json.loads((HERE / "gemm_dobench.json").read_text())
AUX = ("splitKreduce", "Memset", "scal_kernel", "FillFunctor")


def pick_table():
    """(m, n, k, dtype) -> (name, grid) of the GEMM kernel torch.profiler saw (the longest kernel
    that is not split-K's reduction, a memset or a scaling pass)."""
    out = {}
    for p in DATA.get("profile", []):
        ks = [k for k in p["kernels"] if k["cat"] == "kernel" and not any(a in k["name"] for a in AUX)]
        if ks:
            k = max(ks, key=lambda k: k["dur_us"] or 0)
            out[(p["m"], p["n"], p["k"], p["dtype"])] = (k["name"], k["grid"])
    return out


TABLE = pick_table()
MODES = ("heuristic", "table", "loop")


def predict(m, n, k, dt, mode):
    if mode == "loop":
        return gemm(m, n, k, dt)
    if mode == "table":
        kn = TABLE.get((m, n, k, dt))
        if kn is not None:
            try:
                return gemm(m, n, k, dt, timing="dobench", kernel=kn)
            except ValueError:
                pass
    return gemm(m, n, k, dt, timing="dobench")


def spearman(a, b):
    ra = np.argsort(np.argsort(a)).astype(float)
    rb = np.argsort(np.argsort(b)).astype(float)
    return float(np.corrcoef(ra, rb)[0, 1])


def meas_s(r):
    return r["ms"] * 1e-3


def cliffs(x, tf, drop=0.05):
    """{x[i+1]: depth} for every drop of more than ``drop`` from x[i] to x[i+1]."""
    return {x[i + 1]: 1 - tf[i + 1] / tf[i] for i in range(len(x) - 1) if 1 - tf[i + 1] / tf[i] > drop}


def matched(meas_cl, pred_tf, x, tol=0.3, drop=0.05):
    idx = {v: i for i, v in enumerate(x)}
    hit = []
    for n, dm in meas_cl.items():
        i = idx[n]
        dp = 1 - pred_tf[i] / pred_tf[i - 1]
        if dp > drop and abs(dp - dm) <= tol * dm:
            hit.append(n)
    return hit


def square_stats(rows, mode, extra_meas=None):
    ns = [r["n"] for r in rows]
    est = [predict(n, n, n, "bf16", mode) for n in ns]
    t = np.array([meas_s(r) for r in rows])
    tp = np.array([e.seconds for e in est])
    meas = 2.0 * np.array(ns, float) ** 3 / t / 1e12
    pred = 2.0 * np.array(ns, float) ** 3 / tp / 1e12
    big = np.array(ns) >= 2048
    err = np.abs(tp / t - 1)
    cl = cliffs(ns, meas)
    hit = matched(cl, pred, ns)
    out = {"sizes": len(ns), "spearman": spearman(meas, pred), "spearman_ge2048": spearman(meas[big], pred[big]),
           "median_abs_err": float(np.median(err)), "median_abs_err_ge2048": float(np.median(err[big])),
           "cliffs": len(cl), "cliffs_matched": len(hit), "cliff_list": {str(k): v for k, v in cl.items()},
           "predicted_cliffs": len(cliffs(ns, pred)), "x": ns, "measured_tflops": meas.tolist(),
           "predicted_tflops": pred.tolist(), "kernels": [e.kernel for e in est]}
    if extra_meas is not None:                  # cliffs present in every given sweep
        tfs = [meas] + [2.0 * np.array(ns, float) ** 3 / np.array([meas_s(r) for r in o]) / 1e12 for o in extra_meas]
        cls = [cliffs(ns, m) for m in tfs]
        rec = {n: float(np.mean([c[n] for c in cls])) for n in cls[0] if all(n in c for c in cls)}
        h = matched(rec, pred, ns)
        out.update({"recurring_cliffs": len(rec), "recurring_matched": len(h),
                    "recurring": {str(n): {"depth": d, "matched": n in h,
                                           "predicted": float(1 - pred[ns.index(n)] / pred[ns.index(n) - 1])}
                                  for n, d in rec.items()}})
    return out


def step1_stats(rows, mode):
    out = square_stats(rows, mode)
    ns = out["x"]
    meas, pred = np.array(out["measured_tflops"]), np.array(out["predicted_tflops"])
    al = [i for i, n in enumerate(ns) if n % 8 == 0]
    ratio_m, ratio_p = [], []
    for i, n in enumerate(ns):
        if n % 2:
            j = min(al, key=lambda j: abs(ns[j] - n))
            ratio_m.append(meas[i] / meas[j])
            ratio_p.append(pred[i] / pred[j])
    rm, rp = float(np.median(ratio_m)), float(np.median(ratio_p))
    out.update({"odd_over_aligned_measured": rm, "odd_over_aligned_predicted": rp,
                "odd_depth_err": (1 - rp) / (1 - rm) - 1})
    for k in ("x", "measured_tflops", "predicted_tflops", "kernels"):
        out[k] = out[k]
    return out


def rect_stats(rows, mode):
    ratios, per = [], {}
    worst = []
    for r in rows:
        e = predict(r["m"], r["n"], r["k"], r["dtype"], mode)
        q = e.seconds / meas_s(r)
        ratios.append(q)
        per.setdefault(r["dtype"], []).append(abs(q - 1))
        if r["m"] <= 64:
            per.setdefault("M<=64", []).append(abs(q - 1))
        worst.append((max(q, 1 / q), f"{r['m']}x{r['n']}x{r['k']} {r['dtype']}", e.kernel,
                      TABLE.get((r["m"], r["n"], r["k"], r["dtype"]), ("?",))[0][:70]))
    a = np.abs(np.array(ratios) - 1)
    beyond = [w for w in worst if w[0] > 2]
    worst.sort(reverse=True)
    return {"shapes": len(rows), "median_abs_err": float(np.median(a)), "beyond_2x": len(beyond),
            "per": {k: float(np.median(v)) for k, v in per.items()},
            "worst": [list(w) for w in worst[:8]]}


def knee(times, batches):
    t, b = np.asarray(times, float), np.asarray(batches, float)
    return float(np.median(t[b <= 16]) / (t[-1] / b[-1]))


def decode_stats(rows, mode, form):
    rs = [r for r in rows if r["form"] == form]
    bs = [r["n"] if form == "W@X" else r["m"] for r in rs]
    tm = [meas_s(r) for r in rs]
    tp = [predict(r["m"], r["n"], r["k"], "bf16", mode).seconds for r in rs]
    km, kp = knee(tm, bs), knee(tp, bs)
    floor_m, floor_p = float(np.median([t for t, b in zip(tm, bs) if b <= 16])), \
        float(np.median([t for t, b in zip(tp, bs) if b <= 16]))
    return {"knee_measured": km, "knee_predicted": kp, "knee_err": kp / km - 1, "floor_measured_us": floor_m * 1e6,
            "floor_predicted_us": floor_p * 1e6, "floor_err": floor_p / floor_m - 1,
            "median_abs_err": float(np.median(np.abs(np.array(tp) / np.array(tm) - 1))),
            "b": bs, "measured_us": [t * 1e6 for t in tm], "predicted_us": [t * 1e6 for t in tp]}


def waves_stats(rows, mode):
    ms = [r["m"] for r in rows]
    meas = np.array([r["tflops"] for r in rows])
    pred = np.array([predict(r["m"], r["n"], r["k"], "bf16", mode).tflops for r in rows])
    return {"pearson": float(np.corrcoef(meas, pred)[0, 1]), "spearman": spearman(meas, pred),
            "median_abs_err": float(np.median(np.abs(meas / pred - 1))), "m": ms,
            "measured_tflops": meas.tolist(), "predicted_tflops": pred.tolist()}


def vocab_stats(rows, mode):
    out = {}
    for dt in ("bf16", "fp16"):
        a = [r for r in rows if r.get("vocab") and r["dtype"] == dt]
        t = {r["n"]: meas_s(r) for r in a}
        if 50257 in t and 50304 in t:
            mm = t[50257] / t[50304]
            pp = predict(8192, 50257, 768, dt, mode).seconds / predict(8192, 50304, 768, dt, mode).seconds
            out[dt] = {"measured": mm, "predicted": pp, "err": pp / mm - 1}
    return out


def extra_stats():
    ex = DATA.get("extra", {})
    out = {}
    for r in ex.get("precision", []):
        e = gemm(8192, 8192, 8192, r["dtype"], timing="dobench")
        out[r["dtype"]] = {"measured_ms": r["ms"], "predicted_ms": e.seconds * 1e3, "err": e.seconds / meas_s(r) - 1}
    if "fp8" in ex:
        f8 = gemm(8192, 8192, 8192, "fp8_e4m3", timing="dobench").seconds
        out["fp8_e4m3"] = {"measured_ms": ex["fp8"]["ms"], "predicted_ms": f8 * 1e3, "err": f8 / meas_s(ex["fp8"]) - 1}
    if "quantize" in ex:
        q = quantize_fp8(8192, 8192)
        out["quantize"] = {"measured_ms": ex["quantize"]["ms"], "predicted_ms": q * 1e3,
                           "err": q / meas_s(ex["quantize"]) - 1, "note": "elementwise model (warm, back-to-back)"}
    att = {(r["backend"], r["T"]): r for r in ex.get("attention", [])}
    rat = {}
    for t in (1024, 2048, 4096, 8192):
        if ("flash", t) in att and ("math", t) in att:
            mm = att[("math", t)]["ms"] / att[("flash", t)]["ms"]
            pp = attention(1, 16, t, 64, backend="math").seconds / attention(1, 16, t, 64, backend="flash").seconds
            rat[t] = {"measured": mm, "predicted": pp, "err": pp / mm - 1}
    out["flash_vs_math"] = rat
    return out


def spread():
    a, b, c = ({r["n"]: meas_s(r) for r in DATA[k]} for k in ("square_a", "square_b", "square_c"))
    ns = sorted(a)
    rng = [(max(a[n], b[n], c[n]) - min(a[n], b[n], c[n])) / statistics.median([a[n], b[n], c[n]]) for n in ns]
    bc = [abs(b[n] / c[n] - 1) for n in ns]
    return {"range_over_median_median": float(np.median(rng)), "range_over_median_max": float(np.max(rng)),
            "b_vs_c_median": float(np.median(bc))}


def split(rows, held):
    return [r for r in rows if bool(r.get("heldout")) == held]


def evaluate(seen_only=False):
    res = {"seen": {}, "heldout": {}, "spread": spread(), "table_entries": len(TABLE)}
    rect = DATA["rect"]
    for mode in MODES:
        s = res["seen"].setdefault(mode, {})
        s["square_a"] = square_stats(DATA["square_a"], mode)
        s["step1_a"] = step1_stats(DATA["step1_a"], mode)
        s["rect"] = rect_stats([r for r in split(rect, False)], mode)
        s["decode_x@W"] = decode_stats(DATA["decode"], mode, "x@W")
        s["waves_8192x2048"] = waves_stats([r for r in DATA["waves"] if not r["heldout"]], mode)
        if seen_only:
            continue
        h = res["heldout"].setdefault(mode, {})
        h["square_b"] = square_stats(DATA["square_b"], mode, extra_meas=[DATA["square_c"]])
        h["square_c"] = square_stats(DATA["square_c"], mode)
        h["step1_b"] = step1_stats(DATA["step1_b"], mode)
        h["rect"] = rect_stats([r for r in split(rect, True) if not r.get("vocab")], mode)
        h["vocab"] = vocab_stats(rect, mode)
        h["decode_W@X"] = decode_stats(DATA["decode"], mode, "W@X")
        h["waves_4096x4096"] = waves_stats([r for r in DATA["waves"] if r["heldout"]], mode)
    if not seen_only:
        res["extra"] = extra_stats()
    return res


def report(res):
    lines = []
    P = lines.append
    P(f"spread of the three square sweeps (range / median at each N): median {res['spread']['range_over_median_median']:.1%}, "
      f"max {res['spread']['range_over_median_max']:.1%}; sweep b vs c median |diff| {res['spread']['b_vs_c_median']:.1%}")
    for part in ("seen", "heldout"):
        if not res[part]:
            continue
        P(f"\n===== {part} =====")
        for mode, d in res[part].items():
            P(f"-- mode {mode}")
            for key, v in d.items():
                if key.startswith("square") or key.startswith("step1"):
                    s = (f"{key}: Spearman {v['spearman']:.3f} (N>=2048 {v['spearman_ge2048']:.3f}), median err "
                         f"{v['median_abs_err']:.1%}, cliffs {v['cliffs_matched']}/{v['cliffs']} (predicted {v['predicted_cliffs']})")
                    if "recurring_cliffs" in v:
                        s += f", recurring in b and c {v['recurring_matched']}/{v['recurring_cliffs']}"
                    if "odd_over_aligned_measured" in v:
                        s += (f", odd/aligned measured {v['odd_over_aligned_measured']:.3f} model "
                              f"{v['odd_over_aligned_predicted']:.3f} (depth err {v['odd_depth_err']:+.1%})")
                    P(s)
                elif key == "rect":
                    P(f"rect ({v['shapes']} shapes): median err {v['median_abs_err']:.1%}, beyond 2x {v['beyond_2x']}; "
                      + ", ".join(f"{k} {x:.1%}" for k, x in v["per"].items()))
                    for w in v["worst"][:5]:
                        P(f"     {w[0]:.2f}x {w[1]} model {w[2]} cuBLAS {w[3]}")
                elif key.startswith("decode"):
                    P(f"{key}: knee measured {v['knee_measured']:.0f} model {v['knee_predicted']:.0f} ({v['knee_err']:+.1%}); "
                      f"floor {v['floor_measured_us']:.1f} vs {v['floor_predicted_us']:.1f} us ({v['floor_err']:+.1%}); "
                      f"median err {v['median_abs_err']:.1%}")
                elif key.startswith("waves"):
                    P(f"{key}: Pearson {v['pearson']:.3f}, Spearman {v['spearman']:.3f}, median err {v['median_abs_err']:.1%}")
                elif key == "vocab":
                    P("vocab 50257 -> 50304: " + ", ".join(f"{dt} measured {x['measured']:.2f}x model {x['predicted']:.2f}x "
                                                            f"({x['err']:+.1%})" for dt, x in v.items()))
    if "extra" in res:
        P("\n===== keep targets (do_bench) =====")
        for k, v in res["extra"].items():
            if k == "flash_vs_math":
                P("flash vs math: " + ", ".join(f"T={t} {x['measured']:.1f}x model {x['predicted']:.1f}x ({x['err']:+.0%})"
                                              for t, x in v.items()))
            else:
                P(f"{k}: measured {v['measured_ms']:.3f} ms model {v['predicted_ms']:.3f} ms ({v['err']:+.1%})")
    return "\n".join(lines)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    seen_only = "--seen-only" in argv
    res = evaluate(seen_only)
    txt = report(res)
    print(txt)
    if not seen_only:
        (HERE / "compare.json").write_text(json.dumps(res, indent=1, default=float))
        (HERE / "compare_output.txt").write_text(txt + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
