"""Here: FlashAttention-2 forward (tutorial 06's _attn_fwd, not causal: STAGE=1; Z=1, H=16,
N=1024, D=64, fp16, 128 x 64 tiles, 4 warps, 3 stages) simulated on simgpu.validate.unprofiled("H100")
against the H100's measurement of the same launch (h100/card_lecture.json, "fa", 2026-12-07:
do_bench median and the CUPTI duration of _attn_fwd).  The launch is sampled (first and last
waves; the timing model samples its waves either way).  Writes fa_h100.json.  Run:
PYTHONPATH=<simgpu> python fa_h100.py"""
import importlib.util
import json
import os
import shutil
import time

import numpy as np

import simgpu
from simgpu.validate import dobench_seconds, unprofiled

HERE = os.path.dirname(os.path.abspath(__file__))


def _load(name, src, tmp):
    os.makedirs(tmp, exist_ok=True)                     # Triton's PTX names its file: as on the card
    shutil.copy(src, os.path.join(tmp, "kernels.py"))
    spec = importlib.util.spec_from_file_location(name, os.path.join(tmp, "kernels.py"))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def main():
    import triton
    from triton.tools.tensor_descriptor import TensorDescriptor
    L = _load("lecture_kernels", os.path.join(HERE, "kernels.py"), "/tmp/simgpu_lecture")
    FA = _load("fa_kernels", os.path.join(HERE, "..", "flash", "kernels.py"), "/tmp/simgpu_flash")
    card = json.load(open(os.path.join(HERE, "h100", "card_lecture.json")))
    Z, H, N, D = L.FA_SIZES[0]
    c = card["fa"][f"Z{Z}_H{H}_N{N}_D{D}"]["fa"]
    rng = np.random.default_rng(0)
    q, k, v = ((rng.standard_normal((Z, H, N, D)) * 0.5).astype(np.float16) for _ in range(3))
    o, Mst = np.zeros_like(q), np.zeros((Z, H, N), np.float32)
    y, BM, BN = Z * H * N, L.FA_META["BLOCK_M"], L.FA_META["BLOCK_N"]
    descs = [TensorDescriptor(simgpu.as_tensor(t.reshape(y, D)), [y, D], [D, 1], [BM if i in (0, 3) else BN, D])
             for i, t in enumerate((q, k, v, o))]
    t0, c0 = time.time(), time.process_time()
    rep = simgpu.launch(FA._attn_fwd, (triton.cdiv(N, BM), Z * H, 1), None, (0.5, Mst, Z, H, *descs, N),
                        HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN, FP8_OUTPUT=False, STAGE=1, warp_specialize=False,
                        IS_HOPPER=True, num_warps=L.FA_META["num_warps"], num_stages=L.FA_META["num_stages"],
                        sample=True, gpu=unprofiled("H100"))
    kern_us = rep.metrics["gpu__time_duration.sum"] / 1e3
    out = {"card": {k: card[k] for k in ("date", "gpu", "triton", "torch", "cuda", "method", "nvidia_smi")},
           "gpu": "unprofiled('H100')", "case": dict(Z=Z, H=H, N_CTX=N, HEAD_DIM=D, causal=False, **L.FA_META),
           "card_kernel_us": c["kernel_us"]["_attn_fwd"], "simgpu_kernel_us": kern_us,
           "kernel_ratio": kern_us / c["kernel_us"]["_attn_fwd"],
           "card_dobench_us": c["median_us"], "simgpu_dobench_us": dobench_seconds(rep) * 1e6,
           "dobench_ratio": dobench_seconds(rep) * 1e6 / c["median_us"],
           "simgpu_registers": rep.extras["ptx"].get("registers"),
           "simgpu_smsp__inst_executed.sum": rep.metrics.get("smsp__inst_executed.sum"),
           "bottleneck": str(rep.extras.get("bottleneck", "")) or None,
           "outputs_vs_float64_max_abs": None, "wall_s": round(time.time() - t0, 1),
           "cpu_s": round(time.process_time() - c0, 1)}
    s = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2) * 0.5
    p = np.exp(s - s.max(-1, keepdims=True))
    ref = p @ v.astype(np.float64) / p.sum(-1, keepdims=True)
    out["outputs_vs_float64_max_abs"] = float(np.abs(o.astype(np.float64) - ref).max())
    json.dump(out, open(os.path.join(HERE, "fa_h100.json"), "w"), indent=1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
