"""Call 2 (issue 24): streaming rates of cuBLAS's fallback kernels at small M under do_bench, on
shapes no target uses (K = 6144; N = 8191 align1, 8190 align2, 6144 aligned), with each shape's
kernel names from torch.profiler.  PYTHONUNBUFFERED=1 python3 measure2_dobench.py $OUT"""
import json, os, sys, time
import torch
from triton.testing import do_bench
OUT = sys.argv[1]
T0 = time.time()
res = {"date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "torch": torch.__version__, "points": []}
DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
shapes = []
for dt in ("bf16", "fp16", "fp32"):
    for n in (8191, 8190, 6144):
        for m in (1, 2, 4, 16, 48, 96):
            shapes.append((m, n, 6144, dt))
ops = []
for (m, n, k, dt) in shapes:
    a = torch.randn(m, k, device="cuda").to(DT[dt]); b = torch.randn(k, n, device="cuda").to(DT[dt])
    ts = sorted(do_bench(lambda: torch.matmul(a, b), warmup=10, rep=40, return_mode="all"))
    r = {"m": m, "n": n, "k": k, "dtype": dt, "ms": ts[len(ts) // 2], "n_samples": len(ts)}
    res["points"].append(r); ops.append((a, b))
    print(f"[{time.time()-T0:5.1f}] {m}x{n}x{k} {dt}: {r['ms']*1e3:.1f} us", flush=True)
from torch.profiler import ProfilerActivity, profile
cache = torch.empty(64 * 1024 * 1024, dtype=torch.int, device="cuda")
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    for a, b in ops:
        torch.cuda._sleep(2000); cache.zero_(); torch.matmul(a, b)
    torch.cuda._sleep(2000); torch.cuda.synchronize()
prof.export_chrome_trace(os.path.join(OUT, "_t.json"))
tr = json.load(open(os.path.join(OUT, "_t.json"))); os.remove(os.path.join(OUT, "_t.json"))
evs = sorted([e for e in tr["traceEvents"] if e.get("cat") == "kernel"], key=lambda e: e["ts"])
groups, cur = [], None
for e in evs:
    if "spin" in e["name"]:
        if cur is not None: groups.append(cur)
        cur = []; continue
    if cur is None or "FillFunctor" in e["name"]: continue
    cur.append({"name": e["name"], "dur_us": e.get("dur"), "grid": e.get("args", {}).get("grid")})
for r, g in zip(res["points"], groups):
    r["kernels"] = g
json.dump(res, open(os.path.join(OUT, "gemm_dobench_call2.json"), "w"))
for r in res["points"]:
    print(r["m"], r["n"], r["k"], r["dtype"], round(r["ms"] * 1e3, 1), [x["name"][:70] for x in r.get("kernels", [])])
print("done", time.time() - T0)
