"""GPU vs TPU: many small matrix units vs few big ones, with numbers.

    python examples/lecture_tpu.py [--gpu H200] [--tpu v5p] [--out DIR]

Prints both chips' matrix units, then the padding and occupancy of small and odd matmuls on
each: an H200 tensor core works on 16 x 8 x 16 pieces, a TPU MXU on 8 x 128 x 128.
"""
from __future__ import annotations

import lecture_common as common
from simgpu.hardware import get_gpu
from simgpu.hardware.tpu import TPU_PRESETS, get_tpu
from simgpu.model.tpu import compare, gpu_matrix_units, tpu_matrix_units

SHAPES = [(32, 32, 32), (64, 64, 64), (100, 100, 100), (128, 128, 128), (200, 200, 200), (1000, 1000, 1000),
          (4096, 4096, 4096), (4100, 4100, 4100), (4096, 96, 96), (4096, 4096, 80), (8, 4096, 4096)]


def main(argv=None) -> int:
    args = common.parse(argv, __doc__, tpu="v5p")
    gpu, tpu = get_gpu(args.gpu), get_tpu(args.tpu)

    print("TPU presets (sources in simgpu/hardware/tpu.py)")
    print(common.table(("chip", "TensorCores", "MXUs", "MXU", "clock GHz", "bf16 TFLOP/s", "HBM GB/s",
                        "ridge FLOP/B"),
                       [(t.name, t.tensorcores_per_chip, t.mxus, f"{t.mxu_rows}x{t.mxu_cols}", f"{t.clock_hz / 1e9:.2f}",
                         f"{t.peak_bf16_flops / 1e12:.0f}", f"{t.hbm_bandwidth_bytes_per_s / 1e9:.0f}",
                         f"{t.ridge_point():.0f}") for t in TPU_PRESETS.values()]))
    g, t = gpu_matrix_units(gpu), tpu_matrix_units(tpu)
    print("\nmatrix units")
    print(common.table(("chip", "units", "unit piece (m x n x k)", "TFLOP/s per unit", "chip TFLOP/s"),
                       [(u.name, u.units, "x".join(map(str, u.unit_tile)), f"{u.flops_per_unit / 1e12:.2f}",
                         f"{u.peak_flops / 1e12:.0f}") for u in (g, t)]))
    print(f"  {gpu.name}: {gpu.sm_count} SMs x {gpu.schedulers_per_sm} tensor cores; "
          f"{tpu.name}: {tpu.tensorcores_per_chip} TensorCores x {tpu.mxus_per_tensorcore} MXUs")

    rows = []
    for shape, a, b in compare(gpu, tpu, SHAPES):
        rows.append(("x".join(map(str, shape)), f"{a.padding_efficiency:.3f}", f"{a.occupancy:.3f}",
                     f"{a.utilisation:.3f}", f"{a.tflops:.1f}", f"{b.padding_efficiency:.3f}",
                     f"{b.occupancy:.3f}", f"{b.utilisation:.3f}", f"{b.tflops:.1f}",
                     "yes" if b.below_lecture_min else ""))
    print(f"\nM x N x K on {gpu.name} (left) and {tpu.name} (right), bf16")
    print(common.table(("shape", "GPU pad", "GPU occ", "GPU util", "GPU TFLOP/s", "TPU pad", "TPU occ",
                        "TPU util", "TPU TFLOP/s", f"< {tpu.lecture_min_dim} (lecture: refused)"), rows))
    print("\nutil = padding x occupancy; TFLOP/s also capped by HBM (each operand moved once).")
    from simgpu.plot.model import tpu_vs_gpu_plot
    common.save(tpu_vs_gpu_plot(gpu, tpu), args.out, "tpu_vs_gpu.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
