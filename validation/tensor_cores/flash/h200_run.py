"""On the H200: Triton 3.6's own JIT compiles (sm_90a) and runs the FlashAttention-2 forward
(host and device tensor descriptors) and the TMA matmul of kernels.py; writes each case's PTX,
inputs, outputs (bits), registers, do_bench medians and versions under $OUT."""
import datetime, json, os, shutil, subprocess, sys, traceback
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs("/tmp/simgpu_flash", exist_ok=True)
shutil.copy(os.path.join(HERE, "kernels.py"), "/tmp/simgpu_flash/kernels.py")
sys.path.insert(0, "/tmp/simgpu_flash")
import torch, triton
from triton.testing import do_bench
from triton.tools.tensor_descriptor import TensorDescriptor
import kernels as K

OUT = os.environ.get("OUT", "/tmp/out")
os.makedirs(OUT, exist_ok=True)
res = {"date": datetime.datetime.utcnow().isoformat() + "Z", "triton": triton.__version__, "torch": torch.__version__,
       "numpy": np.__version__, "gpu": torch.cuda.get_device_name(), "cuda": torch.version.cuda,
       "python": sys.version, "cases": {}}
try:
    res["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.mem",
                                        "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
except Exception as e:
    res["nvidia_smi"] = str(e)


def alloc_fn(size, align, stream):
    return torch.empty(size, dtype=torch.int8, device="cuda")


triton.set_allocator(alloc_fn)
arrays = {}
for name, Z, H, N, D, causal, host, BM, BN, w, s in K.FA_CASES:
    try:
        q, k, v = K.fa_inputs(name, Z, H, N, D)
        tq, tk, tv = (torch.from_numpy(x).cuda() for x in (q, k, v))
        to = torch.full_like(tq, float("nan"))
        tM = torch.full((Z, H, N), float("nan"), dtype=torch.float32, device="cuda")
        y = Z * H * N
        if host:
            descs = [TensorDescriptor(x.view(y, D), [y, D], [D, 1], [BM if i in (0, 3) else BN, D])
                     for i, x in enumerate((tq, tk, tv, to))]
        else:
            descs = [tq, tk, tv, to]
        grid = (triton.cdiv(N, BM), Z * H, 1)
        fn = lambda: K._attn_fwd[grid](0.5, tM, Z, H, *descs, N, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN,
                                       FP8_OUTPUT=False, STAGE=3 if causal else 1, warp_specialize=False,
                                       IS_HOPPER=True, num_warps=w, num_stages=s)
        ck = fn()
        torch.cuda.synchronize()
        ptx_text = ck.asm["ptx"]
        arrays[name + "_q"], arrays[name + "_k"], arrays[name + "_v"] = (x.view(np.uint16) for x in (q, k, v))
        arrays[name + "_o"] = to.cpu().numpy().view(np.uint16)
        arrays[name + "_M"] = tM.cpu().numpy().view(np.uint32)
        ms = do_bench(fn, warmup=10, rep=30, return_mode="median")
        res["cases"][name] = {"kind": "fa", "Z": Z, "H": H, "N_CTX": N, "HEAD_DIM": D, "causal": causal, "host": host,
                              "BLOCK_M": BM, "BLOCK_N": BN, "num_warps": w, "num_stages": s, "time_ms": ms,
                              "n_regs": getattr(ck, "n_regs", None), "shared": ck.metadata.shared,
                              "global_scratch": ck.metadata.global_scratch_size,
                              "tma": "cp.async.bulk.tensor" in ck.asm["ptx"], "ptx": ptx_text,
                              "ptrs_mod_256": [t.data_ptr() % 256 for t in (tq, tk, tv, to, tM)]}
        print(name, f"{ms*1e3:.2f} us", ck.n_regs, flush=True)
    except Exception:
        res["cases"][name] = {"error": traceback.format_exc()}
        print(name, "FAILED", traceback.format_exc(), flush=True)
for name, M, N, Kd, BM, BN, BK, w, s in K.MM_CASES:
    try:
        a, b = K.mm_inputs(name, M, N, Kd)
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        tc = torch.full((M, N), float("nan"), dtype=torch.float16, device="cuda")
        da = TensorDescriptor.from_tensor(ta, [BM, BK])
        db = TensorDescriptor.from_tensor(tb, [BK, BN])
        dc = TensorDescriptor.from_tensor(tc, [BM, BN])
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        fn = lambda: K.matmul_tma[grid](da, db, dc, M, N, Kd, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, num_warps=w, num_stages=s)
        ck = fn()
        torch.cuda.synchronize()
        ptx_text = ck.asm["ptx"]
        arrays[name + "_a"], arrays[name + "_b"] = a.view(np.uint16), b.view(np.uint16)
        arrays[name + "_c"] = tc.cpu().numpy().view(np.uint16)
        ms = do_bench(fn, warmup=10, rep=30, return_mode="median")
        res["cases"][name] = {"kind": "mm", "M": M, "N": N, "K": Kd, "BLOCK_M": BM, "BLOCK_N": BN, "BLOCK_K": BK,
                              "num_warps": w, "num_stages": s, "time_ms": ms, "n_regs": getattr(ck, "n_regs", None),
                              "shared": ck.metadata.shared, "tma": "cp.async.bulk.tensor" in ck.asm["ptx"], "ptx": ptx_text,
                              "ptrs_mod_256": [t.data_ptr() % 256 for t in (ta, tb, tc)]}
        print(name, f"{ms*1e3:.2f} us", ck.n_regs, flush=True)
    except Exception:
        res["cases"][name] = {"error": traceback.format_exc()}
        print(name, "FAILED", traceback.format_exc(), flush=True)
np.savez_compressed(os.path.join(OUT, "h200_flash.npz"), **arrays)
json.dump(res, open(os.path.join(OUT, "h200_flash.json"), "w"), indent=1)
print("done", flush=True)
