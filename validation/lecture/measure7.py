"""Call 7 on the H200: the rate of each cuBLAS tile shape (a microbenchmark on shapes no sweep
uses), and a second fresh hold-out of the mystery plot.

    python3 validation/lecture/measure7.py $OUT

Parts (each saved as soon as it is done):
  tiles    360 random bf16 shapes (seed 11): M, N, K multiples of 64, log-uniform in 1024..8192,
           none square; per shape 1 warm-up and 3 calls inside torch.profiler (CUDA activity),
           a `spin_kernel` (torch.cuda._sleep) marker between shapes: cuBLAS's kernel name,
           grid and kernel-alone duration.  Each tile's busy rate (work of the whole waves over
           the duration) comes out of these in derive.py, not here.
  holdout  square bf16 N = 112..8176 step 64 (N = 48 mod 64), never measured before: 3 repeats
           in one random order (seed 12), call 4's eager method (events around R back-to-back
           torch.matmul, ~4 ms a sample, 5 samples, median) with the clock probe of measure6
           after each (N, repeat); then per N a profiled burst of 4 calls (kernel name, grid,
           kernel-alone duration)
-> lecture_h200_call7.json
"""
from __future__ import annotations

import json
import math
import os
import platform
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure6 import Sampler, smi  # noqa: E402

T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


def main(out_dir):
    import torch
    from torch.profiler import ProfilerActivity, profile
    props = torch.cuda.get_device_properties(0)
    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
           "gpu": props.name, "sm_count": props.multi_processor_count,
           "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "smi_start": smi()}
    sam = Sampler()
    env["sampler"] = sam.kind
    path = os.path.join(out_dir, "lecture_h200_call7.json")
    res = {"env": env, "method": __doc__}

    def save():
        with open(path, "w") as f:
            json.dump(res, f, indent=0)

    ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
    C1, C2 = 20000, 220000

    def probe():
        a0, a1, b0, b1 = ev(), ev(), ev(), ev()
        a0.record(); torch.cuda._sleep(C1); a1.record()
        b0.record(); torch.cuda._sleep(C2); b1.record()
        torch.cuda.synchronize()
        dt = (b0.elapsed_time(b1) - a0.elapsed_time(a1)) * 1e-3
        return (C2 - C1) / dt / 1e6 if dt > 0 else None

    def profiled(ops, calls):
        """ops: [(tag, fn)]; one profiler session, a spin_kernel marker before each tag."""
        tmp = os.path.join(out_dir, "_trace7.json")
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _, fn in ops:
                torch.cuda._sleep(1000)
                for _ in range(calls):
                    fn()
                torch.cuda.synchronize()
            torch.cuda._sleep(1000)
            torch.cuda.synchronize()
        prof.export_chrome_trace(tmp)
        tr = json.load(open(tmp))
        os.remove(tmp)
        evs = sorted([e for e in tr.get("traceEvents", []) if e.get("cat") in ("kernel", "gpu_memset")],
                     key=lambda e: e["ts"])
        groups, cur = [], None
        for e in evs:
            if "spin" in e["name"]:
                cur = []
                groups.append(cur)
            elif cur is not None:
                a = e.get("args", {})
                cur.append({"name": e["name"][:100], "dur_us": e.get("dur"), "grid": a.get("grid"),
                            "ts": e["ts"]})
        return {tag: g for (tag, _), g in zip(ops, groups)}

    # warm-up: clocks up, as calls 4-6
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t = time.time()
    while time.time() - t < 1.5:
        for _ in range(10):
            torch.matmul(a, a)
        torch.cuda.synchronize()
    del a
    env["smi_after_warmup"] = smi()

    # ---------------- tiles: random shapes ----------------
    rng = random.Random(11)
    shapes = set()
    while len(shapes) < 360:
        m, n, k = (64 * max(16, round(math.exp(rng.uniform(math.log(1024), math.log(8192))) / 64)) for _ in range(3))
        if not (m == n == k):
            shapes.add((m, n, k))
    shapes = sorted(shapes)
    rng.shuffle(shapes)
    tiles = {}
    res["tiles"] = tiles
    for i in range(0, len(shapes), 30):
        chunk = shapes[i:i + 30]
        tens = []
        ops = []
        for (m, n, k) in chunk:
            A = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            B = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
            tens.append((A, B))
            torch.matmul(A, B)
            ops.append((f"{m}x{n}x{k}", lambda A=A, B=B: torch.matmul(A, B)))
        torch.cuda.synchronize()
        tiles.update(profiled(ops, 3))
        del tens, ops
        torch.cuda.empty_cache()
    save()
    log("tiles", len(tiles))

    # ---------------- hold-out: N = 48 mod 64 ----------------
    sizes = list(range(112, 8177, 64))
    order = [(n, r) for n in sizes for r in range(3)]
    random.Random(12).shuffle(order)
    hold = {}
    res["holdout"] = hold
    for i, (n, r) in enumerate(order):
        A = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        fn = lambda A=A, B=B: torch.matmul(A, B)  # noqa: E731
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        s, e = ev(), ev()
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        R = int(min(2000, max(1, 4.0 / max(s.elapsed_time(e), 1e-3))))
        out = []
        w0 = time.perf_counter()
        for _ in range(5):
            s, e = ev(), ev()
            s.record()
            for _ in range(R):
                fn()
            e.record()
            torch.cuda.synchronize()
            out.append(s.elapsed_time(e) / R * 1e-3)
        w1 = time.perf_counter()
        mhz = probe()
        hold.setdefault(str(n), []).append({"rep": r, "order": i, "reps": R, "seconds": sorted(out)[2],
                                            "samples": out, "probe_mhz": mhz, "nvml": sam.window(w0, w1)})
        del A, B
    torch.cuda.empty_cache()
    save()
    log("holdout timed")
    kern = {}
    res["holdout_kernels"] = kern
    for i in range(0, len(sizes), 32):
        chunk = sizes[i:i + 32]
        tens, ops = [], []
        for n in chunk:
            A = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
            B = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
            tens.append((A, B))
            torch.matmul(A, B)
            ops.append((str(n), lambda A=A, B=B: torch.matmul(A, B)))
        torch.cuda.synchronize()
        kern.update(profiled(ops, 4))
        del tens, ops
        torch.cuda.empty_cache()
    env["smi_end"] = smi()
    sam.stop()
    res["elapsed_s"] = time.time() - T0
    save()
    log("done")
    names = {}
    for g in tiles.values():
        ks = [e["name"] for e in g if "nvjet" in e["name"] or "gemm" in e["name"]]
        if ks:
            names[ks[-1][:45]] = names.get(ks[-1][:45], 0) + 1
    for k, v in sorted(names.items(), key=lambda kv: -kv[1])[:30]:
        print(v, k)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    main(out)
