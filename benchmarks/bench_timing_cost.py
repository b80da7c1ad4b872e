"""What the memory and timing models cost a launch (issue 26, item 2), this tree vs a peer checkout.

Cases: loop-heavy kernels with few warps (an online-softmax row kernel, an n-body force kernel,
a Collatz loop) and wide ones (naive matmuls, 16x16 tiled matmuls).  Each timed run is one
``simgpu.launch(..., executor="ptx")`` with every model on (memory + timing), after a warm-up
launch (numba compile and ptxas facts cached); ``--off`` also times it with models off (the
executor alone), so the models' share is on - off.  ``--peer DIR`` runs the same cases in a
subprocess with DIR (another checkout, e.g. /work/main) first on sys.path, in the same run, and
prints the ratio peer / this tree.  Times are the process's CPU seconds (``time.process_time``;
``--wall`` for wall-clock), medians of ``--repeat``.

    python benchmarks/bench_timing_cost.py [--repeat 3] [--only NAME] [--peer /work/main] [--off]
                                           [--big] [--json out.json]

``--big`` adds the sizes users run (a 1024x1024 naive matmul, a 1024^3 tiled matmul): minutes.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if __name__ == "__main__" and os.environ.get("BENCH_PEER") is None:
    sys.path.insert(0, os.path.dirname(HERE))

from numba import cuda  # noqa: E402

from bench_compiled_blocks import collatz, matmul_naive, matmul_tiled, softmax_row  # noqa: E402  (the same kernels)


NB = 128


def nbody(pos, accel):
    """All-pairs forces, a shared tile of NB bodies per step (the GPU Gems 3 scheme)."""
    sh = cuda.shared.array((NB, 4), np.float32)
    i = cuda.grid(1)
    tx = cuda.threadIdx.x
    x, y, z = pos[i, 0], pos[i, 1], pos[i, 2]
    ax = np.float32(0)
    ay = np.float32(0)
    az = np.float32(0)
    for t in range(pos.shape[0] // NB):
        for c in range(4):
            sh[tx, c] = pos[t * NB + tx, c]
        cuda.syncthreads()
        for j in range(NB):
            rx = sh[j, 0] - x
            ry = sh[j, 1] - y
            rz = sh[j, 2] - z
            d2 = rx * rx + ry * ry + rz * rz + np.float32(0.01)
            inv = np.float32(1) / math.sqrt(d2)
            s = sh[j, 3] * inv * inv * inv
            ax += rx * s
            ay += ry * s
            az += rz * s
        cuda.syncthreads()
    accel[i, 0] = ax
    accel[i, 1] = ay
    accel[i, 2] = az


TILE = 16


def _square(n, rng):
    return rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32), np.zeros((n, n), np.float32)


def cases(big=False):
    rng = np.random.default_rng(0)
    R, N = 64, 512
    m = 256
    nb = 1024
    out = {
        "online-softmax rows (64 x 512 keys, d=16)": (
            softmax_row, (1,), (64,), (rng.random((R, 16), dtype=np.float32), rng.random((N, 16), dtype=np.float32),
                                       rng.random((N, 16), dtype=np.float32), np.zeros((R, 16), np.float32))),
        "n-body (1024 bodies, tile 128)": (
            nbody, (nb // NB,), (NB,), (rng.random((nb, 4), dtype=np.float32), np.zeros((nb, 3), np.float32))),
        "Collatz loop (256 threads)": (collatz, (2,), (128,),
                                       (np.arange(1, m + 1, dtype=np.int64) * 7919 + 100003,
                                        np.zeros(m, np.int64))),
        "naive matmul 512x512": (matmul_naive, (32, 32), (16, 16), _square(512, rng)),
        "16x16 tiled matmul (256)": (matmul_tiled, (16, 16), (16, 16), _square(256, rng)),
    }
    if big:
        out["naive matmul 1024x1024"] = (matmul_naive, (64, 64), (16, 16), _square(1024, rng))
        out["16x16 tiled matmul 1024^3"] = (matmul_tiled, (64, 64), (16, 16), _square(1024, rng))
    return out


def once(name, models=True, big=False):
    """Seconds of one launch of case `name` (CPU seconds, or wall-clock with BENCH_WALL=1), and
    the predicted time (ns) with models on."""
    import simgpu
    fn, grid, block, args = cases(big)[name]
    k = cuda.jit(fn)
    a = [x.copy() for x in args]
    clock = time.perf_counter if os.environ.get("BENCH_WALL") == "1" else time.process_time
    t = clock()
    rep = simgpu.launch(k, grid, block, a, executor="ptx", memory=models, timing=models)
    dt = clock() - t
    pred = rep.extras["timing"].time_s * 1e9 if models else None
    return dt, pred


def warm(name, big=False):
    import simgpu
    fn, grid, block, args = cases(big)[name]
    small = tuple(max(1, g // 8) for g in grid)
    simgpu.launch(cuda.jit(fn), small, block, [x.copy() for x in args], executor="ptx",
                  memory=True, timing=True)


def measure(name, repeat, off, big):
    warm(name, big)
    on = [once(name, True, big) for _ in range(repeat)]
    res = {"on": [t for t, _ in on], "pred_ns": on[0][1]}
    if off:
        res["off"] = [once(name, False, big)[0] for _ in range(repeat)]
    return res


def peer_child(name, repeat, off, big):
    print(json.dumps(measure(name, repeat, off, big)))


def peer_measure(peer, name, repeat, off, big):
    code = (f"import sys; sys.path.insert(0, {peer!r}); sys.path.insert(1, {HERE!r}); "
            f"import bench_timing_cost as b; b.peer_child({name!r}, {repeat}, {off!r}, {big!r})")
    env = dict(os.environ, BENCH_PEER="1", PYTHONPATH=peer)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=None, help="run the cases whose name contains this")
    ap.add_argument("--peer", default=None, help="another checkout, measured in a subprocess")
    ap.add_argument("--off", action="store_true", help="also time the launches with models off")
    ap.add_argument("--big", action="store_true", help="add the 1024-sized matmuls")
    ap.add_argument("--json", default=None)
    ap.add_argument("--wall", action="store_true", help="wall-clock seconds, not CPU seconds")
    ap.add_argument("--launch", default=None, metavar="NAME",
                    help="only warm up and launch the case whose name contains NAME once, models on "
                         "(a whole process to time from outside, e.g. with /usr/bin/time)")
    a = ap.parse_args()
    if a.launch:
        name = next(n for n in cases(a.big) if a.launch in n)
        warm(name, a.big)
        dt, pred = once(name, True, a.big)
        print(f"{name}: {dt:.3f} s, predicted {pred:.1f} ns")
        return
    if a.wall:
        os.environ["BENCH_WALL"] = "1"          # (the --peer child reads it too)
    med = statistics.median
    hdr = f"{'case':44s} {'on s':>8s}" + (f" {'off s':>7s} {'models s':>8s}" if a.off else "")
    if a.peer:
        hdr += f" {'peer on s':>9s}" + (f" {'peer models':>11s}" if a.off else "") + f" {'ratio':>6s} {'pred diff':>9s}"
    print(hdr)
    rows = []
    for name in cases(a.big):
        if a.only and a.only not in name:
            continue
        r = measure(name, a.repeat, a.off, a.big)
        row = dict(case=name, on=med(r["on"]), pred_ns=r["pred_ns"])
        line = f"{name:44s} {row['on']:8.2f}"
        if a.off:
            row["off"] = med(r["off"])
            line += f" {row['off']:7.2f} {row['on'] - row['off']:8.2f}"
        if a.peer:
            p = peer_measure(a.peer, name, a.repeat, a.off, a.big)
            row.update(peer_on=med(p["on"]), peer_pred_ns=p["pred_ns"])
            line += f" {row['peer_on']:9.2f}"
            if a.off:
                row["peer_off"] = med(p["off"])
                line += f" {row['peer_on'] - row['peer_off']:11.2f}"
            d = (r["pred_ns"] / p["pred_ns"] - 1) * 100 if p["pred_ns"] else float("nan")
            line += f" {row['peer_on'] / row['on']:6.2f} {d:+8.2f}%"
        print(line, flush=True)
        rows.append(row)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
