"""FlashAttention = tiling + online softmax + fusion + recomputation, with numbers.

    python examples/lecture_flashattention.py [--gpu H200] [--out DIR]

Checks the online softmax against the ordinary one, then compares the HBM traffic, FLOPs
and roofline time of naive (three / five kernels) and Flash attention, forward and backward.
"""
from __future__ import annotations

import numpy as np

import lecture_common as common
from simgpu.hardware import get_gpu
from simgpu.model.attention import (attention_reference, flash_attention, flash_block_sizes,
                                    flash_traffic_theta, naive_attention, online_attention,
                                    online_softmax, softmax)
from simgpu.model.roofline import dtype_bytes

D, HEADS = 64, 32


def main(argv=None) -> int:
    args = common.parse(argv, __doc__)
    gpu = get_gpu(args.gpu)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 1000)) * 10
    err = np.abs(online_softmax(x, 128) - softmax(x)).max()
    q, k, v = (rng.normal(size=(256, D)) for _ in range(3))
    err_att = np.abs(online_attention(q, k, v, 64) - attention_reference(q, k, v)).max()
    print(f"online softmax (tiles of 128) vs softmax: max |difference| = {err:.1e}")
    print(f"online attention (K/V tiles of 64) vs softmax(QK^T/sqrt(d))V: max |difference| = {err_att:.1e}")

    resident, streamed = flash_block_sizes(gpu, D)
    m_elems = gpu.max_shared_mem_per_block_bytes // dtype_bytes("fp16")
    print(f"\n{gpu}\nd = {D}, {HEADS} heads, fp16; SRAM M = {m_elems} elements -> resident tile "
          f"{resident} rows, streamed tile {streamed} rows")
    rows = []
    for n in (1024, 4096, 16384):
        for direction in ("forward", "backward"):
            a, f = (fn(gpu, n, D, HEADS, "fp16", direction) for fn in (naive_attention, flash_attention))
            rows.append((n, direction, f"{a.hbm_bytes / 2**20:.0f}", f"{f.hbm_bytes / 2**20:.0f}",
                         f"{a.hbm_bytes / f.hbm_bytes:.1f}x", f"{a.flops / 1e9:.0f}", f"{f.flops / 1e9:.0f}",
                         f"{a.time_s * 1e3:.3f}", f"{f.time_s * 1e3:.3f}", f"{a.time_s / f.time_s:.1f}x"))
    print(common.table(("N", "pass", "naive MiB", "flash MiB", "traffic cut", "naive GFLOP", "flash GFLOP",
                        "naive ms", "flash ms", "speed-up"), rows))
    print("\nflash K/V traffic per head / (N^2 d^2 / M): the paper's Theta(N^2 d^2 / M)")
    for n in (4096, 16384, 65536):
        kv = 2 * n * D * -(-n // resident)
        print(f"   N = {n:6d}: {kv / flash_traffic_theta(n, D, m_elems):.2f}")
    print("backward: naive reads the stored N x N P; flash recomputes S = QK^T tile by tile "
          "(10 N^2 d matmul FLOPs instead of 8) and never writes an N x N matrix")
    from simgpu.plot.model import attention_plot
    common.save(attention_plot(gpu, d=D, heads=HEADS), args.out, "flashattention.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
