"""numba-cuda's kernels as plain simgpu.launch calls, against their tests' own expected values
(issue 25).

    python validation/numba_kernels/run.py                     # all, writes the JSON below
    python validation/numba_kernels/run.py --no-save -k matmul # a subset, printed

runs ``numba.cuda.tests.cudapy`` and ``numba.cuda.tests.doc_examples`` (numba-cuda's wheel)
under pytest as validation/numba_suite/run.py does, with ``SIMGPU_NUMBA_SUITE=plain``: every
kernel the tests launch runs as ``simgpu.launch(py_func, grid, block, args)`` with simgpu's
defaults (plain.py says exactly how).  A *kernel case* is a test that launched at least one
kernel that way; each is classified as

* ``right``: the test passed (its assertions on the launches' results held);
* ``wrong``: an assertion failed (a result differs from the expected, no error raised);
* ``crash``: an exception from inside simgpu that is not one of simgpu's errors for the user
  (a traceback ending in simgpu's internals);
* ``refused``: one of simgpu's errors for the user (SimGPUError and its kinds: "not supported",
  "does not model", a fault);
* ``other``: any other failure (numba's errors, the test's own), listed with its exception.

and writes validation/data/numba_kernels.json: the date, tool versions, counts, and every
case with its class.  Tests that launched no kernel this way are counted apart.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "validation", "numba_suite"))
import run as suite     # noqa: E402  (validation/numba_suite/run.py)

OUT = os.path.join(ROOT, "validation", "data", "numba_kernels.json")


def classify(rec):
    """The class of one test's record (plain.py's log line of its call, or its failing phase)."""
    if rec["outcome"] == "passed" or (rec["outcome"] == "skipped" and rec["xfail"]):
        return "right"
    if rec["outcome"] == "skipped":
        return "skipped"
    f = rec["failure"] or {}
    if f.get("user_error"):
        return "refused"
    if f.get("innermost_in_simgpu"):
        return "crash"
    if f.get("assertion"):
        return "wrong"
    return "other"


def load(path):
    """{test: record}: the call phase's line, or the first failing phase's."""
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path):
        r = json.loads(line)
        prev = out.get(r["test"])
        if prev is None or (prev["outcome"] != "failed" and r["outcome"] == "failed"):
            out[r["test"]] = r
    return out


def summarise(records):
    cases, no_kernel = {}, collections.Counter()
    for t, r in sorted(records.items()):
        c = classify(r)
        if r["plain_launches"] == 0:
            no_kernel[c] += 1
            if c in ("crash", "refused", "wrong", "other"):
                cases[t] = {"class": c, "no_plain_launch": True, "failure": r["failure"],
                            "host_path_launches": r["host_path_launches"]}
            continue
        if c == "skipped":
            no_kernel[c] += 1
            continue
        cases[t] = {"class": c, "plain_launches": r["plain_launches"], "kernels": r["kernels"],
                    "host_path_launches": r["host_path_launches"], "failure": r["failure"]}
    counts = collections.Counter(v["class"] for v in cases.values() if not v.get("no_plain_launch"))
    return {"kernel_cases": sum(counts.values()), "counts": dict(counts),
            "kernels": len({k for v in cases.values() for k in v.get("kernels", ())}),
            "tests_without_plain_launch": dict(no_kernel), "cases": cases}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--timeout", type=int, default=7200, help="seconds for the whole pytest run")
    p.add_argument("--workers", type=int, default=None, help="pytest-xdist workers (default 2, or 1 with -k)")
    p.add_argument("--no-save", action="store_true", help="print, do not write the JSON")
    a, extra = p.parse_known_args(argv)
    workers = a.workers if a.workers is not None else (2 if suite.have_xdist() and not extra else 1)
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "junit.xml")
        os.environ["SIMGPU_NUMBA_KERNELS_LOG"] = log = os.path.join(tmp, "plain.jsonl")
        cmd, wall, cpu, tail, rc = suite.run_pytest("plain", extra, xml, a.timeout, workers)
        records = load(log)
    data = summarise(records)
    data["measured"] = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                        "python": sys.version.split()[0], "packages": suite._versions(), "args": extra,
                        "ptxas": _ptxas(), "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
                        "workers": workers, "pytest_summary": tail, "command": " ".join(cmd)}
    c = data["counts"]
    print(f"{data['kernel_cases']} kernel cases: right {c.get('right', 0)}, wrong {c.get('wrong', 0)}, "
          f"crash {c.get('crash', 0)}, refused {c.get('refused', 0)}, other {c.get('other', 0)}  "
          f"({wall:.0f} s wall, {cpu:.0f} s CPU; pytest: {tail})")
    for t, v in data["cases"].items():
        if v["class"] not in ("right",):
            f = v["failure"] or {}
            print(f"  {v['class']:8s} {t}  {f.get('type')}: {f.get('message', '')[:160]}  @ {f.get('innermost')}")
    if not a.no_save:
        with open(OUT, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        print(f"wrote {OUT}")
    return 0


def _ptxas():
    import subprocess
    try:
        return subprocess.run(["ptxas", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1]
    except (OSError, IndexError):
        return None


if __name__ == "__main__":
    sys.exit(main())
