"""On the card (one call): do_bench's floor (an empty Triton kernel and a one-store kernel at a
few grid sizes), the tutorial matmul's square sweep and the issue's shapes (do_bench and the
kernel's own duration from CUPTI, beside cuBLAS), and FlashAttention-2 against the math path
(Triton bmm + softmax + bmm; torch's math path and SDPA for reference): time, peak memory.
Writes $OUT/card_lecture.json.  Run: PYTHONUNBUFFERED=1 python3 device_run.py"""
import datetime, json, os, shutil, statistics, subprocess, sys, time, traceback
HERE = os.path.dirname(os.path.abspath(__file__))
for d, src in (("/tmp/simgpu_lecture", os.path.join(HERE, "kernels.py")),
               ("/tmp/simgpu_flash", os.path.join(HERE, "..", "flash", "kernels.py"))):
    os.makedirs(d, exist_ok=True)
    shutil.copy(src, os.path.join(d, "kernels.py"))
sys.path.insert(0, "/tmp/simgpu_lecture")
import torch, triton
from triton.testing import do_bench
from triton.tools.tensor_descriptor import TensorDescriptor
import kernels as L
import importlib.util
spec = importlib.util.spec_from_file_location("fa_kernels", "/tmp/simgpu_flash/kernels.py")
FA = importlib.util.module_from_spec(spec)
spec.loader.exec_module(FA)

OUT = os.environ.get("OUT", "/tmp/out")
os.makedirs(OUT, exist_ok=True)
T0 = time.time()
res = {"date": datetime.datetime.utcnow().isoformat() + "Z", "triton": triton.__version__, "torch": torch.__version__,
       "gpu": torch.cuda.get_device_name(), "cuda": torch.version.cuda, "python": sys.version,
       "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
       "method": "do_bench(warmup=25, rep=100): median, 20th/80th percentiles (L2 flushed before each call); "
                 "kernel_us: CUPTI kernel durations (torch.profiler), median of 20 calls",
       "floor": {}, "matmul": {}, "cublas": {}, "fa": {}}
try:
    res["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit",
                                        "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
except Exception as e:
    res["nvidia_smi"] = str(e)
print(res["gpu"], res["nvidia_smi"], flush=True)


def save():
    json.dump(res, open(os.path.join(OUT, "card_lecture.json"), "w"), indent=1)


def bench(fn):
    t = do_bench(fn, warmup=25, rep=100, return_mode="all")
    t = sorted(t)
    q = lambda f: t[min(len(t) - 1, int(f * len(t)))]
    return {"median_us": statistics.median(t) * 1e3, "p20_us": q(0.2) * 1e3, "p80_us": q(0.8) * 1e3, "n": len(t)}


def kernel_us(fn, n=20):
    """CUPTI durations of the kernels one call of fn launches: {name: median us}."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
    per = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per.setdefault(e.name, []).append(e.device_time)
    return {k: statistics.median(v) for k, v in per.items()}


def alloc_fn(size, align, stream):
    return torch.empty(size, dtype=torch.int8, device="cuda")


triton.set_allocator(alloc_fn)

# ---- A. do_bench's floor --------------------------------------------------------------------
x = torch.zeros(1 << 16, dtype=torch.int32, device="cuda")
for kname, kern in (("empty", L.empty_kernel), ("store", L.store_kernel)):
    for g in L.FLOOR_GRIDS:
        try:
            fn = lambda: kern[(g,)](x, num_warps=4)
            fn()
            torch.cuda.synchronize()
            r = bench(fn)
            r["kernel_us"] = kernel_us(fn)
            res["floor"][f"{kname}_{g}"] = r
            print("floor", kname, g, r, flush=True)
        except Exception:
            res["floor"][f"{kname}_{g}"] = {"error": traceback.format_exc()}
            print(traceback.format_exc(), flush=True)
save()

# ---- B. the tutorial matmul (fixed config) and cuBLAS ------------------------------------------
shapes = [(n, n, n) for n in L.SQUARE] + [s for s in L.TABLE if s[0] != s[1] or s[0] not in L.SQUARE]
for M, N, Kd in shapes:
    name = f"{M}x{N}x{Kd}"
    try:
        a = torch.randn((M, Kd), device="cuda", dtype=torch.float16)
        b = torch.randn((Kd, N), device="cuda", dtype=torch.float16)
        c = torch.empty((M, N), device="cuda", dtype=torch.float16)
        grid = lambda m: (triton.cdiv(M, m["BLOCK_SIZE_M"]) * triton.cdiv(N, m["BLOCK_SIZE_N"]),)
        fn = lambda: L.matmul_kernel[grid](a, b, c, M, N, Kd, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                           c.stride(0), c.stride(1), **L.MM_META)
        ck = fn()
        torch.cuda.synchronize()
        r = bench(fn)
        ku = kernel_us(fn)
        r["kernel_us"] = max(ku.values()) if ku else None
        r["tflops"] = 2 * M * N * Kd / r["median_us"] / 1e6
        r["n_regs"] = ck.n_regs
        r["max_abs_vs_torch"] = float((c.float() - torch.matmul(a, b).float()).abs().max())
        res["matmul"][name] = r
        fc = lambda: torch.matmul(a, b)
        rc = bench(fc)
        rc["kernel_us"] = kernel_us(fc)
        res["cublas"][name] = rc
        print(name, f"{r['median_us']:.1f} us (kernel {r['kernel_us']}) {r['tflops']:.0f} TF; cublas {rc['median_us']:.1f}",
              flush=True)
    except Exception:
        res["matmul"][name] = {"error": traceback.format_exc()}
        print(traceback.format_exc(), flush=True)
    save()
print("matmul done", time.time() - T0, flush=True)

# ---- C. FlashAttention-2 vs the math path ------------------------------------------------------
sm_scale = 0.5
for Z, H, N, D in L.FA_SIZES:
    name = f"Z{Z}_H{H}_N{N}_D{D}"
    try:
        torch.manual_seed(0)
        q, k, v = (torch.randn((Z, H, N, D), device="cuda", dtype=torch.float16) * 0.5 for _ in range(3))
        o = torch.empty_like(q)
        Mst = torch.empty((Z, H, N), dtype=torch.float32, device="cuda")
        y = Z * H * N
        BM, BN = L.FA_META["BLOCK_M"], L.FA_META["BLOCK_N"]
        descs = [TensorDescriptor(t.view(y, D), [y, D], [D, 1], [BM if i in (0, 3) else BN, D])
                 for i, t in enumerate((q, k, v, o))]
        grid = (triton.cdiv(N, BM), Z * H, 1)
        fa = lambda: FA._attn_fwd[grid](sm_scale, Mst, Z, H, *descs, N, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN,
                                        FP8_OUTPUT=False, STAGE=1, warp_specialize=False, IS_HOPPER=True,
                                        num_warps=L.FA_META["num_warps"], num_stages=L.FA_META["num_stages"])
        fa()
        torch.cuda.synchronize()
        r = {"fa": bench(fa)}
        r["fa"]["kernel_us"] = kernel_us(fa)
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        fa()
        torch.cuda.synchronize()
        r["fa"]["peak_extra_bytes"] = torch.cuda.max_memory_allocated() - base
        # the math path: Triton bmm, softmax, bmm (Q pre-scaled), S and P materialised in fp16
        qs = (q * sm_scale).view(Z * H, N, D)
        kk, vv = k.view(Z * H, N, D), v.view(Z * H, N, D)

        def math_path():
            s = torch.empty((Z * H, N, N), device="cuda", dtype=torch.float16)
            p = torch.empty_like(s)
            om = torch.empty((Z * H, N, D), device="cuda", dtype=torch.float16)
            for _, kern, g, meta, args in L.math_path_launches(Z, H, N, D):
                kern[g](*args(qs, kk, vv, s, p, om), **meta)
            return om
        om = math_path()
        torch.cuda.synchronize()
        r["math"] = bench(math_path)
        r["math"]["kernel_us"] = kernel_us(math_path)
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        math_path()
        torch.cuda.synchronize()
        r["math"]["peak_extra_bytes"] = torch.cuda.max_memory_allocated() - base
        r["max_abs_fa_vs_math"] = float((om.view_as(o).float() - o.float()).abs().max())
        ref = torch.softmax((q.float() @ k.float().transpose(-1, -2)) * sm_scale, -1) @ v.float()
        r["max_abs_fa_vs_fp32"] = float((o.float() - ref).abs().max())
        del ref
        # torch's own, for reference
        tm = lambda: torch.softmax((q @ k.transpose(-1, -2)) * sm_scale, -1) @ v
        r["torch_math"] = bench(tm)
        sd = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=sm_scale)
        r["torch_sdpa"] = bench(sd)
        res["fa"][name] = r
        print(name, {k2: (v2.get("median_us") if isinstance(v2, dict) else v2) for k2, v2 in r.items()}, flush=True)
    except Exception:
        res["fa"][name] = {"error": traceback.format_exc()}
        print(traceback.format_exc(), flush=True)
    save()
res["seconds"] = time.time() - T0
save()
print("done", res["seconds"], flush=True)
