"""The roofline: which kernels are memory-bound and which compute-bound, with numbers.

    python examples/lecture_roofline.py [--gpu H200] [--out DIR]

Prints every roof and ridge point of the GPU, then places common kernels on it: their FLOPs,
HBM bytes, arithmetic intensity, attainable TFLOP/s and roofline time.
"""
from __future__ import annotations

import lecture_common as common
from simgpu.hardware import get_gpu
from simgpu.model import roofline as rl
from simgpu.model.attention import flash_attention, naive_attention
from simgpu.model.tiling import naive_matmul_traffic, tiled_matmul_traffic
from simgpu.model.tricks import fusion_cost


def kernels(gpu, n_vec=1 << 26, n_mm=4096):
    """(name, FLOPs, HBM bytes, compute roof) of the kernels the lecture talks about."""
    mm = 2.0 * n_mm ** 3
    naive = naive_matmul_traffic(n_mm, n_mm, n_mm, "fp32")
    tiled = tiled_matmul_traffic(n_mm, n_mm, n_mm, 32, "fp32")
    ideal16 = 3 * n_mm * n_mm * 2
    na, fa = naive_attention(gpu, 4096, 64, heads=32), flash_attention(gpu, 4096, 64, heads=32)
    return [
        ("SAXPY fp32", 2 * n_vec, 12 * n_vec, "fp32"),
        ("ReLU fp32", n_vec, 8 * n_vec, "fp32"),
        ("ReLU fp16", n_vec, 4 * n_vec, "fp32"),
        ("sin^2+cos^2, 5 kernels", 5 * n_vec, fusion_cost(gpu, n_vec, False).bytes, "fp32"),
        ("sin^2+cos^2, fused", 5 * n_vec, fusion_cost(gpu, n_vec, True).bytes, "fp32"),
        ("matmul 4096 naive fp32", mm, naive.bytes_loaded + 4 * n_mm ** 2, "fp32"),
        ("matmul 4096 tiled T=32 fp32", mm, tiled.bytes_loaded + 4 * n_mm ** 2, "fp32"),
        ("matmul 4096 fp16, each byte once", mm, ideal16, "fp16_tensor"),
        ("attention N=4096 naive fwd", na.flops, na.hbm_bytes, "fp16_tensor"),
        ("attention N=4096 flash fwd", fa.flops, fa.hbm_bytes, "fp16_tensor"),
    ]


def main(argv=None) -> int:
    args = common.parse(argv, __doc__)
    gpu = get_gpu(args.gpu)
    print(f"Roofs of {gpu}")
    roofs = [(c, rl.compute_roof(gpu, c)) for c in rl.COMPUTE_ROOFS if _ok(rl.compute_roof, gpu, c)]
    mems = [(m, rl.memory_roof(gpu, m)) for m in rl.MEMORY_ROOFS if _ok(rl.memory_roof, gpu, m)]
    print(common.table(["compute roof", "TFLOP/s"] + [f"ridge vs {m} (FLOP/B)" for m, _ in mems],
                       [(c, f"{p / 1e12:.1f}", *(f"{p / b:.1f}" for _, b in mems)) for c, p in roofs]))
    print("memory roofs: " + ", ".join(f"{m} {b / 1e12:.2f} TB/s" for m, b in mems))
    points = [rl.roofline_point(gpu, name, f, b, compute=c) for name, f, b, c in kernels(gpu)]
    print()
    print(common.table(("kernel", "GFLOP", "HBM MB", "FLOP/B", "roof", "attainable TFLOP/s", "bound", "time us"),
                       [(p.name, f"{p.flops / 1e9:.3f}", f"{p.bytes / 1e6:.1f}", f"{p.arithmetic_intensity:.3f}",
                         p.compute, f"{p.attainable_flops / 1e12:.2f}", p.bound, f"{p.predicted_time_s * 1e6:.1f}")
                        for p in points]))
    from simgpu.plot.model import roofline_plot
    common.save(roofline_plot(points, gpu), args.out, "roofline.png")
    return 0


def _ok(fn, gpu, name):
    try:
        fn(gpu, name)
        return True
    except ValueError:
        return False


if __name__ == "__main__":
    raise SystemExit(main())
