"""How long `import simgpu` takes, beside `import numpy` on the same machine at the same moment.

    python benchmarks/bench_import.py [--repeat 7] [--json out.json]

Each import runs in a fresh interpreter (``python -X importtime -c "import X"``), the two kinds
interleaved so both see the same machine load.  -X importtime's cumulative microseconds of the
top-level module are the import's own cost (no interpreter start-up); the wall time of the whole
subprocess is printed beside it.  Prints the medians and the ratio simgpu / numpy.

``import simgpu`` loads numpy and simgpu's package module only: numba-cuda, simpy and
matplotlib are imported with the part of simgpu that uses them (simgpu/__init__.py).  The
target (issue 23) is under 1 s; a second line shows what the first use of the compiled
path adds (``simgpu.jit``: numba, numba-cuda, the executors and the models).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def import_time(statement, module):
    """(import seconds from -X importtime, wall seconds of the subprocess) of one fresh run."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", statement], capture_output=True,
                       text=True, env=env, cwd=ROOT, check=True)
    wall = time.perf_counter() - t0
    cumulative = 0
    for line in p.stderr.splitlines():       # "import time: self | cumulative | name"
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() == module and parts[2].startswith(" " + module):
            cumulative = int(parts[1])        # the top-level (unindented) entry of the module
    return cumulative / 1e6, wall


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    cases = {"numpy": ("import numpy", "numpy"), "simgpu": ("import simgpu", "simgpu"),
             "simgpu + jit": ("import simgpu; simgpu.jit", "simgpu")}
    runs = {name: [] for name in cases}
    for _ in range(a.repeat):
        for name, (stmt, mod) in cases.items():
            runs[name].append(import_time(stmt, mod))
    med = {name: (statistics.median(r[0] for r in rs), statistics.median(r[1] for r in rs))
           for name, rs in runs.items()}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"import times, median of {a.repeat} fresh interpreters (load average {load:.1f}, {os.cpu_count()} CPUs)")
    print(f"  {'':14s} {'import (-X importtime)':>24s} {'process wall':>14s}")
    for name, (imp, wall) in med.items():
        shown = f"{imp:22.3f} s" if name != "simgpu + jit" else f"{'(first use)':>24s}"
        print(f"  {name:14s} {shown} {wall:12.3f} s")
    ratio = med["simgpu"][0] / med["numpy"][0]
    print(f"  import simgpu / import numpy = {ratio:.2f}   (target: import simgpu under 1 s: "
          f"{'met' if med['simgpu'][0] < 1.0 else 'NOT met'})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"median_s": {k: {"import": v[0], "wall": v[1]} for k, v in med.items()},
                       "ratio_simgpu_numpy": ratio, "load_average": load}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
