"""Simulation speed of Triton's tutorial fp16 matmul for sm_90a (wgmma, cp.async; issue 27's
speed target), this tree vs a peer checkout, in the same run.

Each case is one ``simgpu.launch`` of validation/tensor_cores/lecture's ``matmul_kernel``
(128 x 256 x 64 tiles, 8 warps, 3 stages, gpu="H100", every model on; grids over one wave
sampled, as validation/tensor_cores/lecture/compare.py runs them), in a fresh subprocess per
tree (each after one warm-up process, so numba's and Triton's caches are warm).  Printed: the
launch's CPU seconds (``time.process_time`` around the launch) and the whole process's
(``getrusage``: import, compile and ptxas included), the predicted time and a hash of the
output, for this tree and the peer, and the ratio peer / this tree.  The predictions and the
outputs must agree (a speed change must not change them).

    python benchmarks/bench_triton_matmul.py [--peer /work/main] [--triton DIR] [SIZES ...]

SIZES: MxNxK (default 1024x1024x1024 2048x2048x512); 4096x4096x4096 is the issue's case
(minutes).  ``--triton DIR``: a directory holding Triton 3.6 (put first on sys.path)."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TREE = os.path.dirname(HERE)

CHILD = r'''
import hashlib, json, os, resource, shutil, sys, time
os.makedirs("/tmp/simgpu_lecture", exist_ok=True)
shutil.copy(os.path.join(sys.argv[1], "validation/tensor_cores/lecture/kernels.py"), "/tmp/simgpu_lecture/kernels.py")
sys.path.insert(0, "/tmp/simgpu_lecture")
import numpy as np, triton, simgpu, kernels as L
M, N, K = map(int, sys.argv[2].split("x"))
rng = np.random.default_rng(0)
a = rng.standard_normal((M, K)).astype(np.float16)
b = rng.standard_normal((K, N)).astype(np.float16)
o = np.zeros((M, N), np.float16)
grid = lambda m: (triton.cdiv(M, m["BLOCK_SIZE_M"]) * triton.cdiv(N, m["BLOCK_SIZE_N"]),)
blocks = grid(L.MM_META)[0]
c0 = time.process_time()
rep = simgpu.launch(L.matmul_kernel, grid, None, (a, b, o, M, N, K, K, 1, N, 1, N, 1),
                    sample=blocks > 132, gpu="H100", progress=False, **L.MM_META)
cpu = time.process_time() - c0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"simgpu": simgpu.__file__, "launch_cpu_s": cpu, "process_cpu_s": ru.ru_utime + ru.ru_stime,
                  "time_ns": rep.metrics["gpu__time_duration.sum"], "out_sha1": hashlib.sha1(o.tobytes()).hexdigest()}))
'''


def one(tree, size, triton_dir):
    path = [tree] + ([triton_dir] if triton_dir else [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), PYTHONWARNINGS="ignore")
    out = subprocess.run([sys.executable, "-c", CHILD, tree, size], env=env, capture_output=True, text=True,
                         cwd=tree)                      # (-c puts the working directory first on sys.path)
    if out.returncode:
        raise SystemExit(f"{tree} {size}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sizes", nargs="*", default=["1024x1024x1024", "2048x2048x512"])
    ap.add_argument("--peer", default="/work/main")
    ap.add_argument("--triton", default=None)
    a = ap.parse_args()
    for size in a.sizes:
        r = {}
        for name, tree in (("this", TREE), ("peer", a.peer)):
            one(tree, "256x256x256", a.triton)                  # warm numba's and Triton's caches
            r[name] = one(tree, size, a.triton)
        t, p = r["this"], r["peer"]
        assert t["simgpu"] != p["simgpu"], (t["simgpu"], p["simgpu"])
        same = t["time_ns"] == p["time_ns"] and t["out_sha1"] == p["out_sha1"]
        print(f"{size}: launch CPU {t['launch_cpu_s']:.1f} s (process {t['process_cpu_s']:.1f}) vs peer "
              f"{p['launch_cpu_s']:.1f} s ({p['process_cpu_s']:.1f}): ratio {p['launch_cpu_s'] / t['launch_cpu_s']:.2f}; "
              f"predicted {t['time_ns'] / 1e3:.3f} vs {p['time_ns'] / 1e3:.3f} us, outputs "
              f"{'identical' if t['out_sha1'] == p['out_sha1'] else 'DIFFER'}{'' if same else '  <-- CHANGED'}", flush=True)


if __name__ == "__main__":
    main()
