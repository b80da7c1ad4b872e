"""Tricks 1, 4, 5 and 6 as TIMES: closed form, simulated kernel and the H200, side by side.

    python examples/lecture_tricks.py [--full | --quick]

For each trick the same kernel source runs three ways:
  closed form  simgpu.model.tricks.*_time: a formula over the preset's measured rates
  simulated    simgpu.predict(kernel, ..., sample=True): the kernel run on the modelled H200
  H200         numba.cuda on the lent H200 (validation/lecture/measure4.py, CUDA events,
               median of 5 batches of back-to-back launches) -> validation/data/lecture_h200_tricks.json

  1 divergence     simgpu.kernels.uniform_branch vs divergent_lane (even/odd lanes take different loops)
  4 recomputation  three chained sigmoids, forward + backward: store s1, s2, out vs recompute them
  5 coalescing     simgpu.kernels.copy_strided over a 128 MiB array at stride 1..32
  6 tiling         simgpu.kernels.matmul_coalesced (naive) vs matmul_tiled_shape (16 x 16 tiles)

Nothing is fitted to the H200 column: it is read only to print it.

What is simulated (the sizes are the H200's, so no size is cut): by default the simulated
column covers tricks 4 and 5, each kernel sampled (sample=True: SM 0's blocks of the first
and last wave, loops of more than 32 iterations simulated at 16 and 32 and extrapolated;
docs/timing.md measures the error this adds).  Tricks 1 and 6 are the slow ones to simulate
(SM 0 runs every iteration of a 256-iteration loop over 8 blocks, and of a 512-long dot
product): --full simulates them too (about 2 minutes on a shared 2-core machine, under 60 s
by default).  --quick skips the simulated column.
"""
from __future__ import annotations

import json
import math
import sys

import numpy as np

import lecture_common as common
import simgpu
from simgpu import cuda
from simgpu.kernels import copy_strided, divergent_lane, matmul_coalesced, matmul_tiled_shape, uniform_branch
from simgpu.model import tricks

DATA = common.ROOT / "validation" / "data" / "lecture_h200_tricks.json"
TPB = 256

# sizes (the device script uses these too)
DIV_BLOCKS, DIV_ITERS = 4224, 256           # 4 full waves of 8 x 256-thread blocks per SM
RECOMP_N = 1 << 25                          # 128 MiB per fp32 array, > 2x the L2
COAL_N = 1 << 25                            # array of 128 MiB; thread i copies element i x stride
COAL_STRIDES = (1, 2, 4, 8, 16, 32)
MM_N = 512                                  # 1024 blocks of 16 x 16: 0.97 of a wave
DEFAULT_SIMULATED = (4, 5)                  # the tricks simulated without --full (see above)


# -- trick 4: x -> sigmoid -> sigmoid -> sigmoid -> out, forward and backward --------------------
def sig3_store_fwd(x, s1, s2, out):
    i = cuda.grid(1)
    if i < x.size:
        a = np.float32(1.0) / (np.float32(1.0) + math.exp(-x[i]))
        b = np.float32(1.0) / (np.float32(1.0) + math.exp(-a))
        c = np.float32(1.0) / (np.float32(1.0) + math.exp(-b))
        s1[i] = a
        s2[i] = b
        out[i] = c


def sig3_store_bwd(dout, s1, s2, out, dx):
    i = cuda.grid(1)
    if i < dx.size:
        c = out[i]
        b = s2[i]
        a = s1[i]
        g = dout[i] * c * (np.float32(1.0) - c)
        g = g * b * (np.float32(1.0) - b)
        dx[i] = g * a * (np.float32(1.0) - a)


def sig3_recompute_fwd(x, out):
    i = cuda.grid(1)
    if i < x.size:
        a = np.float32(1.0) / (np.float32(1.0) + math.exp(-x[i]))
        b = np.float32(1.0) / (np.float32(1.0) + math.exp(-a))
        out[i] = np.float32(1.0) / (np.float32(1.0) + math.exp(-b))


def sig3_recompute_bwd(x, dout, dx):
    i = cuda.grid(1)
    if i < dx.size:
        a = np.float32(1.0) / (np.float32(1.0) + math.exp(-x[i]))
        b = np.float32(1.0) / (np.float32(1.0) + math.exp(-a))
        c = np.float32(1.0) / (np.float32(1.0) + math.exp(-b))
        g = dout[i] * c * (np.float32(1.0) - c)
        g = g * b * (np.float32(1.0) - b)
        dx[i] = g * a * (np.float32(1.0) - a)


def cases(rng=None):
    """[(trick, name, kernel, grid, block, args)] -- the launches the three columns time."""
    rng = rng or np.random.default_rng(0)
    out = []
    x = rng.standard_normal(DIV_BLOCKS * TPB).astype(np.float32)
    for name, k in (("uniform", uniform_branch), ("divergent", divergent_lane)):
        out.append((1, name, k, DIV_BLOCKS, TPB, (x, np.zeros_like(x), np.int64(DIV_ITERS))))
    n = RECOMP_N
    g = -(-n // TPB)
    xs = rng.standard_normal(n).astype(np.float32)
    dout = rng.standard_normal(n).astype(np.float32)
    s1, s2, o, dx = (np.zeros(n, np.float32) for _ in range(4))
    out += [(4, "store fwd", sig3_store_fwd, g, TPB, (xs, s1, s2, o)),
            (4, "store bwd", sig3_store_bwd, g, TPB, (dout, s1, s2, o, dx)),
            (4, "recompute fwd", sig3_recompute_fwd, g, TPB, (xs, o)),
            (4, "recompute bwd", sig3_recompute_bwd, g, TPB, (xs, dout, dx))]
    src = rng.standard_normal(COAL_N).astype(np.float32)
    for s in COAL_STRIDES:
        out.append((5, f"stride {s}", copy_strided, -(-COAL_N // s // TPB), TPB,
                    (src, np.zeros_like(src), np.int64(s))))
    A = rng.standard_normal((MM_N, MM_N)).astype(np.float32)
    B = rng.standard_normal((MM_N, MM_N)).astype(np.float32)
    for name, k in (("naive", matmul_coalesced), ("tiled 16", matmul_tiled_shape)):
        out.append((6, name, k, (MM_N // 16, MM_N // 16), (16, 16), (A, B, np.zeros((MM_N, MM_N), np.float32))))
    return out


def closed_form(gpu, trick, name):
    """Seconds from simgpu.model.tricks for one case (no simulation, no measurement)."""
    if trick == 1:
        return tricks.divergence_time(gpu, DIV_BLOCKS * TPB, DIV_ITERS, divergent=(name == "divergent"))
    if trick == 4:
        strategy, pas = name.split()
        return tricks.recomputation_times(gpu, RECOMP_N)[strategy][pas]
    if trick == 5:
        s = int(name.split()[1])
        return tricks.coalescing_time(gpu, COAL_N // s, s)
    if trick == 6:
        return tricks.tiling_time(gpu, MM_N, 1 if name == "naive" else 16)
    raise ValueError(trick)


def num(v, fmt=".2f"):
    """A table cell: '-' for what was not simulated (or not measured)."""
    return "-" if v != v else format(v, fmt)


def main(argv=None) -> int:
    argv = argv if argv is not None else sys.argv[1:]
    quick, full = "--quick" in argv, "--full" in argv
    simulated = () if quick else ((1, 4, 5, 6) if full else DEFAULT_SIMULATED)
    gpu = "H200"
    meas = json.loads(DATA.read_text()) if DATA.exists() else {}
    mk = {(r["trick"], r["name"]): r for r in meas.get("tricks", [])}
    rows, res = [], {}
    titles = {1: "divergence", 4: "recomputation", 5: "coalescing", 6: "tiling"}
    for trick, name, k, grid, block, args in cases():
        cf = closed_form(gpu, trick, name)
        sim = float("nan")
        if trick in simulated:
            rep = simgpu.predict(k, grid, block, args, gpu=gpu, sample=True)
            sim = rep.metrics["gpu__time_duration.sum"] * 1e-9
        m = mk.get((trick, name), {}).get("time_ns", float("nan")) * 1e-9
        res[(trick, name)] = (cf, sim, m)
        rows.append((f"{trick} {titles[trick]}", name, f"{cf * 1e6:.1f}", num(sim * 1e6, ".1f"), num(m * 1e6, ".1f"),
                     num(cf / m), num(sim / m)))
    print("Tricks as times on the H200 (us): closed form, simulated kernel, measured\n")
    skipped = [titles[t] for t in titles if t not in simulated]
    if skipped:
        print(f"simulated (sampled waves and loops): {', '.join(titles[t] for t in simulated) or 'none'}; "
              f"{', '.join(skipped)}: '-', simulated with --full (about 2 min)\n")
    print(common.table(("trick", "kernel", "closed form", "simulated", "H200", "cf/H200", "sim/H200"), rows))

    def ratio(t, a, b, col):
        return res[(t, a)][col] / res[(t, b)][col]
    lines = [("divergent / uniform", 1, "divergent", "uniform"), ("naive / tiled", 6, "naive", "tiled 16"),
             ("stride 32 / stride 1", 5, "stride 32", "stride 1")]
    print("\nThe lecture's ratios (time of the slow version over the fast one):")
    rr = []
    for label, t, a, b in lines:
        rr.append((label, *(num(ratio(t, a, b, c)) for c in range(3))))
    st = [sum(res[(4, f"store {p}")][c] for p in ("fwd", "bwd")) for c in range(3)]
    rc = [sum(res[(4, f"recompute {p}")][c] for p in ("fwd", "bwd")) for c in range(3)]
    rr.append(("recompute / store (fwd+bwd)", *(num(rc[c] / st[c]) for c in range(3))))
    print(common.table(("ratio", "closed form", "simulated", "H200"), rr))
    if meas:
        print(f"\nH200: {meas.get('env', {}).get('gpu')}, {meas.get('env', {}).get('date_utc')} "
              f"(validation/lecture/measure4.py)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
