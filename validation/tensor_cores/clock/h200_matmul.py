"""A second card for the unprofiled clock: the tutorial matmul's do_bench medians on the H200
(../pipe/h200/h200_matmul_times.json, 2026-12-02, the same kernel and config as ../lecture), against
simgpu on the H200 preset at the profiler's clock (clock_hz) and on simgpu.validate.unprofiled("H200"),
each plus do_bench's floor (simgpu.validate.dobench_seconds).  The clock comes from the H200's
microbenchmarks (derive_h200.py), not from these matmuls.  Writes h200_matmul.json.
Run: PYTHONPATH=<simgpu>:<triton 3.6> python h200_matmul.py [MxNxK ...]"""
import json, os, shutil, statistics, sys
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs("/tmp/simgpu_lecture", exist_ok=True)
shutil.copy(os.path.join(HERE, "..", "lecture", "kernels.py"), "/tmp/simgpu_lecture/kernels.py")
sys.path.insert(0, "/tmp/simgpu_lecture")
import triton, simgpu, kernels as L
from simgpu.validate import dobench_seconds, unprofiled

card = json.load(open(os.path.join(HERE, "..", "pipe", "h200", "h200_matmul_times.json")))
assert card["meta"] == L.MM_META
path = os.path.join(HERE, "h200_matmul.json")
out = json.load(open(path)) if os.path.exists(path) else {"cases": {}}
out["card"] = {k: card[k] for k in ("date", "gpu", "triton", "torch", "cuda", "method")}
for name in sys.argv[1:] or list(card["cases"]):
    c = card["cases"][name]
    M, N, K = c["M"], c["N"], c["K"]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    grid = lambda m: (triton.cdiv(M, m["BLOCK_SIZE_M"]) * triton.cdiv(N, m["BLOCK_SIZE_N"]),)
    blocks = grid(L.MM_META)[0]
    r = {"blocks": blocks, "card_dobench_us": c["time_ms"] * 1e3}
    for label, gpu in (("profiled", simgpu.hardware.get_gpu("H200")), ("unprofiled", unprofiled("H200"))):
        o = np.zeros((M, N), np.float16)
        rep = simgpu.launch(L.matmul_kernel, grid, None, (a, b, o, M, N, K, K, 1, N, 1, N, 1),
                            sample=blocks > 132, gpu=gpu, progress=False, **L.MM_META)
        d = dobench_seconds(rep) * 1e6
        r[label] = {"sm_clock_hz": gpu.clock_hz, "simgpu_dobench_us": d, "ratio": d / r["card_dobench_us"],
                    "bottleneck": rep.extras.get("bottleneck")}
    out["cases"][name] = r
    print(name, {k: (v if not isinstance(v, dict) else round(v["ratio"], 3)) for k, v in r.items()}, flush=True)
    json.dump(out, open(path, "w"), indent=1)
for label in ("profiled", "unprofiled"):
    rs = [v[label]["ratio"] for v in out["cases"].values()]
    print(label, "median |error|", round(statistics.median(abs(x - 1) for x in rs), 3), "range", round(min(rs), 3), round(max(rs), 3))
