#!/usr/bin/env python3
"""Loop-overhead microbenchmark for the timing model (run on the GPU machine).

  python3 validation/timing_microbench.py --out DIR

Question: how many SASS instructions does a numba `for it in range(n)` loop add per iteration
beyond its body, for a runtime int32 / int64 trip count and for a while loop?  Method: issue-
bound kernels (4 full-occupancy waves of 1056 blocks x 256 threads) whose loop body is k
independent FFMA chains, k = 4 and k = 8, at the same trip count; FFMA issues at one warp
instruction per SMSP per cycle (validation/data/h200_microbench.json, issue_fma_f32), so
    time(k) = c * (k + overhead)   =>   overhead = (8 t4 - 4 t8) / (t8 - t4)
The SASS of each kernel is saved too.  Results: DIR/timing_microbench.json.
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402,F401  (patches np.row_stack before numba.cuda is imported)

ITERS = 4096
BLOCKS = 132 * 8 * 4
BLOCK = 256


def make_kernels(cuda):
    f32 = np.float32

    @cuda.jit
    def r32_k4(x, out, n):
        i = cuda.grid(1)
        a0 = x[i]
        a1 = a0 + f32(1)
        a2 = a0 + f32(2)
        a3 = a0 + f32(3)
        for it in range(n):
            a0 = a0 * f32(0.9999) + f32(0.0001)
            a1 = a1 * f32(0.9999) + f32(0.0001)
            a2 = a2 * f32(0.9999) + f32(0.0001)
            a3 = a3 * f32(0.9999) + f32(0.0001)
        out[i] = a0 + a1 + a2 + a3

    @cuda.jit
    def r32_k8(x, out, n):
        i = cuda.grid(1)
        a0 = x[i]
        a1 = a0 + f32(1)
        a2 = a0 + f32(2)
        a3 = a0 + f32(3)
        a4 = a0 + f32(4)
        a5 = a0 + f32(5)
        a6 = a0 + f32(6)
        a7 = a0 + f32(7)
        for it in range(n):
            a0 = a0 * f32(0.9999) + f32(0.0001)
            a1 = a1 * f32(0.9999) + f32(0.0001)
            a2 = a2 * f32(0.9999) + f32(0.0001)
            a3 = a3 * f32(0.9999) + f32(0.0001)
            a4 = a4 * f32(0.9999) + f32(0.0001)
            a5 = a5 * f32(0.9999) + f32(0.0001)
            a6 = a6 * f32(0.9999) + f32(0.0001)
            a7 = a7 * f32(0.9999) + f32(0.0001)
        out[i] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7

    @cuda.jit
    def w32_k4(x, out, n):
        i = cuda.grid(1)
        a0 = x[i]
        a1 = a0 + f32(1)
        a2 = a0 + f32(2)
        a3 = a0 + f32(3)
        it = 0
        while it < n:
            a0 = a0 * f32(0.9999) + f32(0.0001)
            a1 = a1 * f32(0.9999) + f32(0.0001)
            a2 = a2 * f32(0.9999) + f32(0.0001)
            a3 = a3 * f32(0.9999) + f32(0.0001)
            it += 1
        out[i] = a0 + a1 + a2 + a3

    @cuda.jit
    def w32_k8(x, out, n):
        i = cuda.grid(1)
        a0 = x[i]
        a1 = a0 + f32(1)
        a2 = a0 + f32(2)
        a3 = a0 + f32(3)
        a4 = a0 + f32(4)
        a5 = a0 + f32(5)
        a6 = a0 + f32(6)
        a7 = a0 + f32(7)
        it = 0
        while it < n:
            a0 = a0 * f32(0.9999) + f32(0.0001)
            a1 = a1 * f32(0.9999) + f32(0.0001)
            a2 = a2 * f32(0.9999) + f32(0.0001)
            a3 = a3 * f32(0.9999) + f32(0.0001)
            a4 = a4 * f32(0.9999) + f32(0.0001)
            a5 = a5 * f32(0.9999) + f32(0.0001)
            a6 = a6 * f32(0.9999) + f32(0.0001)
            a7 = a7 * f32(0.9999) + f32(0.0001)
            it += 1
        out[i] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7

    return {"range_k4": r32_k4, "range_k8": r32_k8, "while_k4": w32_k4, "while_k8": w32_k8}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    from numba import cuda
    ks = make_kernels(cuda)
    n = BLOCKS * BLOCK
    x = cuda.to_device(np.random.default_rng(0).random(n, dtype=np.float32))
    out = cuda.device_array(n, np.float32)
    s, e = cuda.event(timing=True), cuda.event(timing=True)
    res = {"method": __doc__, "iters": ITERS, "blocks": BLOCKS, "block": BLOCK, "kernels": {}}
    for name, k in ks.items():
        for dt in (np.int32, np.int64):
            key = f"{name}_{np.dtype(dt).name}"
            arg = dt(ITERS)
            k[BLOCKS, BLOCK](x, out, arg)
            cuda.synchronize()
            ts = []
            for _ in range(7):
                s.record()
                k[BLOCKS, BLOCK](x, out, arg)
                e.record()
                e.synchronize()
                ts.append(cuda.event_elapsed_time(s, e) * 1000.0)
            rec = {"median_us": float(np.median(ts)), "all_us": ts}
            try:
                sass = k.inspect_sass()
                if isinstance(sass, dict):
                    sass = list(sass.values())[-1]
                with open(os.path.join(a.out, f"{key}.sass"), "w") as f:
                    f.write(sass)
                rec["sass_lines"] = sass.count("\n")
                rec["ffma"] = sass.count("FFMA")
            except Exception as ex:  # noqa: BLE001
                rec["sass_error"] = repr(ex)[:300]
            res["kernels"][key] = rec
            print(key, rec["median_us"], flush=True)
    for loop in ("range", "while"):
        for dt in ("int32", "int64"):
            t4 = res["kernels"][f"{loop}_k4_{dt}"]["median_us"]
            t8 = res["kernels"][f"{loop}_k8_{dt}"]["median_us"]
            ov = (8 * t4 - 4 * t8) / (t8 - t4)
            res[f"overhead_per_iteration_{loop}_{dt}"] = ov
            print(f"{loop} {dt}: overhead {ov:.2f} instructions per iteration", flush=True)
    with open(os.path.join(a.out, "timing_microbench.json"), "w") as f:
        json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
