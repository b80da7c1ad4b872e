"""Call 4 of validation/gemm_small_m (issue 24): fresh shapes, all held out (no parameter is fitted
to any of them; they are first compared after the model of this session is final), timed with
triton.testing.do_bench as measure_small_m.py does, with torch.profiler kernel names.

    PYTHONUNBUFFERED=1 python3 measure_fresh.py $OUT

  square   bf16 N x N x N, N = 160..8160 step 64 (N = 32 mod 64: no size of call 1's sweeps),
           twice (r1 ascending, r2 in a seeded random order), do_bench defaults (warmup 25, rep 100)
  waves    M x 6144 x 4096 bf16, M = 128..8192 step 128
  decode   W(14336 x 4096) @ X(4096 x B) and x(B x 4096) @ W(4096 x 14336), bf16, B = 8..512 step 8
  small    fp16 / bf16, M in {1,2,5,7,10,20,40,56}, N in 9 values none a multiple of 8, K in
           {1024, 3072, 5120}: a seeded random 200
  profile  kernel names, grids, durations of every shape above
"""
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_small_m as M  # noqa: E402
import torch  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
M.OUT = OUT
R = M.R
R["doc"] = __doc__


def save():
    R["elapsed_s"] = time.time() - M.T0
    import json
    with open(os.path.join(OUT, "gemm_fresh.json"), "w") as f:
        json.dump(R, f)


def run(shapes, key, warmup, rep, **extra):
    out = []
    for (m, n, k, dt) in shapes:
        a = torch.randn(m, k, device="cuda").to(M.DT[dt])
        b = torch.randn(k, n, device="cuda").to(M.DT[dt])
        r = M.bench(lambda: torch.matmul(a, b), warmup, rep)
        r.update(m=m, n=n, k=k, dtype=dt, **extra)
        out.append(r)
    R.setdefault(key, []).extend(out)
    M.log(key, len(out), "e.g.", out[-1]["m"], out[-1]["n"], out[-1]["k"], round(out[-1]["ms"] * 1e3, 1), "us")
    save()


def profile():
    from torch.profiler import ProfilerActivity, profile as prof_
    import json
    todo, seen = [], set()
    for key in ("square", "waves", "decode", "small"):
        for r in R.get(key, []):
            s = (r["m"], r["n"], r["k"], r["dtype"])
            if s not in seen:
                seen.add(s)
                todo.append(s)
    cache = torch.empty(256 * 2**20 // 4, dtype=torch.int, device="cuda")
    res = []
    for c0 in range(0, len(todo), 100):
        part = todo[c0:c0 + 100]
        ops = []
        for (m, n, k, dt) in part:
            a = torch.randn(m, k, device="cuda").to(M.DT[dt])
            b = torch.randn(k, n, device="cuda").to(M.DT[dt])
            torch.matmul(a, b)
            ops.append((a, b))
        torch.cuda.synchronize()
        with prof_(activities=[ProfilerActivity.CUDA]) as p:
            for a, b in ops:
                torch.cuda._sleep(2000)
                cache.zero_()
                torch.matmul(a, b)
            torch.cuda._sleep(2000)
            torch.cuda.synchronize()
        tmp = os.path.join(OUT, "_trace.json")
        p.export_chrome_trace(tmp)
        with open(tmp) as f:
            tr = json.load(f)
        os.remove(tmp)
        evs = sorted([e for e in tr.get("traceEvents", []) if e.get("cat") in ("kernel", "gpu_memset")],
                     key=lambda e: e["ts"])
        groups, cur = [], None
        for e in evs:
            if "spin" in e["name"]:
                if cur is not None:
                    groups.append(cur)
                cur = []
                continue
            if cur is None or "FillFunctor" in e["name"]:
                continue
            a = e.get("args", {})
            cur.append({"name": e["name"], "cat": e["cat"], "dur_us": e.get("dur"), "grid": a.get("grid"),
                        "block": a.get("block")})
        if len(groups) != len(part):
            M.log(f"profile: {len(groups)} groups for {len(part)} shapes")
        for s, g in zip(part, groups):
            res.append({"m": s[0], "n": s[1], "k": s[2], "dtype": s[3], "kernels": g})
        del ops
        torch.cuda.empty_cache()
    R["profile"] = res
    M.log("profile", len(res))
    save()


if __name__ == "__main__":
    M.env()
    ns = list(range(160, 8161, 64))
    run([(n, n, n, "bf16") for n in ns], "square", 25, 100, sweep="r1")
    r2 = ns[:]
    random.Random(4).shuffle(r2)
    run([(n, n, n, "bf16") for n in r2], "square", 25, 100, sweep="r2")
    run([(m, 6144, 4096, "bf16") for m in range(128, 8193, 128)], "waves", 10, 40)
    bs = range(8, 513, 8)
    run([(14336, b, 4096, "bf16") for b in bs], "decode", 5, 20, form="W@X")
    run([(b, 14336, 4096, "bf16") for b in bs], "decode", 5, 20, form="x@W")
    full = [(m, n, k, dt) for dt in ("bf16", "fp16") for m in (1, 2, 5, 7, 10, 20, 40, 56)
            for n in (1003, 2054, 3084, 5119, 7170, 12290, 20483, 28674, 40001) for k in (1024, 3072, 5120)]
    run(random.Random(26).sample(full, 200), "small", 5, 20)
    profile()
    R["env"]["nvidia_smi_end"] = M.smi("clocks.sm,clocks.mem,power.draw,temperature.gpu")
    R["env"]["date_utc_end"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    save()
    M.log("done")
