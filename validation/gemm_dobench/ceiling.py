"""The card against itself: how well one do_bench square sweep predicts another of the same card,
the ceiling for any model's ordering and cliff figures on a single sweep (issue 24).

    PYTHONPATH=. python validation/gemm_dobench/ceiling.py  -> ceiling_output.txt

Call 1 (gemm_dobench.json): sweeps a (ascending), b and c (each in its own random order), N = 128..8192
step 64.  Call 4 (validation/gemm_small_m/gemm_fresh.json): r1, r2, N = 160..8160 step 64.  For each
pair: Spearman of TFLOP/s over all N and over N >= 2048, and the cliffs (drop > 5 % from one N to the
next) of one matched by the other as compare.py matches a model's (same N, depth within 30 %).
If every sweep is the card's expected curve plus independent noise, Spearman(x, y) ~ s_x s_y with
s_x^2 the share of sweep x's rank variance that is the card's; three sweeps give each s (s_a^2 =
r_ab r_ac / r_bc), and s_b, s_c are what a model equal to the card's expected curve would reach
against b and c.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from compare import DATA, cliffs, matched, spearman   # noqa: E402

F = json.loads((HERE.parent / "gemm_small_m" / "gemm_fresh.json").read_text())


def sweeps():
    out = {k[-1]: {r["n"]: r["tflops"] for r in DATA[k]} for k in ("square_a", "square_b", "square_c")}
    for s in ("r1", "r2"):
        out["4" + s] = {r["n"]: 2 * r["n"] ** 3 / r["ms"] / 1e9 for r in F["square"] if r["sweep"] == s}
    return out


def pair(x, y, lo=2048):
    ns = sorted(set(x) & set(y))
    a, b = np.array([x[n] for n in ns]), np.array([y[n] for n in ns])
    big = np.array(ns) >= lo
    cy = cliffs(ns, b)
    return {"spearman": spearman(a, b), "spearman_ge2048": spearman(a[big], b[big]),
            "cliffs_matched": len(matched(cy, a, ns)), "cliffs": len(cy)}


def main():
    S = sweeps()
    lines, res = [], {"pairs": {}}
    for x, y in (("a", "b"), ("a", "c"), ("b", "c"), ("4r1", "4r2")):
        p = pair(S[x], S[y])
        q = pair(S[y], S[x])
        res["pairs"][f"{x}-{y}"] = p
        lines.append(f"{x} vs {y}: Spearman {p['spearman']:.3f}, N>=2048 {p['spearman_ge2048']:.3f}; "
                     f"{y}'s cliffs matched by {x} {p['cliffs_matched']}/{p['cliffs']}, "
                     f"{x}'s by {y} {q['cliffs_matched']}/{q['cliffs']}")
    ns = sorted(S["a"])
    b, c = (np.array([S[k][n] for n in ns]) for k in "bc")
    cb, cc = cliffs(ns, b), cliffs(ns, c)
    rec = {n: (cb[n] + cc[n]) / 2 for n in cb if n in cc}
    a = np.array([S["a"][n] for n in ns])
    hit = matched(rec, a, ns)
    res["recurring_b_and_c"] = {str(n): d for n, d in rec.items()}
    res["recurring_matched_by_a"] = hit
    lines.append(f"cliffs recurring in b and c: {len(rec)} at N = {sorted(rec)}; sweep a, as a model of them, "
                 f"matches {len(hit)} ({hit})")
    for lo, key in ((0, "spearman"), (2048, "spearman_ge2048")):
        r = {k: res["pairs"][k][key] for k in ("a-b", "a-c", "b-c")}
        sa2 = r["a-b"] * r["a-c"] / r["b-c"]
        sa = np.sqrt(sa2)
        sb, sc = r["a-b"] / sa, r["a-c"] / sa
        res[f"ceiling_{key}"] = {"a": float(sa), "b": float(sb), "c": float(sc)}
        lines.append(f"{'N >= 2048' if lo else 'all N'}: a model equal to the card's expected curve reaches about "
                     f"{sb:.2f} against b, {sc:.2f} against c ({sa:.2f} against a)")
    txt = "\n".join(lines)
    print(txt)
    (HERE / "ceiling_output.txt").write_text(txt + "\n")
    (HERE / "ceiling.json").write_text(json.dumps(res, indent=1, default=float))


if __name__ == "__main__":
    main()
