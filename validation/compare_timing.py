#!/usr/bin/env python3
"""Predicted vs measured kernel time: every CASE of validation/kernels through simgpu's
timing model, against gpu__time_duration.sum measured on the H200 by Nsight Compute.

  python3 validation/compare_timing.py [--data validation/data] [--only REGEX] [--full]
                                       [--measured-registers] [--plot docs/timing_scatter.png]
                                       [--markdown docs/timing_accuracy.md] [--json OUT.json]

Each case's arguments come from np.random.default_rng(0), as validation/run_suite.py makes
them.  By default a launch runs only the waves the model samples (simgpu.predict(...,
sample=True)); --full runs every block (slow for the big cases).  --measured-registers
replaces the IR's register estimate by the compiled kernel's count when the data has it (a
second column; the headline numbers use the estimate: nothing measured on a reported kernel
enters its prediction).

Measured times are looked up in validation/data/*.json: any object keyed by a case name that
holds gpu__time_duration.sum (ns; a number, or {"value": ...}) somewhere inside.
"""
from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import math
import os
import re
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
METRIC = "gpu__time_duration.sum"


def load_cases(only=None, kernels_dir=None):
    cases = []
    for path in sorted(glob.glob(os.path.join(kernels_dir or os.path.join(HERE, "kernels"), "*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        if name.startswith("_") or name == "device_run":
            continue
        spec = importlib.util.spec_from_file_location(f"vk_{name}", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
        for c in mod.CASES:
            if only and not re.search(only, c["name"]):
                continue
            cases.append(dict(c, module=name))
    return cases


def _number(v):
    if isinstance(v, dict):
        for k in ("value", "median", "avg"):
            if k in v:
                return _number(v[k])
        return None
    if isinstance(v, (list, tuple)) and v:
        return _number(v[0])
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) and x > 0 else None


def _find(obj, key, depth=0):
    if depth > 6:
        return None
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        for v in obj.values():
            r = _find(v, key, depth + 1)
            if r is not None:
                return r
    elif isinstance(obj, list):
        for v in obj:
            r = _find(v, key, depth + 1)
            if r is not None:
                return r
    return None


def load_measured(data_dir, names):
    """{case: {"ns": measured ns, "event_ns": CUDA-event median (caches flushed) or absent,
    "registers": int or None, "file": path}}."""
    out = {}

    def visit(obj, path, depth=0):
        if depth > 8:
            return
        if isinstance(obj, dict):
            for k, v in obj.items():
                if k in names and isinstance(v, (dict, list)):
                    ns = _number(_find(v, METRIC))
                    if ns is not None:
                        rec = out.setdefault(k, {"file": os.path.relpath(path, ROOT)})
                        rec["ns"] = ns
                    fl = _find(v, "flushed")
                    ev = _number(fl.get("median_us")) if isinstance(fl, dict) else None
                    if ev is not None:
                        out.setdefault(k, {"file": os.path.relpath(path, ROOT)})["event_ns"] = ev * 1e3
                    regs = _number(_find(v, "launch__registers_per_thread")) or _number(_find(v, "regs_per_thread"))
                    if regs is not None:
                        out.setdefault(k, {"file": os.path.relpath(path, ROOT)})["registers"] = int(regs)
                visit(v, path, depth + 1)
        elif isinstance(obj, list):
            for v in obj:
                if isinstance(v, dict) and v.get("name") in names:
                    visit({v["name"]: v}, path, depth + 1)
                else:
                    visit(v, path, depth + 1)

    for path in sorted(glob.glob(os.path.join(data_dir, "**", "*.json"), recursive=True)):
        try:
            with open(path) as f:
                visit(json.load(f), path)
        except (OSError, ValueError):
            continue
    return {k: v for k, v in out.items() if "ns" in v} | {k: v for k, v in out.items() if "ns" not in v}


CARD_KEYS = ("card", "device_name", "nvidia_smi", "driver", "cuda_version", "cuda_version_smi", "nvcc",
             "numba", "numba_cuda", "date", "date_utc")


def use_toolchain(folder):
    """Compile with the CUDA toolchain in ``folder`` (``$SIMGPU_TOOLCHAIN``; e.g. the 13.0.88
    wheels the card's driver matches) in this process: to be called before the first compile."""
    if folder:
        from simgpu import settings
        os.environ["SIMGPU_TOOLCHAIN"] = os.path.abspath(folder)
        settings.reload()


def use_lto(choice, data_files):
    """``SIMGPU_LTO`` for this comparison: numba-cuda's LTO program where the card's run of
    ``data_files`` had it (validation/card_lto.py: from their recorded versions), or ``choice``
    "on" / "off"; to be called before the first compile.  Returns the decision and why."""
    from card_lto import use_card_lto
    return use_card_lto(data_files, choice)


def toolchain_record(data_files):
    """Both toolchains beside a comparison: what simgpu compiled with here (``toolchain_versions``,
    after the first compile) and what the card ran, from the ``provenance`` of the measurement
    files (its CUDA/driver and nvcc versions)."""
    from simgpu.sass import toolchain_versions
    card = {}
    for path in data_files:
        try:
            with open(path) as fh:
                prov = json.load(fh).get("provenance") or {}
        except (OSError, ValueError, AttributeError):
            continue
        card[os.path.relpath(path, ROOT)] = {k: prov[k] for k in CARD_KEYS if k in prov}
    return {"simgpu": toolchain_versions(), "card": card}


def predict_case(c, full=False, registers=None, executor="ir"):
    from simgpu import predict
    args = c["args"](np.random.default_rng(0))
    t0 = time.time()
    rep = predict(c["kernel"], c["grid"], c["block"], args, sample=not full, registers_per_thread=registers,
                  executor=executor)
    r = rep.extras["timing"]
    return {"ns": r.time_s * 1e9, "bottleneck": r.bottleneck, "registers": r.registers,
            "wall_s": time.time() - t0, "waves": r.plan.waves,
            "sass_issue": rep.extras.get("timing_sass_issue")}


def summarise(rows):
    errs = [abs(r["pred_ns"] / r["meas_ns"] - 1) for r in rows if r.get("meas_ns")]
    ratios = [max(r["pred_ns"] / r["meas_ns"], r["meas_ns"] / r["pred_ns"]) for r in rows if r.get("meas_ns")]
    if not errs:
        return {"n": 0}
    return {"n": len(errs), "median_abs_error_pct": 100 * float(np.median(errs)),
            "mean_abs_error_pct": 100 * float(np.mean(errs)), "within_15pct": int(sum(e <= 0.15 for e in errs)),
            "within_2x": int(sum(q <= 2 for q in ratios)), "worst_ratio": float(max(ratios))}


def markdown(rows, summ, summ_regs=None):
    out = ["| kernel | tags | measured, ncu (us) | predicted (us) | error | CUDA events (us) | error | bottleneck (predicted) |",
           "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in sorted(rows, key=lambda r: r["name"]):
        meas = f"{r['meas_ns'] / 1e3:,.2f}" if r.get("meas_ns") else "-"
        err = f"{100 * (r['pred_ns'] / r['meas_ns'] - 1):+.0f}%" if r.get("meas_ns") else "-"
        ev = f"{r['event_ns'] / 1e3:,.2f}" if r.get("event_ns") else "-"
        everr = f"{100 * (r['pred_ns'] / r['event_ns'] - 1):+.0f}%" if r.get("event_ns") else "-"
        out.append(f"| {r['name']} | {', '.join(r['tags'][:3])} | {meas} | {r['pred_ns'] / 1e3:,.2f} | {err} | "
                   f"{ev} | {everr} | {r['bottleneck'].split(':')[0].split(' (')[0]} |")
    if summ.get("n"):
        out.append("")
        out.append(f"{summ['n']} kernels with a measurement: median absolute error "
                   f"{summ['median_abs_error_pct']:.1f} %, {summ['within_15pct']} within 15 %, "
                   f"{summ['within_2x']} within 2x, worst {summ['worst_ratio']:.2f}x.")
    if summ_regs and summ_regs.get("n"):
        out.append(f"With the compiled kernels' register counts instead of the estimate: median "
                   f"{summ_regs['median_abs_error_pct']:.1f} %, worst {summ_regs['worst_ratio']:.2f}x.")
    return "\n".join(out)


def scatter(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    pts = [r for r in rows if r.get("meas_ns")]
    if not pts:
        return False
    fig = Figure(figsize=(7.5, 6.5), layout="constrained")
    ax = fig.add_subplot()
    groups = {}
    for r in pts:
        groups.setdefault(r["tags"][0] if r["tags"] else "other", []).append(r)
    for i, (g, rs) in enumerate(sorted(groups.items())):
        ax.plot([r["meas_ns"] / 1e3 for r in rs], [r["pred_ns"] / 1e3 for r in rs], "o", color=f"C{i}",
                label=f"{g} ({len(rs)})", ms=6, alpha=0.85)
    lo = min(min(r["meas_ns"], r["pred_ns"]) for r in pts) / 1e3 / 1.5
    hi = max(max(r["meas_ns"], r["pred_ns"]) for r in pts) / 1e3 * 1.5
    x = np.array([lo, hi])
    ax.plot(x, x, "k-", lw=1, label="predicted = measured")
    ax.fill_between(x, x / 1.15, x * 1.15, color="0.85", label="within 15 %")
    ax.plot(x, 2 * x, "k:", lw=1, label="2x")
    ax.plot(x, x / 2, "k:", lw=1)
    s = summarise(rows)
    ax.set(xscale="log", yscale="log", xlabel="measured gpu__time_duration.sum (us), H200, ncu",
           ylabel="predicted by simgpu (us)",
           title=f"simgpu timing vs H200: median |error| {s['median_abs_error_pct']:.0f} %, "
                 f"worst {s['worst_ratio']:.1f}x ({s['n']} kernels)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.savefig(path, dpi=110)
    return True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--only", default=None)
    ap.add_argument("--full", action="store_true", help="run every block (slow)")
    ap.add_argument("--measured-registers", action="store_true")
    ap.add_argument("--executor", default="ir", help="ir (simgpu's IR) or ptx (the compiled code)")
    ap.add_argument("--kernels", default=None, help="folder of case modules (default validation/kernels; "
                    "validation/holdout for the holdout set)")
    ap.add_argument("--toolchain", default=None, help="compile with the CUDA toolchain in this folder "
                    "($SIMGPU_TOOLCHAIN; e.g. the 13.0.88 wheels, as the card's driver)")
    ap.add_argument("--plot", default=os.path.join(ROOT, "docs", "timing_scatter.png"))
    ap.add_argument("--markdown", default=os.path.join(ROOT, "docs", "timing_accuracy.md"))
    ap.add_argument("--json", default=os.path.join(HERE, "data", "timing_compare.json"))
    ap.add_argument("--lto", default="record", choices=("record", "on", "off"),
                    help="compile with numba-cuda's LTO program where the card's run did (validation/card_lto.py: "
                         "from the data's recorded versions; default), or on/off")
    a = ap.parse_args(argv)
    sys.path.insert(0, ROOT)
    use_toolchain(a.toolchain)
    cases = load_cases(a.only, a.kernels)
    measured = load_measured(a.data, {c["name"] for c in cases})
    data_files = sorted({os.path.join(ROOT, r["file"]) for r in measured.values() if r.get("file")})
    lto = use_lto(a.lto, data_files)
    rows = []
    for c in cases:
        m = measured.get(c["name"], {})
        try:
            p = predict_case(c, a.full, executor=a.executor)
        except Exception as e:  # noqa: BLE001 -- one failing case never stops the comparison
            print(f"{c['name']:34s} FAILED: {e!r}", flush=True)
            continue
        row = {"name": c["name"], "tags": list(c.get("tags", ())), "pred_ns": p["ns"], "meas_ns": m.get("ns"),
               "bottleneck": p["bottleneck"], "registers_estimated": p["registers"],
               "registers_measured": m.get("registers"), "wall_s": p["wall_s"], "waves": p["waves"],
               "event_ns": m.get("event_ns"), "sass_issue": p.get("sass_issue")}
        if a.measured_registers and m.get("registers"):
            row["pred_ns_measured_registers"] = predict_case(c, a.full, m["registers"])["ns"]
        rows.append(row)
        err = f"{100 * (p['ns'] / m['ns'] - 1):+6.0f}%" if m.get("ns") else "   n/a"
        meas = f"{m['ns'] / 1e3:10.2f}" if m.get("ns") else "         -"
        print(f"{c['name']:34s} measured {meas} us  predicted {p['ns'] / 1e3:10.2f} us  {err}  "
              f"({p['wall_s']:.1f}s)  {p['bottleneck']}", flush=True)
    summ = summarise(rows)
    summ_regs = None
    if a.measured_registers:
        alt = [dict(r, pred_ns=r["pred_ns_measured_registers"]) for r in rows if "pred_ns_measured_registers" in r]
        summ_regs = summarise(alt)
    summ_ev = summarise([dict(r, meas_ns=r.get("event_ns")) for r in rows])
    print(json.dumps(summ, indent=1))
    print("against CUDA-event times:", json.dumps(summ_ev))
    os.makedirs(os.path.dirname(a.json), exist_ok=True)
    with open(a.json, "w") as f:
        json.dump({"summary": summ, "summary_event_times": summ_ev, "summary_measured_registers": summ_regs,
                   "toolchains": toolchain_record(data_files), "lto": lto, "rows": rows}, f, indent=1)
    with open(a.markdown, "w") as f:
        f.write(markdown(rows, summ, summ_regs) + "\n")
    if scatter(rows, a.plot):
        print(f"scatter plot -> {a.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
