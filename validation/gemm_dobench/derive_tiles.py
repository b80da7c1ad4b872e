"""Per-tile rates of cuBLAS's nvjet kernels from tile_rates.json (tile_rates.py: every algorithm
cublasLtMatmulAlgoGetHeuristic offers at 16384 x 16384 x 4096 and 12288 x 12288 x 8192 bf16, shapes
in no sweep, each timed under do_bench and named by the profiler; run on an H100 SXM, 2026-12-07).

For each algorithm: efficiency = model time / measured time, the model costing that kernel (its
tile, cluster and grid: waves and padding are the model's) at the one chip rate, without the
per-tile rates (``simgpu.model.gemm._SM90_TILE_RATES`` emptied while this runs, so the result does
not depend on itself); factor = its efficiency over the efficiency of the kernel torch.matmul runs
at the same shape (nvjet 192x192, the kernel the H200's chip rate was measured with).  Every timed
point at these shapes holds the card at its 700 W limit, so a factor is a rate at the power limit.
It is split in two with NVML's SM clock, read right after each do_bench:

    clock     = the algorithm's clock / the reference kernel's clock (medians of the reads)
    per_clock = factor / clock      (work per SM per clock against the reference kernel)

(per tile: factor and clock the medians over the two shapes, per_clock their quotient)

A tile is keyed in the model's orientation (BM along torch's M, BN along N; cuBLAS's name gives
N x M).  Its numbers are the best algorithm of that tile at each shape, then the median over the
two shapes.  The model (timing="dobench") runs the tile at per_clock x the chip rate at every clock
and at clock x the power-limited clock (simgpu.model.gemm._dobench_terms): a long kernel then comes
out factor x the reference's rate, a short one (below the power limit) per_clock x it.  Both are
ratios on one card, so the H100's lower absolute clock under the cap (about 1.4 GHz by NVML against
the H200's 1.66) cancels; see docs/model.md, "Per-tile rates".

Only points taken with the card at its power limit count (NVML's power read after the point at
least 95 % of the 700 W limit; ``at_limit``): at the first shape the first pass over the
algorithms ran while the card was still ramping up from idle (267-599 W), and the reference
kernel's clock read there was 4-6 % above the one at the limit, which made every other tile look
that much faster per clock.

Also printed: cuBLASLt's own wavesCount beside the model's waves for each algorithm (a check of the
tile / cluster / grid reading, not an input).

    PYTHONPATH=. python validation/gemm_dobench/derive_tiles.py  -> derived_tiles.json, derive_tiles_output.txt
"""
from __future__ import annotations

import importlib
import json
import math
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

G = importlib.import_module("simgpu.model.gemm")   # the module (simgpu.model.gemm is also the function)

AUX = ("splitKreduce", "Memset", "scal_kernel", "FillFunctor")


def main_kernel(ks):
    ks = [k for k in ks or [] if "name" in k and not any(a in k["name"] for a in AUX)]
    return max(ks, key=lambda k: k.get("dur_us") or 0) if ks else None


LIMIT_W = 700.0          # the card's power limit (nvidia-smi in tile_rates.json's env)
AT_LIMIT = 0.95          # a point counts when NVML's power read after it is at least this share of it


def at_limit(times, reads):
    """(times, SM clocks) of the points taken with the card at its power limit.  NVML's power is an
    average over the last moments, so a read under the limit means the card was still ramping up
    from idle (the first pass over the algorithms at the first shape) and its clock read is not the
    clock the limit settles to."""
    pts = [(t, r) for t, r in zip(times, reads) if r and r[1] >= AT_LIMIT * LIMIT_W]
    return [t for t, _ in pts], [r[0] for _, r in pts]


def derive(d):
    per_tile, lines = {}, []
    waves_ok = n_algos = 0
    lines.append(f"card {d['env'].get('gpu')}, {d['env'].get('date_utc')}, torch {d['env'].get('torch')}, "
                 f"cuBLASLt {d['env'].get('cublaslt_version')}")
    for key, s in d["shapes"].items():
        m, n, k = s["m"], s["n"], s["k"]
        tm = s["torch_matmul"]
        ref = main_kernel(tm["kernels"])
        # the reference: torch.matmul's kernel, timed as torch.matmul (its first point, and its
        # repeats, each right after a pass over the algorithms at the limit: no read of their own)
        # and as the same algorithm through cuBLASLt, at the limit
        same = [a for a in s["algos"] if (main_kernel(a.get("kernels")) or {}).get("name") == ref["name"]]
        times, clocks = at_limit([tm["ms"]], [tm["nvml"]])
        times += tm["ms_reps"]
        for a in same:
            t_a, c_a = at_limit(a["ms"], a["nvml"])
            times, clocks = times + t_a, clocks + c_a
        t_ref, c_ref = statistics.median(times) * 1e-3, statistics.median(clocks)
        e_ref = G.gemm(m, n, k, timing="dobench", kernel=(ref["name"], ref["grid"])).seconds / t_ref
        lines.append(f"{key}: torch.matmul {ref['name'][:50]} {t_ref * 1e3:.3f} ms, model/measured {e_ref:.3f}, "
                     f"SM clock {c_ref:.0f} MHz (NVML, {len(clocks)} reads at the limit)")
        for a in s["algos"]:
            kn = main_kernel(a.get("kernels"))
            if kn is None or "ms" not in a or not kn["name"].startswith("nvjet_sm90"):
                continue
            t_a, c_a = at_limit(a["ms"], a["nvml"])
            if not t_a:
                continue
            t = statistics.median(t_a) * 1e-3
            try:
                est = G.gemm(m, n, k, timing="dobench", kernel=(kn["name"], kn["grid"]))
            except ValueError:
                continue
            e = est.seconds / t
            tn, tm_ = re.search(r"nvjet_sm90_[a-z]+_(\d+)x(\d+)_", kn["name"]).groups()
            tile = f"{tm_}x{tn}"                      # model orientation: BM (torch M) x BN (torch N)
            f, c = e / e_ref, statistics.median(c_a) / c_ref
            waves_ok += est.chosen.waves == math.ceil(a["waves_count"])
            n_algos += 1
            lines.append(f"   {kn['name'][:52]:52s} {t * 1e3:.3f} ms ({len(t_a)} at the limit) factor {f:.3f} = "
                         f"clock {c:.3f} x per clock {f / c:.3f}; waves cuBLASLt {a['waves_count']:.2f} model "
                         f"{est.chosen.waves}")
            best = per_tile.setdefault(tile, {}).get(key)
            if best is None or f > best["factor"]:
                per_tile[tile][key] = {"factor": f, "clock": c, "per_clock": f / c, "kernel": kn["name"]}
    out = {}
    for t, v in per_tile.items():
        f, c = (statistics.median(x[q] for x in v.values()) for q in ("factor", "clock"))
        out[t] = {"factor": f, "clock": c, "per_clock": f / c}
    lines.append(f"the model's waves (tiles padded to the cluster, over the profiled grid) = ceil(cuBLASLt's "
                 f"wavesCount) for {waves_ok} of {n_algos} algorithms")
    lines.append("per tile (model's BM x BN; median of the two shapes): factor = clock x per clock")
    for t, v in sorted(out.items(), key=lambda x: -x[1]["factor"]):
        lines.append(f"   {t:8s} {v['factor']:.3f} = {v['clock']:.3f} x {v['per_clock']:.3f}")
    lines.append("as simgpu.model.gemm._SM90_TILE_RATES ((BM, BN): (per_clock, clock)): " + ", ".join(
        f"({t.replace('x', ', ')}): ({v['per_clock']:.3f}, {v['clock']:.3f})" for t, v in out.items()))
    return out, per_tile, lines


def main():
    d = json.loads((HERE / "tile_rates.json").read_text())
    saved, G._SM90_TILE_RATES = G._SM90_TILE_RATES, {}
    try:
        out, per_tile, lines = derive(d)
    finally:
        G._SM90_TILE_RATES = saved
    print("\n".join(lines))
    (HERE / "derived_tiles.json").write_text(json.dumps({"tiles": out, "per_shape": per_tile}, indent=1))
    (HERE / "derive_tiles_output.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
