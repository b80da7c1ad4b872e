#!/usr/bin/env python3
"""Every SASS opcode the validation kernels, numba-cuda's test kernels and examples/ compile
to, and whether the timing model's cost for it is measured (simgpu/timing/opcosts.py) or an
estimate (its pipe's rate and latency from the GPU spec) -- issue 22 item 4.

    python validation/opcode_coverage.py [--toolchain DIR] [--inst JSON ...] [--docs docs/timing.md]

* the suite (validation/kernels) and the holdout (validation/holdout): each case compiled for
  the H200 (sm_90) with the toolchain given (the card's 13.0.88 wheels: --toolchain);
* numba-cuda's test kernels (validation/numba_kernels/ runs them) and examples/: the compiled
  kernels in simgpu's disk cache (~/.cache/simgpu/sass/facts-*.json) whose kernel name is one
  of numba-cuda's tests (``numba.cuda.tests``) or whose source lines are in examples/ -- only
  what was compiled on this machine (with the installed 13.5 wheels), so a lower bound;
* dynamic weights: SASS executions per opcode (``rep.extras["sass_counts"]["by_opcode"]``)
  summed over the suite and the holdout from compare_inst.py's JSON files (--inst), sampled
  launches scaled as compare_inst.py scales them.

Writes validation/data/opcode_coverage.json and the table between the markers
``<!-- opcode-coverage -->`` and ``<!-- /opcode-coverage -->`` of --docs.
"""
from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import compare_timing as ct  # noqa: E402

START, END = "<!-- opcode-coverage -->", "<!-- /opcode-coverage -->"


def static_opcodes(kernels_dir):
    """{opcode with modifiers: set of case names} of every case's SASS (kernel + subroutines)."""
    from simgpu.sass import compile_kernel
    out = collections.defaultdict(set)
    for c in ct.load_cases(None, kernels_dir):
        try:
            ck = compile_kernel(c["kernel"], c["args"](np.random.default_rng(0)), gpu="H200")
        except Exception as e:  # noqa: BLE001 - reported, the rest go on
            print(f"{c['name']}: {type(e).__name__}: {str(e)[:120]}", file=sys.stderr)
            continue
        sass = ck.sass
        ops = [i.opcode for i in sass.instructions]
        for v in sass.subroutines.values():
            ops += [i.opcode for i in v]
        for op in ops:
            out[op].add(c["name"])
    return out


def cached_opcodes():
    """({opcode: n kernels} of numba-cuda's test kernels, same for examples/) from the disk cache."""
    from simgpu.sass import cache
    tests, examples = collections.Counter(), collections.Counter()
    for path in glob.glob(os.path.join(str(cache.cache_dir()), "facts-*.json")):
        try:
            with open(path) as fh:
                d = json.load(fh)
        except (OSError, ValueError):
            continue
        src = json.dumps(d.get("ptx_source", {}))
        for name, k in (d.get("kernels") or {}).items():
            ops = {i["opcode"] for i in k.get("instructions", ())}
            for v in (k.get("subroutines") or {}).values():
                ops |= {i["opcode"] for i in v}
            if "numba4cuda5tests" in name:
                tests.update(ops)
            elif "/examples/" in src:
                examples.update(ops)
    return tests, examples


def dynamic_counts(paths):
    """{opcode: executions} summed over the rows of compare_inst.py JSON files."""
    out = collections.Counter()
    for p in paths:
        with open(p) as fh:
            for r in json.load(fh).get("rows", ()):
                out.update({k: float(v) for k, v in (r.get("by_opcode") or {}).items()})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--toolchain", default=None)
    ap.add_argument("--inst", nargs="*", default=[])
    ap.add_argument("--docs", default=os.path.join(ROOT, "docs", "timing.md"))
    ap.add_argument("--json", default=os.path.join(HERE, "data", "opcode_coverage.json"))
    ap.add_argument("--from-json", action="store_true", help="only rewrite the docs' table from --json")
    ap.add_argument("--recost", action="store_true", help="with --from-json: the pipe, rate, latency and "
                    "source columns from today's opcosts/params (the opcodes and their counts as stored), "
                    "and --json rewritten")
    a = ap.parse_args(argv)
    sys.path.insert(0, ROOT)
    if a.from_json:
        with open(a.json) as fh:
            d = json.load(fh)
        if a.recost:
            for r in d["rows"]:
                r.update(cost_columns(sorted(r["opcodes"])[0]))
            d["rows"].sort(key=lambda r: (-r["executions"], r["key"]))
            d["summary"]["measured"] = sum(r["measured"] for r in d["rows"])
            d["summary"]["executions_measured_share"] = sum(r["share"] for r in d["rows"] if r["measured"])
            with open(a.json, "w") as fh:
                json.dump(d, fh, indent=1)
        write_docs(a.docs, d["rows"], d["summary"])
        return 0
    ct.use_toolchain(a.toolchain)
    from simgpu.timing.opcosts import cost_key
    suite = static_opcodes(os.path.join(HERE, "kernels"))
    holdout = static_opcodes(os.path.join(HERE, "holdout"))
    tests, examples = cached_opcodes()
    dyn = dynamic_counts(a.inst)
    keys = collections.defaultdict(lambda: {"opcodes": set(), "suite": set(), "holdout": set(), "numba_tests": 0,
                                            "examples": 0, "executions": 0.0})
    for op in set(suite) | set(holdout) | set(tests) | set(examples) | set(dyn):
        k = keys[cost_key(op)]
        k["opcodes"].add(op)
        k["suite"] |= suite.get(op, set())
        k["holdout"] |= holdout.get(op, set())
        k["numba_tests"] += tests.get(op, 0)
        k["examples"] += examples.get(op, 0)
        k["executions"] += dyn.get(op, 0.0)
    total = sum(k["executions"] for k in keys.values()) or 1.0
    rows = []
    for key, k in keys.items():
        op = sorted(k["opcodes"])[0]
        row = {"key": key, "opcodes": sorted(k["opcodes"]), "suite_kernels": len(k["suite"]),
               "holdout_kernels": len(k["holdout"]), "numba_test_kernels": k["numba_tests"],
               "example_kernels": k["examples"], "executions": k["executions"],
               "share": k["executions"] / total}
        row.update(cost_columns(op))
        rows.append(row)
    rows.sort(key=lambda r: (-r["executions"], r["key"]))
    meas_share = sum(r["share"] for r in rows if r["measured"])
    summary = {"cost_keys": len(rows), "measured": sum(r["measured"] for r in rows),
               "executions_measured_share": meas_share,
               "suite_kernels": len({n for s in suite.values() for n in s}),
               "holdout_kernels": len({n for s in holdout.values() for n in s})}
    print(json.dumps(summary))
    with open(a.json, "w") as fh:
        json.dump({"what": __doc__.split("\n\n")[0], "summary": summary, "toolchains": ct.toolchain_record([]),
                   "inst_files": [os.path.relpath(p, ROOT) for p in a.inst], "rows": rows}, fh, indent=1)
    if a.docs:
        write_docs(a.docs, rows, summary)
    return 0


def cost_columns(op):
    """The model's pipe, rate (warp-instructions per SM cycle, H200 pipes) and latency of one
    opcode, and whether they are measured (timing/opcosts.py) or its pipe's estimate."""
    from simgpu.hardware import get_gpu
    from simgpu.timing.opcosts import measured
    from simgpu.timing.params import TimingParams
    from simgpu.timing.ptx_trace import sim_pipe
    P = TimingParams.from_gpu(get_gpu("H200"))
    m, pipe = measured(op), sim_pipe(op)
    if m is not None:
        iv = P.interval.get(m.pipe, 1.0) * m.units
        lat = m.latency if m.latency is not None else P.latency.get(pipe, 4.0)
        return dict(pipe=pipe, measured=True, issue_per_clk_per_sm=P.schedulers / iv,
                    bench_issue_per_clk_per_sm=m.issue_per_sm, latency=lat, latency_measured=m.latency is not None,
                    bench=m.bench, units=m.units)
    iv = P.interval.get(pipe, 1.0)
    return dict(pipe=pipe, measured=False, issue_per_clk_per_sm=P.schedulers / iv if iv else None,
                bench_issue_per_clk_per_sm=None, latency=P.latency.get(pipe, 4.0), latency_measured=False,
                bench=None, units=1)


def _fmt(x, nd=2):
    return "-" if x is None else f"{x:.{nd}f}"


def write_docs(path, rows, summary):
    lines = [START, "",
             f"{summary['cost_keys']} cost keys (an opcode with the modifiers that change its cost), "
             f"{summary['measured']} measured; the measured ones are "
             f"{100 * summary['executions_measured_share']:.1f} % of the SASS instructions the suite and the "
             "holdout execute. Generated by `validation/opcode_coverage.py` (data: "
             "`validation/data/opcode_coverage.json`). Columns: where it is seen (kernels of the suite S and "
             "the holdout H compiled with the card's CUDA 13.0.88; N, E: kernels of numba-cuda's tests and of "
             "examples/ among the compiled kernels in this machine's disk cache, CUDA 13.5), its share of the executed SASS (suite + holdout), "
             "the simulator's pipe, the rate (warp-instructions per SM cycle; H200 pipes) and latency (cycles) "
             "the model uses, and where they come from: a bench of `validation/microbench/opcodes.py` (H100, "
             "`validation/data/h100_opcodes.json`), or *estimate*: the pipe's rate and latency "
             "(`simgpu/timing/params.py` from the GPU spec; memory instructions' time is the memory "
             "model's).", "",
             "| cost key | S | H | N | E | executed | pipe | rate /clk/SM | latency | source |",
             "|---|---:|---:|---:|---:|---:|---|---:|---:|---|"]
    for r in rows:
        src = f"measured: `{r['bench']}`" if r["measured"] else "estimate"
        b = r.get("bench_issue_per_clk_per_sm")
        if r["measured"] and b and abs(b / r["issue_per_clk_per_sm"] - 1) > 0.05:
            src += f" (its loop: {b:.2f}/clk/SM)"
        if r["measured"] and r.get("latency_measured") is False:
            src += "; latency: the pipe's (not isolated)"
        lines.append(f"| `{r['key']}` | {r['suite_kernels']} | {r['holdout_kernels']} | {r['numba_test_kernels']} | "
                     f"{r['example_kernels']} | {100 * r['share']:.2f} % | {r['pipe']} | "
                     f"{_fmt(r['issue_per_clk_per_sm'])} | {_fmt(r['latency'], 1)} | {src} |")
    lines += ["", END]
    text = open(path).read()
    block = "\n".join(lines)
    if START in text and END in text:
        a, b = text.index(START), text.index(END) + len(END)
        text = text[:a] + block + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n## Per-opcode costs: measured and estimated\n\n" + block + "\n"
    with open(path, "w") as fh:
        fh.write(text)


if __name__ == "__main__":
    sys.exit(main())
