"""simgpu.model.gemm / attention against the H200 check sweeps (the issue's targets).

    python validation/lecture/compare.py [--markdown]

Reads data/lecture_h200.json ("check": the sweeps of call 1) and data/lecture_h200_holdout.json
("holdout": call 2, measured after the model was written), writes data/lecture_compare.json and
prints one line per target.  Nothing here feeds back into the model.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))
DATA = os.path.join(HERE, "..", "data")

from simgpu.model.attention import attention          # noqa: E402
from simgpu.model.gemm import gemm, quantize_fp8       # noqa: E402


def spearman(a, b):
    ra = np.argsort(np.argsort(a)).astype(float)
    rb = np.argsort(np.argsort(b)).astype(float)
    return float(np.corrcoef(ra, rb)[0, 1])


def pred(r):
    return gemm(r["m"], r["n"], r["k"], r["dtype"])


def sweep_stats(rows, key="n"):
    meas = np.array([r["tflops"] for r in rows])
    est = [pred(r) for r in rows]
    p = np.array([e.tflops for e in est])
    err = np.abs(np.array([e.seconds for e in est]) / np.array([r["seconds"] for r in rows]) - 1)
    out = {"n_points": len(rows), "spearman": spearman(meas, p), "pearson": float(np.corrcoef(meas, p)[0, 1]),
           "median_abs_err": float(np.median(err)), "p90_abs_err": float(np.percentile(err, 90)),
           "x": [r[key] for r in rows], "measured_tflops": meas.tolist(), "predicted_tflops": p.tolist(),
           "kernels": [e.kernel for e in est]}
    big = np.array([r[key] for r in rows]) >= 2048
    if big.sum() > 3:
        out["spearman_ge2048"] = spearman(meas[big], p[big])
        out["median_abs_err_ge2048"] = float(np.median(err[big]))
    # cliffs: a drop of more than 5 % from one size to the next
    cliffs, hit = [], 0
    for i in range(len(rows) - 1):
        dm = 1 - meas[i + 1] / meas[i]
        if dm > 0.05:
            dp = 1 - p[i + 1] / p[i]
            ok = dp > 0.05 and abs(dp - dm) <= 0.3 * dm
            hit += ok
            cliffs.append({"from": rows[i][key], "to": rows[i + 1][key], "measured_drop": float(dm),
                           "predicted_drop": float(dp), "matched": bool(ok),
                           "kernel_before": est[i].kernel, "kernel_after": est[i + 1].kernel})
    out["cliffs"] = cliffs
    out["cliffs_matched"] = f"{hit}/{len(cliffs)}"
    out["cliff_fraction"] = hit / len(cliffs) if cliffs else 1.0
    return out


def knee(rows_or_times, batches):
    t = np.asarray(rows_or_times, float)
    b = np.asarray(batches, float)
    t_mem = np.median(t[b <= 16])
    slope = t[-1] / b[-1]
    return float(t_mem / slope)


def main():
    one = json.load(open(os.path.join(DATA, "lecture_h200.json")))
    two = json.load(open(os.path.join(DATA, "lecture_h200_holdout.json")))
    c, h = one["check"], two["holdout"]
    res = {}
    res["square_bf16"] = sweep_stats(c["square_bf16"])
    res["m_sweep_bf16"] = sweep_stats(c["m_sweep_bf16"], key="m")
    res["holdout_square_bf16_offset"] = sweep_stats(h["square_bf16_offset"])
    res["holdout_square_fp16"] = sweep_stats(h["square_fp16"])
    rnd = h["random_bf16"]
    e = np.array([pred(r).seconds / r["seconds"] for r in rnd])
    res["holdout_random_bf16"] = {"n_points": len(rnd), "median_abs_err": float(np.median(np.abs(e - 1))),
                                  "worst_ratio": float(max(e.max(), 1 / e.min())),
                                  "kernel_family_match": None}
    # step 1: odd N relative to the aligned neighbours
    st = c["step1_bf16"]
    aligned = {r["n"]: r for r in st if r["n"] % 8 == 0}
    odd = [r for r in st if r["n"] % 2 == 1]
    def near(n):
        return min(aligned, key=lambda a: abs(a - n))
    m_ratio = np.median([r["tflops"] / aligned[near(r["n"])]["tflops"] for r in odd])
    p_ratio = np.median([pred(r).tflops / pred(aligned[near(r["n"])]).tflops for r in odd])
    even = [r for r in st if r["n"] % 2 == 0 and r["n"] % 8]
    m_even = np.median([r["tflops"] / aligned[near(r["n"])]["tflops"] for r in even])
    p_even = np.median([pred(r).tflops / pred(aligned[near(r["n"])]).tflops for r in even])
    res["alignment"] = {"odd_over_aligned_measured": float(m_ratio), "odd_over_aligned_predicted": float(p_ratio),
                        "even_unaligned_over_aligned_measured": float(m_even),
                        "even_unaligned_over_aligned_predicted": float(p_even),
                        "step1": sweep_stats(st)}
    vb = {(r["n"], r["dtype"]): r for r in c["vocab"]}
    for dt in ("bf16", "fp32"):
        a, b = vb[(50257, dt)], vb[(50304, dt)]
        res[f"vocab_{dt}"] = {"measured_speedup": a["seconds"] / b["seconds"],
                              "predicted_speedup": pred(a).seconds / pred(b).seconds,
                              "kernels_predicted": [pred(a).kernel, pred(b).kernel]}
    for name, rows in (("decode_8192x8192", c["decode_bf16"]), ("holdout_decode_4096x14336", h["decode_bf16_4096x14336"])):
        bs = [r["m"] for r in rows]
        km = knee([r["seconds"] for r in rows], bs)
        kp = knee([pred(r).seconds for r in rows], bs)
        res[name] = {"knee_measured": km, "knee_predicted": kp,
                     "median_abs_err": float(np.median([abs(pred(r).seconds / r["seconds"] - 1) for r in rows]))}
    llm = c["llm"]
    e = np.array([pred(r).seconds / r["seconds"] for r in llm])
    res["llm"] = {"n_points": len(llm), "median_abs_err": float(np.median(np.abs(e - 1))),
                  "worst_ratio": float(max(e.max(), 1 / e.min())),
                  "rows": [{"name": r["name"], "m": r["m"], "n": r["n"], "k": r["k"], "dtype": r["dtype"],
                            "measured_us": r["seconds"] * 1e6, "predicted_us": pred(r).seconds * 1e6,
                            "kernel": pred(r).kernel} for r in llm]}
    pr = c["precision"]
    prec = {}
    for dt in ("fp32", "tf32", "bf16", "fp16"):
        prec[dt] = {"measured_ms": pr[dt]["seconds"] * 1e3, "predicted_ms": gemm(8192, 8192, 8192, dt).seconds * 1e3}
    prec["fp8_e4m3"] = {"measured_ms": pr["fp8_e4m3"]["seconds"] * 1e3,
                        "predicted_ms": gemm(8192, 8192, 8192, "fp8_e4m3").seconds * 1e3}
    q = quantize_fp8(8192, 8192)
    prec["quantise_one_8192sq"] = {"measured_ms": pr["quant_one_8192sq"]["seconds"] * 1e3, "predicted_ms": q * 1e3}
    prec["fp8_with_quantise_both"] = {"measured_ms": pr["fp8_quant_both"]["seconds"] * 1e3,
                                      "predicted_ms": (2 * q + gemm(8192, 8192, 8192, "fp8_e4m3").seconds) * 1e3}
    prec["fp8_with_quantise_activations"] = {"measured_ms": pr["fp8_quant_act"]["seconds"] * 1e3,
                                             "predicted_ms": (q + gemm(8192, 8192, 8192, "fp8_e4m3").seconds) * 1e3}
    for v in prec.values():
        v["err"] = v["predicted_ms"] / v["measured_ms"] - 1
    res["precision_8192"] = prec
    att = []
    for r in c["attention"] + h["attention_d128"]:
        if "seconds_fwd" not in r:
            continue
        est = attention(r["B"], r["H"], r["T"], r["d"], r["dtype"], backend=r["backend"], causal=r["causal"])
        row = {k: r[k] for k in ("B", "H", "T", "d", "backend", "causal")}
        # measured: max_memory_allocated over the q, k, v baseline; the fused kernels allocate
        # their output before they run (it is in the peak), the math path after S and P are
        # freed (it is not), and peak_bytes counts memory beyond q, k, v and the output
        extra = r["peak_bytes_fwd"] - (r["out_bytes"] if r["backend"] != "math" else 0)
        row.update(measured_us=r["seconds_fwd"] * 1e6, predicted_us=est.seconds * 1e6,
                   measured_peak_bytes=extra, predicted_peak_bytes=est.peak_bytes,
                   holdout=r in h["attention_d128"])
        if "seconds_fwdbwd" in r:
            eb = attention(r["B"], r["H"], r["T"], r["d"], r["dtype"], backend=r["backend"], causal=r["causal"],
                           backward=True)
            row.update(measured_fwdbwd_us=r["seconds_fwdbwd"] * 1e6, predicted_fwdbwd_us=eb.seconds * 1e6,
                       measured_peak_fwdbwd=r["peak_bytes_fwdbwd"], predicted_peak_fwdbwd=eb.peak_bytes,
                       # the measured peak (over q, k, v with requires_grad and the upstream
                       # gradient g) holds the output and dq, dk, dv too; the model's peak_bytes
                       # counts memory beyond those: 4 x B H T d elements of the input dtype
                       measured_peak_fwdbwd_beyond_out_grads=r["peak_bytes_fwdbwd"] - 4 * r["out_bytes"])
        att.append(row)
    ratios = []
    for r in att:
        if r["backend"] != "flash":
            continue
        m = [x for x in att if x["backend"] == "math" and all(x[k] == r[k] for k in ("B", "H", "T", "d", "causal"))]
        if m:
            ratios.append({"T": r["T"], "d": r["d"], "causal": r["causal"], "holdout": r["holdout"],
                           "measured": m[0]["measured_us"] / r["measured_us"],
                           "predicted": m[0]["predicted_us"] / r["predicted_us"]})
    res["attention"] = {"rows": att, "math_over_flash": ratios}
    with open(os.path.join(DATA, "lecture_compare.json"), "w") as f:
        json.dump(res, f, indent=1)
    report(res)


def report(res):
    s = res["square_bf16"]
    print(f"square bf16 step 64 (call 1): Spearman {s['spearman']:.3f} (N>=2048: {s['spearman_ge2048']:.3f}), "
          f"median |err| {s['median_abs_err']:.3f} (N>=2048: {s['median_abs_err_ge2048']:.3f}), cliffs {s['cliffs_matched']}")
    for key in ("holdout_square_bf16_offset", "holdout_square_fp16", "m_sweep_bf16"):
        s = res[key]
        print(f"{key}: Spearman {s['spearman']:.3f} (>=2048: {s.get('spearman_ge2048', float('nan')):.3f}), "
              f"median |err| {s['median_abs_err']:.3f} (>=2048 {s.get('median_abs_err_ge2048', float('nan')):.3f}), "
              f"cliffs {s['cliffs_matched']}")
    r = res["holdout_random_bf16"]
    print(f"holdout random shapes: median |err| {r['median_abs_err']:.3f}, worst ratio {r['worst_ratio']:.2f}")
    a = res["alignment"]
    print(f"odd N / aligned: measured {a['odd_over_aligned_measured']:.3f} predicted {a['odd_over_aligned_predicted']:.3f}; "
          f"even-unaligned: measured {a['even_unaligned_over_aligned_measured']:.3f} "
          f"predicted {a['even_unaligned_over_aligned_predicted']:.3f}")
    for dt in ("bf16", "fp32"):
        v = res[f"vocab_{dt}"]
        print(f"vocab {dt}: speed-up measured {v['measured_speedup']:.2f} predicted {v['predicted_speedup']:.2f}")
    for k in ("decode_8192x8192", "holdout_decode_4096x14336"):
        v = res[k]
        print(f"{k}: knee measured {v['knee_measured']:.0f} predicted {v['knee_predicted']:.0f}; "
              f"median |err| {v['median_abs_err']:.3f}")
    v = res["llm"]
    print(f"LLM shapes: median |err| {v['median_abs_err']:.3f}, worst ratio {v['worst_ratio']:.2f}")
    for k, v in res["precision_8192"].items():
        print(f"8192^3 {k}: measured {v['measured_ms']:.3f} ms predicted {v['predicted_ms']:.3f} ({v['err']:+.2f})")
    for r in res["attention"]["math_over_flash"]:
        print(f"attention T={r['T']} d={r['d']} causal={r['causal']} math/flash measured {r['measured']:.1f} "
              f"predicted {r['predicted']:.1f}{' (hold-out)' if r['holdout'] else ''}")
    for r in res["attention"]["rows"]:
        print(f"  {r['backend']:9s} T={r['T']:5d} d={r['d']} c={int(r['causal'])}: {r['measured_us']:9.1f} us vs "
              f"{r['predicted_us']:9.1f}; peak {r['measured_peak_bytes'] / 1e6:9.1f} MB vs "
              f"{r['predicted_peak_bytes'] / 1e6:9.1f}")
    for r in res["attention"]["rows"]:
        if "measured_peak_fwdbwd_beyond_out_grads" in r:
            print(f"  fwd+bwd {r['backend']:9s} T={r['T']:5d}: {r['measured_fwdbwd_us']:8.1f} us vs "
                  f"{r['predicted_fwdbwd_us']:8.1f}; peak beyond out and grads "
                  f"{r['measured_peak_fwdbwd_beyond_out_grads'] / 1e6:8.2f} MB vs {r['predicted_peak_fwdbwd'] / 1e6:8.2f}")


if __name__ == "__main__":
    main()
