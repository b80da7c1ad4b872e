"""Here: simgpu's side of validation/tensor_cores/flash.  For each case simgpu's front door
(simgpu.jit(fn)[grid](...)) compiles the kernel with the local Triton (3.6.0, as on the card)
and runs it on the card's inputs (numpy arrays; host TensorDescriptors over simgpu.as_tensor
views, or plain arrays for the device-side descriptors); its PTX is compared with the card's,
its output bits with the card's, ptxas' registers with the card's and the predicted time with
the card's do_bench median.  The outputs are also compared with a float64 numpy attention /
matmul.  Writes results.json.  Run: PYTHONPATH=<simgpu>:<triton 3.6 target> python compare.py"""
import json, os, shutil, sys, time
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs("/tmp/simgpu_flash", exist_ok=True)
shutil.copy(os.path.join(HERE, "kernels.py"), "/tmp/simgpu_flash/kernels.py")
sys.path[:0] = ["/tmp/simgpu_flash"]
import tempfile
os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="simgpu_flash_cache")   # compile from this path
import triton, simgpu, kernels as K
from simgpu.validate import dobench_seconds, unprofiled
from triton.tools.tensor_descriptor import TensorDescriptor

H = os.path.join(HERE, "h200")
GPU = unprofiled("H200")   # the card ran do_bench outside a profiler (../clock/)
card = json.load(open(os.path.join(H, "h200_flash.json")))
data = np.load(os.path.join(H, "h200_flash.npz"))
out = {"card": {k: card[k] for k in ("date", "gpu", "triton", "torch", "cuda", "numpy", "nvidia_smi")},
       "here": {"triton": triton.__version__, "numpy": np.__version__, "gpu": "unprofiled('H200')",
                "time": "time_us_simgpu_dobench = dobench_seconds(rep) (kernel + floor) vs the card's do_bench median"},
       "cases": {}}


def strip(t):
    """The PTX without its .file lines and its DWARF sections (which spell the source files' paths,
    Triton's installation's among them, in .b8 bytes)."""
    t = t.split("\t.section\t.debug", 1)[0]
    return "\n".join(l for l in t.splitlines() if not l.lstrip().startswith(".file"))


def attention64(q, k, v, causal, sm):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) * sm
    if causal:
        n = q.shape[-2]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    mx = s.max(-1, keepdims=True)
    p = np.exp(s - mx)
    lse = (mx[..., 0] + np.log(p.sum(-1))) / np.log(2)          # the kernel's M: log2-sum-exp2
    return p @ v / p.sum(-1, keepdims=True), lse


def common(name, rep, c, t0):
    ptx_here = rep.extras["ptx"]["compiled"].ptx
    return {"ptx_identical": ptx_here == c["ptx"], "ptx_identical_but_file_paths": strip(ptx_here) == strip(c["ptx"]),
            "registers_card": c["n_regs"], "registers_simgpu": rep.extras["ptx"].get("registers"),
            "time_us_card": c["time_ms"] * 1e3, "time_us_simgpu": rep.metrics.get("gpu__time_duration.sum", float("nan")) / 1e3,
            "time_us_simgpu_dobench": dobench_seconds(rep) * 1e6, "dobench_ratio": dobench_seconds(rep) * 1e3 / c["time_ms"],
            "simulation_s": round(time.time() - t0, 1)}


for name, Z, Hh, N, D, causal, host, BM, BN, w, s in K.FA_CASES:
    c = card["cases"][name]
    q, k, v = (data[f"{name}_{x}"].view(np.float16) for x in "qkv")
    assert all(np.array_equal(a.view(np.uint16), b.view(np.uint16)) for a, b in zip((q, k, v), K.fa_inputs(name, Z, Hh, N, D)))
    o = np.full_like(q, np.nan)
    M = np.full((Z, Hh, N), np.nan, np.float32)
    y = Z * Hh * N
    descs = [TensorDescriptor(simgpu.as_tensor(x.reshape(y, D)), [y, D], [D, 1], [BM if i in (0, 3) else BN, D])
             for i, x in enumerate((q, k, v, o))] if host else [q, k, v, o]
    t0 = time.time()
    rep = simgpu.jit(K._attn_fwd)[(triton.cdiv(N, BM), Z * Hh, 1)](
        0.5, M, Z, Hh, *descs, N, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN, FP8_OUTPUT=False, STAGE=3 if causal else 1,
        warp_specialize=False, IS_HOPPER=True, num_warps=w, num_stages=s, gpu=GPU)
    r = {"case": dict(Z=Z, H=Hh, N_CTX=N, HEAD_DIM=D, causal=causal, host_descriptors=host, BLOCK_M=BM, BLOCK_N=BN,
                      num_warps=w, num_stages=s), **common(name, rep, c, t0)}
    ho, hM = data[name + "_o"], data[name + "_M"]
    ref, lse = attention64(q, k, v, causal, 0.5)
    r.update({"outputs": int(ho.size), "o_bit_equal": bool(np.array_equal(o.view(np.uint16), ho)),
              "o_differing": int((o.view(np.uint16) != ho).sum()),
              "o_max_ulp_diff": int(np.abs(o.view(np.int16).astype(np.int64) - ho.view(np.int16).astype(np.int64)).max()),
              "o_max_abs_diff_vs_card": float(np.abs(o.astype(np.float64) - ho.view(np.float16).astype(np.float64)).max()),
              "M_bit_equal": bool(np.array_equal(M.view(np.uint32), hM)), "M_differing": int((M.view(np.uint32) != hM).sum()),
              "M_max_abs_diff": float(np.abs(M - hM.view(np.float32)).max()),
              "o_max_abs_err_card_vs_float64": float(np.abs(ho.view(np.float16).astype(np.float64) - ref).max()),
              "o_max_abs_err_simgpu_vs_float64": float(np.abs(o.astype(np.float64) - ref).max())})
    out["cases"][name] = r
    print(name, r, flush=True)

for name, Mm, Nn, Kk, BM, BN, BK, w, s in K.MM_CASES:
    c = card["cases"][name]
    a, b = data[name + "_a"].view(np.float16), data[name + "_b"].view(np.float16)
    cc = np.full((Mm, Nn), np.nan, np.float16)
    ds = [TensorDescriptor.from_tensor(simgpu.as_tensor(x), blk) for x, blk in ((a, [BM, BK]), (b, [BK, BN]), (cc, [BM, BN]))]
    t0 = time.time()
    rep = simgpu.jit(K.matmul_tma)[(triton.cdiv(Mm, BM), triton.cdiv(Nn, BN))](
        *ds, Mm, Nn, Kk, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, num_warps=w, num_stages=s, gpu=GPU)
    hc = data[name + "_c"]
    exact = a.astype(np.float64) @ b.astype(np.float64)
    r = {"case": dict(M=Mm, N=Nn, K=Kk, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, num_warps=w, num_stages=s),
         **common(name, rep, c, t0), "outputs": int(hc.size), "c_bit_equal": bool(np.array_equal(cc.view(np.uint16), hc)),
         "c_differing": int((cc.view(np.uint16) != hc).sum()),
         "card_equal_exact_rounded_fraction": float((exact.astype(np.float32).astype(np.float16).view(np.uint16) == hc).mean())}
    out["cases"][name] = r
    print(name, r, flush=True)
json.dump(out, open(os.path.join(HERE, "results.json"), "w"), indent=1)
