"""numba-cuda's own test suite as the measure of simgpu's host API (issue 11).

    python validation/numba_suite/run.py                 # both devices, writes the JSON below
    python validation/numba_suite/run.py --device simgpu -k matmul --no-save
    python validation/numba_suite/run.py --device simgpu --no-save --check -k "..."   # CI

runs ``numba.cuda.tests.cudapy`` and ``numba.cuda.tests.doc_examples`` (shipped in the
numba-cuda wheel) under pytest twice:

* ``simgpu``: ``simgpu.install()`` in pytest_configure (plugin.py): numba.cuda's host API on
  the modelled GPU, kernels compiled by numba-cuda and run by simgpu's PTX executor;
* ``cudasim``: numba's own simulator (``NUMBA_ENABLE_CUDASIM=1``), for comparison;

and records passed/failed/skipped counts, wall and CPU time (the CPU seconds of pytest and its
workers: the wall time on this shared machine follows the other users' load), the slowest
tests and the seconds per file, each failing test with the first line of its error and a
category, and the tests the simulator passes that simgpu does not, in
validation/data/numba_suite.json.  The full run uses 2 pytest-xdist workers (``--workers``),
a ``-k`` subset one process.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import importlib.util
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(ROOT, "validation", "data", "numba_suite.json")
PACKAGES = ["numba.cuda.tests.cudapy", "numba.cuda.tests.doc_examples"]

#: failure category: (name, regex over the first line of the error), first match wins
CATEGORIES = [
    ("timeout (a test past the per-test limit: big grids executed lane by lane)", r"[Tt]imeout"),
    ("code numba links at load time: CUDA C shims (fp16/bf16/fp8), cooperative groups, NRT, link=",
     r"which the PTX does not define|Unresolved extern|__nv_|cudaCG|NRT_|LaunchError: executor='ptx': kernel"),
    ("an access past the end of an allocation: the GPU rounds allocations up and does not fault, simgpu "
     "does (the test overruns its arrays)", r"out-of-bounds global access: address \S+ is \d+ bytes into"),
    ("PTX the simgpu.ptx executor does not parse or run yet", r"unsupported PTX|KernelError|MemFault|not converged"),
    ("a test's child process failed (print of bfloat16; numba's float16 LTO warning test)",
     r"CalledProcessError|process failed"),
    ("an error numba.cuda raises on a GPU that simgpu does not (launch bounds exceeded, masked or "
     "negative-stride arrays)", r"CUDAError not raised|NotImplementedError not raised"),
    ("exceptions raised in kernels (debug=True) not reported to the host", r"Error not raised"),
    ("a warning numba.cuda gives that simgpu does not (host-array copies, launch configuration)",
     r"DID NOT WARN"),
    ("arguments simgpu's binding refuses (enums, ...) or does not wrap", r"cannot pass a|OverflowError"),
    ("CUDA driver API not modelled (NRT memsys, memalloc, IPC, contexts)",
     r"create_module_image|memalloc|driver's API|CudaAPIError|CudaSupportError|ipc|IPC"),
    ("numba's disk cache of kernels (cache=True)", r"_Kernel.__init__|\.nbc|nbi|cach"),
    ("device-array internals (gpu_data, numba's copying transpose)", r"gpu_data|Tuples differ"),
    ("more than one GPU", r"one GPU"),
    ("typing/lowering differences", r"TypingError|LoweringError|NumbaError"),
    ("a different result or exception than on a GPU", r"AssertionError|Error"),
]


def categorise(message):
    for name, rx in CATEGORIES:
        if re.search(rx, message):
            return name
    return "other"


def have_xdist():
    try:
        import xdist  # noqa: F401  (pytest-xdist: run.py --workers)
    except ImportError:
        return False
    return True


def run_pytest(device, extra, xml_path, timeout, workers=1):
    env = dict(os.environ, SIMGPU_NUMBA_SUITE=device, SIMGPU_NUMBA_SUITE_LOG=xml_path + ".jsonl",
               PYTHONPATH=os.pathsep.join([HERE, ROOT, os.environ.get("PYTHONPATH", "")]))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)     # cached bytecode: a child process starts in ~1 s, not ~3
    # a machine with two GPUs of different compute capabilities, as numba-cuda's multi-GPU CI has:
    # test_multigpu's tests and the per-capability cache tests run (not skipped)
    env.setdefault("SIMGPU_NUMBA_SUITE_GPUS", "H200,A100")
    if device == "cudasim":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    # --assert=plain: no rewriting of numba-cuda's test modules' asserts (seconds of ast work per run;
    # the tests' own unittest assertions carry the messages)
    cmd = [sys.executable, "-m", "pytest", "-p", "plugin", "--import-mode=importlib", "-p", "no:cacheprovider",
           "--assert=plain", "-q", "--tb=line", "-rN", "--continue-on-collection-errors", f"--junitxml={xml_path}",
           *(["-n", str(workers), "--dist", "loadscope"] if workers > 1 else []), "--pyargs", *PACKAGES, *extra]
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True,
                              timeout=timeout)
        tail, rc = ((proc.stdout or "").strip().splitlines()[-1:] or [""])[0], proc.returncode
    except subprocess.TimeoutExpired:
        tail, rc = f"stopped after {timeout} s (--timeout): counts are the tests that finished", None
    return cmd, time.perf_counter() - t0, _children_cpu() - cpu0, tail, rc


def _children_cpu():
    """CPU seconds (user + system) of the finished child processes (pytest and its workers):
    on a shared machine the wall time depends on the load; the CPU time much less."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def full_module(mod, defines=None):
    """A test module's dotted name from the package down: pytest's node ids are relative to its
    rootdir, which is numba-cuda's test folder in some runs (``test_x``).  Both packages have
    modules of the same name (test_laplace ...): the one whose source defines ``defines`` (the
    id's class and test function: both have a class TestReduction)."""
    if mod.startswith("numba."):
        return mod
    found = []
    for package in PACKAGES:
        try:
            spec = importlib.util.find_spec(f"{package}.{mod}")
        except ImportError:
            spec = None
        if spec is not None and spec.origin:
            found.append((f"{package}.{mod}", spec.origin))
    names = [defines] if isinstance(defines, str) else [d for d in (defines or ()) if d]
    for name, origin in found:
        text = open(origin).read()
        if all(re.search(rf"^\s*(class|def)\s+{re.escape(d)}\b", text, re.M) for d in names):
            return name
    return found[0][0] if found else mod


def full_id(tid):
    """A node id as ``numba.cuda.tests.<package>.<module>[.<Class>]::<test>``."""
    mod, sep, rest = tid.partition("::")
    *parts, last = mod.split(".")
    if parts and last[:1].isupper():        # "test_x.TestClass::test"
        return f"{full_module('.'.join(parts), (last, rest.split('[')[0]))}.{last}{sep}{rest}"
    return f"{full_module(mod, rest.split('[')[0] or None)}{sep}{rest}"


def parse_log(path, durations=None):
    """{test id: (outcome, message)} from plugin.py's per-test log (a run that was stopped);
    each test's seconds (all its phases) added into `durations` if given."""
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path):
        r = json.loads(line)
        path_part, _, name = r["test"].partition("::")
        mod = path_part.split("numba_cuda/")[-1].removesuffix(".py").replace("/", ".")
        cls, _, meth = name.rpartition("::")
        tid = full_id(f"{mod}.{cls}::{meth}" if cls else f"{mod}::{meth}")
        if durations is not None:
            durations[tid] = durations.get(tid, 0.0) + float(r.get("duration") or 0.0)
        outcome = {"xfailed": "skipped"}.get(r["outcome"], r["outcome"])
        if r["when"] != "call" and outcome == "failed":
            outcome = "error"
        if tid not in out or out[tid][0] == "passed":
            out[tid] = (outcome, r["message"])
    return out


def parse_junit(path):
    """{test id: (outcome, message)} from pytest's junit XML."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        tid = f"{case.get('classname')}::{case.get('name')}"
        outcome, msg = "passed", ""
        for tag in ("failure", "error", "skipped"):
            el = case.find(tag)
            if el is not None:
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
                msg = (el.get("message") or (el.text or "")).strip().splitlines()[0:1]
                msg = msg[0][:300] if msg else ""
                break
        out[tid] = (outcome, msg)
    return out


def slowest(durations, n=25):
    """The n slowest tests: [[test id, seconds]]."""
    return [[t, round(d, 1)] for t, d in sorted(durations.items(), key=lambda kv: -kv[1])[:n]]


def by_file(durations):
    """Seconds per test file, slowest first."""
    files = collections.Counter()
    for t, d in durations.items():
        files[t.split("::")[0].rsplit(".", 1)[0] if "." in t.split("::")[0] else t] += d
    return {f: round(d, 1) for f, d in files.most_common()}


def summarise(device, results, wall, cmd, tail, cpu=None, durations=None, workers=1):
    counts = collections.Counter(o for o, _ in results.values())
    failing = {t: {"outcome": o, "message": m, "category": categorise(m)}
               for t, (o, m) in sorted(results.items()) if o in ("failed", "error")}
    cats = collections.Counter(f["category"] for f in failing.values())
    return {"device": device, "passed_tests": sorted(t for t, (o, _) in results.items() if o == "passed"),
            "passed": counts["passed"], "failed": counts["failed"],
            "errors": counts["error"], "skipped": counts["skipped"], "total": len(results),
            "wall_s": round(wall, 1), "cpu_s": None if cpu is None else round(cpu, 1), "workers": workers,
            "load_average_1min_at_end": round(os.getloadavg()[0], 2),
            "slowest": slowest(durations or {}), "seconds_by_file": by_file(durations or {}),
            "command": " ".join(cmd), "pytest_summary": tail,
            "failure_categories": dict(cats.most_common()), "failing": failing}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=["simgpu", "cudasim", "both"], default="both")
    p.add_argument("--timeout", type=int, default=3600, help="seconds per pytest run")
    p.add_argument("--no-save", action="store_true", help="print, do not write the JSON")
    p.add_argument("--check", action="store_true", help="exit 1 if a test failed (CI)")
    p.add_argument("--workers", type=int, default=None,
                   help="pytest-xdist worker processes (default: 2 for the full run where pytest-xdist is "
                        "installed, else 1)")
    p.add_argument("--recategorise", action="store_true",
                   help="only recompute the failure categories of the stored JSON")
    a, extra = p.parse_known_args(argv)
    if a.recategorise:
        return recategorise()
    devices = ["cudasim", "simgpu"] if a.device == "both" else [a.device]
    data = json.load(open(OUT)) if os.path.exists(OUT) and not a.no_save else {}
    # the full run: 2 workers (this machine's cores); a -k subset (CI): one process, no workers to start
    workers = a.workers if a.workers is not None else (2 if have_xdist() and not extra else 1)
    if workers > 1 and not have_xdist():
        p.error("--workers needs pytest-xdist (pip install pytest-xdist)")
    per = {}
    for dev in devices:
        with tempfile.TemporaryDirectory() as tmp:
            xml = os.path.join(tmp, "junit.xml")
            cmd, wall, cpu, tail, rc = run_pytest(dev, extra, xml, a.timeout, workers)
            durations = {}
            per[dev] = parse_log(xml + ".jsonl", durations)       # also there when a run is stopped
        if not per[dev] and rc not in (0, 5):
            print(f"{dev}: pytest exited {rc} without running a test: {tail}", file=sys.stderr)
            return 1
        data[dev] = summarise(dev, per[dev], wall, cmd, tail, cpu, durations, workers)
        print(f"{dev}: passed {data[dev]['passed']}, failed {data[dev]['failed']}, errors "
              f"{data[dev]['errors']}, skipped {data[dev]['skipped']} in {wall:.0f} s wall, {cpu:.0f} s CPU, "
              f"{workers} worker(s)  ({tail})", flush=True)
    if "simgpu" in data and "cudasim" in data:
        ours = set(data["simgpu"]["passed_tests"])
        data["simulator_passes_simgpu_does_not"] = sorted(
            t for t in data["cudasim"]["passed_tests"] if t not in ours)
    data["measured"] = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                        "python": sys.version.split()[0], "packages": _versions(), "args": extra}
    failed = any(data[d]["failed"] + data[d]["errors"] for d in devices)
    if a.no_save:
        return 1 if a.check and failed else 0
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    print(f"wrote {OUT}")
    return 1 if a.check and failed else 0


def recategorise():
    data = json.load(open(OUT))
    for dev in ("simgpu", "cudasim"):
        if dev in data:
            for f in data[dev]["failing"].values():
                f["category"] = categorise(f["message"])
            data[dev]["failure_categories"] = dict(collections.Counter(
                f["category"] for f in data[dev]["failing"].values()).most_common())
    with open(OUT, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    return 0


def _versions():
    from importlib.metadata import version
    out = {}
    for name in ("numba", "numba-cuda", "numpy"):
        try:
            out[name] = version(name)
        except Exception:
            out[name] = None
    return out


if __name__ == "__main__":
    sys.exit(main())
