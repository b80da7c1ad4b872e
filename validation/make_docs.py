#!/usr/bin/env python3
"""Regenerate the accuracy pages from the stored H200 measurements, in one command:

    python3 validation/make_docs.py

Runs validation/compare_memory.py (the memory table in docs/memory.md) and
validation/compare_timing.py (docs/timing_accuracy.md, docs/timing_scatter.png), then draws
a predicted-vs-measured scatter per memory metric (docs/validation_memory_scatter.png) and
writes docs/validation.md, the index page with both summaries.  Takes ~15 minutes here.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DOCS = os.path.join(ROOT, "docs")


def run(args):
    print("+", " ".join(args), flush=True)
    subprocess.run([sys.executable, *args], cwd=ROOT, check=True)


def memory_scatter(mem, path):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.figure import Figure
    by_q = {}
    for case, d in mem.items():
        for r in d["rows"]:
            if r["simgpu"] is None or r["h200"] is None or r["h200"] <= 0 or r["simgpu"] <= 0:
                continue
            by_q.setdefault(r["quantity"], []).append((r["h200"], r["simgpu"], r["ok"]))
    qs = sorted(by_q)
    cols = 3
    rows = -(-len(qs) // cols)
    fig = Figure(figsize=(4.2 * cols, 3.6 * rows), layout="constrained")
    for i, q in enumerate(qs):
        ax = fig.add_subplot(rows, cols, i + 1)
        pts = by_q[q]
        for ok, color, label in ((True, "C0", "within target"), (False, "C3", "outside target"),
                                 (None, "0.5", "no target (shown for reference)")):
            sel = [p for p in pts if p[2] is ok or (ok is not None and p[2] is not None and bool(p[2]) == ok)]
            if sel:
                ax.loglog([p[0] for p in sel], [p[1] for p in sel], "o", ms=4, color=color, label=label)
        lo = min(min(p[0], p[1]) for p in pts) / 1.5
        hi = max(max(p[0], p[1]) for p in pts) * 1.5
        ax.plot([lo, hi], [lo, hi], "k-", lw=0.8)
        ax.set_title(q, fontsize=9)
        ax.set_xlabel("H200 (ncu)", fontsize=8)
        ax.set_ylabel("simgpu", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in fig.axes:
        ax.legend(fontsize=6, loc="upper left")
    fig.savefig(path, dpi=100)


def _summary(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)["summary"]


def compiled_section(ptx_json, hold):
    """The default (compiled) path's kernel-time accuracy on the suite and the holdout set."""
    s, h, hi = _summary(ptx_json), _summary(hold["ptx"]), _summary(hold["ir"])
    if not s:
        return ""
    out = (f"\n## Kernel time, compiled path (the default)\n\n{s['n']} suite kernels: median absolute "
           f"error {s['median_abs_error_pct']:.1f} %, {s['within_15pct']} within 15 %, {s['within_2x']} "
           f"within 2x, worst {s['worst_ratio']:.2f}x. Table: [timing_accuracy_compiled.md]"
           f"(timing_accuracy_compiled.md).")
    if h:
        out += (f" The holdout set (`validation/holdout/`, not calibrated on): {h['n']} kernels, median "
                f"{h['median_abs_error_pct']:.1f} %, {h['within_2x']} within 2x, worst {h['worst_ratio']:.2f}x")
        out += (f"; the IR path on it: {hi['n']} kernels, median {hi['median_abs_error_pct']:.1f} %, "
                f"{hi['within_2x']} within 2x." if hi else ".")
        out += " Table: [timing_accuracy_holdout.md](timing_accuracy_holdout.md)."
    return out + "\n\n![predicted vs measured time, compiled path](timing_scatter_compiled.png)\n"


def toolchain_section(path=os.path.join(HERE, "data", "toolchain_compare.json")):
    """docs/validation.md's section on the toolchain versions (validation/data/toolchain_compare.json)."""
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        t = json.load(f)
    rows = ["| measured against the card | simgpu with CUDA 13.5 (installed wheels) | with CUDA 13.0.88 (the card's) |",
            "|---|---:|---:|"]
    for r in t["rows"]:
        rows.append(f"| {r['what']} | {r['13.5']} | {r['13.0']} |")
    return f"""
## Toolchain versions

The card compiled every measured kernel with CUDA 13.0 (driver 580.159.04, whose JIT assembled
numba's PTX; nvcc/ptxas 13.0.88), while simgpu installs the CUDA 13.5 wheels. `SIMGPU_TOOLCHAIN`
names a folder with another toolchain, whose ptxas, libNVVM, libdevice and libNVRTC simgpu then
uses (nvdisasm from there if it has one, else the installed one: there is no 13.0 nvdisasm
wheel). The validation scripts take `--toolchain DIR` and write both versions beside their
results (`"toolchains"`: simgpu's `toolchain_versions()` and the card's from the measurement
file's provenance). The 13.0.88 wheels go into a folder of their own, not into the
environment (an extra pinning them would replace the 13.5 wheels, which `cuda-toolkit[nvcc]==13.*`
also satisfies):

```bash
pip install --no-deps --target ~/tc13 nvidia-nvvm==13.0.88 nvidia-cuda-nvcc==13.0.88 nvidia-cuda-nvrtc==13.0.88
SIMGPU_TOOLCHAIN=~/tc13 python validation/compare_registers.py --toolchain ~/tc13
```

NVVM is loaded once per process: set the variable (or `--toolchain`) before the first compile;
asking for another toolchain after one was loaded is refused with a SimGPUError.

Measured {t.get('date', '')}, {t.get('machine', '')}
(`validation/data/toolchain_compare.json`, the runs beside it named `*_tc130*`):

{chr(10).join(rows)}

{t.get('notes', '')}
"""


def main():
    mem_json = os.path.join(HERE, "data", "memory_compare.json")
    tim_json = os.path.join(HERE, "data", "timing_compare.json")
    ptx_json = os.path.join(HERE, "data", "timing_compare_ptx.json")
    hold = {ex: os.path.join(HERE, "data", f"timing_holdout_{ex}.json") for ex in ("ptx", "ir")}
    if "--reuse" not in sys.argv:          # --reuse: redraw from the stored comparisons only
        run(["validation/compare_memory.py", "--json", mem_json])
        run(["validation/compare_timing.py", "--json", tim_json])
        run(["validation/compare_timing.py", "--executor", "ptx", "--json", ptx_json,
             "--markdown", os.path.join(DOCS, "timing_accuracy_compiled.md"),
             "--plot", os.path.join(DOCS, "timing_scatter_compiled.png")])
    with open(mem_json) as f:
        mem = json.load(f)
    mem = mem.get("cases", mem) if isinstance(mem, dict) else mem
    memory_scatter(mem, os.path.join(DOCS, "validation_memory_scatter.png"))
    with open(tim_json) as f:
        tim_all = json.load(f)
    tim = tim_all["summary"]
    tev = tim_all.get("summary_event_times") or {}
    ev_line = (f" Against the same kernels timed with CUDA events (no profiler): median "
               f"{tev['median_abs_error_pct']:.1f} %, {tev['within_2x']} within 2x, worst "
               f"{tev['worst_ratio']:.2f}x." if tev.get("n") else "")
    n = sum(1 for d in mem.values() for r in d["rows"] if r["ok"] is not None)
    ok = sum(1 for d in mem.values() for r in d["rows"] if r["ok"])
    text = f"""# Accuracy against the H200

Regenerate with `python3 validation/make_docs.py` (measurements: `validation/data/`, taken
with `validation/device_run.sh`; provenance inside each JSON file).
{compiled_section(ptx_json, hold)}{toolchain_section()}
## Memory counters (IR path)

{len(mem)} suite kernels simulated; {ok} of {n} checked quantities within target
(requests and sectors per instruction 1 %, shared wavefronts and conflicts 10 %, DRAM bytes
10 %, L2 bytes 20 %). Per-kernel table and every known difference: [memory.md](memory.md).
(Not yet re-run on the compiled path; `tests/test_ptx_path.py` checks that both paths count the
same requests and sectors on saxpy, the transposes and the tiled matmul.)

![predicted vs measured, per memory metric](validation_memory_scatter.png)

## Kernel time, IR path

{tim['n']} kernels: median absolute error {tim['median_abs_error_pct']:.1f} %, mean
{tim['mean_abs_error_pct']:.1f} %, {tim['within_15pct']} within 15 %, {tim['within_2x']} within 2x,
worst {tim['worst_ratio']:.1f}x against Nsight Compute's gpu__time_duration.{ev_line} Table:
[timing_accuracy.md](timing_accuracy.md); method, gaps and the kernels beyond 2x:
[timing.md](timing.md).

![predicted vs measured time](timing_scatter.png)
"""
    with open(os.path.join(DOCS, "validation.md"), "w") as f:
        f.write(text)
    print("wrote docs/validation.md")


if __name__ == "__main__":
    main()
