#!/usr/bin/env python3
"""Per-step cycles of validation/microbench/latency_mlp.py's kernels, card against simgpu.

  python3 validation/microbench/latency_mlp_analyze.py --card DIR/latency_mlp_card.json \
      --csv DIR/lat.csv --model DIR/latency_mlp_model_H100.json [--json OUT]

Card: gpu__time_duration.sum per kernel (ncu, --clock-control none), in launch order (the
card JSON's kernel order), and the SM clock each ran at (sm__cycles_elapsed.avg / duration).
Cycles per chase step: L1/L2 (T(passes=2) - T(passes=1)) / steps, DRAM (T(S=1536) - T(S=512))
/ 1024, times the kernel's own clock; the model's the same from its predicted times.
"""
import argparse
import csv
import json

import numpy as np


def read_ncu_csv(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    # the program's own output (ncu's ==PROF== lines, prints) may come before the table
    start = next(i for i, r in enumerate(rows) if r[:1] == ["ID"])
    hdr = rows[start]
    body = [r for r in rows[start + 1:] if len(r) == len(hdr) and r[0] != ""]
    out = []
    for r in body:
        d = dict(zip(hdr, r))
        if "mb_" not in d.get("Kernel Name", ""):
            continue
        rec = {}
        for k, v in d.items():
            try:
                rec[k] = float(v.replace(",", ""))
            except ValueError:
                rec[k] = v
        out.append(rec)
    return out


def card_times(card_json, csv_path):
    names = list(json.load(open(card_json))["kernels"])
    rows = read_ncu_csv(csv_path)
    if len(rows) != len(names):
        raise SystemExit(f"{len(rows)} profiled kernels, {len(names)} launched")
    out = {}
    for n, r in zip(names, rows):
        ns = r["gpu__time_duration.sum"]
        out[n] = {"ns": ns, "clock_ghz": r["sm__cycles_elapsed.avg"] / ns,
                  "sm_cycles": r["sm__cycles_elapsed.avg"],
                  **{k: r[k] for k in ("dram__bytes_read.sum", "lts__t_sector_hit_rate.pct",
                                       "l1tex__t_sector_hit_rate.pct", "smsp__cycles_active.avg") if k in r}}
    return out


def per_step(times, clock_ghz=None):
    """{(level, k): cycles per chase step}, and the streams' times."""
    res = {}
    for lvl in ("l1", "l2"):
        for k in (1, 2, 4, 8):
            a, b = times.get(f"chase{k}_{lvl}_p1"), times.get(f"chase{k}_{lvl}_p2")
            if a and b:
                ghz = clock_ghz or np.mean([a["clock_ghz"], b["clock_ghz"]])
                res[f"{lvl}_k{k}"] = (b["ns"] - a["ns"]) * ghz / 4096
    for k in (1, 2, 4, 8):
        a, b = times.get(f"chase{k}_dram_s512"), times.get(f"chase{k}_dram_s1536")
        if a and b:
            ghz = clock_ghz or np.mean([a["clock_ghz"], b["clock_ghz"]])
            res[f"dram_k{k}"] = (b["ns"] - a["ns"]) * ghz / 1024
    for name in ("sqrt", "div", "rsqrt", "rsqrt_fast"):
        a, b = times.get(f"{name}_chain_s2048"), times.get(f"{name}_chain_s4096")
        if a and b:
            ghz = clock_ghz or np.mean([a["clock_ghz"], b["clock_ghz"]])
            res[f"{name}_chain"] = (b["ns"] - a["ns"]) * ghz / 2048
    a, b = times.get("stream_f64_l2_r2"), times.get("stream_f64_l2_r3")
    if a and b:
        res["l2_sweep_ns"] = b["ns"] - a["ns"]
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--card", required=True)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    card = card_times(a.card, a.csv)
    model = json.load(open(a.model))
    ghz = model.get("clock_ghz", 1.98)
    mt = {n: {"ns": v["ns"], "clock_ghz": ghz} for n, v in model["kernels"].items()}
    cs, ms = per_step(card), per_step(mt, ghz)
    print(f"{'quantity':18s} {'card':>10s} {'model':>10s} {'model/card':>10s}")
    for k in cs:
        m = ms.get(k)
        print(f"{k:18s} {cs[k]:10.1f} {m if m is None else round(m, 1)!s:>10s} "
              f"{'' if not m else round(m / cs[k], 3)!s:>10s}")
    print()
    print(f"{'kernel':24s} {'card us':>9s} {'clock':>6s} {'model us':>9s} {'ratio':>6s}  L1 hit %  L2 hit %")
    for n, c in card.items():
        m = model["kernels"].get(n, {}).get("ns")
        print(f"{n:24s} {c['ns'] / 1e3:9.2f} {c['clock_ghz']:6.3f} {'' if m is None else round(m / 1e3, 2)!s:>9s} "
              f"{'' if m is None else round(m / c['ns'], 3)!s:>6s}  {c.get('l1tex__t_sector_hit_rate.pct', 0):7.1f} "
              f" {c.get('lts__t_sector_hit_rate.pct', 0):7.1f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"card": card, "card_per_step_cycles": cs, "model_per_step_cycles": ms,
                       "model": model["kernels"]}, f, indent=1)


if __name__ == "__main__":
    main()
