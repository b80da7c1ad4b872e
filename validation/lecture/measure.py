"""Lecture measurements on the H200 through PyTorch/cuBLAS (one device call, ~5 minutes).

    python3 validation/lecture/measure.py $OUT/lecture_h200.json

Two kinds of numbers, kept apart in the output:

  "micro"  parameters of simgpu.model.gemm / attention: tensor-core rate per dtype at a large
           aligned shape (16384 x 16384 x 8192, not one of the check shapes), fp32 SIMT rate,
           GEMV streaming bandwidth, L2 read bandwidth (Triton kernel over a 16 MiB resident
           buffer), launch floor per call (tiny matmul, back-to-back and graph-replayed),
           copy bandwidth against working set, MUFU exp2 rate (Triton).
  "check"  sweeps the model is judged on and NOT built from: square bf16 step 64 to 8192,
           step 1 around 4096, an M sweep, nanoGPT vocab padding, decode batch sweep, LLM
           shapes in bf16/fp16/fp32, precisions at 8192^3 with fp8 quantise, attention
           backends (time and peak memory).

Timing: CUDA events around R back-to-back calls on the same operands (warm L2, as a Python
loop of torch.matmul runs), R chosen for ~10 ms per sample, 7 samples, median per call.
So a call's time is max(CPU dispatch, GPU time): small sizes show the per-call floor.
Random normal data (never zeros).  Kernel names of the cuBLAS choice come from
torch.profiler (one profiled call per shape, after timing).
"""
from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

DEV = "cuda"
T0 = time.time()
LOG = []


def log(*a):
    s = " ".join(str(x) for x in a)
    print(f"[{time.time() - T0:6.1f}s] {s}", flush=True)
    LOG.append(s)


def bench(fn, target_ms=8.0, samples=7, max_reps=2000):
    """Median seconds per call of fn(), events around R back-to-back calls."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); fn(); e.record(); torch.cuda.synchronize()
    t1 = max(s.elapsed_time(e), 1e-3)
    reps = int(min(max_reps, max(1, target_ms / t1)))
    out = []
    for _ in range(samples):
        s.record()
        for _ in range(reps):
            fn()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) / reps * 1e-3)
    out.sort()
    return out[len(out) // 2], out, reps


def graph_time(fn, reps=200):
    """Median seconds per call of fn() replayed from a CUDA graph of `reps` calls (None if
    capture fails)."""
    try:
        return _graph_time(fn, reps)
    except Exception as exc:
        log("graph capture failed", repr(exc)[:200])
        return None


def _graph_time(fn, reps):
    fn(); torch.cuda.synchronize()
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
    g.replay(); torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    out = []
    for _ in range(7):
        s.record(); g.replay(); e.record(); torch.cuda.synchronize()
        out.append(s.elapsed_time(e) / reps * 1e-3)
    out.sort()
    return out[3]


def kernels_of(fn):
    """Names of the CUDA kernels one call of fn() launches (torch.profiler)."""
    try:
        from torch.profiler import ProfilerActivity, profile
        fn(); torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn(); torch.cuda.synchronize()
        names = [ev.name for ev in prof.events()
                 if getattr(ev, "device_type", None) is not None and "CUDA" in str(ev.device_type)]
        return [n for n in names if not n.startswith("cudaDeviceSynchronize")][:4]
    except Exception as exc:  # the profiler is a nice-to-have
        return [f"profiler failed: {exc!r}"[:200]]


DT = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def mm_case(m, n, k, dtype="bf16", profile=False, target_ms=8.0, samples=7):
    set_tf32(dtype == "tf32")
    a = torch.randn(m, k, device=DEV, dtype=DT[dtype])
    b = torch.randn(k, n, device=DEV, dtype=DT[dtype])
    fn = lambda: torch.matmul(a, b)
    t, allt, reps = bench(fn, target_ms=target_ms, samples=samples)
    row = {"m": m, "n": n, "k": k, "dtype": dtype, "layout": "NN", "seconds": t,
           "tflops": 2.0 * m * n * k / t / 1e12, "samples": allt, "reps": reps}
    if profile:
        row["kernels"] = kernels_of(fn)
    del a, b
    set_tf32(False)
    return row


def fp8_inputs(m, n, k, fmt_a=torch.float8_e4m3fn, fmt_b=torch.float8_e4m3fn):
    a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16).to(fmt_a)
    b = torch.randn(n, k, device=DEV, dtype=torch.bfloat16).to(fmt_b).t()   # column-major B
    one = torch.tensor(1.0, device=DEV)
    return a, b, one


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "lecture_h200.json"
    props = torch.cuda.get_device_properties(0)
    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
           "gpu": props.name, "sm_count": props.multi_processor_count,
           "l2_bytes": getattr(props, "L2_cache_size", None), "cublas": None,
           "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}
    try:
        import triton
        env["triton"] = triton.__version__
    except Exception:
        pass
    try:
        env["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,ecc.mode.current",
             "--format=csv"], capture_output=True, text=True, timeout=20).stdout
    except Exception as exc:
        env["nvidia_smi"] = repr(exc)
    try:
        import ctypes
        lib = ctypes.CDLL("libcublas.so.13") if os.path.exists("/") else None
        v = ctypes.c_int()
        lib.cublasGetProperty(0, ctypes.byref(v)); a = v.value
        lib.cublasGetProperty(1, ctypes.byref(v)); b = v.value
        lib.cublasGetProperty(2, ctypes.byref(v)); c = v.value
        env["cublas"] = f"{a}.{b}.{c}"
    except Exception as exc:
        env["cublas"] = f"unknown ({exc!r})"[:120]
    log("env", env)
    R = {"env": env, "micro": {}, "check": {}, "method": __doc__}

    def save():
        R["log"] = LOG
        R["elapsed_s"] = time.time() - T0
        with open(out_path, "w") as f:
            json.dump(R, f, indent=1)

    micro, check = R["micro"], R["check"]

    # ---------------- micro: tensor peak per dtype (16384 x 16384 x 8192) -----------------
    peak = {}
    for dt in ("bf16", "fp16", "tf32", "fp32"):
        m = n = 16384 if dt != "fp32" else 8192
        k = 8192 if dt != "fp32" else 4096
        r = mm_case(m, n, k, dt, profile=True, target_ms=40, samples=5)
        peak[dt] = r
        log("peak", dt, m, n, k, f"{r['tflops']:.1f} TFLOP/s", r.get("kernels"))
    for name, fa, fb in (("fp8_e4m3", torch.float8_e4m3fn, torch.float8_e4m3fn),
                         ("fp8_e5m2", torch.float8_e5m2, torch.float8_e4m3fn)):
        try:
            a, b, one = fp8_inputs(16384, 16384, 8192, fa, fb)
            fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            t, allt, reps = bench(fn, target_ms=40, samples=5)
            peak[name] = {"m": 16384, "n": 16384, "k": 8192, "dtype": name, "seconds": t,
                          "tflops": 2 * 16384 * 16384 * 8192 / t / 1e12, "samples": allt,
                          "kernels": kernels_of(fn)}
            log("peak", name, f"{peak[name]['tflops']:.1f}", peak[name]["kernels"])
            del a, b
        except Exception as exc:
            peak[name] = {"error": repr(exc)[:300]}
            log("peak", name, "failed", exc)
    micro["peak"] = peak
    save()

    # ---------------- micro: launch floor -----------------
    a = torch.randn(64, 64, device=DEV, dtype=torch.bfloat16)
    b = torch.randn(64, 64, device=DEV, dtype=torch.bfloat16)
    t_loop, _, _ = bench(lambda: torch.matmul(a, b), target_ms=5)
    t_graph = graph_time(lambda: torch.matmul(a, b))
    x1 = torch.randn(1, device=DEV)
    t_add = bench(lambda: torch.add(x1, 1.0), target_ms=5)[0]
    t_add_graph = graph_time(lambda: torch.add(x1, 1.0))
    micro["launch"] = {"matmul64_loop_s": t_loop, "matmul64_graph_s": t_graph,
                       "add1_loop_s": t_add, "add1_graph_s": t_add_graph,
                       "matmul64_kernels": kernels_of(lambda: torch.matmul(a, b))}
    log("launch", micro["launch"])

    # ---------------- micro: GEMV streaming bandwidth (batch 1, 8192 x 28672 bf16 weight) ----
    gemv = {}
    for (k, n) in ((8192, 28672), (28672, 8192)):
        w = torch.randn(k, n, device=DEV, dtype=torch.bfloat16)
        x = torch.randn(1, k, device=DEV, dtype=torch.bfloat16)
        t = bench(lambda: torch.matmul(x, w), target_ms=20)[0]
        wt = w.t().contiguous()
        t2 = bench(lambda: F.linear(x, wt), target_ms=20)[0]
        by = k * n * 2 + (k + n) * 2
        gemv[f"{k}x{n}"] = {"nn_s": t, "linear_s": t2, "bytes": by, "nn_bw": by / t, "linear_bw": by / t2,
                            "nn_kernels": kernels_of(lambda: torch.matmul(x, w)),
                            "linear_kernels": kernels_of(lambda: F.linear(x, wt))}
        log("gemv", k, n, f"nn {by / t / 1e12:.2f} TB/s linear {by / t2 / 1e12:.2f} TB/s")
        del w, wt
    micro["gemv"] = gemv

    # ---------------- micro: copy bandwidth vs working set -----------------
    copy = []
    for p in range(16, 33):
        nbytes = 2 ** p
        x = torch.randn(nbytes // 4, device=DEV)
        y = torch.empty_like(x)
        t = bench(lambda: y.copy_(x), target_ms=5)[0]
        tg = (graph_time(lambda: y.copy_(x), reps=50) if p <= 26 else None) or t
        copy.append({"bytes_per_buffer": nbytes, "seconds": t, "graph_seconds": tg,
                     "bw_rw": 2 * nbytes / t, "bw_rw_graph": 2 * nbytes / tg})
        del x, y
    micro["copy"] = copy
    log("copy", [(c["bytes_per_buffer"] >> 20, round(c["bw_rw_graph"] / 1e12, 2)) for c in copy])
    save()

    # ---------------- micro: L2 read bandwidth and MUFU exp2 (Triton) -----------------
    try:
        import triton
        import triton.language as tl

        @triton.jit
        def l2_read(ptr, out, n_elem, passes, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            nprog = tl.num_programs(0)
            acc = tl.zeros([BLOCK], dtype=tl.float32)
            nblk = n_elem // BLOCK
            for p in range(passes):
                for blk in range(pid, nblk, nprog):
                    j = (blk + p * 7) % nblk
                    acc += tl.load(ptr + j * BLOCK + tl.arange(0, BLOCK))
            tl.store(out + pid * BLOCK + tl.arange(0, BLOCK), acc)

        l2 = []
        for mib in (4, 8, 16, 32, 48):
            n_elem = mib * 2 ** 20 // 4
            buf = torch.randn(n_elem, device=DEV)
            BLOCK = 1024
            grid = 132 * 8
            outb = torch.empty(grid * BLOCK, device=DEV)
            passes = 50
            fn = lambda: l2_read[(grid,)](buf, outb, n_elem, passes, BLOCK=BLOCK, num_warps=4)
            t = bench(fn, target_ms=10, samples=5)[0]
            l2.append({"mib": mib, "passes": passes, "seconds": t, "bw": passes * n_elem * 4 / t})
            del buf
        micro["l2_read"] = l2
        log("l2", [(r["mib"], round(r["bw"] / 1e12, 2)) for r in l2])

        @triton.jit
        def exp_loop(out, iters, BLOCK: tl.constexpr):
            pid = tl.program_id(0)
            x = (tl.arange(0, BLOCK) + pid).to(tl.float32) * 1e-6
            y = x
            for i in range(iters):
                x = tl.math.exp2(x) * -0.5
                y = tl.math.exp2(y) * -0.25
            tl.store(out + pid * BLOCK + tl.arange(0, BLOCK), x + y)

        grid, BLOCK, iters = 132 * 16, 1024, 512
        o = torch.empty(grid * BLOCK, device=DEV)
        t = bench(lambda: exp_loop[(grid,)](o, iters, BLOCK=BLOCK, num_warps=8), target_ms=10, samples=5)[0]
        micro["exp2"] = {"exps": 2 * grid * BLOCK * iters, "seconds": t, "rate": 2 * grid * BLOCK * iters / t}
        log("exp2 rate", f"{micro['exp2']['rate'] / 1e12:.2f} T/s")
    except Exception as exc:
        micro["triton_error"] = repr(exc)[:500]
        log("triton micro failed", exc)
    save()

    # ---------------- check: square bf16 step 64 to 8192 -----------------
    sq = []
    for n in range(64, 8193, 64):
        sq.append(mm_case(n, n, n, "bf16", profile=(n % 512 == 0 or n in (2112, 2176, 4160)),
                          target_ms=6, samples=5))
    check["square_bf16"] = sq
    log("square done", [(r["n"], round(r["tflops"])) for r in sq[::8]])
    save()

    # ---------------- check: step 1 around 4096 -----------------
    st = []
    for n in range(4080, 4114):
        st.append(mm_case(n, n, n, "bf16", profile=(n in (4088, 4089, 4095, 4096, 4097, 4100, 4104)),
                          target_ms=6, samples=5))
    check["step1_bf16"] = st
    log("step1", [(r["n"], round(r["tflops"])) for r in st])

    # ---------------- check: M sweep (N = K = 4096) -----------------
    ms = []
    for m in range(128, 8193, 128):
        ms.append(mm_case(m, 4096, 4096, "bf16", target_ms=6, samples=5))
    check["m_sweep_bf16"] = ms
    log("m sweep", [(r["m"], round(r["tflops"])) for r in ms[::4]])
    save()

    # ---------------- check: vocab padding (nanoGPT) -----------------
    vocab = []
    for v in (50257, 50264, 50272, 50304, 50432):
        for dt in ("bf16", "fp32"):
            vocab.append(mm_case(8192, v, 768, dt, profile=True, target_ms=10))
    check["vocab"] = vocab
    log("vocab", [(r["n"], r["dtype"], round(r["seconds"] * 1e6, 1), r["kernels"][:1]) for r in vocab])

    # ---------------- check: decode batch sweep (x @ W, W 8192 x 8192 bf16) -----------------
    dec = []
    for bsz in (1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 160, 192, 224, 256, 288, 320, 384, 448, 512,
                640, 768, 1024, 1536, 2048):
        r = mm_case(bsz, 8192, 8192, "bf16", profile=bsz in (1, 8, 64, 256, 1024), target_ms=8)
        dec.append(r)
    check["decode_bf16"] = dec
    log("decode", [(r["m"], round(r["seconds"] * 1e6, 1)) for r in dec])
    save()

    # ---------------- check: LLM shapes -----------------
    shapes = {  # name: (K, N) of the weight, x is tokens x K
        "gpt2_qkv": (768, 2304), "gpt2_proj": (768, 768), "gpt2_fc": (768, 3072), "gpt2_fcproj": (3072, 768),
        "gpt2_lm_head": (768, 50257),
        "llama7b_qkv": (4096, 12288), "llama7b_o": (4096, 4096), "llama7b_up": (4096, 11008),
        "llama7b_down": (11008, 4096), "llama7b_lm_head": (4096, 32000),
        "llama3_8b_qkv": (4096, 6144), "llama3_8b_up": (4096, 14336), "llama3_8b_down": (14336, 4096),
        "llama3_8b_lm_head": (4096, 128256),
    }
    llm = []
    for tokens in (4096, 512):
        for name, (k, n) in shapes.items():
            for dt in ("bf16", "fp16", "fp32"):
                r = mm_case(tokens, n, k, dt, profile=(tokens == 4096 and dt != "fp16"), target_ms=6, samples=5)
                r["name"] = name
                llm.append(r)
    check["llm"] = llm
    log("llm", [(r["name"], r["m"], r["dtype"], round(r["tflops"])) for r in llm[::3]])
    save()

    # ---------------- check: precision at 8192^3, fp8 quantise -----------------
    prec = {}
    for dt in ("fp32", "tf32", "bf16", "fp16"):
        prec[dt] = mm_case(8192, 8192, 8192, dt, profile=True, target_ms=20, samples=5)
    try:
        a, b, one = fp8_inputs(8192, 8192, 8192)
        fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        prec["fp8_e4m3"] = {"seconds": bench(fn, target_ms=20, samples=5)[0], "kernels": kernels_of(fn)}
        A = torch.randn(8192, 8192, device=DEV, dtype=torch.bfloat16)
        Bt = torch.randn(8192, 8192, device=DEV, dtype=torch.bfloat16)   # (N, K), row-major

        def quant(x):
            amax = x.abs().max().float()
            scale = 448.0 / amax
            return (x * scale).to(torch.float8_e4m3fn), (1.0 / scale)

        def fp8_both():
            qa, sa = quant(A)
            qb, sb = quant(Bt)
            return torch._scaled_mm(qa, qb.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)

        def fp8_act():
            qa, sa = quant(A)
            return torch._scaled_mm(qa, b, scale_a=sa, scale_b=one, out_dtype=torch.bfloat16)

        ref = A.double() @ Bt.double().t()
        err = ((fp8_both().double() - ref).norm() / ref.norm()).item()
        prec["fp8_quant_both"] = {"seconds": bench(fp8_both, target_ms=20, samples=5)[0], "rel_err": err,
                                  "kernels": kernels_of(fp8_both)}
        prec["fp8_quant_act"] = {"seconds": bench(fp8_act, target_ms=20, samples=5)[0],
                                 "kernels": kernels_of(fp8_act)}
        prec["quant_one_8192sq"] = {"seconds": bench(lambda: quant(A), target_ms=20, samples=5)[0],
                                    "kernels": kernels_of(lambda: quant(A))}
        del ref
    except Exception as exc:
        prec["fp8_error"] = repr(exc)[:500]
    check["precision"] = prec
    log("precision", {k: round(v.get("seconds", 0) * 1e3, 3) for k, v in prec.items() if isinstance(v, dict)})
    save()

    # ---------------- check: attention backends -----------------
    from torch.nn.attention import SDPBackend, sdpa_kernel
    att = []
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                "math": SDPBackend.MATH}
    B, H, d = 1, 16, 64
    for T in (1024, 2048, 4096, 8192):
        for causal in (False, True):
            q, k, v = (torch.randn(B, H, T, d, device=DEV, dtype=torch.bfloat16) for _ in range(3))
            for bname, be in backends.items():
                row = {"B": B, "H": H, "T": T, "d": d, "dtype": "bf16", "backend": bname, "causal": causal}
                try:
                    with sdpa_kernel(be):
                        fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        fn(); torch.cuda.synchronize()
                        base = torch.cuda.memory_allocated()
                        torch.cuda.reset_peak_memory_stats()
                        o = fn(); torch.cuda.synchronize()
                        row["peak_bytes_fwd"] = torch.cuda.max_memory_allocated() - base
                        row["out_bytes"] = o.numel() * o.element_size()
                        del o
                        row["seconds_fwd"] = bench(fn, target_ms=8, samples=5)[0]
                        if T in (2048, 4096) and not causal:
                            qg, kg, vg = (t.detach().clone().requires_grad_() for t in (q, k, v))
                            g = torch.randn_like(q)

                            def fb():
                                out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
                                out.backward(g)
                                qg.grad = kg.grad = vg.grad = None
                            fb(); torch.cuda.synchronize()
                            base = torch.cuda.memory_allocated()
                            torch.cuda.reset_peak_memory_stats()
                            fb(); torch.cuda.synchronize()
                            row["peak_bytes_fwdbwd"] = torch.cuda.max_memory_allocated() - base
                            row["seconds_fwdbwd"] = bench(fb, target_ms=8, samples=5)[0]
                            del qg, kg, vg, g
                        if T == 4096 and not causal:
                            row["kernels"] = kernels_of(fn)
                except Exception as exc:
                    row["error"] = repr(exc)[:300]
                att.append(row)
                log("attn", bname, T, causal, round(row.get("seconds_fwd", 0) * 1e6, 1), "us",
                    round(row.get("peak_bytes_fwd", 0) / 1e6, 1), "MB")
            del q, k, v
            torch.cuda.empty_cache()
    check["attention"] = att
    env["nvidia_smi_after"] = subprocess.run(
        ["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw", "--format=csv"],
        capture_output=True, text=True).stdout
    save()
    log("done", f"{time.time() - T0:.0f}s")


if __name__ == "__main__":
    main()
