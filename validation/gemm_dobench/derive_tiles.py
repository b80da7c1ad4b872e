"""Per-tile rate factors of cuBLAS's nvjet kernels from tile_rates.json (tile_rates.py: every
algorithm cublasLtMatmulAlgoGetHeuristic offers at 16384 x 16384 x 4096 and 12288 x 12288 x 8192
bf16, shapes in no sweep, each timed under do_bench and named by the profiler).

For each algorithm: efficiency = model time / measured time, the model costing that kernel (its
tile, cluster and grid: waves and padding are the model's) at the one chip rate; factor = its
efficiency over the efficiency of the kernel torch.matmul runs at the same shape.  A tile's
factor is the median over the two shapes of the best algorithm with that tile name.

    PYTHONPATH=. python validation/gemm_dobench/derive_tiles.py  -> derived_tiles.json, printed
"""
from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from simgpu.model.gemm import gemm   # noqa: E402

AUX = ("splitKreduce", "Memset", "scal_kernel", "FillFunctor")


def main_kernel(ks):
    ks = [k for k in ks or [] if "name" in k and not any(a in k["name"] for a in AUX)]
    return max(ks, key=lambda k: k.get("dur_us") or 0) if ks else None


def main():
    d = json.loads((HERE / "tile_rates.json").read_text())
    per_tile = {}
    lines = [f"card {d['env'].get('gpu')}, {d['env'].get('date_utc')}, torch {d['env'].get('torch')}, "
             f"cuBLASLt {d['env'].get('cublaslt_version')}"]
    for key, s in d["shapes"].items():
        m, n, k = s["m"], s["n"], s["k"]
        ref = main_kernel(s["torch_matmul"]["kernels"])
        t_ref = statistics.median(s["torch_matmul"]["ms_reps"] + [s["torch_matmul"]["ms"]]) * 1e-3
        e_ref = gemm(m, n, k, timing="dobench", kernel=(ref["name"], ref["grid"])).seconds / t_ref
        lines.append(f"{key}: torch.matmul {ref['name'][:50]} {t_ref * 1e3:.3f} ms, model/measured {e_ref:.3f}")
        for a in s["algos"]:
            kn = main_kernel(a.get("kernels"))
            if kn is None or "ms" not in a or not kn["name"].startswith("nvjet_sm90"):
                continue
            t = statistics.median(a["ms"]) * 1e-3
            try:
                e = gemm(m, n, k, timing="dobench", kernel=(kn["name"], kn["grid"])).seconds / t
            except ValueError:
                continue
            tile = re.search(r"nvjet_sm90_[a-z]+_(\d+x\d+)_", kn["name"]).group(1)
            f = e / e_ref
            lines.append(f"   {kn['name'][:52]:52s} grid {kn['grid']} {t * 1e3:.3f} ms factor {f:.3f}")
            best = per_tile.setdefault(tile, {}).get(key)
            if best is None or f > best:
                per_tile[tile][key] = f
    out = {t: statistics.median(v.values()) for t, v in per_tile.items()}
    lines.append("per tile (cuBLAS's name, along torch N x along M): " +
                 ", ".join(f"{t} {f:.3f}" for t, f in sorted(out.items(), key=lambda x: -x[1])))
    print("\n".join(lines))
    (HERE / "derived_tiles.json").write_text(json.dumps({"factors": out, "per_shape": per_tile}, indent=1))
    (HERE / "derive_tiles_output.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
