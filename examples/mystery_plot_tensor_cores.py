"""The matmul "mystery plot" on tensor cores, simulated: Triton's tutorial fp16 matmul (wgmma on
sm_90a, one config: 128 x 256 x 64 tiles, 8 warps, 3 stages) run on the modelled GPU over square
sizes, beside the analytic model (simgpu.model.matmul) and the card's do_bench medians
(validation/tensor_cores/lecture/h100: an H100 SXM, 2026-12-07).  With --flash, also
FlashAttention-2 (Triton, tutorial 06) against the math path (Triton bmm + softmax + bmm, S and P
in memory): time, HBM bytes and peak memory, simulated and on the card.

    python examples/mystery_plot_tensor_cores.py [--gpu H100] [--sizes 1024,2048,2176] [--full]
        [--flash] [--out DIR]

By default three sizes run (N = 512, 1024 and 1536: 8, 32 and 72 blocks of 128 x 256, the rise of
the curve while the 132 SMs fill; a few minutes on a shared 2-core machine); --full adds 2048,
2176 (128 blocks, then 153: one wave and 21 blocks more -- the wave cliff), 2816 and 2944 (242,
then 276 blocks: the second cliff), about 5 minutes a size over 1000 there (grids over
one wave are sampled).  Times are what
do_bench reads (simgpu.validate.dobench_seconds: the kernel plus do_bench's floor, measured with
empty kernels), simulated at the card's clock outside a profiler (simgpu.validate.unprofiled), so
they compare with the card's do_bench medians.
Needs Triton (3.6 is what the card ran) importable here.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time

import numpy as np

import simgpu
from simgpu.model.matmul import matmul_throughput
from simgpu.validate import dobench_seconds, unprofiled

HERE = os.path.dirname(os.path.abspath(__file__))
LECTURE = os.path.join(HERE, "..", "validation", "tensor_cores", "lecture")
DEFAULT_SIZES = [512, 1024, 1536]
FULL_SIZES = [512, 1024, 1536, 2048, 2176, 2816, 2944]


def _kernels():
    """The lecture's kernels and FA-2, imported from /tmp as on the card (Triton's PTX names its file)."""
    import importlib.util
    for d, src in (("/tmp/simgpu_lecture", os.path.join(LECTURE, "kernels.py")),
                   ("/tmp/simgpu_flash", os.path.join(LECTURE, "..", "flash", "kernels.py"))):
        os.makedirs(d, exist_ok=True)
        shutil.copy(src, os.path.join(d, "kernels.py"))
    mods = []
    for name, path in (("lecture_kernels", "/tmp/simgpu_lecture/kernels.py"), ("fa_kernels", "/tmp/simgpu_flash/kernels.py")):
        spec = importlib.util.spec_from_file_location(name, path)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        mods.append(m)
    return mods


def card_data():
    p = os.path.join(LECTURE, "h100", "card_lecture.json")
    return json.load(open(p)) if os.path.exists(p) else None


def simulate_matmul(L, n, gpu):
    import triton
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float16)
    b = rng.standard_normal((n, n)).astype(np.float16)
    c = np.zeros((n, n), np.float16)
    grid = lambda m: (triton.cdiv(n, m["BLOCK_SIZE_M"]) * triton.cdiv(n, m["BLOCK_SIZE_N"]),)  # noqa: E731
    blocks = grid(L.MM_META)[0]
    rep = simgpu.launch(L.matmul_kernel, grid, None, (a, b, c, n, n, n, n, 1, n, 1, n, 1),
                        sample=blocks > simgpu.hardware.get_gpu(gpu).sm_count, gpu=unprofiled(gpu), progress=True, **L.MM_META)
    return rep, blocks


def mystery(args, L, card):
    rows = []
    for n in args.sizes:
        t0 = time.perf_counter()
        rep, blocks = simulate_matmul(L, n, args.gpu)
        wall = time.perf_counter() - t0
        sim_s = dobench_seconds(rep)
        flop = 2.0 * n ** 3
        an = matmul_throughput(simgpu.hardware.get_gpu(args.gpu), n, tile=(128, 256, 64), threads_per_block=256,
                               registers_per_thread=207, stages=3)
        cd = (card or {}).get("matmul", {}).get(f"{n}x{n}x{n}")
        rows.append({"n": n, "blocks": blocks, "simulated_tflops": flop / sim_s / 1e12,
                     "simulated_us": sim_s * 1e6, "analytic_tflops": an.tflops,
                     "card_tflops": cd["tflops"] if cd else None, "card_us": cd["median_us"] if cd else None,
                     "bottleneck": rep.extras.get("bottleneck", ""), "simulation_s": wall})
        r = rows[-1]
        print(f"N={n:5d} {blocks:4d} blocks  simulated {r['simulated_us']:8.1f} us {r['simulated_tflops']:6.0f} TFLOP/s"
              f"  analytic {r['analytic_tflops']:6.0f}  card {r['card_tflops'] or float('nan'):6.0f}"
              f"  ({wall:.0f} s here)  {r['bottleneck'][:60]}", flush=True)
    return rows


def flash(args, L, FA, card):
    """FA-2 against the math path at Z=1, H=16, N=1024, D=64 (the card's first FA size)."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    import triton
    Z, H, N, D = L.FA_SIZES[0]
    rng = np.random.default_rng(0)
    q, k, v = ((rng.standard_normal((Z, H, N, D)) * 0.5).astype(np.float16) for _ in range(3))
    o = np.zeros_like(q)
    Mst = np.zeros((Z, H, N), np.float32)
    y, BM, BN = Z * H * N, L.FA_META["BLOCK_M"], L.FA_META["BLOCK_N"]
    descs = [TensorDescriptor(simgpu.as_tensor(t.reshape(y, D)), [y, D], [D, 1], [BM if i in (0, 3) else BN, D]) for i, t in enumerate((q, k, v, o))]
    rep = simgpu.launch(FA._attn_fwd, (triton.cdiv(N, BM), Z * H, 1), None,
                        (0.5, Mst, Z, H, *descs, N), HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN, FP8_OUTPUT=False,
                        STAGE=1, warp_specialize=False, IS_HOPPER=True, num_warps=L.FA_META["num_warps"],
                        num_stages=L.FA_META["num_stages"], sample=True, gpu=unprofiled(args.gpu), progress=True)
    fa = {"us": dobench_seconds(rep) * 1e6, "hbm_bytes": rep.metrics.get("dram__bytes.sum", 0.0),
          "peak_extra_bytes": o.nbytes + Mst.nbytes}
    qs = (q * np.float16(0.5)).reshape(Z * H, N, D)
    kk, vv = k.reshape(Z * H, N, D), v.reshape(Z * H, N, D)
    s = np.zeros((Z * H, N, N), np.float16)
    p, om = np.zeros_like(s), np.zeros((Z * H, N, D), np.float16)
    math = {"us": 0.0, "hbm_bytes": 0.0, "peak_extra_bytes": s.nbytes + p.nbytes + om.nbytes, "kernels": {}}
    for name, kern, grid, meta, make in L.math_path_launches(Z, H, N, D):
        r = simgpu.launch(kern, grid, None, make(qs, kk, vv, s, p, om), sample=True, gpu=unprofiled(args.gpu), progress=True, **meta)
        math["kernels"][name] = r.metrics["gpu__time_duration.sum"] / 1e3
        math["us"] += dobench_seconds(r) * 1e6
        math["hbm_bytes"] += r.metrics.get("dram__bytes.sum", 0.0)
    cd = (card or {}).get("fa", {}).get(f"Z{Z}_H{H}_N{N}_D{D}")
    print(f"\nAttention, Z={Z} H={H} N={N} D={D}, fp16 (sampled launches: their outputs are partial, not compared;"
          " peak extra: what the path allocates beyond Q, K, V -- on the card FA's O and M were allocated before)")
    print(f"{'':12s} {'simulated us':>13s} {'card us':>9s} {'HBM bytes (sim)':>16s} {'peak extra (sim)':>17s} {'card peak':>10s}")
    for name, r, key in (("FA-2", fa, "fa"), ("math path", math, "math")):
        c = (cd or {}).get(key, {})
        print(f"{name:12s} {r['us']:13.1f} {c.get('median_us', float('nan')):9.1f} {r['hbm_bytes'] / 1e6:13.1f} MB"
              f" {r['peak_extra_bytes'] / 1e6:14.1f} MB {c.get('peak_extra_bytes', 0) / 1e6:7.1f} MB")
    return {"fa": fa, "math": math}


def plot(rows, card, out, gpu):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if card:
        sq = sorted((int(k.split("x")[0]), v["tflops"]) for k, v in card["matmul"].items()
                    if "tflops" in v and len(set(k.split("x"))) == 1 and int(k.split("x")[0]) % 128 == 0)
        ax.plot(*zip(*sq), "k.-", label=f"{card['gpu']}: do_bench (measured)")
    ns = [r["n"] for r in rows]
    ax.plot(ns, [r["simulated_tflops"] for r in rows], "o", color="tab:red", label=f"simgpu, simulated ({gpu})")
    grid = np.arange(256, 4097, 128)
    g = simgpu.hardware.get_gpu(gpu)
    ax.plot(grid, [matmul_throughput(g, int(n), tile=(128, 256, 64), registers_per_thread=207).tflops for n in grid],
            "--", color="tab:blue", label="analytic model (simgpu.model.matmul)")
    ax.set_xlabel("N (N x N x N, fp16)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title("Triton's tutorial matmul, 128x256x64 tiles: the mystery plot on tensor cores")
    ax.legend()
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "mystery_plot_tensor_cores.png")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    print("saved", path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", default="H100", help="the modelled GPU (the card measured: an H100 SXM)")
    ap.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",")], default=DEFAULT_SIZES)
    ap.add_argument("--full", action="store_true", help=f"sizes {FULL_SIZES}")
    ap.add_argument("--flash", action="store_true", help="also FlashAttention-2 against the math path")
    ap.add_argument("--out", default=None, help="save the plot and the numbers (JSON) here")
    args = ap.parse_args(argv)
    if args.full:
        args.sizes = FULL_SIZES
    L, FA = _kernels()
    card = card_data()
    rows = mystery(args, L, card)
    res = {"gpu": args.gpu, "matmul": rows}
    if args.flash:
        res["flash"] = flash(args, L, FA, card)
    if args.out:
        plot(rows, card, args.out, args.gpu)
        json.dump(res, open(os.path.join(args.out, "mystery_plot_tensor_cores.json"), "w"), indent=1)
    return res


if __name__ == "__main__":
    main(sys.argv[1:])
