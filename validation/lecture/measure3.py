"""Third lecture call on the H200: library kernel classes the attention math path and the fp8
quantise are made of, on shapes that none of the check sweeps uses.

    python3 validation/lecture/measure3.py $OUT/lecture_h200_kernels.json

  "elementwise"  one PyTorch op at a time on a 6144 x 6144 tensor (bf16 or fp32), median of
                 back-to-back calls, CUDA-graph replayed (no host floor): abs, amax, x * 0-d
                 fp32 scale, .to(float8_e4m3fn), fp32 -> bf16, eq(-inf) -> bool, all(-1) over
                 bool, where(row mask, 0, x), softmax(-1) fp32 (rows of 6144), add_
  "simt"         fp32 GEMMs (no tf32) whose shapes make cuBLAS choose its 64x64, 128x128 and
                 256x128 FFMA kernels (kernel name from the profiler, after timing)
"""
from __future__ import annotations

import json
import sys
import time

import torch

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import measure as M  # noqa: E402

DEV = "cuda"


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "lecture_h200_kernels.json"
    R = {"env": {"torch": torch.__version__, "cuda": torch.version.cuda,
                 "gpu": torch.cuda.get_device_properties(0).name,
                 "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())},
         "method": __doc__, "elementwise": [], "simt": []}
    n = 6144
    xb = torch.randn(n, n, device=DEV, dtype=torch.bfloat16)
    xf = torch.randn(n, n, device=DEV, dtype=torch.float32)
    scale = torch.tensor(3.0, device=DEV)
    neg = torch.tensor(float("-inf"), device=DEV)
    maskb = xf.eq(neg)
    rows = maskb.all(-1, keepdim=True)
    zero = torch.tensor(0.0, device=DEV)
    yf = torch.randn(n, n, device=DEV)
    ops = {  # name: (fn, bytes moved)
        "abs_bf16": (lambda: xb.abs(), 4), "amax_bf16": (lambda: xb.abs().max(), None),
        "max_bf16": (lambda: xb.max(), 2), "mul_scalar_tensor_bf16": (lambda: xb * scale, 4),
        "to_fp8_from_bf16": (lambda: xb.to(torch.float8_e4m3fn), 3),
        "to_bf16_from_fp32": (lambda: xf.to(torch.bfloat16), 6), "to_fp32_from_bf16": (lambda: xb.float(), 6),
        "eq_neginf_fp32": (lambda: xf.eq(neg), 5), "all_bool_rows": (lambda: maskb.all(-1, keepdim=True), 1),
        "where_rowmask_fp32": (lambda: torch.where(rows, zero, xf), 8),
        "softmax_fp32_rows6144": (lambda: torch.softmax(xf, -1), 8),
        "add_inplace_fp32": (lambda: yf.add_(xf), 12), "copy_fp32": (lambda: yf.copy_(xf), 8),
    }
    for name, (fn, per) in ops.items():
        t_loop = M.bench(fn, target_ms=5)[0]
        t_graph = M.graph_time(fn, reps=50)
        row = {"name": name, "elements": n * n, "bytes_per_element": per, "loop_s": t_loop, "graph_s": t_graph}
        if per and t_graph:
            row["bytes_per_s_graph"] = per * n * n / t_graph
        R["elementwise"].append(row)
        M.log(name, round(t_loop * 1e6, 1), round((t_graph or 0) * 1e6, 1),
              round(row.get("bytes_per_s_graph", 0) / 1e12, 2))
    del xb, xf, yf, maskb
    shapes = [(3072, 640, 2048, 1), (2048, 384, 1536, 1), (6144, 6144, 64, 8), (6144, 64, 6144, 8),
              (4096, 2560, 3072, 1), (6144, 6144, 1024, 1), (1536, 1536, 1536, 1)]
    for (m, nn, k, b) in shapes:
        a = torch.randn(b, m, k, device=DEV)
        w = torch.randn(b, k, nn, device=DEV)
        fn = lambda: torch.matmul(a, w)
        t = M.bench(fn, target_ms=10, samples=5)[0]
        R["simt"].append({"m": m, "n": nn, "k": k, "batch": b, "seconds": t, "tflops": 2 * m * nn * k * b / t / 1e12})
    for r, (m, nn, k, b) in zip(R["simt"], shapes):
        a = torch.randn(b, m, k, device=DEV)
        w = torch.randn(b, k, nn, device=DEV)
        r["kernels"] = M.kernels_of(lambda: torch.matmul(a, w))
        M.log("simt", m, nn, k, b, round(r["tflops"], 1), [x[:70] for x in r["kernels"]])
    with open(out_path, "w") as f:
        json.dump(R, f, indent=1)
    M.log("done")


if __name__ == "__main__":
    main()
