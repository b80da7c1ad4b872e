#!/usr/bin/env python3
"""Executed instructions, smsp__inst_executed.sum and smsp__thread_inst_executed.sum: the PTX path (the compiled code, counted
with ptxas's SASS per PTX line) and the IR path (simgpu's estimate), beside Nsight Compute on
the H200 (validation/data/h200_ncu.json).

    python validation/compare_inst.py [--only REGEX] [--json out.json]
    python validation/compare_inst.py --kernels validation/holdout --data validation/data/h200_holdout.json
    python validation/compare_inst.py --kernels validation/holdout --toolchain /work/tc13 \
        --pair validation/data/bottleneck/h100_2026-12-07/bneck_holdout.csv:validation/data/bottleneck/h100_2026-12-07/profile_order_holdout.json

Both paths run sampled (timing/sampling.py: one wave's worth of blocks, slices of the first
wave and of up to 3 more spread over the full waves, and the partial last one; counts scaled
per stratum), so a kernel whose blocks do different work is approximated the same way on both.
Neither path was fitted to these kernels.
"""
import argparse
import json
import os
import re
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_timing as ct  # noqa: E402

import simgpu  # noqa: E402

METRIC = "smsp__inst_executed.sum"
THREAD = "smsp__thread_inst_executed.sum"     # thread instructions: the active lanes of each


def measured(names, path=None, pairs=None, metric=METRIC):
    """{case: metric} (default smsp__inst_executed.sum) from the suite's ncu file or the
    holdout's (whose cases keep their metrics under "ncu_core"), or from ncu CSVs with their
    launch-order files (`pairs`: [(csv, order json)], e.g. the H100 bottleneck run)."""
    if pairs:
        from compare_bottleneck import load_ncu
        d, _ = load_ncu(pairs)
        return {n: float(d[n][metric]) for n in names if metric in d.get(n, {})}
    d = json.load(open(path or os.path.join(HERE, "data", "h200_ncu.json")))["cases"]
    out = {}
    for n in names:
        m = d.get(n, {})
        m = m.get("metrics") or m.get("ncu_core", {}).get("metrics", {})
        if metric in m:
            out[n] = float(m[metric])
    return out


def ir_count(c, args):
    rep = simgpu.predict(c["kernel"], c["grid"], c["block"], args, sample=True, executor="ir")
    return rep.metrics[METRIC] * rep.extras["sampled_execution"]["scale"]


def ptx_count(c, args, sample=True):
    """(smsp__inst_executed, fraction of it counted by the rule for undecided SASS blocks)."""
    rep = simgpu.launch(c["kernel"], c["grid"], c["block"], args, executor="ptx", memory=False, timing=False,
                        sample=sample)
    sc = rep.extras.get("sass_counts", {})
    und = sc.get("undecided_fraction", float("nan"))
    ptx_count.by_opcode = sc.get("by_opcode", {})     # the last launch's {SASS opcode: executions}
    pre = "smsp__inst_executed_pipe_"                  # the launch's per-pipe counts (scaled), by
    ptx_count.by_pipe = {k[len(pre):-4]: v for k, v in rep.metrics.items()   # SassInstr.pipe (operands too)
                         if k.startswith(pre) and k.endswith(".sum")}
    ptx_count.thread = rep.metrics.get(THREAD, float("nan"))
    return rep.metrics[METRIC], und     # without the timing model, launch scales the counts itself


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--kernels", default=None, help="folder of case modules (default validation/kernels)")
    ap.add_argument("--data", default=None, help="ncu data file (default validation/data/h200_ncu.json)")
    ap.add_argument("--pair", action="append", default=[], help="CSV:ORDER, ncu CSV (raw page, base units) and "
                    "its launch-order file, instead of --data")
    ap.add_argument("--full", default=None, help="regex: these kernels run over all blocks (sample=False)")
    ap.add_argument("--no-ir", action="store_true", help="the PTX path only (the IR column NaN)")
    ap.add_argument("--toolchain", default=None, help="compile with the CUDA toolchain in this folder "
                    "(e.g. the 13.0.88 wheels, as the card's driver); both versions go into the JSON")
    ap.add_argument("--lto", default="record", choices=("record", "on", "off"),
                    help="compile with numba-cuda's LTO program where the card's run did (validation/card_lto.py: "
                         "from the data's recorded versions; default), or on/off")
    a = ap.parse_args(argv)
    ct.use_toolchain(a.toolchain)
    pairs = [tuple(p.split(":", 1)) for p in a.pair]
    lto = ct.use_lto(a.lto, [a.data or os.path.join(HERE, "data", "h200_ncu.json")] if not pairs else
                     [os.path.join(os.path.dirname(c), "env.txt") for c, _ in pairs])
    cases = ct.load_cases(a.only, a.kernels)
    ncu = measured({c["name"] for c in cases}, a.data, pairs)
    ncu_thread = measured({c["name"] for c in cases}, a.data, pairs, THREAD)
    rows, failed = [], []
    for c in cases:
        if c["name"] not in ncu:
            continue
        t0 = time.time()
        try:
            full = bool(a.full and re.search(a.full, c["name"]))
            p, und = ptx_count(c, c["args"](np.random.default_rng(0)), sample=not full)
        except Exception as e:  # noqa: BLE001 - reported per kernel
            failed.append((c["name"], f"{type(e).__name__}: {str(e)[:200]}"))
            print(f"{c['name']:36s} PTX path FAILED: {failed[-1][1]}", flush=True)
            continue
        try:
            i = float("nan") if a.no_ir else ir_count(c, c["args"](np.random.default_rng(0)))
        except Exception as e:  # noqa: BLE001 - the IR path refuses some kernels
            print(f"{c['name']:36s} IR path: {type(e).__name__}: {str(e)[:120]}", flush=True)
            i = float("nan")
        m = ncu[c["name"]]
        mt, pt = ncu_thread.get(c["name"], float("nan")), getattr(ptx_count, "thread", float("nan"))
        rows.append({"name": c["name"], "ncu": m, "ptx": p, "ir": i, "ncu_thread": mt, "ptx_thread": pt,
                     "wall_s": time.time() - t0, "sampled": not full,
                     "undecided": und, "by_opcode": getattr(ptx_count, "by_opcode", {}),
                     "by_pipe": getattr(ptx_count, "by_pipe", {})})
        print(f"{c['name']:36s} ncu {m:14,.0f}  PTX {p / m:6.3f}x  IR {i / m:6.3f}x  threads PTX {pt / mt:6.3f}x",
              flush=True)
    n = len(rows)
    within = lambda key, tol=0.10, ref="ncu": sum(abs(r[key] / r[ref] - 1) <= tol for r in rows)
    err = lambda r: max(abs(r["ptx"] / r["ncu"] - 1), abs(r["ptx_thread"] / r["ncu_thread"] - 1))
    med = lambda key: float(np.nanmedian([abs(r[key] / r["ncu"] - 1) for r in rows])) if rows else None
    summary = {"kernels": n, "ptx_within_10pct": within("ptx"), "ptx_within_5pct": within("ptx", 0.05),
               "ir_within_10pct": within("ir"),
               "ptx_thread_kernels": sum(r["ncu_thread"] == r["ncu_thread"] for r in rows),
               "ptx_thread_within_5pct": within("ptx_thread", 0.05, "ncu_thread"),
               "ptx_both_within_5pct": sum(err(r) <= 0.05 for r in rows),
               "ptx_either_beyond_20pct": [r["name"] for r in rows if not err(r) <= 0.20],
               "ptx_undecided_max": max((r["undecided"] for r in rows), default=0.0),
               "ptx_median_abs_error": med("ptx"), "ir_median_abs_error": med("ir"),
               "failed": [name for name, _ in failed]}
    print(json.dumps(summary))
    if a.json:
        with open(a.json, "w") as fh:
            data = [a.data or os.path.join(HERE, "data", "h200_ncu.json")] if not pairs else []
            card = {}
            for csv_path, _ in pairs:   # the ncu run's env.txt beside its CSV (nvidia-smi, versions)
                env = os.path.join(os.path.dirname(csv_path), "env.txt")
                lines = open(env).read().splitlines() if os.path.exists(env) else []
                card[os.path.relpath(csv_path, os.path.dirname(HERE))] = [
                    ln.strip(" |") for ln in lines[:12] if "Driver Version" in ln or "NVIDIA H" in ln or ln.startswith("20")]
            tcs = ct.toolchain_record(data)
            if pairs:
                tcs["card"].update(card)
            json.dump({"summary": summary, "toolchains": tcs, "lto": lto, "rows": rows,
                       "failed": failed}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
