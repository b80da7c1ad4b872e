"""Figures of docs/model.md's do_bench section, from compare.json (run compare.py first).

    PYTHONPATH=. python validation/gemm_dobench/plots.py [OUT_DIR]   (default docs/)
"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from simgpu.plot.model import _figure, mystery      # noqa: E402


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else HERE.parents[1] / "docs"
    res = json.loads((HERE / "compare.json").read_text())
    data = json.loads((HERE / "gemm_dobench.json").read_text())
    h = res["heldout"]["heuristic"]
    # 1: the held-out square sweep b, the range of the three sweeps, recurring cliffs (b and c)
    sq = {k: {r["n"]: 2 * r["n"] ** 3 / (r["ms"] * 1e-3) / 1e12 for r in data[k]} for k in ("square_a", "square_b", "square_c")}
    ns = sorted(sq["square_b"])
    lo = [min(sq[k][n] for k in sq) for n in ns]
    hi = [max(sq[k][n] for k in sq) for n in ns]
    rec = [int(n) for n in h["square_b"]["recurring"]]
    prev = [ns[ns.index(n) - 1] for n in rec]
    fig = mystery(ns, [sq["square_b"][n] for n in ns], spread=(lo, hi), reproducible=prev, timing="dobench",
                  title="square bf16, do_bench, H200: held-out sweep b, range of a-c, x = cliff in b and c")
    fig.savefig(out / "gemm_dobench_square.png", dpi=100)
    # 2: the held-out step-1 sweep
    s1 = {r["n"]: 2 * r["n"] ** 3 / (r["ms"] * 1e-3) / 1e12 for r in data["step1_b"]}
    n1 = sorted(s1)
    fig = mystery(n1, [s1[n] for n in n1], timing="dobench",
                  title="step-1 sweep N = 6080..6200 (held out), do_bench, vs simgpu.model.gemm(timing='dobench')")
    fig.savefig(out / "gemm_dobench_step1.png", dpi=100)
    # 3: rect, decode, waves
    fig = _figure(14.0, 4.5)
    ax = fig.subplots(1, 3)
    import compare as C                                   # noqa: E402  (beside this file)
    rows = [r for r in data["rect"] if r.get("heldout") and not r.get("vocab")]
    for dt, c in (("bf16", "C0"), ("fp16", "C1"), ("fp32", "C2")):
        rr = [r for r in rows if r["dtype"] == dt]
        m = [r["ms"] * 1e3 for r in rr]
        p = [C.predict(r["m"], r["n"], r["k"], dt, "heuristic").seconds * 1e6 for r in rr]
        ax[0].loglog(m, p, "o", ms=3, color=c, label=dt)
    lim = [5, 3e4]
    ax[0].plot(lim, lim, "k-", lw=0.8)
    ax[0].plot(lim, [2 * x for x in lim], "k:", lw=0.8)
    ax[0].plot(lim, [x / 2 for x in lim], "k:", lw=0.8, label="2x")
    ax[0].set(xlabel="measured us (do_bench)", ylabel="model us", title="held-out LLM shapes (M 1..4096)")
    ax[0].legend(fontsize=8)
    for key, c in (("decode_W@X", "C0"),):
        d = h[key]
        ax[1].plot(d["b"], d["measured_us"], ".", ms=3, color="0.4", label="measured W(8192^2) @ X(8192xB)")
        ax[1].plot(d["b"], d["predicted_us"], ".", ms=3, color=c, label="model")
    ax[1].set(xlabel="B", ylabel="us", title=f"decode: knee {d['knee_measured']:.0f} measured, {d['knee_predicted']:.0f} model")
    ax[1].legend(fontsize=8)
    w = h["waves_4096x4096"]
    ax[2].plot(w["m"], w["measured_tflops"], "o-", ms=2.5, color="0.4", label="measured")
    ax[2].plot(w["m"], w["predicted_tflops"], "-", color="C0", label="model")
    ax[2].set(xlabel="M (M x 4096 x 4096)", ylabel="TFLOP/s", title=f"waves: Pearson {w['pearson']:.2f}")
    ax[2].legend(fontsize=8)
    for a in ax:
        a.grid(True, alpha=0.3)
    fig.savefig(out / "gemm_dobench_shapes.png", dpi=100)
    # 4: the large-N ordering: the three sweeps against each other and the model's three modes
    fig = _figure(14.0, 5.0)
    ax = fig.subplots(1, 2, width_ratios=(3, 1))
    big = [n for n in ns if n >= 2048]
    for k, c in (("square_a", "0.75"), ("square_b", "0.35"), ("square_c", "0.55")):
        ax[0].plot(big, [sq[k][n] for n in big], "o-", ms=2, lw=0.6, color=c, label=f"measured {k[-1]}")
    for mode, c in (("heuristic", "C0"), ("table", "C1")):
        d = res["heldout"][mode]["square_b"]
        x = [n for n in d["x"] if n >= 2048]
        ax[0].plot(x, [t for n, t in zip(d["x"], d["predicted_tflops"]) if n >= 2048], "-", lw=1.4, color=c,
                   label=f"model, {mode}: Spearman vs b {d['spearman_ge2048']:.2f}")
    ax[0].set(xlabel="N", ylabel="TFLOP/s", title="square bf16 N >= 2048 under do_bench (H200): three sweeps, the model")
    ax[0].legend(fontsize=8, ncols=2)
    cl = json.loads((HERE / "ceiling.json").read_text())
    names = ["a-b", "a-c", "b-c", "4r1-4r2"]
    vals = [cl["pairs"][k]["spearman_ge2048"] for k in names]
    names += ["model b (heur.)", "model c (heur.)", "model b (table)", "model c (table)"]
    vals += [res["heldout"][m][s]["spearman_ge2048"] for m in ("heuristic", "table") for s in ("square_b", "square_c")]
    ax[1].barh(range(len(vals)), vals, color=["0.5"] * 4 + ["C0", "C0", "C1", "C1"])
    ax[1].axvline(0.7, color="C3", ls="--", lw=1, label="target 0.7")
    ax[1].set(yticks=range(len(vals)), yticklabels=names, xlim=(0, 1), xlabel="Spearman, N >= 2048",
              title="card vs itself, model vs card")
    ax[1].legend(fontsize=8)
    for a in ax:
        a.grid(True, alpha=0.3)
    fig.savefig(out / "gemm_dobench_large_n.png", dpi=100)
    print("wrote", out / "gemm_dobench_square.png", out / "gemm_dobench_step1.png", out / "gemm_dobench_shapes.png",
          out / "gemm_dobench_large_n.png")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
