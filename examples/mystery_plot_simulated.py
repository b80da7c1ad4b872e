"""The matmul "mystery plot", simulated: throughput of a 16x16 shared-memory tiled float32
matmul against N on the modelled H200, from simgpu's timing model (not the analytic model).

Two of the lecture's effects appear on their own:
  * tile quantisation: when N is not a multiple of the tile, the edge tiles do full work for
    a partial result;
  * wave quantisation: (ceil(N/16))^2 blocks fill the 132 SMs in whole waves; one block more
    than a whole wave costs a nearly empty extra wave.
(The third, alignment of rows to 32-byte sectors, shows in the memory counters: sectors per
request rise when N*4 bytes is not a multiple of 32.)

    python examples/mystery_plot_simulated.py [--full] [--out DIR] [--sizes 256,272,...] [--workers 4]
        [--scheduler tcp://host:8786] [--cache DIR]

By default three sizes run (N = 256, 512 and 528: one wave of 32 x 32 blocks, then 33 x 33
blocks, just past a whole wave; under a minute on a shared 2-core machine); --full runs the 16
sizes of the whole curve (FULL_SIZES, about 6.5 minutes there).

The points run as a simgpu.sweep (docs/sweep.md): one simulated launch per N, on this machine's
cores, or on a Dask cluster with --scheduler.
"""
import argparse
import os
import tempfile

import numpy as np

import simgpu
from simgpu import cuda
from numba import float32

TILE = 16


def mm_tiled(A, B, C, n):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0)
    for t in range((n + TILE - 1) // TILE):
        ka = t * TILE + tx
        kb = t * TILE + ty
        sA[ty, tx] = A[row, ka] if row < n and ka < n else float32(0)
        sB[ty, tx] = B[kb, col] if kb < n and col < n else float32(0)
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = acc


FULL_SIZES = [256, 320, 384, 448, 496, 512, 513, 528, 560, 576, 592, 608, 640, 704, 736, 768]
DEFAULT_SIZES = [256, 512, 528]          # a sample of FULL_SIZES that shows the wave cliff


def one_size(p):
    """One point of the plot: the tiled matmul at N = p["n"] on p["gpu"] (a simgpu.sweep case)."""
    n, gpu = p["n"], p["gpu"]
    rng = np.random.default_rng(n)
    A = rng.random((n, n), dtype=np.float32)
    B = rng.random((n, n), dtype=np.float32)
    C = np.zeros((n, n), np.float32)
    g = -(-n // TILE)
    rep = simgpu.launch(mm_tiled, (g, g), (TILE, TILE), (A, B, C, np.int64(n)), gpu=gpu, sample=True)
    m = rep.metrics
    t = m["gpu__time_duration.sum"] * 1e-9
    return dict(blocks=g * g, waves=m["launch__waves_per_multiprocessor"],
                time_us=t * 1e6, tflops=2 * n ** 3 / t / 1e12,
                sectors_per_req=m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]
                / max(1, m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]),
                useful=(n / (g * TILE)) ** 3)


def sweep(sizes, gpu="H200", workers=None, client=None, cache_dir=None, progress=False):
    """The plot's points, one simulated launch per N, run by simgpu.sweep: on this machine's
    cores by default, on a Dask cluster with `client` (a Client or a scheduler address), resumable
    with `cache_dir`. Returns one dict per N, in the order of `sizes`."""
    tab = simgpu.sweep(one_size, [{"n": n, "gpu": gpu} for n in sizes], workers=workers, client=client,
                       cache_dir=cache_dir, progress=progress)
    if tab.errors:
        raise RuntimeError("; ".join(f"N={r['n']}: {r['error']}" for r in tab.errors))
    return tab.rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=None, help="N values, comma-separated (default: 256,512,528)")
    ap.add_argument("--full", action="store_true", help="the whole curve: " + ",".join(map(str, FULL_SIZES)))
    ap.add_argument("--gpu", default="H200")
    ap.add_argument("--out", default=None)
    ap.add_argument("--workers", type=int, default=None, help="local worker processes (default: the cores)")
    ap.add_argument("--scheduler", default=None, help="a Dask scheduler address: run the sweep on that cluster")
    ap.add_argument("--cache", default=None, help="a directory: finished points are kept; a rerun resumes")
    a = ap.parse_args(argv)
    sizes = [int(s) for s in a.sizes.split(",")] if a.sizes else FULL_SIZES if a.full else DEFAULT_SIZES
    rows = sweep(sizes, a.gpu, workers=a.workers, client=a.scheduler,
                 cache_dir=a.cache, progress=True)
    print(f"{'N':>6s} {'blocks':>7s} {'waves':>6s} {'useful':>7s} {'sect/req':>8s} {'time us':>9s} {'TFLOP/s':>8s}")
    for r in rows:
        print(f"{r['n']:6d} {r['blocks']:7d} {r['waves']:6.2f} {r['useful']:7.3f} {r['sectors_per_req']:8.2f} "
              f"{r['time_us']:9.1f} {r['tflops']:8.3f}")
    out = a.out or tempfile.mkdtemp(prefix="simgpu_mystery_")
    os.makedirs(out, exist_ok=True)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([r["n"] for r in rows], [r["tflops"] for r in rows], "o-")
    ax.set_xlabel("N (C = A @ B, N x N, float32)")
    ax.set_ylabel("predicted TFLOP/s")
    ax.set_title(f"simulated tiled matmul on the modelled {a.gpu}")
    ax.grid(alpha=0.3)
    path = os.path.join(out, "mystery_plot_simulated.png")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    print(f"figure: {path}")
    return rows


if __name__ == "__main__":
    main()
