"""The default launch's light hazard check (simgpu/sanitize/hazards.py) over every case of the
validation suite and the holdout at their tiny sizes: which report races (should be none but
the suite's one real race, smem_stride*), and what racecheck (check="racecheck") says of those.

    python validation/sanitizer/race_default_suite.py [out.json]
"""
import json
import os
import sys
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("VALIDATION_TINY", "1")
sys.path[:0] = [os.path.dirname(ROOT), ROOT, os.path.join(ROOT, "holdout")]
import simgpu  # noqa: E402
import kernels as holdout  # noqa: E402
from run_suite import collect_cases  # noqa: E402

cases = [c for c in collect_cases() if "_error" not in c] + list(holdout.cases(tiny=True))
res = {"cases": 0, "with_races": {}, "errors": {}}
for c in cases:
    try:
        host = c["args"](np.random.default_rng(0))
        args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in host)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rep = simgpu.launch(c["kernel"], tuple(c["grid"]), tuple(c["block"]), args,
                                timing=False, memory=False)
        res["cases"] += 1
        if rep.races:
            res["with_races"][c["name"]] = rep.races
            print("RACES", c["name"], rep.races, flush=True)
    except Exception as e:          # a case this script cannot run: listed, not hidden
        res["errors"][c["name"]] = repr(e)[:200]
print(json.dumps({"cases": res["cases"], "with_races": sorted(res["with_races"]),
                  "errors": len(res["errors"])}))
if len(sys.argv) > 1:
    json.dump(res, open(sys.argv[1], "w"), indent=1, default=str)
