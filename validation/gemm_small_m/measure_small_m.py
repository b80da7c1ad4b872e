"""Call 3 of validation/gemm_small_m (issue 24, session 2026-12-02 evening): small-M / unaligned-N
GEMMs and plain HBM streams on the H200, timed as a user times them (triton.testing.do_bench:
a 256 MB zero_ before every call, CUDA events around the call alone, median), with the cuBLAS
kernel names torch.profiler shows for every GEMM shape.

    PYTHONUNBUFFERED=1 python3 measure_small_m.py $OUT

Parts (JSON rewritten after each):
  env      card, driver, clocks, torch / CUDA / cuBLAS / Triton versions, date
  stream   plain read / copy streams (no GEMM): torch x.sum() and y.copy_(x) over 16 MiB..1 GiB;
           a Triton read kernel (one block per program, or a persistent grid of G programs) over
           128 MiB and 512 MiB with the base pointer 16-, 4- or 2-byte aligned (the last two make
           Triton issue 4- and 2-byte loads, as CUTLASS's align2 / align1 kernels do)
  dirty    one 128 MiB read (Triton, torch.sum) and three decode GEMMs timed by events after
           (a) zero_ of 256 MB (do_bench's flush: the L2 left full of dirty lines), (b) a read of
           256 MB (L2 flushed but clean), (c) nothing (back-to-back)
  grid     small-M GEMMs, fp16 / bf16: M in MS, N in NS (none a multiple of 8), K in KS ("xw" form,
           a random 560 of the full grid, seed 24), and the transposed "wx" form W(M x K) @ X(K x B)
           with M in {4096, 14336}, K in {4096, 5120}, B in BS (a random 120, seed 25)
  decode   W(8192 x 8192) @ X(8192 x B), bf16, B = 1..128 (a repeat of call 1's held-out decode)
  profile  torch.profiler kernel names, grids, durations for every grid / decode shape

Split, fixed before any data exists: a grid shape (m, n, k, dtype) is *calibration* when
sha256(f"{m}x{n}x{k}:{dtype}") is even (last hex digit), else *held out*.  decode is held out
whole (no parameter may come from it).
"""
import hashlib
import json
import os
import platform
import random
import subprocess
import sys
import time

T0 = time.time()
OUT = sys.argv[1] if len(sys.argv) > 1 else "."
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.testing import do_bench  # noqa: E402

R = {"doc": __doc__, "env": {}, "parts_time_s": {}}
DT = {"bf16": torch.bfloat16, "fp16": torch.float16}


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


def save():
    R["elapsed_s"] = time.time() - T0
    with open(os.path.join(OUT, "gemm_small_m.json"), "w") as f:
        json.dump(R, f)


def smi(q):
    try:
        return subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv"], capture_output=True,
                              text=True, timeout=20).stdout.strip()
    except Exception as exc:
        return repr(exc)


def heldout(m, n, k, dt):
    return int(hashlib.sha256(f"{m}x{n}x{k}:{dt}".encode()).hexdigest()[-1], 16) % 2 == 1


def env():
    p = torch.cuda.get_device_properties(0)
    e = R["env"]
    e.update({"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
              "triton": triton.__version__, "gpu": p.name, "sm_count": p.multi_processor_count,
              "l2_bytes": getattr(p, "L2_cache_size", None),
              "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
              "allow_tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
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
    log("env", e)


def bench(fn, warmup=10, rep=30):
    ts = sorted(do_bench(fn, warmup=warmup, rep=rep, return_mode="all"))
    return {"ms": ts[len(ts) // 2], "q10": ts[len(ts) // 10], "q90": ts[(9 * len(ts)) // 10], "n": len(ts)}


@triton.jit
def read_block(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(out_ptr + pid, tl.sum(v, axis=0))


@triton.jit
def read_persistent(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    g = tl.num_programs(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(pid * BLOCK, n, g * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))


def p_stream():
    out = []
    big = torch.randn(512 * 2**20 + 64, device="cuda").to(torch.bfloat16)     # 1 GiB + a few
    for mib in (16, 32, 64, 128, 256, 512, 1024):
        n = mib * 2**20 // 2
        x = big[:n]
        y = torch.empty_like(x)
        r = bench(lambda: x.sum()); r.update(op="torch_sum", bytes=2 * n); out.append(r)
        r = bench(lambda: y.copy_(x)); r.update(op="torch_copy", bytes=4 * n); out.append(r)  # noqa: F821 (y is deleted after the loop body)
        log(f"stream {mib} MiB: sum {out[-2]['ms']*1e3:.1f} us, copy {out[-1]['ms']*1e3:.1f} us")
        del y
    for mib in (128, 512):
        n = mib * 2**20 // 2
        # align 16: 16-byte vector loads; 4: an int32 view whose base is 4 mod 16 (4-byte loads);
        # 2: a bf16 view whose base is 2 mod 16 (2-byte loads)
        for align_b, off in ((16, 0), (4, 2), (2, 1)):
            x = big[off:off + n]
            ne = n
            if align_b == 4:
                x, ne = x.view(torch.int32), n // 2
            assert x.data_ptr() % 16 == (0 if off == 0 else 2 * off)
            blk = 4096
            res = torch.empty(ne // blk + 1, device="cuda")
            for nw in (4, 8):
                r = bench(lambda: read_block[(triton.cdiv(ne, blk),)](x, res, ne, BLOCK=blk, num_warps=nw))
                r.update(op="triton_read_block", bytes=2 * n, align=align_b, grid=triton.cdiv(ne, blk), warps=nw)
                out.append(r)
            for g in (66, 128, 132, 264, 528, 1056):
                r = bench(lambda: read_persistent[(g,)](x, res, ne, BLOCK=blk, num_warps=8))
                r.update(op="triton_read_persistent", bytes=2 * n, align=align_b, grid=g, warps=8)
                out.append(r)
            log(f"triton {mib} MiB align {align_b}: " + ", ".join(
                f"{o['grid']}:{o['bytes']/o['ms']/1e9:.2f}" for o in out[-8:]) + " TB/s")
    R["stream"] = out
    del big


def p_dirty():
    flush = torch.empty(256 * 2**20 // 4, dtype=torch.int, device="cuda")
    clean = torch.randn(64 * 2**20, device="cuda")           # 256 MB, read to flush clean
    n = 64 * 2**20
    x = torch.randn(n, device="cuda").to(torch.bfloat16)     # 128 MiB
    res = torch.empty(n // 4096, device="cuda")
    W = torch.randn(8192, 8192, device="cuda").to(torch.bfloat16)
    X8 = torch.randn(8192, 8, device="cuda").to(torch.bfloat16)
    X1 = torch.randn(8192, 1, device="cuda").to(torch.bfloat16)
    X3 = torch.randn(8192, 3, device="cuda").to(torch.bfloat16)
    x8 = torch.randn(8, 8192, device="cuda").to(torch.bfloat16)
    ops = {"triton_read_128MiB": lambda: read_block[(n // 4096,)](x, res, n, BLOCK=4096, num_warps=8),
           "torch_sum_128MiB": lambda: x.sum(),
           "W@X_B1": lambda: W @ X1, "W@X_B3": lambda: W @ X3, "W@X_B8": lambda: W @ X8, "x@W_B8": lambda: x8 @ W}
    pre = {"zero_256MB": lambda: flush.zero_(), "read_256MB": lambda: clean.sum(), "none": lambda: None}
    out = []
    for name, fn in ops.items():
        for pname, p in pre.items():
            for _ in range(3):
                p(); fn()
            torch.cuda.synchronize()
            ts = []
            for _ in range(40):
                p()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record(); fn(); e.record()
                e.synchronize()
                ts.append(s.elapsed_time(e))
            ts.sort()
            out.append({"op": name, "before": pname, "ms": ts[len(ts) // 2], "q10": ts[4], "q90": ts[36]})
        log("dirty", name, ", ".join(f"{o['before']} {o['ms']*1e3:.1f}" for o in out[-3:]), "us")
    R["dirty"] = out


MS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
NS = (1001, 1538, 2047, 2050, 3075, 4097, 4100, 5122, 6146, 8191, 10244, 11009, 14338, 16383, 24577, 32001, 49154)
KS = (768, 2048, 4096, 8192)
BS = (1, 2, 3, 4, 5, 6, 7, 9, 12, 15, 17, 20, 24, 31, 33, 36, 47, 50, 63, 65, 90, 100, 127, 129)


def shapes():
    full = [(m, n, k, dt, "xw") for dt in ("bf16", "fp16") for m in MS for n in NS for k in KS]
    xw = random.Random(24).sample(full, 560)
    full = [(m, b, k, dt, "wx") for dt in ("bf16", "fp16") for m in (4096, 14336) for k in (4096, 5120) for b in BS]
    wx = random.Random(25).sample(full, 120)
    return xw + wx


def p_grid():
    out = []
    for i, (m, n, k, dt, form) in enumerate(shapes()):
        a = torch.randn(m, k, device="cuda").to(DT[dt])
        b = torch.randn(k, n, device="cuda").to(DT[dt])
        r = bench(lambda: torch.matmul(a, b), 5, 20)
        r.update(m=m, n=n, k=k, dtype=dt, form=form, heldout=heldout(m, n, k, dt))
        out.append(r)
        if i % 40 == 0:
            log(f"grid {i}: {m}x{n}x{k} {dt} {r['ms']*1e3:.1f} us")
            R["grid"] = out
            save()
    R["grid"] = out


def p_decode():
    out = []
    W = torch.randn(8192, 8192, device="cuda").to(torch.bfloat16)
    for b in range(1, 129):
        X = torch.randn(8192, b, device="cuda").to(torch.bfloat16)
        r = bench(lambda: W @ X, 5, 20)
        r.update(m=8192, n=b, k=8192, dtype="bf16", form="W@X")
        out.append(r)
    log("decode", [round(o["ms"] * 1e3, 1) for o in out[:16]])
    R["decode"] = out


def p_profile():
    from torch.profiler import ProfilerActivity, profile
    todo = [(r["m"], r["n"], r["k"], r["dtype"]) for r in R.get("grid", []) + R.get("decode", [])]
    cache = torch.empty(256 * 2**20 // 4, dtype=torch.int, device="cuda")
    prof_out = []
    for c0 in range(0, len(todo), 150):
        part = todo[c0:c0 + 150]
        ops = []
        for (m, n, k, dt) in part:
            a = torch.randn(m, k, device="cuda").to(DT[dt])
            b = torch.randn(k, n, device="cuda").to(DT[dt])
            torch.matmul(a, b)
            ops.append((a, b))
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for a, b in ops:
                torch.cuda._sleep(2000)
                cache.zero_()
                torch.matmul(a, b)
            torch.cuda._sleep(2000)
            torch.cuda.synchronize()
        tmp = os.path.join(OUT, "_trace.json")
        prof.export_chrome_trace(tmp)
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
                        "block": a.get("block"), "regs": a.get("registers per thread"),
                        "smem": a.get("shared memory")})
        if len(groups) != len(part):
            log(f"profile: {len(groups)} groups for {len(part)} shapes")
        for s, g in zip(part, groups):
            prof_out.append({"m": s[0], "n": s[1], "k": s[2], "dtype": s[3], "kernels": g})
        del ops
        torch.cuda.empty_cache()
        log(f"profile {c0 + len(part)}/{len(todo)}")
    R["profile"] = prof_out


if __name__ == "__main__":
    env()
    save()
    for name, fn in (("stream", p_stream), ("dirty", p_dirty), ("grid", p_grid), ("decode", p_decode),
                     ("profile", p_profile)):
        t = time.time()
        try:
            fn()
        except Exception as exc:
            log(f"part {name} failed: {exc!r}")
            R.setdefault("errors", {})[name] = repr(exc)
        R["parts_time_s"][name] = time.time() - t
        torch.cuda.empty_cache()
        save()
        log(f"part {name} done in {R['parts_time_s'][name]:.1f} s")
    R["env"]["nvidia_smi_end"] = smi("clocks.sm,clocks.mem,power.draw,temperature.gpu")
    R["env"]["date_utc_end"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    save()
    log("done")
