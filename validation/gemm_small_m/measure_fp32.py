"""Call 5 of validation/gemm_small_m (issue 24): fp32 (tf32 off) GEMMs with min(M, N) <= 64 under
triton.testing.do_bench, with torch.profiler kernel names.  Split fixed before the call, as in
measure_small_m.py: calibration when the last hex digit of sha256(f"{m}x{n}x{k}:{dtype}") is
even, else held out.

    PYTHONUNBUFFERED=1 python3 measure_fp32.py $OUT

  grid  x @ W: M in {1,2,3,4,6,8,12,16,24,32,48,64}, N in 14 values (aligned and not), K in
        {768, 2048, 4096, 8192}: a seeded random 300;  W @ X: M in {4096, 14336}, K in {4096, 5120},
        B in 12 values <= 64: a random 48
"""
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure_small_m as M  # noqa: E402
import measure_fresh as F  # noqa: E402
import torch  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
M.OUT = F.OUT = OUT
M.DT["fp32"] = torch.float32
R = M.R
R["doc"] = __doc__


def save():
    import json
    R["elapsed_s"] = time.time() - M.T0
    with open(os.path.join(OUT, "gemm_fp32.json"), "w") as f:
        json.dump(R, f)


F.save = save

if __name__ == "__main__":
    torch.backends.cuda.matmul.allow_tf32 = False
    M.env()
    ns = (1000, 1538, 2047, 3072, 4096, 4099, 5120, 8191, 11008, 14336, 24577, 30522, 32000, 50257)
    full = [(m, n, k, "fp32") for m in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64) for n in ns
            for k in (768, 2048, 4096, 8192)]
    shapes = random.Random(27).sample(full, 300)
    full = [(m, b, k, "fp32") for m in (4096, 14336) for k in (4096, 5120) for b in (1, 2, 3, 4, 5, 8, 9, 16, 17, 31, 32, 64)]
    shapes += random.Random(28).sample(full, 48)
    F.run(shapes, "small", 5, 20)
    for r in R["small"]:
        r["heldout"] = M.heldout(r["m"], r["n"], r["k"], r["dtype"])
    F.profile()
    R["env"]["date_utc_end"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    save()
    M.log("done")
