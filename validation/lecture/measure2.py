"""Second lecture call on the H200: kernel-family rates, the per-call floor, and HOLD-OUT sweeps.

    python3 validation/lecture/measure2.py $OUT/lecture_h200_2.json

  "micro"    rates of the cuBLAS fallback families at one large size each (N = 8191: sm75
             align1, 8190: align2, 8188: align4, bf16 and fp16; fp32 and tf32 at 8191), the
             bf16 rate at 16384 x 16384 x 8192 with one call per sample (as the sweeps time),
             and the per-call floor (64^3 .. 512^3 matmuls, back-to-back) at the start, middle
             and end of the run, before any profiler is loaded.
  "holdout"  sweeps measured after the model was written and not used to build it: square bf16
             at N = 96 + 64 i (between the first sweep's sizes), square fp16 step 128, 60 random
             shapes (seeded), a decode sweep with a 4096 x 14336 weight, attention at d = 128.

Same timing as measure.py (events around back-to-back calls, median of samples).
"""
from __future__ import annotations

import json
import random
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import measure as M  # noqa: E402

DEV = "cuda"


def floor_probe(tag, out):
    row = {}
    for n in (64, 128, 256, 512):
        a = torch.randn(n, n, device=DEV, dtype=torch.bfloat16)
        b = torch.randn(n, n, device=DEV, dtype=torch.bfloat16)
        row[f"matmul{n}_loop_s"] = M.bench(lambda: torch.matmul(a, b), target_ms=5)[0]
        row[f"matmul{n}_graph_s"] = M.graph_time(lambda: torch.matmul(a, b))
    x = torch.randn(1024, device=DEV)
    row["add1k_loop_s"] = M.bench(lambda: torch.add(x, 1.0), target_ms=5)[0]
    out[tag] = row
    M.log("floor", tag, {k: round(v * 1e6, 2) for k, v in row.items() if v})


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "lecture_h200_2.json"
    R = {"env": {"torch": torch.__version__, "cuda": torch.version.cuda,
                 "gpu": torch.cuda.get_device_properties(0).name,
                 "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())},
         "micro": {"floor": {}}, "holdout": {}, "method": __doc__}
    micro, hold = R["micro"], R["holdout"]

    def save():
        R["log"] = M.LOG
        with open(out_path, "w") as f:
            json.dump(R, f, indent=1)

    floor_probe("start", micro["floor"])
    fam = []
    for dt, n in (("bf16", 8191), ("bf16", 8190), ("bf16", 8188), ("fp16", 8191), ("fp16", 8190),
                  ("fp32", 8191), ("tf32", 8191), ("tf32", 8190)):
        fam.append(M.mm_case(n, n, n, dt, target_ms=20, samples=5))
        M.log("family", dt, n, round(fam[-1]["tflops"], 1))
    micro["family"] = fam
    r = M.mm_case(16384, 16384, 8192, "bf16", target_ms=6, samples=5)
    micro["bf16_16384_short"] = r
    M.log("bf16 16384 short samples", round(r["tflops"], 1))
    save()

    sq = [M.mm_case(n, n, n, "bf16", target_ms=6, samples=5) for n in range(96, 8161, 64)]
    hold["square_bf16_offset"] = sq
    M.log("square offset", [(r["n"], round(r["tflops"])) for r in sq[::8]])
    floor_probe("middle", micro["floor"])
    sq16 = [M.mm_case(n, n, n, "fp16", target_ms=6, samples=5) for n in range(128, 8193, 128)]
    hold["square_fp16"] = sq16
    save()

    rng = random.Random(20261130)
    shapes = []
    for i in range(60):
        m, n, k = (int(round(2 ** rng.uniform(8, 14) / 64)) * 64 for _ in range(3))
        if i % 4 == 3:
            n += 1                                   # one in four misaligned (odd N)
        shapes.append((m, n, k))
    hold["random_bf16"] = [M.mm_case(m, n, k, "bf16", target_ms=6, samples=5) for (m, n, k) in shapes]
    M.log("random done")
    dec = [M.mm_case(b, 14336, 4096, "bf16", target_ms=6, samples=5)
           for b in (1, 2, 4, 8, 16, 32, 64, 96, 128, 160, 192, 256, 320, 384, 512, 768, 1024, 2048)]
    hold["decode_bf16_4096x14336"] = dec
    M.log("decode", [(r["m"], round(r["seconds"] * 1e6, 1)) for r in dec])
    save()

    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
                "math": SDPBackend.MATH}
    att = []
    B, H, d = 2, 8, 128
    for T in (1024, 2048, 4096, 8192):
        q, k, v = (torch.randn(B, H, T, d, device=DEV, dtype=torch.bfloat16) for _ in range(3))
        for bname, be in backends.items():
            row = {"B": B, "H": H, "T": T, "d": d, "dtype": "bf16", "backend": bname, "causal": False}
            try:
                with sdpa_kernel(be):
                    fn = lambda: F.scaled_dot_product_attention(q, k, v)
                    fn(); torch.cuda.synchronize()
                    base = torch.cuda.memory_allocated()
                    torch.cuda.reset_peak_memory_stats()
                    o = fn(); torch.cuda.synchronize()
                    row["peak_bytes_fwd"] = torch.cuda.max_memory_allocated() - base
                    row["out_bytes"] = o.numel() * o.element_size()
                    del o
                    row["seconds_fwd"] = M.bench(fn, target_ms=8, samples=5)[0]
            except Exception as exc:
                row["error"] = repr(exc)[:300]
            att.append(row)
            M.log("attn", bname, T, round(row.get("seconds_fwd", 0) * 1e6, 1), "us",
                  round(row.get("peak_bytes_fwd", 0) / 1e6, 1), "MB")
        del q, k, v
        torch.cuda.empty_cache()
    hold["attention_d128"] = att
    floor_probe("end", micro["floor"])
    save()

    # kernel names last, so the profiler cannot touch the timings above
    for r in fam:
        M.set_tf32(r["dtype"] == "tf32")
        a = torch.randn(r["m"], r["k"], device=DEV, dtype=M.DT[r["dtype"]])
        b = torch.randn(r["k"], r["n"], device=DEV, dtype=M.DT[r["dtype"]])
        r["kernels"] = M.kernels_of(lambda: torch.matmul(a, b))
        M.set_tf32(False)
    for r in hold["random_bf16"] + sq[::4]:
        a = torch.randn(r["m"], r["k"], device=DEV, dtype=torch.bfloat16)
        b = torch.randn(r["k"], r["n"], device=DEV, dtype=torch.bfloat16)
        r["kernels"] = M.kernels_of(lambda: torch.matmul(a, b))
    floor_probe("after_profiler", micro["floor"])
    save()
    M.log("done")


if __name__ == "__main__":
    main()
