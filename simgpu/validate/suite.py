"""`simgpu validate --suite validation/`: re-measure the stored suite on the CUDA GPU present.

The suite directory holds kernels (kernels/*.py with CASES), the device driver script
(device_run.sh: event timing with numba.cuda, then one Nsight Compute pass per module) and
collect_results.py, which rewrites data/h200_timing.json and data/h200_ncu.json with the
card, driver, CUDA, numba, numba-cuda, numpy and ncu versions, the date and the commands.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile

from .runner import device_available


def run_suite(directory, only=None, ncu=True, budget_s=5400):
    directory = os.path.abspath(directory)
    driver = os.path.join(directory, "device_run.sh")
    collect = os.path.join(directory, "collect_results.py")
    for p in (driver, collect):
        if not os.path.exists(p):
            print(f"simgpu validate --suite: {p} is missing; is {directory} a simgpu validation suite?",
                  file=sys.stderr)
            return 2
    ok, why = device_available()
    if not ok:
        print("simgpu validate --suite: no CUDA device was found" + (f" ({why})" if why else "") +
              "; the stored measurements were left as they are", file=sys.stderr)
        return 2
    data = os.path.join(directory, "data")
    before = {}
    if only:                               # keep the other cases' measurements
        for name in ("h200_timing.json", "h200_ncu.json"):
            p = os.path.join(data, name)
            if os.path.exists(p):
                with open(p) as f:
                    before[name] = json.load(f)
    stages = "env suite_time" + (" suite_profile" if ncu else "")
    root = os.path.dirname(directory)
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, OUT=out)
        cmd = ["bash", driver, stages, str(budget_s)] + ([only] if only else [])
        print("running:", " ".join(cmd), flush=True)
        r = subprocess.run(cmd, cwd=root, env=env)
        raw = os.path.join(out, "raw")
        os.makedirs(raw, exist_ok=True)
        for name in ("main.tgz", "sass.tgz"):
            p = os.path.join(out, name)
            if os.path.exists(p):
                with tarfile.open(p) as t:
                    t.extractall(raw, filter="data")
        r2 = subprocess.run([sys.executable, collect, raw], cwd=root)
    for name, old in before.items():
        p = os.path.join(data, name)
        with open(p) as f:
            new = json.load(f)
        if isinstance(old.get("cases"), dict) and isinstance(new.get("cases"), dict):
            merged = dict(old)
            merged["cases"] = {**old["cases"], **new["cases"]}
            merged["provenance"] = new.get("provenance")
            merged["provenance_previous"] = old.get("provenance")
            with open(p, "w") as f:
                json.dump(merged, f, indent=1)
    print("suite:", "done" if r.returncode == 0 and r2.returncode == 0 else "finished with errors",
          f"(results in {os.path.join(directory, 'data')})")
    return 0 if r2.returncode == 0 else 1
