"""What the default launch's light shared-memory hazard check costs (issue 25 item 2, target
at most 15 %): launch time with settings.race_check on over the same launch with it off, in the
same run, on the compiled path.  Kernels: vector add (no shared memory), tree reduction (shared
memory, a barrier per level), 16x16 tiled matmul (shared tiles, two barriers per tile), and the
suite's transpose and histogram (validation/kernels/).  The median of ``--repeat`` timed
``simgpu.launch`` calls each, interleaved (on, off, on, off ...) so drift hits both; the
default launch (memory and timing models on) unless --results-only.

    python benchmarks/bench_race_check.py [--repeat 5] [--results-only] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "validation"))

import simgpu  # noqa: E402
from simgpu import settings  # noqa: E402
from bench_sanitizer import cases as classic_cases  # noqa: E402


def cases():
    """bench_sanitizer's three classic kernels (2^16 threads) and three shared-memory suite kernels."""
    out = classic_cases(1 << 16)
    os.environ.setdefault("VALIDATION_TINY", "1")
    try:
        from run_suite import collect_cases
        for c in collect_cases():
            if c["name"] in ("transpose_tiled_padded_L2", "hist_shared_L2", "reduce_interleaved_L2"):
                out[c["name"]] = (c["kernel"], tuple(c["grid"]), tuple(c["block"]),
                                  tuple(c["args"](np.random.default_rng(0))))
    except Exception as e:          # the suite's loader missing: the three kernels above only
        print("suite kernels not loaded:", e)
    return out


def once(k, g, b, args, on, kw):
    with settings.override(race_check=on), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        rep = simgpu.launch(k, g, b, tuple(x.copy() if isinstance(x, np.ndarray) else x for x in args), **kw)
        return time.perf_counter() - t0, rep


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--results-only", action="store_true")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    kw = {"executor": "ptx"} | ({"timing": False, "memory": False} if a.results_only else {})
    rows = []
    print(f"{'kernel':34s} {'off (s)':>9s} {'on (s)':>9s} {'ratio':>7s}  races")
    for name, (k, g, b, args) in cases().items():
        once(k, g, b, args, True, kw)               # compile, warm
        on, off = [], []
        for _ in range(a.repeat):
            t, rep = once(k, g, b, args, True, kw)
            on.append(t)
            off.append(once(k, g, b, args, False, kw)[0])
        r = statistics.median(on) / statistics.median(off)
        rows.append({"kernel": name, "off_s": statistics.median(off), "on_s": statistics.median(on),
                     "ratio": r, "races": len(rep.races)})
        print(f"{name:34s} {statistics.median(off):9.3f} {statistics.median(on):9.3f} {r:6.3f}x  {len(rep.races)}",
              flush=True)
    print(f"median ratio: {statistics.median(x['ratio'] for x in rows):.3f}x (medians of {a.repeat}; "
          f"{'results only' if a.results_only else 'memory and timing models on'})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"date": time.strftime("%Y-%m-%d"), "repeat": a.repeat,
                       "results_only": a.results_only, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
