"""Here: simgpu's side of validation/tensor_cores/wgmma.  For each case, (1) simgpu's front door
compiles the matmul with the local Triton (3.6.0, as on the card) and its PTX is compared with
the card's; (2) the card's PTX runs on simgpu's PTX runner with the card's inputs, and the output
bits are compared with the card's, with the k16-step model (ops_mma.fused_sum per wgmma k16
step: tests/test_ptx_triton_mma.model_matmul) and with numpy's exact product.  Writes
results.json.  Run: PYTHONPATH=<simgpu>:<triton 3.6 target> python compare.py"""
import json, os, shutil, sys
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
os.makedirs("/tmp/simgpu_wgmma", exist_ok=True)
shutil.copy(os.path.join(HERE, "kernels.py"), "/tmp/simgpu_wgmma/kernels.py")
sys.path[:0] = ["/tmp/simgpu_wgmma", os.path.join(ROOT, "tests")]
import triton, simgpu, kernels as K
from simgpu.validate import dobench_seconds, unprofiled
from simgpu.ptx.runner import run
from test_ptx_triton_mma import model_matmul

H = os.path.join(HERE, "h200")
card = json.load(open(os.path.join(H, "h200_wgmma.json")))
data = np.load(os.path.join(H, "h200_wgmma.npz"))
GPU = unprofiled("H200")   # the card ran do_bench outside a profiler (../clock/)
out = {"card": {k: card[k] for k in ("date", "gpu", "triton", "torch", "cuda", "nvidia_smi")},
       "here": {"triton": triton.__version__, "numpy": np.__version__, "gpu": "unprofiled('H200')",
                "time": "time_us_simgpu_dobench = dobench_seconds(rep) (kernel + floor) vs the card's do_bench median"},
       "cases": {}}
for name, M, N, K_, meta, fam in K.CASES:
    a, b = data[name + "_a"].view(np.float16), data[name + "_b"].view(np.float16)
    ra, rb = K.inputs(name, M, N, K_, fam)
    assert np.array_equal(ra.view(np.uint16), a.view(np.uint16)) and np.array_equal(rb.view(np.uint16), b.view(np.uint16))
    hw = data[name + "_c"]
    ptx_card = open(os.path.join(H, name + ".ptx")).read()
    c = np.full((M, N), np.nan, np.float16)
    grid = lambda m: (triton.cdiv(M, m["BLOCK_SIZE_M"]) * triton.cdiv(N, m["BLOCK_SIZE_N"]),)
    rep = simgpu.jit(K.matmul_kernel)[grid](a, b, c, M, N, K_, K_, 1, N, 1, N, 1, gpu=GPU, **meta)
    ptx_here = rep.extras["ptx"]["compiled"].ptx
    strip = lambda t: "\n".join(l for l in t.splitlines() if not l.lstrip().startswith(".file"))
    c2 = np.full((M, N), np.nan, np.float16)
    scratch = np.zeros(16, np.uint8)
    nblk = grid(meta)[0]
    run(ptx_card, "matmul_kernel", (nblk, 1, 1), 32 * meta["num_warps"],
        (a, b, c2, np.int32(M), np.int32(N), np.int32(K_), np.int32(K_), np.int32(N), np.int32(N), scratch, scratch.copy()),
        dynamic_shared_bytes=card["cases"][name]["shared"])
    model = model_matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float16).view(np.uint16)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    rne = exact.astype(np.float32).astype(np.float16).view(np.uint16)
    ulp = lambda x, y: np.abs(x.astype(np.int64) - y.astype(np.int64))   # same-sign fp16 bits
    r = {"M": M, "N": N, "K": K_, "family": fam, "meta": meta,
         "ptx_identical": ptx_here == ptx_card, "ptx_identical_but_file_lines": strip(ptx_here) == strip(ptx_card),
         "card_ptx_on_simgpu_bit_equal_to_card": bool(np.array_equal(c2.view(np.uint16), hw)),
         "front_door_bit_equal_to_card": bool(np.array_equal(c.view(np.uint16), hw)),
         "model_bit_equal_to_card": bool(np.array_equal(model, hw)),
         "card_equal_exact_rounded_fraction": float((rne == hw).mean()),
         "outputs": int(hw.size), "differing_from_card": int((c2.view(np.uint16) != hw).sum()),
         "max_abs_err_vs_exact_card": float(np.abs(hw.view(np.float16).astype(np.float64) - exact).max()),
         "registers_card": card["cases"][name]["n_regs"], "registers_simgpu": rep.extras["ptx"].get("registers"), "time_us_card": card["cases"][name]["time_ms"] * 1e3,
         "time_us_simgpu": rep.metrics.get("gpu__time_duration.sum", float("nan")) / 1e3,
         "time_us_simgpu_dobench": dobench_seconds(rep) * 1e6,
         "dobench_ratio": dobench_seconds(rep) * 1e3 / card["cases"][name]["time_ms"]}
    out["cases"][name] = r
    print(name, {k: v for k, v in r.items() if k not in ("meta",)})
json.dump(out, open(os.path.join(HERE, "results.json"), "w"), indent=1)
