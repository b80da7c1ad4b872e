"""Lesson: how much of a kernel's time is memory?  Take memory out of the way and look.

The experiment is one argument: `memory=PerfectMemory` makes every global access an L1 hit
for the timing model (no L2, no DRAM), while the kernel still computes and moves the same
data.  The time left is what the arithmetic, the instruction issue and the launch cost; the
gap to the real prediction is what memory costs.

A 64 MiB copy is bound by L2/DRAM bandwidth; with perfect memory about half its time goes,
and what is left is its integer index arithmetic.  A loop of dependent fused multiply-adds
barely touches memory: perfect memory changes almost nothing.  The tiled matmul (256 x 256:
256 blocks on 132 SMs, two blocks on the busiest SM) waits on its loads with too few warps
to hide them: memory is about half of its time too.

Each launch is sampled (sample=True): only the blocks the timing model simulates run (SM 0's
blocks of the first and the last wave) and long loops are simulated at 16 and 32 iterations
and extrapolated (docs/timing.md measures the error).  About 20 s of CPU (a fresh clone, with compiling).

    python examples/lesson_perfect_memory.py
"""
import numpy as np

import simgpu
from simgpu.kernels import copy_gridstride, fp32_fma, matmul_tiled
from simgpu.memory import PerfectMemory

N = 1 << 24
MM_N = 256          # 16 x 16 blocks of 16 x 16 threads: fewer blocks than SMs x 2, latency-bound


def cases():
    rng = np.random.default_rng(0)
    x = rng.random(N, dtype=np.float32)
    a = rng.random((MM_N, MM_N), dtype=np.float32)
    b = rng.random((MM_N, MM_N), dtype=np.float32)
    return [
        ("copy 64 MiB", copy_gridstride, 132 * 4, 512, lambda: (x, np.empty_like(x))),
        ("fp32 FMA chain", fp32_fma, 264, 256, lambda: (x[:264 * 256].copy(), np.empty(264 * 256, np.float32), 256)),
        (f"tiled matmul {MM_N}", matmul_tiled, (MM_N // 16, MM_N // 16), (16, 16),
         lambda: (a, b, np.empty_like(a), MM_N)),
    ]


def measure():
    """(name, real time, perfect-memory time, bottleneck) for each kernel, in seconds."""
    rows = []
    for name, kernel, grid, block, make in cases():
        real = simgpu.launch(kernel, grid, block, make(), sample=True)
        ideal = simgpu.launch(kernel, grid, block, make(), sample=True, memory=PerfectMemory)
        rows.append((name, real.metrics["gpu__time_duration.sum"] * 1e-9,
                     ideal.metrics["gpu__time_duration.sum"] * 1e-9, real.extras["timing"].bottleneck))
    return rows


if __name__ == "__main__":
    print(f"{'kernel':20s} {'time (us)':>10s} {'perfect memory':>15s} {'memory costs':>13s}  bottleneck")
    for name, real, ideal, bottleneck in measure():
        print(f"{name:20s} {real * 1e6:10.1f} {ideal * 1e6:15.1f} {1 - ideal / real:12.0%}  {bottleneck.split(':')[0]}")
