"""The PTX executor with compiled straight-line runs (simgpu/ptx/blocks.py, and the numba
segments of simgpu/ptx/jitseg.py inside them) vs the same executor interpreting every
instruction alone (``settings.ptx_blocks=False``), measured in the same run.

Cases: loop-heavy kernels with few warps (a 256x256 naive matmul, a Collatz loop, an
online-softmax row kernel, n-body) and two classic wide ones (vector add, 16x16 tiled matmul).
Each timed run is one ``simgpu.launch`` (executor="ptx") after a warm-up launch (numba compile,
ptxas facts and the runs' compiled code cached); the two sides alternate, ``--repeat`` times
each; medians (seconds per launch) and their ratio are printed, with every model on (memory +
timing) and with models off.  Times are the process's CPU seconds (``time.process_time``): on a
shared machine the wall clock also counts the time other processes hold the cores; ``--wall``
reports wall-clock seconds instead.

``--peer DIR`` also runs each case in a subprocess with DIR (another checkout, e.g. /work/main:
the code as it was, "today") first on sys.path, on its default path (its compiled runs), in the
same run: ``peer s`` and ``vs peer`` (peer seconds / this checkout's seconds).

    python benchmarks/bench_compiled_blocks.py [--repeat 3] [--models on|off|both] [--only NAME]
                                               [--peer /work/main] [--json out.json]
"""
from __future__ import annotations

import argparse
import contextlib
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


def matmul_naive(A, B, C):
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        acc = 0.0
        for k in range(A.shape[1]):
            acc += A[i, k] * B[k, j]
        C[i, j] = acc


def collatz(n0, out):
    i = cuda.grid(1)
    if i < out.size:
        n = n0[i]
        s = 0
        while n != 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            s += 1
        out[i] = s


def softmax_row(Q, K, V, out):
    """One thread per query row: online softmax over the keys (flash-attention's recurrence)."""
    r = cuda.grid(1)
    if r < Q.shape[0]:
        m = -1e30
        den = 0.0
        acc = cuda.local.array(16, np.float32)
        for d in range(16):
            acc[d] = 0.0
        for j in range(K.shape[0]):
            s = 0.0
            for d in range(16):
                s += Q[r, d] * K[j, d]
            mn = max(m, s)
            c = math.exp(m - mn)
            p = math.exp(s - mn)
            den = den * c + p
            for d in range(16):
                acc[d] = acc[d] * c + p * V[j, d]
            m = mn
        for d in range(16):
            out[r, d] = acc[d] / den


def nbody(pos, acc):
    """One thread per body: the gravitational acceleration from every body (f32, softened)."""
    i = cuda.grid(1)
    if i < pos.shape[0]:
        xi, yi, zi = pos[i, 0], pos[i, 1], pos[i, 2]
        ax = np.float32(0.0)
        ay = np.float32(0.0)
        az = np.float32(0.0)
        for j in range(pos.shape[0]):
            dx = pos[j, 0] - xi
            dy = pos[j, 1] - yi
            dz = pos[j, 2] - zi
            d2 = dx * dx + dy * dy + dz * dz + np.float32(1e-3)
            inv = np.float32(1.0) / math.sqrt(d2)
            s = pos[j, 3] * inv * inv * inv
            ax += dx * s
            ay += dy * s
            az += dz * s
        acc[i, 0] = ax
        acc[i, 1] = ay
        acc[i, 2] = az


def vadd(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


TILE = 16


def matmul_tiled(A, B, C):
    sA = cuda.shared.array((TILE, TILE), np.float32)
    sB = cuda.shared.array((TILE, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = np.float32(0.0)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        sA[ty, tx] = A[row, t * TILE + tx] if row < A.shape[0] and t * TILE + tx < A.shape[1] else 0
        sB[ty, tx] = B[t * TILE + ty, col] if t * TILE + ty < B.shape[0] and col < B.shape[1] else 0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < C.shape[0] and col < C.shape[1]:
        C[row, col] = acc


_CASES = None


def cases():
    global _CASES
    if _CASES is None:
        _CASES = _make_cases()
    return _CASES


def _make_cases():
    rng = np.random.default_rng(0)
    n = 256
    A, B = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    R, N = 64, 128
    m = 256
    return {
        "256x256 naive matmul": (matmul_naive, (16, 16), (16, 16), (A, B, np.zeros((n, n), np.float32))),
        "Collatz loop (256 threads)": (collatz, (2,), (128,),
                                       (np.arange(1, m + 1, dtype=np.int64) * 7919 + 100003,
                                        np.zeros(m, np.int64))),
        "online-softmax rows (64 rows x 128 keys, d=16)": (
            softmax_row, (1,), (64,), (rng.random((R, 16), dtype=np.float32), rng.random((N, 16), dtype=np.float32),
                                       rng.random((N, 16), dtype=np.float32), np.zeros((R, 16), np.float32))),
        "n-body (256 bodies, f32)": (nbody, (2,), (128,), (rng.random((256, 4), dtype=np.float32),
                                                           np.zeros((256, 3), np.float32))),
        "vector add (1M)": (vadd, (4096,), (256,), (rng.random(1 << 20, dtype=np.float32),
                                                    rng.random(1 << 20, dtype=np.float32),
                                                    np.zeros(1 << 20, np.float32))),
        "16x16 tiled matmul (256)": (matmul_tiled, (16, 16), (16, 16), (A, B, np.zeros((n, n), np.float32))),
    }


def once(name, fused, models):
    """Seconds of one launch of case `name` (CPU seconds, or wall-clock with BENCH_WALL=1)."""
    import simgpu
    from simgpu import settings
    fn, grid, block, args = cases()[name]
    k = cuda.jit(fn)
    a = [x.copy() for x in args]
    kw = dict(memory=models, timing=models)
    ctx = settings.override(ptx_blocks=fused) if "ptx_blocks" in settings.FIELDS else contextlib.nullcontext()
    with ctx:                           # (a --peer checkout without the setting: its only path)
        clock = time.perf_counter if os.environ.get("BENCH_WALL") == "1" else time.process_time
        t = clock()
        simgpu.launch(k, grid, block, a, executor="ptx", **kw)
        return clock() - t


def warm(name):
    import simgpu
    fn, grid, block, args = cases()[name]
    small = tuple(max(1, g // 8) for g in grid)
    simgpu.launch(cuda.jit(fn), small, block, [x.copy() for x in args], executor="ptx",
                  memory=True, timing=True)


def peer_child(name, models, repeat):
    """The peer checkout's default path (its compiled runs where it has them): "today"."""
    warm(name)
    print(json.dumps([once(name, True, models) for _ in range(repeat)]))


def peer_times(peer, name, models, repeat):
    code = (f"import sys; sys.path.insert(0, {peer!r}); sys.path.insert(1, {HERE!r}); "
            f"import bench_compiled_blocks as b; b.peer_child({name!r}, {models!r}, {repeat})")
    env = dict(os.environ, BENCH_PEER="1", PYTHONPATH=peer)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--models", choices=("on", "off", "both"), default="both")
    ap.add_argument("--only", default=None, help="run the cases whose name contains this")
    ap.add_argument("--peer", default=None, help="another checkout (today): its default path too")
    ap.add_argument("--json", default=None)
    ap.add_argument("--wall", action="store_true", help="wall-clock seconds, not CPU seconds")
    ap.add_argument("--launches", type=int, default=0,
                    help="only: a warm-up, then this many launches of each --only case on the "
                         "default path (a whole process for an outside timer; BENCH_PEER=1 with "
                         "PYTHONPATH=<other checkout> runs that checkout's simgpu)")
    a = ap.parse_args()
    if a.launches:
        for name in cases():
            if a.only and a.only not in name:
                continue
            warm(name)
            t = [once(name, True, a.models == "on") for _ in range(a.launches)]
            print(f"{name}: {a.launches} launches, median {statistics.median(t):.4f} s")
        return
    if a.wall:
        os.environ["BENCH_WALL"] = "1"          # (the --peer child reads it too)
    rows = []
    modes = {"on": [True], "off": [False], "both": [True, False]}[a.models]
    print(f"{'case':50s} {'models':6s} {'interp s':>9s} {'blocks s':>9s} {'ratio':>6s}"
          + (f" {'peer s':>8s} {'vs peer':>7s}" if a.peer else ""))
    for name in cases():
        if a.only and a.only not in name:
            continue
        warm(name)
        for models in modes:
            t = {False: [], True: []}
            for _ in range(a.repeat):
                for fused in (False, True):
                    t[fused].append(once(name, fused, models))
            mi, mb = statistics.median(t[False]), statistics.median(t[True])
            row = dict(case=name, models=models, interp=mi, blocks=mb, ratio=mi / mb)
            line = f"{name:50s} {'on' if models else 'off':6s} {mi:9.3f} {mb:9.3f} {mi / mb:6.2f}"
            if a.peer:
                mp = statistics.median(peer_times(a.peer, name, models, a.repeat))
                row.update(peer=mp, vs_peer=mp / mb)
                line += f" {mp:8.3f} {mp / mb:7.2f}"
            print(line, flush=True)
            rows.append(row)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
