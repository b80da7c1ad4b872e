"""Call 9 on the H200: the tensor-core rate of the sm80 instruction FlashAttention-2 and the
CUTLASS attention kernels run (mma.sync.m16n8k16, bf16 and fp16 in, fp32 accumulate), and the
SM clock it ran at.

    python3 validation/lecture/measure9.py $OUT

A CuPy RawKernel (NVRTC, compiled for this GPU) where every warp issues `mma.sync.aligned.
m16n8k16.row.col.f32.{bf16,fp16}.f32` on registers only: 8 independent accumulator chains, no
memory traffic in the loop, operands non-zero (bit patterns made from the thread index).  Grid:
132 x k blocks of w warps for (k, w) in (1, 4), (1, 8), (2, 8), (4, 4); ITERS iterations, events
around the launch (after a warm-up launch), 5 launches, median.  Thread 0 of each block records
clock64() and %globaltimer at its start and end: cycles / ns gives the SM clock of the run.
FLOP per mma: 2 x 16 x 8 x 16 = 4096.
-> lecture_h200_call9.json
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time

SRC = r"""
extern "C" __global__ void mma_loop(float* out, long long* clk, int iters) {
  unsigned t = threadIdx.x + 1;
  unsigned a0 = 0x3f803f80u ^ (t * 0x00010001u), a1 = 0x3f003f00u ^ (t * 0x00030003u);
  unsigned a2 = 0x3e803e80u ^ (t * 0x00050005u), a3 = 0x3f403f40u ^ (t * 0x00070007u);
  unsigned b0 = 0x3f203f20u ^ (t * 0x000b000bu), b1 = 0x3e403e40u ^ (t * 0x000d000du);
  float c[8][4];
  #pragma unroll
  for (int j = 0; j < 8; j++) { c[j][0] = c[j][1] = c[j][2] = c[j][3] = 0.f; }
  long long c0 = clock64(); unsigned long long g0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  for (int i = 0; i < iters; i++) {
    #pragma unroll
    for (int j = 0; j < 8; j++) {
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.DT.DT.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                   : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
                   : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
  }
  long long c1 = clock64(); unsigned long long g1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  float s = 0.f;
  #pragma unroll
  for (int j = 0; j < 8; j++) s += c[j][0] + c[j][1] + c[j][2] + c[j][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) { clk[2 * blockIdx.x] = c1 - c0; clk[2 * blockIdx.x + 1] = (long long)(g1 - g0); }
}
"""


def main(out_dir):
    import cupy as cp
    dev = cp.cuda.Device(0)
    res = {"env": {"cupy": cp.__version__, "python": platform.python_version(),
                   "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
                   "cc": dev.compute_capability, "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())},
           "method": __doc__, "runs": []}
    for dt in ("bf16", "f16"):
        k = cp.RawKernel(SRC.replace("DT", dt), "mma_loop", options=("-std=c++17",))
        for blocks_per_sm, warps in ((1, 4), (1, 8), (2, 8), (4, 4)):
            blocks, threads = 132 * blocks_per_sm, 32 * warps
            out = cp.zeros(blocks * threads, cp.float32)
            clk = cp.zeros(2 * blocks, cp.int64)
            iters = 20000
            k((blocks,), (threads,), (out, clk, cp.int32(iters)))
            cp.cuda.runtime.deviceSynchronize()
            times, mhz = [], []
            for _ in range(5):
                s, e = cp.cuda.Event(), cp.cuda.Event()
                s.record()
                k((blocks,), (threads,), (out, clk, cp.int32(iters)))
                e.record()
                e.synchronize()
                times.append(cp.cuda.get_elapsed_time(s, e) * 1e-3)
                c = clk.get().reshape(-1, 2)
                mhz.append(float(statistics.median(c[:, 0] / c[:, 1] * 1e3)))
            t = statistics.median(times)
            flops = blocks * warps * iters * 8 * 4096
            row = {"dtype": dt, "blocks": blocks, "warps": warps, "iters": iters, "seconds": t, "samples": times,
                   "tflops": flops / t / 1e12, "sm_mhz": statistics.median(mhz), "sm_mhz_samples": mhz,
                   "out_finite": bool(cp.isfinite(out).all().get())}
            res["runs"].append(row)
            print(f"{dt} {blocks} blocks x {warps} warps: {row['tflops']:.1f} TFLOP/s at {row['sm_mhz']:.0f} MHz "
                  f"({t * 1e3:.2f} ms), finite {row['out_finite']}", flush=True)
    with open(os.path.join(out_dir, "lecture_h200_call9.json"), "w") as f:
        json.dump(res, f, indent=0)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    main(out)
