#!/usr/bin/env python3
"""What NVIDIA's compute-sanitizer says about the learner kernels of
tests/test_sanitize_learners.py (and the bank-conflict microbenchmark the suite run flags), on
the card.  Standalone (no simgpu on the GPU machine): the kernels are copies.

    python3 device_compute_sanitizer.py all OUTDIR     # runs compute-sanitizer per tool

Writes OUTDIR/<tool>.txt (compute-sanitizer's own output) and OUTDIR/results.json (per case:
the outputs of 10 plain runs, for the fall-off barrier pattern's correctness).
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

if not hasattr(np, "row_stack"):       # numba 0.6x calls it; numpy 2.5 removed it
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

TPB = 8


def dot_missing_barrier(a, b, out, size):
    shared = cuda.shared.array(TPB, np.float32)
    i = cuda.threadIdx.x
    shared[i] = a[i] * b[i]
    if i == 0:
        acc = np.float32(0)
        for k in range(TPB):
            acc += shared[k]
        out[0] = acc


def warp_unsynced(a, out, size):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    out[t] = sh[t ^ 1]


def warp_synced(a, out, size):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncwarp(0xFFFFFFFF)
    out[t] = sh[t ^ 1]


def falloff_barrier(a, out, size):
    shared = cuda.shared.array(TPB, np.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    t = cuda.threadIdx.x
    if i < size:
        shared[t] = a[i]
        cuda.syncthreads()
        out[i] = shared[t] + (shared[t - 1] if t >= 1 else np.float32(0))


def barrier_if_else(a, out, size):
    t = cuda.threadIdx.x
    if t % 2 == 0:
        out[t] = a[t]
        cuda.syncthreads()
    else:
        out[t] = -a[t]
        cuda.syncthreads()


def barrier_in_loop(a, out, size):
    t = cuda.threadIdx.x
    acc = np.float32(0)
    for k in range(t):
        acc += a[k]
        cuda.syncthreads()
    cuda.syncthreads()
    out[t] = acc


def shfl_partial(a, out, size):
    t = cuda.threadIdx.x
    v = a[t]
    if t < 16:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, 1)
    out[t] = v


SH_WORDS, MASK, BLOCK = 8192, 8191, 256


def smem_stride(out, stride, iters):
    sh = cuda.shared.array(SH_WORDS, np.float32)
    tid = cuda.threadIdx.x
    for k in range(tid, SH_WORDS, BLOCK):
        sh[k] = np.float32(k)
    cuda.syncthreads()
    m = np.float32(1.0001)
    for it in range(iters):
        idx = ((tid + it) * stride) & MASK
        sh[idx] = sh[idx] * m + np.float32(1.0)
    cuda.syncthreads()
    out[cuda.blockIdx.x * BLOCK + tid] = sh[tid]


def sum_uninit(a, out, size):
    cache = cuda.shared.array(TPB, np.float32)
    t = cuda.threadIdx.x
    if t < size:
        cache[t] = a[t]
    cuda.syncthreads()
    if t == 0:
        acc = np.float32(0)
        for k in range(TPB):
            acc += cache[k]
        out[0] = acc


def _f32(n, seed=0):
    return np.random.default_rng(seed).random(n).astype(np.float32)


CASES = {   # tool -> [(name, kernel, grid, block, args)]
    "racecheck": [
        ("dot_missing_barrier", dot_missing_barrier, 1, TPB, lambda: (_f32(8), _f32(8, 1), np.zeros(1, np.float32), 8)),
        ("warp_unsynced", warp_unsynced, 1, 32, lambda: (_f32(32), np.zeros(32, np.float32), 32)),
        ("warp_synced", warp_synced, 1, 32, lambda: (_f32(32), np.zeros(32, np.float32), 32)),
        ("falloff_barrier", falloff_barrier, 2, TPB, lambda: (_f32(13), np.zeros(13, np.float32), 13)),
        ("smem_stride1", smem_stride, 2, BLOCK, lambda: (np.zeros(2 * BLOCK, np.float32), np.int32(1), np.int32(4))),
    ],
    "synccheck": [
        ("barrier_if_else", barrier_if_else, 1, TPB, lambda: (_f32(8), np.zeros(8, np.float32), 8)),
        ("barrier_in_loop", barrier_in_loop, 1, TPB, lambda: (_f32(8), np.zeros(8, np.float32), 8)),
        ("shfl_partial", shfl_partial, 1, 32, lambda: (_f32(32), np.zeros(32, np.float32), 32)),
        ("falloff_barrier", falloff_barrier, 2, TPB, lambda: (_f32(13), np.zeros(13, np.float32), 13)),
    ],
    "initcheck": [
        ("sum_uninit", sum_uninit, 1, TPB, lambda: (_f32(8), np.zeros(1, np.float32), 5)),
    ],
}


def run_cases(tool, repeat=1):
    res = {}
    for name, k, g, b, make in CASES[tool]:
        kern = cuda.jit(k)
        outs = []
        for _ in range(repeat):
            args = make()
            dargs = [cuda.to_device(x) if isinstance(x, np.ndarray) else x for x in args]
            kern[g, b](*dargs)
            cuda.synchronize()
            outs.append([d.copy_to_host().tolist() for d in dargs if hasattr(d, "copy_to_host")][-1])
        res[name] = outs
        print(f"case {name}: done", flush=True)
    return res


def main():
    if sys.argv[1] != "all":                     # one tool's cases, under compute-sanitizer
        json.dump(run_cases(sys.argv[1], int(sys.argv[3]) if len(sys.argv) > 3 else 1),
                  open(sys.argv[2], "w"))
        return
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    for cmd in (["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                ["compute-sanitizer", "--version"]):
        try:
            meta[cmd[0]] = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
        except Exception as e:  # noqa: BLE001
            meta[cmd[0]] = repr(e)
    import numba
    meta["numba"], meta["numpy"] = numba.__version__, np.__version__
    plain = run_cases("racecheck", repeat=10)          # without the sanitizer: 10 runs each
    meta["plain_runs"] = plain
    for tool in CASES:
        p = subprocess.run(["compute-sanitizer", f"--tool={tool}", "--show-backtrace=no",
                            sys.executable, __file__, tool, os.path.join(out, f"{tool}_out.json")],
                           capture_output=True, text=True, timeout=150)
        with open(os.path.join(out, f"{tool}.txt"), "w") as f:
            f.write(p.stdout + "\n--- stderr ---\n" + p.stderr + f"\n--- exit {p.returncode}\n")
        print(f"== {tool}: exit {p.returncode}", flush=True)
        print("\n".join(ln for ln in p.stdout.splitlines() if "Error" in ln or "SUMMARY" in ln
                        or "case " in ln or "at " in ln)[-3000:], flush=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(meta, f, indent=1)


if __name__ == "__main__":
    main()
