"""Call 4 on the H200: repeats of the mystery sweep, a short-run bf16 rate, the tricks as times,
causal attention and the host cost of one scaled_dot_product_attention call.

    PYTHONPATH=$PWD:build/devpkgs python3 validation/lecture/measure4.py $OUT

Parts (each saved as soon as it is done):
  repeats   square bf16 N = 64..8192 step 64, 5 repeats, every (N, repeat) pair in one random
            order (seed 4), the method of measure.py without the profiler: CUDA events around R
            back-to-back torch.matmul calls (~4 ms a sample), 5 samples, median per call.
            In the same shuffled order: "mid" shapes (rectangular, in no sweep) for the bf16
            rate of short runs -> lecture_h200_repeats.json
  long      16384 x 16384 x 8192 bf16 (measure.py's rate shape) once at the end, 7 samples
  tricks    examples/lecture_tricks.cases() (the same kernel source as the simulated column)
            through simgpu.validate.runner.run_on_gpu (numba.cuda; 5 batches of 10 back-to-back
            launches, median), outputs checked against numpy -> lecture_h200_tricks.json
  attention SDPA flash / efficient / math, B 1 H 16 d 64, T 1024..8192, causal and not, 3
            repeats interleaved; host cost: a 1 x 1 x 64 x 64 call back-to-back (host-bound)
            vs graph-replayed (GPU time) vs a host clock around 2000 calls without a sync
Kernel names (torch.profiler) only after all timing.
"""
from __future__ import annotations

import json
import os
import platform
import random
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import numpy as np  # noqa: E402

T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


def smi():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,"
                               "power.draw,power.limit", "--format=csv,noheader"], capture_output=True, text=True,
                              timeout=20).stdout.strip()
    except Exception as exc:
        return repr(exc)


def dump(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=1)


def main(out_dir):
    import torch
    import torch.nn.functional as F
    from measure import bench, graph_time, kernels_of, DT   # validation/lecture/measure.py
    props = torch.cuda.get_device_properties(0)
    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
           "gpu": props.name, "sm_count": props.multi_processor_count,
           "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "smi_start": smi()}
    try:
        import numba
        env["numba"] = numba.__version__
        import numba_cuda
        env["numba_cuda"] = numba_cuda.__version__
    except Exception as exc:
        env["numba_err"] = repr(exc)[:200]
    log("env", env)
    dev = "cuda"

    # ---------------- warm-up: clocks up (not recorded) ----------------
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    t = time.time()
    while time.time() - t < 2.0:
        for _ in range(20):
            torch.matmul(a, b)
        torch.cuda.synchronize()
    del a, b
    env["smi_after_warmup"] = smi()

    # ---------------- repeats of the square sweep + mid shapes ----------------
    sizes = list(range(64, 8193, 64))
    mids = [(2816, 1536, 8192), (4224, 4096, 4096), (5632, 3072, 4096), (8448, 4096, 2048), (3072, 5632, 6144)]
    REP = 5
    jobs = [("sq", n, r) for n in sizes for r in range(REP)] + [("mid", s, r) for s in mids for r in range(REP)]
    random.Random(4).shuffle(jobs)
    sq = {n: [None] * REP for n in sizes}
    mid = {s: [None] * REP for s in mids}
    order = []
    for i, (kind, what, r) in enumerate(jobs):
        m, n, k = (what, what, what) if kind == "sq" else what
        A = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        B = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
        tm, allt, reps = bench(lambda: torch.matmul(A, B), target_ms=4.0, samples=5)
        (sq[what] if kind == "sq" else mid[what])[r] = {"seconds": tm, "samples": allt, "reps": reps, "order": i}
        order.append([kind, what if kind == "sq" else list(what), r])
        del A, B
        if i % 100 == 0:
            log("repeats", i, "/", len(jobs), smi())
    env["smi_after_sweep"] = smi()
    rep_out = {"env": env, "method": __doc__, "repeats": REP,
               "square_bf16": [{"n": n, "seconds": [x["seconds"] for x in sq[n]],
                                "tflops": [2.0 * n ** 3 / x["seconds"] / 1e12 for x in sq[n]],
                                "order": [x["order"] for x in sq[n]], "reps": [x["reps"] for x in sq[n]]}
                               for n in sizes],
               "mid_bf16": [{"m": s[0], "n": s[1], "k": s[2], "seconds": [x["seconds"] for x in mid[s]],
                             "tflops": [2.0 * s[0] * s[1] * s[2] / x["seconds"] / 1e12 for x in mid[s]]}
                            for s in mids]}
    dump(os.path.join(out_dir, "lecture_h200_repeats.json"), rep_out)
    log("sweep done")

    # long-run rate shape (measure.py "micro" peak)
    A = torch.randn(16384, 8192, device=dev, dtype=torch.bfloat16)
    B = torch.randn(8192, 16384, device=dev, dtype=torch.bfloat16)
    tm, allt, reps = bench(lambda: torch.matmul(A, B), target_ms=20.0, samples=7)
    rep_out["long_bf16"] = {"m": 16384, "n": 16384, "k": 8192, "seconds": tm, "samples": allt,
                            "tflops": 2.0 * 16384 * 16384 * 8192 / tm / 1e12}
    del A, B
    dump(os.path.join(out_dir, "lecture_h200_repeats.json"), rep_out)
    log("long", rep_out["long_bf16"]["tflops"])

    # ---------------- attention: causal and not, host cost ----------------
    from torch.nn.attention import SDPBackend, sdpa_kernel
    bes = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}
    att = {}
    qkv = {T: [torch.randn(1, 16, T, 64, device=dev, dtype=torch.bfloat16) for _ in range(3)]
           for T in (1024, 2048, 4096, 8192)}
    ajobs = [(T, c, be, r) for T in qkv for c in (False, True) for be in bes for r in range(3)]
    random.Random(5).shuffle(ajobs)
    for T, c, be, r in ajobs:
        q, k, v = qkv[T]
        try:
            with sdpa_kernel(bes[be]):
                tm = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=c), target_ms=6, samples=5)[0]
        except Exception as exc:
            tm = repr(exc)[:200]
        att.setdefault(f"{T}|{int(c)}|{be}", []).append(tm)
    host = {}
    q, k, v = (torch.randn(1, 1, 64, 64, device=dev, dtype=torch.bfloat16) for _ in range(3))
    a64 = torch.randn(64, 64, device=dev, dtype=torch.bfloat16)
    calls = {"matmul64": lambda: torch.matmul(a64, a64)}
    for be in bes:
        def f(be=be):
            with sdpa_kernel(bes[be]):
                return F.scaled_dot_product_attention(q, k, v)
        calls[f"sdpa_{be}_ctx"] = f
    calls["sdpa_default"] = lambda: F.scaled_dot_product_attention(q, k, v)
    calls["sdpa_default_causal"] = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
    for name, fn in calls.items():
        row = {}
        try:
            row["loop_s"] = bench(fn, target_ms=6, samples=7)[0]
            row["graph_s"] = graph_time(fn, reps=100)
            fn(); torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(2000):
                fn()
            row["host_only_s"] = (time.perf_counter() - t) / 2000
            torch.cuda.synchronize()
        except Exception as exc:
            row["error"] = repr(exc)[:200]
        host[name] = row
    att_out = {"env": env, "B": 1, "H": 16, "d": 64, "times_s": att, "host_cost": host}
    dump(os.path.join(out_dir, "lecture_h200_attention2.json"), att_out)
    log("attention done", host)

    # ---------------- tricks (numba.cuda, same source as the simulated column) ----------------
    trick_rows = []
    try:
        import simgpu  # noqa: F401  (patches np.row_stack before numba.cuda)
        from simgpu.validate.runner import run_on_gpu
        import lecture_tricks as LT
        for trick, name, kern, grid, block, args in LT.cases():
            r = run_on_gpu(kern, grid, block, args, repeat=50)
            row = {"trick": trick, "name": name, "kernel": kern.__name__, "grid": str(grid), "block": str(block)}
            if r.get("ok"):
                row.update(time_ns=r["time_ns"], times_ns=r["times_ns"], registers=r.get("registers_per_thread"))
                res = r["results"]
                try:
                    if trick == 5:
                        s = int(args[2])
                        row["check"] = bool(np.array_equal(res[1][::s], args[0][::s]))
                    elif trick == 6:
                        ref = args[0].astype(np.float64) @ args[1].astype(np.float64)
                        row["rel_err"] = float(np.linalg.norm(res[2] - ref) / np.linalg.norm(ref))
                    elif trick == 4 and name == "recompute fwd":
                        x = args[0].astype(np.float64)
                        for _ in range(3):
                            x = 1 / (1 + np.exp(-x))
                        row["rel_err"] = float(np.linalg.norm(res[1] - x) / np.linalg.norm(x))
                except Exception as exc:
                    row["check_error"] = repr(exc)[:200]
            else:
                row["error"] = r.get("error")
            trick_rows.append(row)
            log("trick", trick, name, row.get("time_ns"), row.get("error"))
    except Exception as exc:
        trick_rows.append({"error": repr(exc)[:500]})
        log("tricks failed", repr(exc)[:500])
    dump(os.path.join(out_dir, "lecture_h200_tricks.json"), {"env": env, "method": __doc__, "tricks": trick_rows})

    # ---------------- kernel names, after all timing ----------------
    names = {}
    try:
        for s in mids:
            A = torch.randn(s[0], s[2], device=dev, dtype=torch.bfloat16)
            B = torch.randn(s[2], s[1], device=dev, dtype=torch.bfloat16)
            names[f"mid {s}"] = kernels_of(lambda: torch.matmul(A, B))
        for T in (1024, 8192):
            q, k, v = qkv[T]
            for c in (False, True):
                with sdpa_kernel(bes["flash"]):
                    names[f"flash T={T} causal={c}"] = kernels_of(
                        lambda: F.scaled_dot_product_attention(q, k, v, is_causal=c))
    except Exception as exc:
        names["error"] = repr(exc)[:300]
    rep_out["kernel_names"] = names
    rep_out["elapsed_s"] = time.time() - T0
    env["smi_end"] = smi()
    dump(os.path.join(out_dir, "lecture_h200_repeats.json"), rep_out)
    log("done", names)
    # the short table the reply carries
    for n in sizes[::8]:
        tf = [round(x) for x in rep_out["square_bf16"][sizes.index(n)]["tflops"]]
        print(n, tf)
    for r in rep_out["mid_bf16"]:
        print("mid", r["m"], r["n"], r["k"], [round(x) for x in r["tflops"]])


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    main(out)
