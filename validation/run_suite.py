#!/usr/bin/env python3
"""Run the validation kernel suite (validation/kernels/*.py) on a real GPU.

  python3 validation/run_suite.py --out DIR [--only REGEX] [--modules copies,matmul] --mode time
  ncu --clock-control none --metrics "$(cat DIR/metrics_suite.txt)" -o DIR/suite \
      python3 validation/run_suite.py --out DIR --mode profile [--only REGEX]

mode time:    per case: build args with np.random.default_rng(0), jit, copy to the device, launch once
              and check against the case's numpy reference (if any), then time with CUDA events:
              median of up to 50 launches, each preceded by an L2 flush (read of a 512 MiB buffer)
              and, separately, without a flush ("warm"); records registers, shared and local memory
              per thread/block, and writes SASS + PTX to DIR/sass/<case>.sass|.ptx.
              Results: DIR/timing.json (rewritten after every case).
mode profile: per case: build args, compile WITHOUT launching, then launch exactly once. Meant to run
              under ncu; DIR/profile_order.json lists the launches in order (index -> case name) so
              that ncu's rows can be mapped back (validation/ncu_csv.py does it).
One failing case never stops the suite: its error is recorded and the next case runs.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402  (patches np.row_stack before numba.cuda is imported)
import numpy as np  # noqa: E402


def collect_cases(modules=None, only=None):
    cases = []
    for path in C.kernel_modules(os.path.join(C.HERE, "kernels"), modules):
        modname = os.path.splitext(os.path.basename(path))[0]
        try:
            mod = C.load_module(path)
        except Exception as e:  # noqa: BLE001
            C.log(f"!! module {modname} failed to import: {e!r}")
            cases.append({"name": f"<import {modname}>", "_error": C.fmt_exc(e), "_module": modname})
            continue
        for c in mod.CASES:
            c = dict(c)
            c["_module"] = modname
            if only and not re.search(only, c["name"]):
                continue
            cases.append(c)
    names = [c["name"] for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SystemExit(f"duplicate case names: {sorted(dup)}")
    return cases


def case_meta(c):
    return {k: c.get(k) for k in ("name", "grid", "block", "tags", "flops", "bytes", "notes", "outputs", "tol")} | {
        "module": c["_module"], "kernel": getattr(c.get("kernel"), "__name__", None)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", choices=("time", "profile"), default="time")
    ap.add_argument("--only", default=None, help="regex on case names")
    ap.add_argument("--modules", default=None, help="comma-separated module names (files in kernels/)")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--budget", type=float, default=1.0, help="seconds of timed launches per case (approx)")
    ap.add_argument("--no-sass", action="store_true")
    ap.add_argument("--list", action="store_true", help="list cases and exit (no GPU needed)")
    a = ap.parse_args()

    cases = collect_cases(a.modules.split(",") if a.modules else None, a.only)
    if a.list:
        for c in cases:
            C.log(c["name"], c.get("grid"), c.get("block"), c.get("tags"))
        C.log(len(cases), "cases")
        return

    os.makedirs(a.out, exist_ok=True)
    from numba import cuda
    suffix = ("_" + a.modules.replace(",", "+")) if a.modules else ""
    res_path = os.path.join(a.out, f"timing{suffix}.json" if a.mode == "time" else f"profile_order{suffix}.json")
    result = {"provenance": C.provenance(), "mode": a.mode, "cases": {}} if a.mode == "time" else \
        {"provenance": C.provenance(), "mode": a.mode, "launches": [], "errors": {}}
    sass_dir = os.path.join(a.out, "sass")
    os.makedirs(sass_dir, exist_ok=True)
    C.write_json(res_path, result)

    timer = C.Timer() if a.mode == "time" else None
    jitted = {}
    t_start = C.now()
    for ci, c in enumerate(cases):
        name = c["name"]
        if "_error" in c:
            (result["cases"] if a.mode == "time" else result["errors"])[name] = {"error": c["_error"]}
            continue
        rec = case_meta(c)
        t0 = C.now()
        try:
            fn = c["kernel"]
            key = (c["_module"], fn.__name__)
            if key not in jitted:
                jitted[key] = cuda.jit(fn)
            disp = jitted[key]
            host = c["args"](np.random.default_rng(0))
            dargs = [cuda.to_device(x) if isinstance(x, np.ndarray) else x for x in host]
            tc = C.now()
            ker, at = C.compile_for(disp, dargs)
            rec["compile_s"] = round(C.now() - tc, 3)
            rec["argtypes"] = [str(t) for t in at]
            rec["resources"] = C.resources(ker)
            grid, block = tuple(c["grid"]), tuple(c["block"])
            launch_cfg = disp[grid, block]

            def launch():
                launch_cfg(*dargs)

            if a.mode == "profile":
                launch()
                cuda.synchronize()
                idx = len(result["launches"])
                result["launches"].append({"index": idx, "name": name, "kernel": fn.__name__,
                                           "grid": grid, "block": block, "resources": rec["resources"],
                                           "argtypes": rec["argtypes"]})
                C.log(f"PROFILED {idx} {name}")
                C.write_json(res_path, result)
                continue

            launch()
            cuda.synchronize()
            rec["check"] = C.check_case(c, host, dargs)
            if not a.no_sass:
                sass, how = C.get_sass(ker)
                rec["sass_method"] = how
                if sass:
                    with open(os.path.join(sass_dir, f"{name}.sass"), "w") as f:
                        f.write(sass)
                    rec["sass_opcodes"] = C.sass_opcodes(sass)
                ptx = C.get_ptx(ker)
                with open(os.path.join(sass_dir, f"{name}.ptx"), "w") as f:
                    f.write(ptx)
            rec["timing"] = timer.measure(launch, reps=a.reps, budget_s=a.budget)
            med = rec["timing"]["flushed"]["median_us"]
            if c.get("bytes"):
                rec["gbps_flushed"] = c["bytes"] / (med * 1e-6) / 1e9
                rec["gbps_warm"] = c["bytes"] / (rec["timing"]["warm"]["median_us"] * 1e-6) / 1e9
            if c.get("flops"):
                rec["gflops_flushed"] = c["flops"] / (med * 1e-6) / 1e9
            chk = rec["check"]["ok"] if rec.get("check") else "n/a"
            C.log(f"[{ci + 1}/{len(cases)}] {name}: flushed {med:.2f} us, warm "
                  f"{rec['timing']['warm']['median_us']:.2f} us, regs {rec['resources'].get('regs_per_thread')}, "
                  f"check {chk}, {C.now() - t0:.1f}s")
        except Exception as e:  # noqa: BLE001
            rec["error"] = C.fmt_exc(e)
            C.log(f"!! [{ci + 1}/{len(cases)}] {name} FAILED: {e!r}")
            if a.mode == "profile":
                result["errors"][name] = rec["error"]
            # a sticky CUDA error poisons the context: stop so a fresh process can continue
            if "CUDA_ERROR_ILLEGAL" in repr(e) or "LAUNCH_FAILED" in repr(e) or "UNKNOWN" in repr(e):
                if a.mode == "time":
                    result["cases"][name] = rec
                C.write_json(res_path, result)
                C.log("!! sticky CUDA error, stopping this process")
                sys.exit(3)
        finally:
            dargs = host = launch_cfg = None  # free device/host memory before the next case
        if a.mode == "time":
            result["cases"][name] = rec
            result["elapsed_s"] = round(C.now() - t_start, 1)
            C.write_json(res_path, result)
    C.log(f"done: {len(cases)} cases in {C.now() - t_start:.1f}s -> {res_path}")


if __name__ == "__main__":
    main()
