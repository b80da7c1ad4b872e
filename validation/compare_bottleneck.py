#!/usr/bin/env python3
"""simgpu's named bottleneck against Nsight Compute's busiest unit (issue 22's target: they agree
on at least 80 % of the holdout).

  python3 validation/compare_bottleneck.py --pair bneck_holdout.csv:profile_order_holdout.json \
      --kernels validation/holdout --gpu H100 [--predictions P.json] [--json OUT.json] [--markdown OUT.md]
  (the CSV and order file from validation/ncu_bottleneck/device_bneck.sh), or, for the stored runs
  without per-pipe metrics:
  python3 validation/compare_bottleneck.py --data-json validation/data/h200_holdout.json --coarse --gpu H200

ncu side (`ncu_unit`): every `<metric>.avg.pct_of_peak_sustained_{elapsed,active}` of the run
(the SpeedOfLight breakdowns of sm__throughput and gpu__compute_memory_throughput, and the
per-pipe utilisations of ComputeWorkloadAnalysis) is put in one unit by its name (NCU_UNIT_RULES);
a unit's utilisation is its highest metric.  ncu's bottleneck is the busiest unit if that is
at least BUSY (60 % of peak, the threshold of ncu's own SOL rule and of simgpu's), else
"latency".

simgpu side (`simgpu_unit`): `simgpu.timing.analysis.decide` (the rule behind the Report's
bottleneck): a resource at >= 60 % maps to an ncu unit by SIM_TO_NCU; latency, tail wave and
block starts map to "latency" (ncu has no unit for them: nothing is busy).

The mapping tables were written down before any per-pipe measurement was looked at, and
nothing here is fitted (docs/timing.md, "Bottleneck agreement").
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUSY = 60.0   # percent of peak

# simgpu resource (simgpu/timing/analysis.py utilisation keys) -> ncu unit
SIM_TO_NCU = {
    "dram": "dram", "l2": "l2", "atomic": "l2",          # L2 atomics are executed in the L2 slices
    "l1": "l1", "shfl": "l1",                            # ncu: the LSU pipe issues shuffles to L1TEX
    "fp32": "fma", "fp64": "fp64", "int": "alu",
    "imad": "fma",      # added in session 31 with the resource (IMADs issue on the FMA-heavy pipe, which
                        # NCU_UNIT_RULES put in "fma"); before, simgpu did not report that pipe
    "sfu": "xu", "conv": "xu",                           # MUFU and conversions: the XU pipe
    "issue": "issue",
    "adu": "branch/address",   # added in session 33 with the resource (LDC, BAR, S2UR on the ADU, which
                               # NCU_UNIT_RULES put in "branch/address" with the CBU and TMA)
    "launch": "latency",                                 # block starts: no ncu unit is busy
}

# ncu metric name (without its .avg.pct_of_peak... suffix) -> unit; first match wins
NCU_UNIT_RULES = [
    (r"^(dram|fbpa|gpu__dram)__", "dram"),
    (r"^(lts|ltc)__", "l2"),
    (r"^l1tex__", "l1"),
    (r"^sm__(inst_executed_pipe|pipe)_lsu", "l1"),
    (r"^sm__(inst_executed_pipe|pipe)_(fma|fmaheavy|fmalite|fp16)(_|$)", "fma"),
    (r"^sm__(inst_executed_pipe|pipe)_fp64(_cycles|$)", "fp64"),
    (r"^sm__(inst_executed_pipe|pipe)_alu", "alu"),
    (r"^sm__(inst_executed_pipe|pipe)_xu", "xu"),
    (r"^sm__(inst_executed_pipe|pipe)_(tensor|shared|fp64_dmma)", "tensor"),
    (r"^sm__(inst_executed_pipe|pipe)_uniform", "uniform"),
    (r"^sm__(inst_executed_pipe|pipe)_(adu|cbu|tma)", "branch/address"),
    (r"^(smsp__issue_active|sm__inst_issued|smsp__inst_issued|sm__instruction_throughput|"
     r"smsp__inst_executed|sm__inst_executed)(\.|$)", "issue"),
]
# cross-unit aggregates: used for the SOL columns, never as a unit
AGGREGATES = ("sm__throughput", "gpu__compute_memory_throughput")
_PCT = re.compile(r"^(?P<base>[a-z0-9_]+)\.avg\.pct_of_peak_sustained_(elapsed|active)$")


def ncu_unit_of(base):
    for pat, unit in NCU_UNIT_RULES:
        if re.search(pat, base):
            return unit
    return None


def ncu_units(metrics):
    """{unit: (highest % of peak, metric)} from one ncu row ({metric: value}); metrics that name
    no unit are left out (ncu_unmapped lists them)."""
    out = {}
    for name, v in metrics.items():
        m = _PCT.match(name)
        if not m or m["base"] in AGGREGATES or not isinstance(v, (int, float)):
            continue
        unit = ncu_unit_of(m["base"])
        if unit and (unit not in out or v > out[unit][0]):
            out[unit] = (float(v), name)
    return out


def ncu_unmapped(metrics):
    return sorted(n for n in metrics if _PCT.match(n) and _PCT.match(n)["base"] not in AGGREGATES
                  and ncu_unit_of(_PCT.match(n)["base"]) is None)


def ncu_unit(metrics, busy=BUSY):
    """ncu's bottleneck: (unit or "latency", busiest unit, its %)."""
    u = ncu_units(metrics)
    if not u:
        return "latency", None, 0.0
    top = max(u, key=lambda k: u[k][0])
    return (top if u[top][0] >= busy else "latency"), top, u[top][0]


def simgpu_unit(kind, name):
    """simgpu's decide() -> (kind, resource, busy) mapped to an ncu unit or "latency"."""
    if kind != "resource" or name is None:
        return "latency"
    return SIM_TO_NCU.get(name, name)


# --coarse: for ncu data without per-pipe utilisation (the stored H200 runs): every SM pipe and
# issue is one unit, "compute", measured by sm__throughput (the SOL's compute side)
COMPUTE_UNITS = ("fma", "fp64", "alu", "xu", "issue", "tensor", "uniform", "branch/address")


def coarse_metrics(metrics):
    """A row without per-pipe metrics -> the same row with sm__throughput as the "issue" unit
    (which coarse() folds into "compute" with the pipes)."""
    out = dict(metrics)
    v = metrics.get("sm__throughput.avg.pct_of_peak_sustained_elapsed")
    if v is not None:
        out["smsp__issue_active.avg.pct_of_peak_sustained_active"] = v
    return out


def coarse(unit):
    return "compute" if unit in COMPUTE_UNITS else unit


# -- running it --------------------------------------------------------------------------------
def load_cases(kernels):
    if os.path.basename(os.path.normpath(kernels)) == "holdout":
        spec = importlib.util.spec_from_file_location("holdout_kernels", os.path.join(kernels, "kernels.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        return list(mod.CASES)
    sys.path.insert(0, HERE)
    from compare_timing import load_cases as lc
    return lc(kernels_dir=kernels)


def load_ncu(pairs):
    """[(csv path, order path)] -> {case: metrics}, problems."""
    spec = importlib.util.spec_from_file_location("ncu_csv", os.path.join(ROOT, "simgpu", "validate", "ncu_csv.py"))
    ncsv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ncsv)
    out, problems = {}, []
    for csv_path, order_path in pairs:
        with open(order_path) as f:
            order = json.load(f)
        with open(csv_path) as f:
            res, prob = ncsv.map_to_cases(f.read(), order["launches"])
        problems += [f"{os.path.basename(csv_path)}: {p}" for p in prob if "::" not in p]
        for name, r in res.items():
            out[name] = r["metrics"]
    return out, problems


def predict_units(case, gpu):
    import numpy as np
    from simgpu import predict
    from simgpu.timing.analysis import decide
    t0 = time.time()
    rep = predict(case["kernel"], case["grid"], case["block"], case["args"](np.random.default_rng(0)), gpu=gpu,
                  sample=True, executor="ptx")
    r = rep.extras["timing"]
    kind, name, busy = decide(r)
    return {"kind": kind, "resource": name, "busy": busy, "bottleneck": r.bottleneck,
            "utilisation": dict(r.utilisation), "time_ns": r.time_s * 1e9, "wall_s": time.time() - t0}


def compare(cases, ncu, pred, coarse_units=False):
    rows = []
    for c in cases:
        n, m, p = c["name"], ncu.get(c["name"]), pred.get(c["name"])
        if not m or not p or "error" in p:
            continue
        if coarse_units:
            m = coarse_metrics(m)
        nc, top, top_pct = ncu_unit(m)
        sim = simgpu_unit(p["kind"], p["resource"])
        sim_busiest = SIM_TO_NCU.get(p["resource"], p["resource"]) if p["resource"] else None
        units = ncu_units(m)
        top_metric = units[top][1] if top else None
        if coarse_units:
            nc, top, sim, sim_busiest = coarse(nc), coarse(top), coarse(sim), coarse(sim_busiest)
        rows.append({"name": n, "ncu": nc, "ncu_top": top, "ncu_top_pct": top_pct,
                     "ncu_units": {k: round(v[0], 1) for k, v in sorted(units.items(), key=lambda kv: -kv[1][0])},
                     "ncu_top_metric": top_metric,
                     "sm_throughput": m.get("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
                     "memory_throughput": m.get("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
                     "simgpu": sim, "simgpu_kind": p["kind"], "simgpu_resource": p["resource"],
                     "simgpu_busy": p["busy"], "simgpu_bottleneck": p["bottleneck"],
                     "agree": sim == nc, "busiest_agree": sim_busiest == top})
    return rows


def summary(rows):
    n = len(rows)
    a = sum(r["agree"] for r in rows)
    b = sum(r["busiest_agree"] for r in rows)
    return {"n": n, "agree": a, "agree_pct": 100.0 * a / n if n else None,
            "busiest_agree": b, "busiest_agree_pct": 100.0 * b / n if n else None}


def markdown(rows, s, coarse_units=False):
    out = ["| kernel | ncu: busiest unit (% of peak) | ncu bottleneck | simgpu (busy) | simgpu bottleneck | agree |",
           "|---|---|---|---|---|:-:|"]
    for r in rows:
        nxt = [f"{'compute (sm__throughput)' if coarse_units and k == 'issue' else k} {v:.0f}"
               for k, v in list(r["ncu_units"].items())[:3]]
        out.append(f"| {r['name']} | {', '.join(nxt)} | {r['ncu']} | {r['simgpu_resource']} "
                   f"{100 * r['simgpu_busy']:.0f} % ({r['simgpu_kind']}) | {r['simgpu']} | "
                   f"{'yes' if r['agree'] else 'no'} |")
    out.append("")
    out.append(f"Agreement: {s['agree']} of {s['n']} ({s['agree_pct']:.0f} %); simgpu's busiest resource is "
               f"ncu's busiest unit (threshold ignored) on {s['busiest_agree']} of {s['n']} "
               f"({s['busiest_agree_pct']:.0f} %).")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pair", action="append", default=[], help="CSV:ORDER (ncu raw CSV and its order file)")
    ap.add_argument("--data-json", default=None, help="instead of --pair: a measurement JSON with "
                    "cases[name].ncu.metrics (validation/data/h200_holdout.json)")
    ap.add_argument("--coarse", action="store_true", help="no per-pipe metrics: compare compute / "
                    "DRAM / L2 / L1 / latency only (sm__throughput stands for the SM's pipes)")
    ap.add_argument("--kernels", default=os.path.join(HERE, "holdout"))
    ap.add_argument("--gpu", default="H100")
    ap.add_argument("--only", default=None)
    ap.add_argument("--predictions", default=None, help="reuse/extend this JSON of simgpu predictions")
    ap.add_argument("--json", default=None)
    ap.add_argument("--markdown", default=None)
    ap.add_argument("--lto", default="record", choices=("record", "on", "off"),
                    help="compile with numba-cuda's LTO program where the card's run did (validation/card_lto.py: "
                         "from the data's recorded versions: --data-json's, or the env.txt beside each --pair "
                         "CSV; default), or on/off")
    a = ap.parse_args(argv)
    sys.path.insert(0, ROOT)
    sys.path.insert(0, HERE)
    importlib.import_module("_common")   # patches np.row_stack
    from card_lto import use_card_lto
    lto = use_card_lto([a.data_json] if a.data_json else
                       [os.path.join(os.path.dirname(p.split(":", 1)[0]), "env.txt") for p in a.pair], a.lto)
    cases = [c for c in load_cases(a.kernels) if not a.only or re.search(a.only, c["name"])]
    ncu, problems = load_ncu([tuple(p.split(":", 1)) for p in a.pair])
    card = {}
    if a.data_json:
        with open(a.data_json) as f:
            dj = json.load(f)
            card = dj.get("provenance", {})
            ncu.update({n: (r.get("ncu") or r)["metrics"] for n, r in dj["cases"].items()
                        if "metrics" in (r.get("ncu") or r)})
    pred = {}
    if a.predictions and os.path.exists(a.predictions):
        with open(a.predictions) as f:
            pred = json.load(f)
    for c in cases:
        if c["name"] in ncu and c["name"] not in pred:
            try:
                pred[c["name"]] = predict_units(c, a.gpu)
            except Exception as e:  # noqa: BLE001 -- one failing case never stops the comparison
                pred[c["name"]] = {"error": repr(e)}
            print(c["name"], pred[c["name"]].get("kind"), pred[c["name"]].get("resource"), flush=True)
            if a.predictions:
                with open(a.predictions, "w") as f:
                    json.dump(pred, f, indent=1)
    rows = compare(cases, ncu, pred, a.coarse)
    s = summary(rows)
    md = markdown(rows, s, a.coarse)
    print(md)
    if problems:
        print("ncu mapping problems:", problems)
    unm = sorted({u for m in ncu.values() for u in ncu_unmapped(m)})
    if a.json:
        from simgpu.sass import toolchain_versions
        with open(a.json, "w") as f:
            json.dump({"summary": s, "gpu_model": a.gpu, "coarse": a.coarse, "lto": lto,
                       "ncu_sources": a.pair + [a.data_json],
                       "card_provenance": card, "busy_pct": BUSY, "sim_to_ncu": SIM_TO_NCU,
                       "ncu_unit_rules": NCU_UNIT_RULES, "ncu_unmapped_metrics": unm,
                       "ncu_problems": problems, "simgpu_toolchain": toolchain_versions(),
                       "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "prediction": "simgpu.predict(..., gpu, sample=True, executor='ptx')", "rows": rows}, f, indent=1)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(md + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
