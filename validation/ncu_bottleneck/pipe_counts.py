#!/usr/bin/env python3
"""Which pipe each SASS opcode issues to, from Nsight Compute's instruction counts per pipe
(`sm__inst_executed_pipe_<p>.sum`, facts measured on the card) -- issue 22's bottleneck target.

Two sources, both from validation/ncu_bottleneck/device_bneck.sh's device call:

* the holdout: per kernel, ncu's count per pipe against the count the pipe table
  (simgpu/sass/opclasses.py, Nsight Compute's pipe names) predicts from simgpu's executed SASS
  per opcode (`--inst`: compare_inst.py's JSON, rows[].by_opcode, compiled with the card's
  toolchain).  A pipe whose counts disagree names the opcodes the table puts in the wrong pipe;
  `--try OPCODE=PIPE` re-counts with a change, to test it on every kernel at once.
* the opcode microbenchmarks (`--bench-csv` + `--bench-json`: validation/microbench/opcodes.py
  run under ncu with --reps 0): per bench kernel, each pipe's count per warp and loop iteration
  beside the loop's opcodes, so an opcode alone in its loop (or beside known ones) shows its pipe.

    python3 validation/ncu_bottleneck/pipe_counts.py --pair bneck_holdout.csv:profile_order_holdout.json \
        --inst validation/data/inst_holdout_vs_h200_tc130.json [--try VIADD=alu] [--json OUT]
    python3 validation/ncu_bottleneck/pipe_counts.py --bench-csv opcodes_ncu.csv --bench-json opcodes.json
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VAL = os.path.dirname(HERE)
ROOT = os.path.dirname(VAL)
sys.path.insert(0, ROOT)
sys.path.insert(0, VAL)

from simgpu.sass.opclasses import base_opcode, pipe_of  # noqa: E402

# ncu pipes compared (sm__inst_executed_pipe_<p>); fma is fmaheavy + fmalite (ncu's own union)
PIPES = ("alu", "fma", "fmaheavy", "fmalite", "fp16", "fp64", "xu", "lsu", "adu", "cbu", "uniform", "tensor", "tex")
_SUM = re.compile(r"^sm__inst_executed_pipe_([a-z0-9_]+)\.sum$")


def measured_pipes(metrics):
    """{pipe: count} of one ncu row; `total`: smsp__inst_executed.sum."""
    out = {}
    for k, v in metrics.items():
        m = _SUM.match(k)
        if m and isinstance(v, (int, float)):
            out[m.group(1)] = float(v)
    tot = metrics.get("smsp__inst_executed.sum")
    if isinstance(tot, (int, float)):
        out["total"] = float(tot)
    return out


def table_pipe(opcode, overrides=None):
    """The pipe table's ncu pipe for one opcode, with `overrides` ({base opcode: pipe})."""
    if overrides and base_opcode(opcode) in overrides:
        return overrides[base_opcode(opcode)]
    return pipe_of(opcode)


def predicted_pipes(by_opcode, overrides=None):
    """{ncu pipe: count} from executed SASS per opcode; "fma" as ncu counts it (fmaheavy: IMAD
    family, fmalite: FP32 adds/multiplies; FFMA on either), "total" all."""
    out = dict.fromkeys(PIPES, 0.0)
    out["total"] = 0.0
    for op, n in by_opcode.items():
        p = table_pipe(op, overrides)
        out["total"] += n
        if p == "fmaheavy":
            out["fmaheavy"] += n
            out["fma"] += n
        elif p == "fma":
            out["fma"] += n
        elif p in out:
            out[p] += n
    return out


def launch_pipes(by_pipe):
    """{ncu pipe: count} from simgpu's own per-pipe counts (smsp__inst_executed_pipe_<p>.sum,
    each SASS instruction's pipe with its operands: an S2R by its special register), "fma" and
    "total" as in predicted_pipes."""
    out = dict.fromkeys(PIPES, 0.0)
    out["total"] = 0.0
    for p, n in by_pipe.items():
        out["total"] += n
        if p == "fmaheavy":
            out["fmaheavy"] += n
            out["fma"] += n
        elif p in out:
            out[p] += n
    return out


def compare_holdout(ncu, inst_rows, overrides=None):
    """Per kernel, ncu's counts per pipe against simgpu's: the launch's own per-pipe counts
    (rows[].by_pipe) where compare_inst.py stored them and no override is tried, else the pipe
    table over the executed SASS per opcode (rows[].by_opcode)."""
    rows = []
    for r in inst_rows:
        m = ncu.get(r["name"])
        if not m or not r.get("by_opcode"):
            continue
        meas = measured_pipes(m)
        # by_opcode is the sampled launch's own count (compare_inst.py keeps it unscaled); its
        # scaled total is the row's "ptx" (smsp__inst_executed of the whole launch)
        n = sum(r["by_opcode"].values())
        k = r["ptx"] / n if n and r.get("ptx") == r.get("ptx") and r.get("ptx") else 1.0
        if r.get("by_pipe") and not overrides:
            pred = launch_pipes(r["by_pipe"])
        else:
            pred = predicted_pipes({op: v * k for op, v in r["by_opcode"].items()}, overrides)
        rows.append({"name": r["name"], "measured": meas, "predicted": pred})
    return rows


def pipe_errors(rows, pipes=("alu", "fma", "fmaheavy", "xu", "lsu", "adu", "cbu", "uniform", "fp64")):
    """Summed |predicted - measured| over kernels per pipe, and the total over pipes, as a share
    of the executed instructions."""
    out = {}
    tot = sum(r["measured"].get("total", 0.0) for r in rows) or 1.0
    for p in pipes:
        e = sum(abs(r["predicted"].get(p, 0.0) - r["measured"][p]) for r in rows if p in r["measured"])
        out[p] = e / tot
    out["all"] = sum(out.values())
    return out


def bench_pipes(csv_path, bench_json):
    """Per bench kernel launch (each bench's throughput kernel, then its latency kernel, as
    opcodes.py runs them): each pipe's count per warp and loop iteration, beside the loop's
    opcodes and what the pipe table (sass/opclasses.py) predicts for them.  Launches are matched
    to benches by kernel name (`bench_<name>`), so ``bench_json`` may hold more benches than
    the run (validation/data/h100_opcodes.json: both runs)."""
    from simgpu.validate.ncu_csv import parse_csv, rows_to_dicts
    with open(csv_path) as f:
        header, units, data = parse_csv(f.read())
    recs = rows_to_dicts(header, units, data)
    with open(bench_json) as f:
        bj = json.load(f)
    seen = {}
    out = []
    for rec in recs:
        k = rec["_meta"].get("Kernel Name", "")
        name = k[len("bench_"):] if k.startswith("bench_") else None
        b = bj["benches"].get(name) if name else None
        if b is None:
            out.append({"bench": name, "error": f"kernel name {k!r}"})
            continue
        modes = [m for m in ("thr", "lat") if isinstance(b.get(m), dict) and "loop_opcodes" in b[m]]
        i = seen[name] = seen.get(name, -1) + 1
        if i >= len(modes):
            out.append({"bench": name, "error": f"launch {i + 1} of {k!r}"})
            continue
        mode, r = modes[i], b[modes[i]]
        warps = r["blocks"] * (r["threads"] // 32) * r["iterations"]
        meas = measured_pipes(rec["metrics"])
        out.append({"bench": name, "mode": mode, "per_warp_iteration": {p: round(v / warps, 2) for p, v in meas.items()
                                                                       if v / warps >= 0.5},
                    "loop_opcodes": r["loop_opcodes"],
                    "table": {p: v for p, v in predicted_pipes(r["loop_opcodes"]).items() if v}})
    return out


_SECTION = re.compile(r"^// ===== (\S+) (thr|lat)\s*$")
_INS = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
_LABEL = re.compile(r"^\s*(\.L_x_\d+):")
_BRA = re.compile(r"`\((\.L_x_\d+)\)")


def sass_sections(path):
    """{(bench, "thr"/"lat"): nvdisasm text} of opcodes.py's SASS file (`// ===== NAME MODE`)."""
    out, key = {}, None
    with open(path) as f:
        for line in f:
            m = _SECTION.match(line)
            if m:
                key = (m.group(1), m.group(2))
                out[key] = []
            elif key:
                out[key].append(line)
    return {k: "".join(v) for k, v in out.items()}


def one_warp_pipes(sass_text, iterations, cc=(9, 0)):
    """{ncu pipe: count} of a bench's latency kernel (one warp, thread 0 of which runs every
    instruction: the prologue, the loop `iterations` times, the epilogue up to the last EXIT)
    from its SASS, each instruction's pipe with its operands (an S2R by its special register)."""
    seq, labels = [], {}
    for line in sass_text.splitlines():
        m = _LABEL.match(line)
        if m:
            labels[m.group(1)] = len(seq)
            continue
        m = _INS.match(line)
        if m:
            seq.append((m.group(2), m.group(3).strip()))
    last_exit = max(i for i, (op, _) in enumerate(seq) if op == "EXIT")
    lo = hi = None
    for i, (op, ops) in enumerate(seq):
        b = _BRA.search(ops) if op == "BRA" else None
        if b and b.group(1) in labels and labels[b.group(1)] <= i:
            lo, hi = labels[b.group(1)], i
            break
    out = dict.fromkeys(PIPES, 0.0)
    out["total"] = 0.0
    for i, (op, ops) in enumerate(seq[:last_exit + 1]):
        n = iterations if lo is not None and lo <= i <= hi else 1
        p = pipe_of(op, cc, operands=ops)
        out["total"] += n
        if p == "fmaheavy":
            out["fmaheavy"] += n
            out["fma"] += n
        elif p in out:
            out[p] += n
    return out


def one_warp_benches(csv_path, bench_json, sass_path):
    """Per latency-kernel launch (one block of one warp) of the bench run: ncu's count per pipe
    against one_warp_pipes of its SASS: the whole kernel, prologue and epilogue included (the
    S2R/S2UR/LDC/BAR outside the loop, which the per-iteration comparison divides away)."""
    from simgpu.validate.ncu_csv import parse_csv, rows_to_dicts
    with open(csv_path) as f:
        header, units, data = parse_csv(f.read())
    with open(bench_json) as f:
        bj = json.load(f)
    sass = sass_sections(sass_path)
    seen, out = {}, []
    for rec in rows_to_dicts(header, units, data):
        k = rec["_meta"].get("Kernel Name", "")
        name = k[len("bench_"):] if k.startswith("bench_") else None
        b = bj["benches"].get(name) if name else None
        if b is None:
            continue
        modes = [m for m in ("thr", "lat") if isinstance(b.get(m), dict) and "loop_opcodes" in b[m]]
        i = seen[name] = seen.get(name, -1) + 1
        if i >= len(modes) or modes[i] != "lat" or (name, "lat") not in sass:
            continue
        r = b["lat"]
        if r["blocks"] * r["threads"] != 32:
            continue
        out.append({"bench": name, "measured": measured_pipes(rec["metrics"]),
                    "sass": one_warp_pipes(sass[(name, "lat")], r["iterations"])})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pair", action="append", default=[])
    ap.add_argument("--inst", default=os.path.join(VAL, "data", "inst_holdout_vs_h200_tc130.json"))
    ap.add_argument("--try", dest="tries", action="append", default=[], help="OPCODE=PIPE (base opcode)")
    ap.add_argument("--bench-csv", default=None)
    ap.add_argument("--bench-json", default=None)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    res = {}
    if a.bench_csv:
        res["benches"] = bench_pipes(a.bench_csv, a.bench_json)
        for b in res["benches"]:
            print(b["bench"], b["mode"], b.get("per_warp_iteration", b.get("error")))
            print("    loop:", b.get("loop_opcodes"))
    if a.pair:
        from compare_bottleneck import load_ncu
        ncu, problems = load_ncu([tuple(p.split(":", 1)) for p in a.pair])
        with open(a.inst) as f:
            inst = json.load(f)["rows"]
        base = compare_holdout(ncu, inst)
        res["holdout"] = {"errors_table": pipe_errors(base), "rows": base, "problems": problems}
        print("pipe table as is: summed |predicted - measured| / executed:",
              {k: round(v, 4) for k, v in res["holdout"]["errors_table"].items()})
        print(f"{'kernel':34s}" + "".join(f"{p:>17s}" for p in ("alu", "fma", "fmaheavy", "xu", "lsu", "adu", "cbu", "uniform")))
        for r in base:
            print(f"{r['name'][:34]:34s}" + "".join(
                f"{r['measured'].get(p, float('nan')) / 1e6:8.2f}/{r['predicted'][p] / 1e6:7.2f} "
                for p in ("alu", "fma", "fmaheavy", "xu", "lsu", "adu", "cbu", "uniform")))
        for t in a.tries:
            ov = dict(x.split("=") for x in t.split(","))
            rows = compare_holdout(ncu, inst, ov)
            e = pipe_errors(rows)
            res["holdout"].setdefault("tries", {})[t] = e
            print(f"with {t}:", {k: round(v, 4) for k, v in e.items()})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
