"""The lecture's six tricks, each as a number you can check.

    python examples/lecture_six_tricks.py [--gpu H200] [--out DIR]
"""
from __future__ import annotations

import lecture_common as common
from simgpu.hardware import get_gpu
from simgpu.model import tricks
from simgpu.model.tiling import reuse

N_VEC = 1 << 26          # 64 M elements for the elementwise tricks


def main(argv=None) -> int:
    args = common.parse(argv, __doc__)
    gpu = get_gpu(args.gpu)
    print(f"Six tricks on {gpu}\n")

    print("1. Control divergence: both sides of an if/else run, the lanes not on a side masked off")
    print(common.table(("lanes taking if", "SIMT efficiency"),
                       [(k, f"{tricks.simt_efficiency(k):.3f}") for k in (0, 1, 8, 16, 31, 32)]))
    print(f"   random lanes, p = 0.5: {tricks.expected_simt_efficiency(0.5):.3f}; "
          f"ReLU as x * (x > 0), no branch: 1.000\n")

    print("2. Low precision: ReLU reads one element and writes one per FLOP")
    print(common.table(("dtype", "bytes/FLOP", f"time for {N_VEC >> 20} Mi elements (us)"),
                       [(d, f"{tricks.relu_bytes_per_flop(d):.0f}",
                         f"{N_VEC * tricks.relu_bytes_per_flop(d) / gpu.dram_bandwidth * 1e6:.1f}")
                        for d in ("fp32", "fp16", "fp8")]))
    print()

    print("3. Operator fusion: sin(x)^2 + cos(x)^2, fp32")
    rows = []
    for fused in (False, True):
        c = tricks.fusion_cost(gpu, N_VEC, fused)
        rows.append(("fused" if fused else "unfused", c.kernels, c.accesses_per_element,
                     f"{c.bytes / 1e6:.1f}", f"{c.time_s * 1e6:.1f}"))
    print(common.table(("version", "kernels", "HBM accesses/element", "HBM MB", "roofline time (us)"), rows))
    for name, r, w, _ in tricks.SIN2_COS2_UNFUSED:
        print(f"   {name:14s} reads {r}, writes {w}")
    print()

    print("4. Recomputation: x -> sigmoid -> sigmoid -> sigmoid -> out, forward + backward")
    store, rec = tricks.recomputation_ledgers()
    for led in (store, rec):
        print(f"   {led.strategy:9s} fwd {' '.join(led.forward):28s} bwd {' '.join(led.backward):32s}"
              f" = {led.accesses} accesses")
    print(f"   every access counted: {rec.accesses}/{store.accesses} = {tricks.recomputation_ratio():.3f}")
    print(f"   lecture's 5/8 = {tricks.recomputation_ratio(False):.3f}: the store side counted "
          "without reading the upstream gradient dout\n")

    print("5. Memory coalescing: 32-byte sectors per warp load, lane i reads element i x stride (fp32)")
    print(common.table(("stride", "sectors/request", "efficiency"),
                       [(s, tricks.sectors_per_request(s), f"{tricks.coalescing_efficiency(s):.3f}")
                        for s in (1, 2, 4, 8, 32)]))
    print()

    print("6. Tiling: global reads of a 4096 x 4096 x 4096 matmul")
    rows = []
    for t in (1, 8, 16, 32, 64):
        g = tricks.tiling_global_reads(4096, t)
        r = reuse(4096, t)
        rows.append((t, f"{g['tiled'] / 1e9:.3f}", f"{r.tiled_global_reads_per_element:.0f}",
                     r.shared_reads_per_global_load, f"{g['reduction']:.0f}x"))
    print(common.table(("T", "G elements read", "global reads/element (N/T)",
                        "shared reads per load (T)", "reduction"), rows))
    from simgpu.plot.model import six_tricks_plot
    common.save(six_tricks_plot(gpu), args.out, "six_tricks.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
