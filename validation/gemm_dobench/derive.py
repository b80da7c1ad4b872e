"""The do_bench parameters of simgpu.model.gemm (presets.H200_GEMM["dobench"]) from the
microbenchmarks only: call 1's "micro" part and call 2 (gemm_dobench_call2.json, K = 6144, no
target shape).  PYTHONPATH=. python validation/gemm_dobench/derive.py"""
import json
import statistics
from pathlib import Path

import numpy as np

from simgpu.model.gemm import parse_kernel_name

HERE = Path(__file__).resolve().parent
one = json.loads((HERE / "gemm_dobench.json").read_text())
two = json.loads((HERE / "gemm_dobench_call2.json").read_text())
mi = one["micro"]
E = {"bf16": 2, "fp16": 2, "fp32": 4}

floor = mi["floor"][0]["ms"] * 1e-3                      # 64^3 bf16
flush = mi["flush_alone"]["ms"] * 1e-3
g = [r for r in mi["gemv"] if r["m"] == 1 and r["n"] >= 4096]
b = np.array([8192 * r["n"] * 2 + 8192 * 2 + r["n"] * 2 for r in g], float)
t = np.array([r["ms"] * 1e-3 for r in g])
icpt, slope = np.linalg.lstsq(np.vstack([np.ones_like(b), b]).T, t, rcond=None)[0]
start = icpt - floor
bf = {r["dtype"]: r for r in mi["rates"]}
clock = 1.684e9 * bf["bf16"]["tflops"] / 699.6          # back-to-back 699.6 TFLOP/s, same shape
print(f"floor_s {floor:.3e}  flush_s {flush:.3e}  stream {1 / slope:.3e} B/s  start {start:.3e} s  "
      f"power-limited clock {clock:.4e} Hz  flush power {mi['flush_alone']['nvml']}")

# call 2: the fallbacks' streaming rate at small M = bytes of the big operand / (time - floor - start)
rates = {}
for r in two["points"]:
    ks = [k for k in r.get("kernels", []) if not any(a in k["name"] for a in ("splitKreduce", "scal_kernel"))]
    if not ks or r["m"] < 2:
        continue
    fam = parse_kernel_name(ks[0]["name"], ks[0]["grid"])[0]
    if "gemmSN" in ks[0]["name"]:
        fam = "gemmSN"
    nbytes = r["k"] * r["n"] * E[r["dtype"]]
    rate = nbytes / (r["ms"] * 1e-3 - floor - start)
    rates.setdefault((fam, r["dtype"] if fam in ("sm75", "sm80") else "any"), []).append(rate)
out = {f"{f}/{d}": statistics.median(v) for (f, d), v in sorted(rates.items())}
for k, v in out.items():
    print(f"stream {k}: {v / 1e12:.2f} TB/s over {len(rates[tuple(k.split('/'))])} shapes")
(HERE / "derived_params.json").write_text(json.dumps(
    {"floor_s": floor, "flush_s": flush, "stream_bytes_per_s": 1 / slope, "stream_start_s": start,
     "power_limited_sm_clock_hz": clock, "fallback_stream_bytes_per_s": out}, indent=1))
