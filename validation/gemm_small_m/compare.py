"""gemm(timing="dobench") before and after the small-M families, on sets no parameter was fitted to.

    PYTHONPATH=. python validation/gemm_small_m/compare.py     -> compare.json, compare_output.txt

"before": the same model with the small-M families switched off (the tile costing of
validation/gemm_dobench); "after": the model as it is.  Sets:
  call3 held-out   the grid shapes of call 3 with sha256 odd and min(M, N) <= 64 (the rule in
                   measure_small_m.py, fixed before the call); the calibration half for reference
  call1 rect       call 1's LLM shapes (validation/gemm_dobench), fp16 / bf16, M <= 64, rows not
                   16-byte aligned: another day's call, shapes call 3 does not have
  decode           W(8192 x 8192) @ X(8192 x B), bf16, B <= 64 (call 1, and call 3's repeat)
  call5 fp32       call 5's fp32 shapes, M <= 64, the held-out half (sha256 odd); the calibration half
  call1 fp32       call 1's fp32 LLM shapes with M <= 64
Figures: median |predicted / measured - 1|, how many beyond 2x, Spearman of the times, and how
often the model's family is the one torch.profiler named.
"""
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE))

import importlib  # noqa: E402
G = importlib.import_module("simgpu.model.gemm")
from derive import family, fp32_rows, rows   # noqa: E402

C3 = json.loads((HERE / "gemm_small_m.json").read_text())
C1 = json.loads((HERE.parent / "gemm_dobench" / "gemm_dobench.json").read_text())
AUX = ("splitKreduce", "Memset", "scal_kernel", "FillFunctor")
REAL = G._small_m_candidates


def predict(r, after):
    G._small_m_candidates = REAL if after else (lambda *a, **k: None)
    try:
        return G.gemm(r["m"], r["n"], r["k"], r["dtype"], timing="dobench")
    finally:
        G._small_m_candidates = REAL


def model_family(est):
    k = est.kernel
    if k.startswith("gemvx") or k.startswith("gemv_"):
        return "gemv"
    if k.startswith("gemmSN"):
        return "gemmSN"
    if k.startswith("sgemm_largek"):
        return "largek"
    return {"sm75": "align1", "sm80": "align2"}.get(est.chosen.family, est.chosen.family)


def spearman(a, b):
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def stats(rs):
    out = {}
    for mode in ("before", "after"):
        est = [predict(r, mode == "after") for r in rs]
        q = np.array([e.seconds / r["t"] for e, r in zip(est, rs)])
        d = {"shapes": len(rs), "median_abs_err": float(np.median(np.abs(q - 1))),
             "beyond_2x": int(np.sum((q > 2) | (q < 0.5))), "beyond_1.5x": int(np.sum((q > 1.5) | (q < 1 / 1.5))),
             "spearman": spearman([e.seconds for e in est], [r["t"] for r in rs])}
        if all("fam" in r for r in rs):
            d["family_match"] = float(np.mean([model_family(e) == r["fam"] for e, r in zip(est, rs)]))
        w = sorted(zip(q, rs, est), key=lambda x: -abs(np.log(x[0])))[:5]
        d["worst"] = [[float(x), f"{r['m']}x{r['n']}x{r['k']} {r['dtype']}", e.kernel, r.get("kernel", "")[:60]]
                      for x, r, e in w]
        out[mode] = d
    return out


def call1_rows():
    prof = {(p["m"], p["n"], p["k"], p["dtype"]): p["kernels"] for p in C1["profile"]}
    out = []
    for r in C1["rect"]:
        if r["dtype"] == "fp32" or r["m"] > 64 or r.get("vocab"):
            continue
        if G.alignment_bytes(r["m"], r["n"], r["k"], r["dtype"]) >= 16:
            continue
        ks = [x for x in prof.get((r["m"], r["n"], r["k"], r["dtype"]), [])
              if x["cat"] == "kernel" and not any(a in x["name"] for a in AUX)]
        kn = max(ks, key=lambda x: x["dur_us"] or 0)["name"] if ks else ""
        out.append(dict(r, t=r["ms"] * 1e-3, fam=family(kn), kernel=kn))
    return out


def family32(name):
    if "gemvx" in name or "gemv2" in name:
        return "gemv"
    if "gemmSN" in name:
        return "gemmSN"
    return "largek" if "largek" in name else "simt"


def call1_fp32_rows():
    prof = {(p["m"], p["n"], p["k"], p["dtype"]): p["kernels"] for p in C1["profile"]}
    out = []
    for r in C1["rect"]:
        if r["dtype"] != "fp32" or r["m"] > 64:
            continue
        ks = [x for x in prof.get((r["m"], r["n"], r["k"], r["dtype"]), [])
              if x["cat"] == "kernel" and not any(a in x["name"] for a in AUX)]
        kn = max(ks, key=lambda x: x["dur_us"] or 0)["name"] if ks else ""
        out.append(dict(r, t=r["ms"] * 1e-3, fam=family32(kn), kernel=kn))
    return out


def decode_rows(data, bmax=64):
    return [dict(r, dtype="bf16", t=r["ms"] * 1e-3) for r in data["decode"] if r["form"] == "W@X" and r["n"] <= bmax]


def evaluate():
    g = [r for r in rows() if min(r["m"], r["n"]) <= 64]
    res = {"call3_heldout": stats([r for r in g if r["heldout"]]),
           "call3_calibration": stats([r for r in g if not r["heldout"]]),
           "call3_heldout_xw": stats([r for r in g if r["heldout"] and r["form"] == "xw"]),
           "call3_heldout_wx": stats([r for r in g if r["heldout"] and r["form"] == "wx"]),
           "call1_rect_small_m_unaligned": stats(call1_rows()),
           "call5_fp32_heldout": stats([r for r in fp32_rows() if r["heldout"]]),
           "call5_fp32_calibration": stats([r for r in fp32_rows() if not r["heldout"]]),
           "call1_rect_fp32_M<=64": stats(call1_fp32_rows()),
           "decode_call1_B<=64": stats(decode_rows(C1)),
           "decode_call3_B<=64": stats(decode_rows(C3))}
    for name, data in (("call1", C1), ("call3", C3)):
        for fam, sel in (("aligned (B % 8 == 0)", lambda b: b % 8 == 0), ("align2 (B even)", lambda b: b % 8 and b % 2 == 0),
                         ("align1 (B odd)", lambda b: b % 2 == 1 and b > 1)):
            rs = [r for r in decode_rows(data, 16) if sel(r["n"])]
            m = float(np.median([r["t"] for r in rs]))
            res.setdefault("decode_floor_B<=16", {})[f"{name} {fam}"] = {
                "measured_us": m * 1e6,
                "before_us": float(np.median([predict(r, False).seconds for r in rs])) * 1e6,
                "after_us": float(np.median([predict(r, True).seconds for r in rs])) * 1e6}
    return res


def report(res):
    lines = []
    for key, v in res.items():
        if key.startswith("decode_floor"):
            lines.append("decode floor W(8192^2) @ X(8192 x B), B <= 16, median per alignment class:")
            for k, x in v.items():
                lines.append(f"   {k:28s} measured {x['measured_us']:6.1f} us  before {x['before_us']:6.1f} "
                             f"({x['before_us'] / x['measured_us'] - 1:+.1%})  after {x['after_us']:6.1f} "
                             f"({x['after_us'] / x['measured_us'] - 1:+.1%})")
            continue
        lines.append(f"{key}:")
        for mode in ("before", "after"):
            d = v[mode]
            s = (f"   {mode:6s} {d['shapes']} shapes: median err {d['median_abs_err']:.1%}, beyond 2x {d['beyond_2x']}, "
                 f"beyond 1.5x {d['beyond_1.5x']}, Spearman {d['spearman']:.3f}")
            if "family_match" in d:
                s += f", family as profiled {d['family_match']:.0%}"
            lines.append(s)
            if mode == "after":
                for w in d["worst"][:3]:
                    lines.append(f"        {w[0]:.2f}x {w[1]} model {w[2]} cuBLAS {w[3]}")
    return "\n".join(lines)


if __name__ == "__main__":
    res = evaluate()
    txt = report(res)
    print(txt)
    (HERE / "compare.json").write_text(json.dumps(res, indent=1))
    (HERE / "compare_output.txt").write_text(txt + "\n")
