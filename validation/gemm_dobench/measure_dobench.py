"""GEMM through torch.matmul (cuBLAS) on the H200, timed as a user times it: triton.testing.do_bench
(L2 flushed by a 256 MB zero_ before every call, CUDA events around the call alone, median).

    PYTHONUNBUFFERED=1 python3 measure_dobench.py $OUT

Parts (in this order; JSON rewritten after each, so a cut-off run keeps what it finished):
  env        card, driver, clocks, torch / CUDA / cuBLAS / triton versions, date
  micro      parameters (no target uses these shapes): bf16/fp16/tf32/fp32 at 16384x16384x8192 (fp32
             8192x8192x4096), the align2 / align1 fallbacks at N = 8190 / 8191, a cold GEMV curve
             (1 x 8192 @ 8192 x n, n not 8192), a 64^3 call (the floor), the flush alone
  square_a   square bf16 N = 128..8192 step 64, ascending, do_bench defaults (warmup 25, rep 100 ms)
  step1_a    square bf16 N = 4000..4160 step 1
  rect       M in {1..4096} x 12 (N, K) LLM pairs x {bf16, fp16, fp32}; vocab heads 8192 x V x 768
  decode     W(8192x8192) @ X(8192xB) (M 8192, N = B) and x(Bx8192) @ W (M = B), B = 1..256
  waves      M x 4096 x 4096 and M x 8192 x 2048, M = 128..8192 step 128
  square_b/c the square sweep again, each in its own random order (seeds 24, 25)
  step1_b    square bf16 N = 6080..6200 step 1
  extra      precisions at 8192^3 (fp32, tf32, bf16, fp16, fp8 _scaled_mm), naive fp8 quantise,
             SDPA flash / math B1 H16 d64 T 1024..8192
  profile    torch.profiler: cuBLAS kernel name, grid, block, cold-L2 kernel duration for every
             rect / decode / waves shape and every square and step-1 size (flush, spin marker, call)
Every do_bench point also records NVML's SM clock, power and clock-event reasons read right after it.
"""
from __future__ import annotations

import json
import os
import platform
import random
import subprocess
import sys
import time

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
HARD_STOP = float(os.environ.get("HARD_STOP_S", "400"))      # stop timing parts after this
LOG = open(os.path.join(OUT, "log.txt"), "a")


def log(*a):
    s = f"[{time.time() - T0:6.1f}s] " + " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n")
    LOG.flush()


import torch  # noqa: E402
import triton  # noqa: E402
from triton.testing import do_bench  # noqa: E402

DEV = "cuda"
R = {"doc": __doc__, "env": {}, "parts_done": [], "parts_time_s": {}}

try:
    import pynvml
    pynvml.nvmlInit()
    NV = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception as exc:      # pragma: no cover
    pynvml, NV = None, None
    R["env"]["nvml_error"] = repr(exc)


def nvml():
    if NV is None:
        return None
    try:
        sm = pynvml.nvmlDeviceGetClockInfo(NV, pynvml.NVML_CLOCK_SM)
        pw = pynvml.nvmlDeviceGetPowerUsage(NV) / 1000.0
        try:
            rs = pynvml.nvmlDeviceGetCurrentClocksEventReasons(NV)
        except Exception:
            rs = pynvml.nvmlDeviceGetCurrentClocksThrottleReasons(NV)
        return [sm, round(pw, 1), int(rs)]
    except Exception:
        return None


def save():
    R["elapsed_s"] = time.time() - T0
    with open(os.path.join(OUT, "gemm_dobench.json"), "w") as f:
        json.dump(R, f)


def smi(q):
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv"], capture_output=True,
                              text=True, timeout=20).stdout.strip()
    except Exception as exc:
        return repr(exc)


def env():
    props = torch.cuda.get_device_properties(0)
    e = R["env"]
    e.update({"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
              "triton": triton.__version__, "gpu": props.name, "sm_count": props.multi_processor_count,
              "l2_bytes": getattr(props, "L2_cache_size", None),
              "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
              "allow_tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
              "bf16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
              "fp16_reduced_precision_reduction": torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
              "nvidia_smi": smi("name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,"
                                "power.draw,power.limit,temperature.gpu,ecc.mode.current,persistence_mode")})
    try:
        import ctypes
        lib = ctypes.CDLL("libcublas.so.13")
        v = [ctypes.c_int() for _ in range(3)]
        for i in range(3):
            lib.cublasGetProperty(i, ctypes.byref(v[i]))
        e["cublas"] = ".".join(str(x.value) for x in v)
    except Exception as exc:
        e["cublas"] = f"unknown ({exc!r})"[:160]
    try:
        e["cublaslt_version"] = torch._C._cuda_getCompiledVersion()
    except Exception:
        pass
    log("env", e)


DT = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32, "tf32": torch.float32}
GEN = torch.Generator(device=DEV)
GEN.manual_seed(1234)
SCALE = [1.0]        # multiplies warmup / rep when a part runs late


def operands(m, n, k, dt):
    a = torch.randn(m, k, device=DEV, generator=GEN).to(DT[dt])
    b = torch.randn(k, n, device=DEV, generator=GEN).to(DT[dt])
    return a, b


def bench(fn, warmup, rep):
    w, r = max(1, warmup * SCALE[0]), max(2, rep * SCALE[0])
    ts = do_bench(fn, warmup=w, rep=r, return_mode="all")
    clk = nvml()
    ts = sorted(ts)
    n = len(ts)

    def q(p):
        return ts[min(n - 1, int(p * (n - 1) + 0.5))]
    med = ts[n // 2] if n % 2 else 0.5 * (ts[n // 2 - 1] + ts[n // 2])
    return {"ms": med, "mean_ms": sum(ts) / n, "q10": q(0.1), "q20": q(0.2), "q80": q(0.8), "q90": q(0.9),
            "min": ts[0], "n": n, "nvml": clk}


def mm_point(m, n, k, dt, warmup, rep, **extra):
    tf32 = dt == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a, b = operands(m, n, k, dt)
    r = bench(lambda: torch.matmul(a, b), warmup, rep)
    torch.backends.cuda.matmul.allow_tf32 = False
    r.update({"m": m, "n": n, "k": k, "dtype": dt, "tflops": 2.0 * m * n * k / (r["ms"] * 1e-3) / 1e12})
    r.update(extra)
    del a, b
    return r


def part(name, fn, allowance_s):
    """Run one part; if it is projected to overrun, SCALE shrinks the repetitions of the rest of it."""
    if time.time() - T0 > HARD_STOP:
        log(f"SKIP {name}: past the hard stop")
        R.setdefault("skipped", []).append(name)
        save()
        return
    t = time.time()
    log(f"== {name} (allowance {allowance_s:.0f} s)")
    try:
        fn(t, allowance_s)
    except Exception as exc:
        import traceback
        log(f"ERROR in {name}: {exc!r}")
        R.setdefault("errors", {})[name] = traceback.format_exc()[-2000:]
    SCALE[0] = 1.0
    R["parts_time_s"][name] = time.time() - t
    R["parts_done"].append(name)
    log(f"== {name} done in {time.time() - t:.1f} s")
    save()


def pace(t_start, allowance, done, total):
    """Shrink SCALE when the part is behind its allowance."""
    if done < 3:
        return
    el = time.time() - t_start
    proj = el / done * total
    if proj > allowance and SCALE[0] > 0.1:
        SCALE[0] = max(0.1, SCALE[0] * allowance / proj)
        log(f"   pace: projected {proj:.0f} s > {allowance:.0f}: scale {SCALE[0]:.2f}")


def sweep(points, t0, allow, warmup, rep, key):
    out = []
    for i, (m, n, k, dt, extra) in enumerate(points):
        out.append(mm_point(m, n, k, dt, warmup, rep, **extra))
        pace(t0, allow, i + 1, len(points))
        if i % 32 == 0 or i == len(points) - 1:
            r = out[-1]
            log(f"   {key} {i + 1}/{len(points)} {m}x{n}x{k} {dt}: {r['ms'] * 1e3:.1f} us "
                f"{r['tflops']:.0f} TF/s n={r['n']} nvml={r['nvml']}")
    R[key] = out
    return out


# ------------------------------------------------------------------------------------------- parts
def p_micro(t0, allow):
    mi = {}
    cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int, device=DEV)
    mi["flush_alone"] = bench(lambda: cache.zero_(), 10, 50)
    mi["rates"] = [mm_point(16384, 16384, 8192, dt, 25, 200) for dt in ("bf16", "fp16", "tf32")]
    mi["rates"].append(mm_point(8192, 8192, 4096, "fp32", 25, 200))
    mi["rates"].append(mm_point(4096, 4096, 4096, "fp32", 25, 100))
    mi["fallback"] = [mm_point(n, n, n, dt, 25, 200) for dt in ("bf16", "fp16") for n in (8190, 8191)]
    mi["fallback"].append(mm_point(8191, 8191, 8191, "tf32", 25, 200))
    mi["fallback"].append(mm_point(8191, 8191, 8191, "fp32", 25, 200))
    mi["gemv"] = [mm_point(1, n, 8192, "bf16", 10, 50) for n in (512, 1024, 2048, 4096, 6144, 12288, 16384, 28672)]
    mi["gemv"] += [mm_point(n, 1, 8192, "bf16", 10, 50) for n in (4096, 12288, 28672)]
    mi["floor"] = [mm_point(64, 64, 64, dt, 10, 50) for dt in ("bf16", "fp32")]
    mi["floor"].append(mm_point(256, 256, 256, "bf16", 10, 50))
    # a copy of a big buffer (bytes read + written) for the cold streaming ceiling
    x = torch.empty(2 ** 30, dtype=torch.uint8, device=DEV)
    y = torch.empty_like(x)
    r = bench(lambda: y.copy_(x), 10, 100)
    r["bytes"] = 2 * 2 ** 30
    mi["copy_1GiB"] = r
    del x, y, cache
    R["micro"] = mi
    for k, v in mi.items():
        if isinstance(v, list):
            for r in v:
                log(f"   micro {k} {r['m']}x{r['n']}x{r['k']} {r['dtype']}: {r['ms'] * 1e3:.1f} us "
                    f"{r['tflops']:.1f} TF/s nvml={r['nvml']}")
        else:
            log(f"   micro {k}: {v['ms'] * 1e3:.1f} us nvml={v['nvml']}")


SQUARE = list(range(128, 8193, 64))


def p_square(key, seed):
    def f(t0, allow):
        ns = list(SQUARE)
        if seed is not None:
            random.Random(seed).shuffle(ns)
        pts = [(n, n, n, "bf16", {"order": i}) for i, n in enumerate(ns)]
        out = sweep(pts, t0, allow, 25, 100, key)
        out.sort(key=lambda r: r["n"])
    return f


def p_step1(key, lo, hi):
    def f(t0, allow):
        pts = [(n, n, n, "bf16", {}) for n in range(lo, hi + 1)]
        sweep(pts, t0, allow, 10, 50, key)
    return f


MS = (1, 2, 4, 8, 16, 32, 64, 128, 512, 4096)
# (N, K); held-out = odd index (rule fixed before the run)
NK = ((4096, 4096), (11008, 4096), (4096, 11008), (32000, 4096), (50257, 768), (30522, 768),
      (4099, 4096), (32001, 4096), (3072, 768), (768, 3072), (1000, 1500), (14336, 4096))


def p_rect(t0, allow):
    pts = []
    for j, (n, k) in enumerate(NK):
        for dt in ("bf16", "fp16", "fp32"):
            for m in MS:
                pts.append((m, n, k, dt, {"pair": j, "heldout": j % 2 == 1}))
    for dt in ("bf16", "fp16"):
        for v in (50257, 50304):
            pts.append((8192, v, 768, dt, {"vocab": True, "heldout": True}))
    sweep(pts, t0, allow, 10, 40, "rect")


def p_decode(t0, allow):
    pts = [(8192, b, 8192, "bf16", {"form": "W@X"}) for b in range(1, 257)]
    pts += [(b, 8192, 8192, "bf16", {"form": "x@W"}) for b in range(1, 257)]
    sweep(pts, t0, allow, 10, 40, "decode")


def p_waves(t0, allow):
    pts = [(m, 4096, 4096, "bf16", {"heldout": True}) for m in range(128, 8193, 128)]
    pts += [(m, 8192, 2048, "bf16", {"heldout": False}) for m in range(128, 8193, 128)]
    sweep(pts, t0, allow, 10, 40, "waves")


def p_extra(t0, allow):
    ex = {}
    ex["precision"] = [mm_point(8192, 8192, 8192, dt, 25, 100) for dt in ("fp32", "tf32", "bf16", "fp16")]
    try:
        a = torch.randn(8192, 8192, device=DEV).to(torch.float8_e4m3fn)
        w = torch.randn(8192, 8192, device=DEV).to(torch.float8_e4m3fn)
        one = torch.tensor(1.0, device=DEV)
        r = bench(lambda: torch._scaled_mm(a, w.t(), one, one, out_dtype=torch.bfloat16), 25, 100)
        r["what"] = "fp8_e4m3 _scaled_mm 8192^3"
        ex["fp8"] = r
        xa = torch.randn(8192, 8192, device=DEV).to(torch.bfloat16)

        def quant():
            amax = xa.abs().max().float()
            s = 448.0 / amax
            return (xa * s).to(torch.float8_e4m3fn)
        r = bench(quant, 10, 50)
        r["what"] = "naive per-tensor fp8 quantise of 8192x8192 bf16"
        ex["quantize"] = r
        del a, w, xa
    except Exception as exc:
        ex["fp8_error"] = repr(exc)
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    att = []
    for T in (1024, 2048, 4096, 8192):
        q, k, v = (torch.randn(1, 16, T, 64, device=DEV, dtype=torch.bfloat16) for _ in range(3))
        for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("math", SDPBackend.MATH)):
            with sdpa_kernel(be):
                r = bench(lambda: F.scaled_dot_product_attention(q, k, v), 10, 50)
            r.update({"T": T, "backend": name})
            att.append(r)
            log(f"   attention {name} T={T}: {r['ms'] * 1e3:.1f} us")
        del q, k, v
        torch.cuda.empty_cache()
    ex["attention"] = att
    R["extra"] = ex
    for r in ex["precision"]:
        log(f"   precision {r['dtype']}: {r['ms']:.3f} ms")


def p_profile(t0, allow):
    from torch.profiler import ProfilerActivity, profile
    shapes = []
    for key in ("rect", "decode", "waves"):
        for r in R.get(key, []):
            shapes.append((r["m"], r["n"], r["k"], r["dtype"]))
    for n in SQUARE:
        shapes.append((n, n, n, "bf16"))
    for key in ("step1_a", "step1_b"):
        for r in R.get(key, []):
            shapes.append((r["m"], r["n"], r["k"], "bf16"))
    seen, uniq = set(), []
    for s in shapes:
        if s not in seen:
            seen.add(s)
            uniq.append(s)
    cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int, device=DEV)
    out = []
    chunk = 200
    for c0 in range(0, len(uniq), chunk):
        if time.time() - t0 > allow or time.time() - T0 > HARD_STOP + 60:
            log(f"   profile: stopping at {c0}/{len(uniq)} (time)")
            break
        part_shapes = uniq[c0:c0 + chunk]
        ops = []
        for (m, n, k, dt) in part_shapes:
            torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
            a, b = operands(m, n, k, dt)
            torch.matmul(a, b)            # warm (heuristic cache, handle)
            ops.append((a, b, dt))
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for a, b, dt in ops:
                torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
                torch.cuda._sleep(2000)
                cache.zero_()
                torch.matmul(a, b)
            torch.cuda._sleep(2000)
            torch.cuda.synchronize()
        torch.backends.cuda.matmul.allow_tf32 = False
        tmp = os.path.join(OUT, "_trace.json")
        prof.export_chrome_trace(tmp)
        with open(tmp) as f:
            tr = json.load(f)
        os.remove(tmp)
        evs = [e for e in tr.get("traceEvents", []) if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")]
        evs.sort(key=lambda e: e["ts"])
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
                        "block": a.get("block"), "regs": a.get("registers per thread"),
                        "smem": a.get("shared memory")})
        if cur:
            groups.append(cur)
        if len(groups) != len(part_shapes):
            log(f"   profile: {len(groups)} groups for {len(part_shapes)} shapes (chunk {c0})")
        for s, g in zip(part_shapes, groups):
            out.append({"m": s[0], "n": s[1], "k": s[2], "dtype": s[3], "kernels": g})
        del ops
        torch.cuda.empty_cache()
        log(f"   profile {min(c0 + chunk, len(uniq))}/{len(uniq)}; e.g. {out[-1]['m']}x{out[-1]['n']}x{out[-1]['k']} "
            f"{out[-1]['dtype']}: {[x['name'][:60] for x in out[-1]['kernels']]}")
        R["profile"] = out
        save()
    del cache
    R["profile"] = out


def main():
    env()
    # warm the card and cuBLAS once before the micro part
    a, b = operands(4096, 4096, 4096, "bf16")
    for _ in range(50):
        torch.matmul(a, b)
    torch.cuda.synchronize()
    del a, b
    part("micro", p_micro, 25)
    part("square_a", p_square("square_a", None), 30)
    part("step1_a", p_step1("step1_a", 4000, 4160), 20)
    part("rect", p_rect, 40)
    part("decode", p_decode, 35)
    part("waves", p_waves, 15)
    part("square_b", p_square("square_b", 24), 30)
    part("square_c", p_square("square_c", 25), 30)
    part("step1_b", p_step1("step1_b", 6080, 6200), 15)
    part("extra", p_extra, 20)
    part("profile", p_profile, 90)
    R["env"]["nvidia_smi_end"] = smi("clocks.sm,clocks.mem,power.draw,temperature.gpu")
    R["env"]["date_utc_end"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    save()
    log("done", {k: round(v, 1) for k, v in R["parts_time_s"].items()})


if __name__ == "__main__":
    main()
