#!/usr/bin/env python3
"""The sanitizer on the project's own kernels: no finding is expected (they are correct).

    VALIDATION_TINY=1 PYTHONPATH=. python validation/sanitizer/run_suite.py [--only REGEX]
        [--executor ptx,ir] [--json validation/data/sanitizer_suite.json]
    PYTHONPATH=. python validation/sanitizer/run_suite.py --examples
        the examples' lessons (examples/lesson_*.py but the sanitizer's own, whose bugs are
        on purpose), examples/numba_program.py and `simgpu demo`'s launches, every launch
        sanitized (simgpu.sanitize.collecting)

Runs every case of validation/kernels (the 85-kernel suite) and validation/holdout at their
tiny sizes with ``simgpu.launch(..., check=True)`` on each executor, records the findings
and whether the outputs still match the reference (shared/local memory now start poisoned,
so a kernel that depended on zeros would show here).  Exit status 1 on any finding or
mismatch.
"""
import argparse
import json
import os
import re
import sys
import time

os.environ.setdefault("VALIDATION_TINY", "1")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "holdout"))

import _common as C  # noqa: E402
import numpy as np  # noqa: E402
from run_suite import collect_cases  # noqa: E402

import simgpu  # noqa: E402


def holdout_cases():
    import kernels as H       # validation/holdout/kernels.py
    return [dict(c, _module="holdout") for c in H.cases(tiny=True)]


def run_case(c, executor):
    host = c["args"](np.random.default_rng(0))
    args = [x.copy() if isinstance(x, np.ndarray) else x for x in host]
    t0 = time.perf_counter()
    try:
        rep = simgpu.launch(c["kernel"], tuple(c["grid"]), tuple(c["block"]), tuple(args),
                            executor=executor, check=True, timing=False, memory=False)
    except Exception as e:  # noqa: BLE001
        san = getattr(e, "sanitizer", None)
        return {"name": c["name"], "executor": executor, "error": f"{type(e).__name__}: {e}"[:2000],
                "findings": [str(f) for f in san] if san else []}
    dt = time.perf_counter() - t0
    r = C.check_case(c, host, args)
    return {"name": c["name"], "executor": executor, "seconds": round(dt, 3),
            "findings": [str(f) for f in rep.sanitizer],
            "counts": rep.sanitizer.counts(), "ok": None if r is None else r["ok"]}


def run_examples():
    import glob
    import importlib.util
    import io
    from contextlib import redirect_stdout

    from simgpu.host import run_program
    from simgpu.kernels.demo import demo_launches
    from simgpu.sanitize import collecting
    ex_dir = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples")
    bad = 0
    targets = [p for p in sorted(glob.glob(os.path.join(ex_dir, "lesson_*.py")))
               if not p.endswith("lesson_sanitizer.py")]
    for path in targets + [os.path.join(ex_dir, "numba_program.py"), "demo"]:
        name = os.path.basename(path)
        with collecting() as col, redirect_stdout(io.StringIO()):
            try:
                if path == "demo":
                    for title, k, g, b, args, check in demo_launches():
                        simgpu.launch(k, g, b, args, timing=False)
                        assert check(), title
                elif name == "numba_program.py":
                    run_program(path=path)
                else:
                    spec = importlib.util.spec_from_file_location(name[:-3], path)
                    mod = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(mod)
                    (mod.main if hasattr(mod, "main") else mod.measure)()
                err = None
            except Exception as e:  # noqa: BLE001
                err = f"{type(e).__name__}: {e}"[:500]
        n = col.report.errors
        bad += bool(n or err)
        print(f"{'ok  ' if not (n or err) else 'FIND'} {name}: {col.launches} launches sanitized, {n} errors"
              + (f"  {err}" if err else "") + ("\n" + col.summary() if n else ""), flush=True)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--examples", action="store_true")
    ap.add_argument("--only", default=None)
    ap.add_argument("--executor", default="ptx,ir")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    if a.examples:
        return run_examples()
    cases = [c for c in collect_cases() if "_error" not in c] + holdout_cases()
    if a.only:
        cases = [c for c in cases if re.search(a.only, c["name"])]
    rows, bad = [], 0
    for ex in a.executor.split(","):
        for c in cases:
            r = run_case(c, ex)
            rows.append(r)
            flag = "ERR " if "error" in r else ("FIND" if r["findings"] else ("WRONG" if r.get("ok") is False else "ok  "))
            bad += flag != "ok  "
            print(f"{flag} {ex:3s} {c['name']}" + (f"  {r.get('error', '')[:300]}" if "error" in r else "")
                  + "".join(f"\n        {ln}" for f in r["findings"] for ln in f.splitlines()[:3]), flush=True)
    n = len(rows)
    print(f"\n{n} launches ({len(cases)} kernels x {len(a.executor.split(','))} executors): "
          f"{sum(1 for r in rows if r['findings'])} with findings, "
          f"{sum(1 for r in rows if 'error' in r)} errors, {sum(1 for r in rows if r.get('ok') is False)} wrong outputs")
    if a.json:
        root = os.path.dirname(os.path.dirname(HERE)) + os.sep
        for r in rows:                      # paths relative to the repository
            r["findings"] = [f.replace(root, "") for f in r["findings"]]
            if "error" in r:
                r["error"] = r["error"].replace(root, "")
        meta = {"date": time.strftime("%Y-%m-%d"), "simgpu": simgpu.__version__, "numpy": np.__version__,
                "machine": "CPU only (the sanitizer runs on the model)", "rows": rows}
        with open(a.json, "w") as f:
            json.dump(meta, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
