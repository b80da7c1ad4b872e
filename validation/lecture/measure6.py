"""Call 6 on the H200: what makes the back-to-back mystery sweep differ from the kernel alone
(the SM clock under the power limit, the host, the launch), a fresh hold-out sweep, and the
efficient attention backend's backward.

    python3 measure6.py $OUT          (from a carried folder; torch only, no simgpu)

Every timed sample carries the SM clock it ran at, read two ways:
  probe  torch.cuda._sleep(C) spins one thread on clock64 for C SM cycles; two lengths (20 k and
         220 k cycles) timed with events right after the sample, the difference of their times
         gives cycles per second without the launch overhead (the power manager moves the clock
         over milliseconds, so the probe sees the clock the sample ended at)
  nvml   pynvml in a thread every ~2 ms: SM clock, power, and the clock-event (throttle)
         reasons, averaged over the sample's wall-clock window (absent if pynvml is missing;
         then nvidia-smi -lms 20 in the background, same fields)

Parts (each saved as soon as it is done):
  diag     22 sizes around the reproducible cliffs of call 4 (square bf16), 3 repeats in one
           random order (seed 6): eager back-to-back torch.matmul (call 4's method: events
           around R calls, ~4 ms a sample, 5 samples) and the same R calls replayed from a CUDA
           graph (no host dispatch), each sample with its clock; then per size a profiled
           burst of 20 calls (CUPTI kernel durations, the `spin_kernel` of a clock probe as the
           marker between sizes)
  sweep    square bf16 N = 64..8192 step 64 (the mystery sweep) and, never measured before,
           N = 80..8144 step 64 (N = 16 mod 64), 3 repeats, every (N, repeat) in one random
           order (seed 7), call 4's eager method, a clock probe after each (N, repeat)
  attn     SDPA flash and efficient, forward and forward + backward, bf16, B 1 H 16 d 64 and
           B 2 H 8 d 128, T 1024..8192 (d 128: to 4096), causal and not; events around R
           calls (~20 ms, 3 samples); then one profiled call of each efficient fwd + bwd
           (kernel names and durations, spin_kernel markers)
-> lecture_h200_call6.json
"""
from __future__ import annotations

import json
import os
import platform
import random
import subprocess
import sys
import threading
import time

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


class Sampler:
    """SM clock (MHz), power (W) and throttle reasons, sampled in a thread."""

    def __init__(self):
        self.rows = []            # (perf_counter, sm_mhz, power_w, reasons)
        self.kind = None
        self._stop = False
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nv = pynvml
            self.h = pynvml.nvmlDeviceGetHandleByIndex(0)
            self.kind = "pynvml"
        except Exception as exc:
            self.nv = None
            self.err = repr(exc)[:200]
            self.kind = "nvidia-smi"
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _reasons(self):
        nv = self.nv
        for fn in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            if hasattr(nv, fn):
                try:
                    return int(getattr(nv, fn)(self.h))
                except Exception:
                    pass
        return -1

    def _run(self):
        if self.nv is not None:
            nv = self.nv
            while not self._stop:
                try:
                    t = time.perf_counter()
                    c = nv.nvmlDeviceGetClockInfo(self.h, nv.NVML_CLOCK_SM)
                    p = nv.nvmlDeviceGetPowerUsage(self.h) / 1000.0
                    self.rows.append((t, c, p, self._reasons()))
                except Exception:
                    pass
                time.sleep(0.002)
        else:
            try:
                proc = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,clocks_event_reasons.active",
                                         "--format=csv,noheader,nounits", "-lms", "20"], stdout=subprocess.PIPE,
                                        text=True)
            except Exception:
                return
            for line in proc.stdout:
                if self._stop:
                    proc.kill()
                    break
                parts = [x.strip() for x in line.split(",")]
                try:
                    r = int(parts[2], 16) if len(parts) > 2 and parts[2].startswith("0x") else -1
                    self.rows.append((time.perf_counter(), float(parts[0]), float(parts[1]), r))
                except Exception:
                    pass

    def window(self, t0, t1):
        sel = [r for r in self.rows[-4000:] if t0 <= r[0] <= t1]
        if not sel:
            return None
        reasons = 0
        for r in sel:
            if r[3] > 0:
                reasons |= r[3]
        return {"n": len(sel), "sm_mhz": sum(r[1] for r in sel) / len(sel),
                "sm_mhz_min": min(r[1] for r in sel), "sm_mhz_max": max(r[1] for r in sel),
                "power_w": sum(r[2] for r in sel) / len(sel), "reasons": reasons}

    def stop(self):
        self._stop = True


def main(out_dir):
    import torch
    import torch.nn.functional as F
    props = torch.cuda.get_device_properties(0)
    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
           "gpu": props.name, "sm_count": props.multi_processor_count,
           "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "smi_start": smi()}
    try:
        import ctypes
        env["cublas_version"] = torch._C._cuda_getCompiledVersion()
    except Exception:
        pass
    sam = Sampler()
    env["sampler"] = sam.kind
    log("env", env)
    path = os.path.join(out_dir, "lecture_h200_call6.json")
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
        return (C2 - C1) / dt / 1e6 if dt > 0 else None       # MHz

    def reps_for(fn, target_ms):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        s, e = ev(), ev()
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        t1 = max(s.elapsed_time(e), 1e-3)
        return int(min(2000, max(1, target_ms / t1)))

    def eager(fn, reps, samples):
        out = []
        for _ in range(samples):
            s, e = ev(), ev()
            w0 = time.perf_counter()
            s.record()
            for _ in range(reps):
                fn()
            e.record()
            torch.cuda.synchronize()
            w1 = time.perf_counter()
            mhz = probe()
            out.append({"s": s.elapsed_time(e) / reps * 1e-3, "probe_mhz": mhz, "nvml": sam.window(w0, w1)})
        return out

    def graphed(fn, reps, samples):
        st = torch.cuda.Stream()
        st.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(st):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(st)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(reps):
                fn()
        g.replay()
        torch.cuda.synchronize()
        out = []
        for _ in range(samples):
            s, e = ev(), ev()
            w0 = time.perf_counter()
            s.record(); g.replay(); e.record()
            torch.cuda.synchronize()
            w1 = time.perf_counter()
            out.append({"s": s.elapsed_time(e) / reps * 1e-3, "probe_mhz": probe(), "nvml": sam.window(w0, w1)})
        del g
        return out

    # warm-up: clocks up, as calls 4 and 5
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t = time.time()
    while time.time() - t < 1.5:
        for _ in range(10):
            torch.matmul(a, a)
        torch.cuda.synchronize()
    del a
    env["smi_after_warmup"] = smi()
    env["probe_idle_mhz"] = [probe() for _ in range(3)]
    log("probe after warm-up", env["probe_idle_mhz"])

    # ---------------- diag ----------------
    D = [1600, 1664, 1728, 1792, 1856, 2432, 2496, 2560, 2624, 3136, 3200, 3264, 3392, 3456, 3520, 3584,
         4544, 4608, 4672, 4736, 6144, 8192]
    order = [(n, r) for n in D for r in range(3)]
    random.Random(6).shuffle(order)
    diag = {str(n): {"eager": [], "graph": []} for n in D}
    res["diag"] = diag
    for i, (n, r) in enumerate(order):
        A = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        fn = lambda A=A, B=B: torch.matmul(A, B)  # noqa: E731
        R = reps_for(fn, 4.0)
        row = {"rep": r, "order": i, "reps": R}
        row["eager"] = eager(fn, R, 5)
        try:
            row["graph"] = graphed(fn, R, 5)
        except Exception as exc:
            row["graph_error"] = repr(exc)[:200]
        diag[str(n)].setdefault("runs", []).append(row)
        del A, B
    torch.cuda.empty_cache()
    save()
    log("diag timed")

    # profiled bursts of 20 calls per size, spin_kernel markers
    try:
        from torch.profiler import ProfilerActivity, profile
        tens = {n: (torch.randn(n, n, device="cuda", dtype=torch.bfloat16),
                    torch.randn(n, n, device="cuda", dtype=torch.bfloat16)) for n in D}
        for n in D:
            torch.matmul(*tens[n])
        torch.cuda.synchronize()
        tmp = os.path.join(out_dir, "_trace6.json")
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for n in D:
                torch.cuda._sleep(1000)
                for _ in range(20):
                    torch.matmul(*tens[n])
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
                cur.append({"name": e["name"][:90], "ts": e["ts"], "dur_us": e.get("dur")})
        for n, g in zip(D, groups):
            diag[str(n)]["profiled"] = g
        del tens
        torch.cuda.empty_cache()
    except Exception as exc:
        res["diag_profile_error"] = repr(exc)[:300]
    save()
    log("diag profiled")

    # ---------------- sweep ----------------
    sizes = sorted(set(range(64, 8193, 64)) | set(range(80, 8145, 64)))
    order = [(n, r) for n in sizes for r in range(3)]
    random.Random(7).shuffle(order)
    sweep = {}
    res["sweep"] = sweep
    for i, (n, r) in enumerate(order):
        A = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        fn = lambda A=A, B=B: torch.matmul(A, B)  # noqa: E731
        R = reps_for(fn, 4.0)
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
        srt = sorted(out)
        sweep.setdefault(str(n), []).append({"rep": r, "order": i, "reps": R, "seconds": srt[2], "samples": out,
                                             "probe_mhz": mhz, "nvml": sam.window(w0, w1)})
        del A, B
        if i % 100 == 99:
            save()
            log("sweep", i + 1, "of", len(order))
    torch.cuda.empty_cache()
    save()
    log("sweep done")

    # ---------------- attention ----------------
    from torch.nn.attention import SDPBackend, sdpa_kernel
    bes = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION}
    att = []
    res["attn"] = att
    shapes = [(1, 16, T, 64) for T in (1024, 2048, 4096, 8192)] + [(2, 8, T, 128) for T in (1024, 2048, 4096)]
    prof_ops = []
    for (Bb, H, T, d) in shapes:
        q, k, v = (torch.randn(Bb, H, T, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        g = torch.randn(Bb, H, T, d, device="cuda", dtype=torch.bfloat16)
        for be in bes:
            for c in (False, True):
                def fwd(q=q, k=k, v=v, be=be, c=c):
                    with torch.no_grad(), sdpa_kernel(bes[be]):
                        return F.scaled_dot_product_attention(q, k, v, is_causal=c)

                def fb(q=q, k=k, v=v, g=g, be=be, c=c):
                    with sdpa_kernel(bes[be]):
                        o = F.scaled_dot_product_attention(q, k, v, is_causal=c)
                    o.backward(g)
                    q.grad = k.grad = v.grad = None
                row = {"backend": be, "B": Bb, "H": H, "T": T, "d": d, "causal": c, "dtype": "bf16"}
                for tag, fn in (("fwd", fwd), ("fwd_bwd", fb)):
                    try:
                        R = reps_for(fn, 20.0)
                        smp = eager(fn, R, 3)
                        row[tag + "_s"] = sorted(x["s"] for x in smp)[1]
                        row[tag + "_samples"] = smp
                        row[tag + "_reps"] = R
                    except Exception as exc:
                        row[tag + "_error"] = repr(exc)[:200]
                att.append(row)
                if be == "efficient":
                    prof_ops.append((f"B={Bb} H={H} T={T} d={d} causal={int(c)}", fb))
                log("attn", be, Bb, H, T, d, c, row.get("fwd_s"), row.get("fwd_bwd_s"))
        save()
    try:
        from torch.profiler import ProfilerActivity, profile
        tmp = os.path.join(out_dir, "_trace6a.json")
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _, fn in prof_ops:
                torch.cuda._sleep(1000)
                fn()
                torch.cuda.synchronize()
            torch.cuda._sleep(1000)
            torch.cuda.synchronize()
        prof.export_chrome_trace(tmp)
        tr = json.load(open(tmp))
        os.remove(tmp)
        evs = sorted([e for e in tr.get("traceEvents", []) if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")],
                     key=lambda e: e["ts"])
        groups, cur = [], None
        for e in evs:
            if "spin" in e["name"]:
                cur = []
                groups.append(cur)
            elif cur is not None:
                a = e.get("args", {})
                cur.append({"name": e["name"][:120], "dur_us": e.get("dur"), "grid": a.get("grid"),
                            "block": a.get("block"), "registers per thread": a.get("registers per thread"),
                            "shared memory": a.get("shared memory")})
        res["attn_kernels"] = {tag: g for (tag, _), g in zip(prof_ops, groups)}
    except Exception as exc:
        res["attn_profile_error"] = repr(exc)[:300]
    env["smi_end"] = smi()
    sam.stop()
    res["elapsed_s"] = time.time() - T0
    save()
    log("done")

    # short table for the reply
    import statistics as st
    for n in D:
        runs = diag[str(n)].get("runs", [])
        e = st.median(x["s"] for r in runs for x in r["eager"]) * 1e6
        gs = [x["s"] for r in runs for x in r.get("graph", [])]
        gm = st.median(gs) * 1e6 if gs else float("nan")
        mh = st.median(x["probe_mhz"] for r in runs for x in r["eager"] if x["probe_mhz"])
        pr = [x["dur_us"] for x in diag[str(n)].get("profiled", []) if "nvjet" in x["name"]]
        print(n, f"eager {e:.1f} graph {gm:.1f} prof {st.median(pr) if pr else 0:.1f} us, probe {mh:.0f} MHz")


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    main(out)
