"""The matmul "mystery plot": why some sizes are much slower than their neighbours.

    python examples/lecture_mystery_plot.py [--gpu H200] [--out DIR]

Prints the model's breakdown at sizes around the cliffs and saves the curve for every
N = 256..6144.
Three stacked effects (simgpu.model.matmul): tile quantisation (edge tiles do full work),
wave quantisation (tiles vs SMs x blocks/SM) and alignment (rows that start mid-sector).
"""
from __future__ import annotations

import numpy as np

import lecture_common as common
from simgpu.hardware import get_gpu
from simgpu.model.matmul import matmul_throughput, mystery_curve

SIZES = (1024, 2048, 2049, 2056, 2064, 2112, 2176, 2304, 3072, 4096, 4097, 4104, 4112, 4224, 8192)


def main(argv=None) -> int:
    args = common.parse(argv, __doc__)
    gpu = get_gpu(args.gpu)
    rows = []
    for n in SIZES:
        r = matmul_throughput(gpu, n)
        rows.append((n, r.n_tiles, r.blocks_per_sm, f"{r.waves:.2f}", f"{r.tile_efficiency:.3f}",
                     f"{r.wave_efficiency:.3f}", f"{r.sector_efficiency:.3f}", "yes" if r.vectorizable else "no",
                     f"{r.tflops:.1f}", r.bound))
    print(f"Matmul N x N x N, fp16, 128x128x32 tiles, 256 threads x 128 registers, on {gpu}")
    print(common.table(("N", "tiles", "blk/SM", "waves", "tile eff", "wave eff", "sector eff",
                        "vec16", "TFLOP/s", "bound"), rows))
    steps = [matmul_throughput(gpu, n) for n in range(1024, 4097, 128)]
    a, b = max(zip(steps, steps[1:]), key=lambda p: p[0].tflops - p[1].tflops)
    wave = gpu.sm_count * a.blocks_per_sm
    print(f"\nwave cliff: N={a.n} has {a.n_tiles} tiles = {a.waves:.2f} waves of {gpu.sm_count} x "
          f"{a.blocks_per_sm} = {wave}; N={b.n} has {b.n_tiles} tiles = {b.waves:.2f} waves -> "
          f"{b.waves_executed} executed: {a.tflops:.0f} -> {b.tflops:.0f} TFLOP/s")
    c = matmul_throughput(gpu, 4097)
    print(f"alignment cliff: N=4097 rows are {4097 * 2} B, not a multiple of 32 B: sector efficiency "
          f"{c.sector_efficiency:.3f}, tile efficiency {c.tile_efficiency:.3f} -> {c.tflops:.0f} TFLOP/s "
          f"(N=4096: {matmul_throughput(gpu, 4096).tflops:.0f})")
    curve = mystery_curve(gpu, np.arange(256, 6145))
    print(f"sweep N=256..6144: best {curve.tflops.max():.0f} TFLOP/s at N={curve.sizes[curve.tflops.argmax()]}, "
          f"peak {curve.peak_tflops:.0f}")
    from simgpu.plot.model import mystery_plot
    common.save(mystery_plot(gpu, curve=curve), args.out, "mystery_plot.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
