#!/usr/bin/env python3
"""Predicted (simgpu) vs measured (ncu on the H200) memory traffic for validation/kernels/*.py.

  python validation/compare_memory.py [--data DIR_OR_JSON ...] [--only REGEX] [--max-flops F]
                                      [--include REGEX] [--no-docs] [--json OUT]

Each case runs as  simgpu.launch(case["kernel"], case["grid"], case["block"],
case["args"](np.random.default_rng(0)), timing=False).  Measurements are read from JSON
files under validation/data/ holding {case name: {ncu metric: value}} (the output of
validation/ncu_csv.py; a top-level "cases" or "results" key, or a list of {"name", "metrics"}
records, is accepted too).  The table goes to stdout and, unless --no-docs, between the
validation markers of docs/memory.md.

Targets (issue 3): requests and sectors per global instruction within 1 % for kernels whose
addresses do not depend on data; shared wavefronts and conflicts within 10 %; DRAM bytes
within 10 %; L2 bytes within 20 %.
"""
from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import os
import re
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
import simgpu  # noqa: E402  (patches np.row_stack before numba.cuda loads: simgpu/_compat.py)

# (label, predicted metric(s), measured metric(s), tolerance, how to compare)
ROWS = [
    ("ld requests", ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"],
     ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"], 0.01),
    ("ld sectors", ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"],
     ["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"], 0.01),
    ("st requests", ["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"],
     ["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"], 0.01),
    ("st sectors", ["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"],
     ["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"], 0.01),
    ("atom+red requests", ["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
                           "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"],
     ["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"], 0.01),
    ("shared ld wavefronts", ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"],
     ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"], 0.10),
    ("shared st wavefronts", ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"],
     ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"], 0.10),
    ("shared ld conflicts", ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"],
     ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"], 0.10),
    ("shared st conflicts", ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"],
     ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"], 0.10),
    ("L2 bytes", ["lts__t_bytes.sum"], ["lts__t_bytes.sum"], 0.20),
    ("L2 read sectors", ["lts__t_sectors_srcunit_tex_op_read.sum"], ["lts__t_sectors_srcunit_tex_op_read.sum"], 0.20),
    ("L2 write sectors", ["lts__t_sectors_srcunit_tex_op_write.sum"], ["lts__t_sectors_srcunit_tex_op_write.sum"], 0.20),
    ("atom+red sectors", ["l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
                          "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"],
     ["l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"], None),
    ("DRAM bytes (read+write)", ["dram__bytes_read.sum", "dram__bytes_write.sum"],
     ["dram__bytes_read.sum", "dram__bytes_write.sum"], 0.10),
    ("DRAM read bytes", ["dram__bytes_read.sum"], ["dram__bytes_read.sum"], None),
    ("DRAM write bytes", ["dram__bytes_write.sum"], ["dram__bytes_write.sum"], None),
    ("L1 hit rate %", ["l1tex__t_sector_hit_rate.pct"], ["l1tex__t_sector_hit_rate.pct"], None),
    ("L2 hit rate %", ["lts__t_sector_hit_rate.pct"], ["lts__t_sector_hit_rate.pct"], None),
]
DATA_DEPENDENT = ("histogram",)          # addresses depend on data: per-instruction exactness not expected


def load_module(path):
    name = "vk_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def cases():
    out = []
    for path in sorted(glob.glob(os.path.join(HERE, "kernels", "*.py"))):
        if os.path.basename(path).startswith("_"):
            continue
        mod = load_module(path)
        for c in getattr(mod, "CASES", []):
            out.append(dict(c, module=os.path.splitext(os.path.basename(path))[0]))
    return out


def _records(obj):
    """{case: {metric: value}} from the JSON layouts the validation scripts write."""
    if isinstance(obj, list):
        return {r["name"]: r.get("metrics", r) for r in obj if isinstance(r, dict) and "name" in r}
    if not isinstance(obj, dict):
        return {}
    for key in ("cases", "results", "kernels"):
        if key in obj and isinstance(obj[key], (dict, list)):
            return _records(obj[key])
    out = {}
    for k, v in obj.items():
        if isinstance(v, dict):
            m = v.get("metrics", v)
            if isinstance(m, dict) and any(isinstance(x, (int, float)) and "__" in n for n, x in m.items()):
                out[k] = {n: x for n, x in m.items() if isinstance(x, (int, float))}
    return out


def measurements(paths):
    found = {}
    files = []
    for p in paths:
        files += sorted(glob.glob(os.path.join(p, "**", "*.json"), recursive=True)) if os.path.isdir(p) else [p]
    for f in files:
        try:
            with open(f) as fh:
                recs = _records(json.load(fh))
        except (OSError, ValueError):
            continue
        for name, m in recs.items():
            if any(k.startswith(("l1tex__", "lts__", "dram__")) for k in m):
                found.setdefault(name, {}).update(m)
                found[name].setdefault("_file", os.path.relpath(f, ROOT))
    return found


def calibrated_gpu(data_dirs):
    """The default GPU, with the DRAM read granularity the microbenchmarks measured if the
    preset differs (validation/README.md: 64 B per isolated read on the H200).  Returns
    (gpu, note)."""
    from dataclasses import replace
    gpu = simgpu.get_gpu(None)
    for d in data_dirs:
        path = os.path.join(d, "h200_microbench.json") if os.path.isdir(d) else None
        if not path or not os.path.exists(path):
            continue
        with open(path) as f:
            rows = json.load(f)["summary"]["granularity"]["rows"]
        isolated = [r["dram_read_bytes_per_access"] for r in rows
                    if r["kind"] == "read" and r["stride_bytes"] >= 2 * gpu.l2.sector_bytes]
        if not isolated:
            continue
        gran = int(2 ** round(np.log2(np.median(isolated))))
        if gran != gpu.dram.access_bytes:
            note = (f"DRAM read granularity: the {gpu.name} preset says {gpu.dram.access_bytes} B, the "
                    f"microbenchmarks measured {gran} B; simulated with {gran} B")
            return gpu.with_(dram=replace(gpu.dram, access_bytes=gran)), note
    return gpu, ""


def simulate(case, gpu=None):
    args = case["args"](np.random.default_rng(0))
    t0 = time.time()
    rep = simgpu.launch(case["kernel"], case["grid"], case["block"], args, gpu=gpu, timing=False)
    return rep.metrics, time.time() - t0


def _sum(m, names):
    vals = [m.get(n) for n in names]
    vals = [v for v in vals if v is not None]
    return sum(vals) if vals else None


def compare(case, pred, meas):
    rows = []
    for label, pn, mn, tol in ROWS:
        p, q = _sum(pred, pn), _sum(meas, mn)
        if q is None or p is None or (p == 0 and q == 0):
            continue
        err = (p - q) / q if q else float("inf")
        if "conflicts" in label:
            # conflicts are an excess over the ideal wavefronts: a few thousand measured
            # where the model has none are judged against the wavefronts they add to
            wf = _sum(meas, [mn[0].replace("data_bank_conflicts_pipe_lsu", "data_pipe_lsu_wavefronts")])
            if wf:
                err = (p - q) / wf
        if tol is not None and label.endswith(("requests", "sectors")) and case["module"] in DATA_DEPENDENT:
            tol = None
        ok = None if tol is None else abs(err) <= tol
        rows.append((label, p, q, err, tol, ok))
    return rows


def _fmt(x):
    return f"{x:,.1f}" if abs(x) < 1000 and x != int(x) else f"{x:,.0f}"


COLUMNS = [("ld req", "ld requests"), ("ld sect", "ld sectors"), ("st req", "st requests"),
           ("st sect", "st sectors"), ("atom req", "atom+red requests"),
           ("shared wf", "shared ld wavefronts"), ("shared st wf", "shared st wavefronts"),
           ("conflicts", "shared ld conflicts"), ("L2 bytes", "L2 bytes"),
           ("DRAM bytes", "DRAM bytes (read+write)")]


def _err(err):
    return "inf" if err == float("inf") else f"{100 * err:+.1f}"


def table(results):
    """One row per case: the error (%) of each checked quantity; **bold** = outside target."""
    head = "| case | " + " | ".join(c for c, _ in COLUMNS) + " |"
    lines = [head, "|---|" + "---|" * len(COLUMNS)]
    for name, rows in results:
        by = {r[0]: r for r in rows}
        cells = []
        for _, label in COLUMNS:
            r = by.get(label)
            if r is None:
                cells.append("")
            else:
                e = _err(r[3])
                cells.append(f"**{e}**" if r[5] is False else e)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def off_table(results):
    """The quantities outside their target, with both values."""
    lines = ["| case | quantity | simgpu | H200 (ncu) | error | target |", "|---|---|---|---|---|---|"]
    for name, rows in results:
        for label, p, q, err, tol, ok in rows:
            if ok is False:
                lines.append(f"| {name} | {label} | {_fmt(p)} | {_fmt(q)} | {_err(err)} % | {100 * tol:.0f} % |")
    return "\n".join(lines)


def summary(results, skipped):
    n = sum(1 for _, rows in results for r in rows if r[5] is not None)
    ok = sum(1 for _, rows in results for r in rows if r[5])
    off = {}
    for _, rows in results:
        for label, *_, okk in rows:
            if okk is False:
                off[label] = off.get(label, 0) + 1
    s = [f"{len(results)} cases compared, {ok} of {n} checked quantities within target."]
    if off:
        s.append("Outside target: " + ", ".join(f"{k} ({v})" for k, v in sorted(off.items())) + ".")
    if skipped:
        s.append(f"Not simulated ({len(skipped)}, above --max-flops or failing): " + ", ".join(skipped) + ".")
    return " ".join(s)


def write_docs(text):
    path = os.path.join(ROOT, "docs", "memory.md")
    with open(path) as f:
        doc = f.read()
    a, b = "<!-- validation:begin -->", "<!-- validation:end -->"
    i, j = doc.index(a) + len(a), doc.index(b)
    with open(path, "w") as f:
        f.write(doc[:i] + "\n" + text + "\n" + doc[j:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="*", default=[os.path.join(HERE, "data")])
    ap.add_argument("--only", default=None, help="regex on case names")
    ap.add_argument("--max-flops", type=float, default=1.1e9, help="skip larger cases (simulation time)")
    ap.add_argument("--include", default="matmul_tiled_bounds_n1000|matmul_naive_n2048|matmul_tiled_n2048",
                    help="regex of cases to simulate whatever their size")
    ap.add_argument("--no-docs", action="store_true")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    meas = measurements(a.data)
    if not meas:
        print(f"no ncu measurements found in {a.data}")
        return 1
    gpu, note = calibrated_gpu(a.data)
    if note:
        print(note)
    results, skipped, dump = [], [], {}
    for c in cases():
        if c["name"] not in meas or (a.only and not re.search(a.only, c["name"])):
            continue
        if (c.get("flops") or 0) > a.max_flops and not (a.include and re.search(a.include, c["name"])):
            skipped.append(c["name"])
            continue
        try:
            pred, dt = simulate(c, gpu)
        except Exception as e:  # noqa: BLE001 -- one failing case must not stop the table
            print(f"{c['name']}: simulation failed: {e!r}")
            skipped.append(c["name"])
            continue
        rows = compare(c, pred, meas[c["name"]])
        results.append((c["name"], rows))
        dump[c["name"]] = {"simulated_s": dt, "rows": [dict(zip(("quantity", "simgpu", "h200", "error", "target", "ok"), r))
                                                     for r in rows]}
        print(f"{c['name']}: simulated in {dt:.1f} s", flush=True)
    text = (table(results) + "\n\nOutside the target:\n\n" + off_table(results) +
            "\n\nEvery value (and the L1/L2 hit rates, atomic sectors, DRAM read and write apart) is in "
            "the --json output.")
    summ = summary(results, skipped)
    files = sorted({m["_file"] for m in meas.values() if "_file" in m})
    body = (f"Measured: {', '.join(files)}.  Simulated with `python validation/compare_memory.py`"
            f"{' (' + note + ')' if note else ''}.  Errors in %, (simgpu - H200) / H200; conflicts "
            f"relative to the measured wavefronts.\n\n{summ}\n\n{text}")
    print(body)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dump, f, indent=1, default=float)
    if not a.no_docs:
        write_docs(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
