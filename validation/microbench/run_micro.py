#!/usr/bin/env python3
"""Run the calibration microbenchmarks (validation/microbench/benches.py).

  python3 validation/microbench/run_micro.py --out DIR --mode time [--only REGEX]
  ncu --clock-control none --kernel-name regex:mb_ --metrics "$(cat DIR/metrics_micro.txt)" -o DIR/micro \
      python3 validation/microbench/run_micro.py --out DIR --mode profile

time:    event timing (median; flushed and warm, see validation/_common.py Timer) of every bench, plus
         launch-overhead measurements (back-to-back launches, host wall clock) and a device-to-device
         memcpy; registers and SASS of every bench kernel. -> DIR/micro_time.json, DIR/sass/mb_*.sass
profile: every bench launched once, in order -> DIR/micro_profile_order.json (maps ncu rows to names).
validation/microbench/analyze.py turns both into validation/data/h200_microbench.json.
"""
import argparse
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import _common as C  # noqa: E402
import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", choices=("time", "profile"), default="time")
    ap.add_argument("--only", default=None)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--budget", type=float, default=0.6)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    sass_dir = os.path.join(a.out, "sass")
    os.makedirs(sass_dir, exist_ok=True)

    from numba import cuda
    sys.path.insert(0, HERE)
    import benches as MB

    benches = [b for b in MB.BENCHES if not a.only or re.search(a.only, b["name"])]
    res_path = os.path.join(a.out, "micro_time.json" if a.mode == "time" else "micro_profile_order.json")
    res = {"provenance": C.provenance(), "mode": a.mode}
    if a.mode == "time":
        res["benches"] = {}
        res["clocks_before"] = C._run("nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,power.draw,"
                                      "temperature.gpu,pstate --format=csv")
    else:
        res["launches"] = []
        res["errors"] = {}
    C.write_json(res_path, res)
    ctx = MB.Ctx()
    timer = C.Timer() if a.mode == "time" else None
    jitted = {}
    t_start = time.time()
    for bi, b in enumerate(benches):
        name = b["name"]
        rec = {"group": b["group"], "grid": b["grid"], "block": b["block"], "params": b["params"],
               "kernel": b["kernel"].__name__, "jit": b.get("jit", {})}
        t0 = time.time()
        try:
            jopts = b.get("jit", {})
            key = (b["kernel"].__name__, tuple(sorted(jopts.items())))
            if key not in jitted:
                jitted[key] = cuda.jit(**jopts)(b["kernel"]) if jopts else cuda.jit(b["kernel"])
            disp = jitted[key]
            dargs = b["setup"](ctx)
            cuda.synchronize()
            ker, at = C.compile_for(disp, dargs)
            rec["resources"] = C.resources(ker)
            cfg = disp[tuple(b["grid"]), tuple(b["block"])]

            def launch():
                cfg(*dargs)

            if a.mode == "profile":
                launch()
                cuda.synchronize()
                idx = len(res["launches"])
                res["launches"].append({"index": idx, "name": name, "kernel": b["kernel"].__name__})
                C.log(f"PROFILED {idx} {name}")
                C.write_json(res_path, res)
                continue
            launch()
            cuda.synchronize()
            sass, how = C.get_sass(ker)
            if sass:
                fn = f"mb_{name}.sass"
                with open(os.path.join(sass_dir, fn), "w") as f:
                    f.write(sass)
                rec["sass_opcodes"] = C.sass_opcodes(sass)
            rec["sass_method"] = how
            rec["timing"] = timer.measure(launch, reps=a.reps, budget_s=a.budget)
            if b["group"] == "launch":
                rec["launch_overhead"] = launch_overhead(cuda, launch, timer)
            C.log(f"[{bi + 1}/{len(benches)}] {name}: flushed {rec['timing']['flushed']['median_us']:.2f} us, "
                  f"warm {rec['timing']['warm']['median_us']:.2f} us, regs {rec['resources'].get('regs_per_thread')}"
                  f" ({time.time() - t0:.1f}s)")
        except Exception as e:  # noqa: BLE001
            rec["error"] = C.fmt_exc(e)
            C.log(f"!! {name} FAILED: {e!r}")
            if a.mode == "profile":
                res["errors"][name] = rec["error"]
        finally:
            dargs = cfg = None
        if a.mode == "time":
            res["benches"][name] = rec
            C.write_json(res_path, res)
    if a.mode == "time":
        try:
            res["memcpy_d2d"] = memcpy_d2d(cuda)
            C.log("memcpy_d2d", res["memcpy_d2d"])
        except Exception as e:  # noqa: BLE001
            res["memcpy_d2d"] = {"error": C.fmt_exc(e)}
        res["clocks_after"] = C._run("nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,power.draw,"
                                     "temperature.gpu,pstate --format=csv")
        res["elapsed_s"] = round(time.time() - t_start, 1)
        C.write_json(res_path, res)
    C.log(f"done in {time.time() - t_start:.1f}s -> {res_path}")


def launch_overhead(cuda, launch, timer):
    """Back-to-back launches between two events (GPU throughput incl. host submission) and host
    wall-clock per launch; the single-launch GPU duration is in `timing`."""
    out = {}
    s, e = cuda.event(timing=True), cuda.event(timing=True)
    for n in (100, 1000):
        vals = []
        for rep in range(5):
            timer.spin()
            s.record()
            for _ in range(n):
                launch()
            e.record()
            e.synchronize()
            vals.append(cuda.event_elapsed_time(s, e) * 1000.0 / n)
        out[f"events_us_per_launch_{n}_back_to_back"] = C.stats(vals)
    vals = []
    for rep in range(5):
        cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(1000):
            launch()
        t1 = time.perf_counter()
        cuda.synchronize()
        vals.append((t1 - t0) * 1e6 / 1000)
    out["host_us_per_launch_call"] = C.stats(vals)
    vals = []
    for rep in range(50):
        cuda.synchronize()
        t0 = time.perf_counter()
        launch()
        cuda.synchronize()
        vals.append((time.perf_counter() - t0) * 1e6)
    out["host_us_launch_plus_sync"] = C.stats(vals)
    return out


def memcpy_d2d(cuda):
    n = 1024 * 1024 * 1024 // 4
    a = cuda.device_array(n, np.float32)
    b = cuda.device_array(n, np.float32)
    a.copy_to_device(np.ones(n, np.float32))
    s, e = cuda.event(timing=True), cuda.event(timing=True)
    vals = []
    for rep in range(12):
        s.record()
        b.copy_to_device(a)
        e.record()
        e.synchronize()
        vals.append(cuda.event_elapsed_time(s, e) * 1000.0)
    st = C.stats(vals[2:])
    st["bytes_moved"] = 2 * 4 * n
    st["GBps_read_plus_write"] = 2 * 4 * n / (st["median_us"] * 1e-6) / 1e9
    return st


if __name__ == "__main__":
    main()
