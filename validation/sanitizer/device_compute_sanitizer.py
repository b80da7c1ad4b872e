#!/usr/bin/env python3
"""What NVIDIA's compute-sanitizer says, on the H200, about learner kernels of
tests/test_sanitize_learners.py and the bank-conflict microbenchmark that the suite run flags
(standalone: simgpu is not on the GPU machine, the kernels are copies; kept short because it
travels inside the device command).

    python3 device_compute_sanitizer.py all OUTDIR

OUTDIR/<tool>.txt: compute-sanitizer's output per tool; OUTDIR/plain.json: 10 plain runs'
outputs per racecheck case (the fall-off barrier's correctness); versions in OUTDIR/meta.txt.
"""
import json, os, subprocess, sys
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import _common  # noqa: E402,F401  (np.row_stack for numba 0.68.0 on numpy 2.5, before numba.cuda)
from numba import cuda  # noqa: E402
T = 8
f32 = np.float32


def dot_nobar(a, b, out):
    s = cuda.shared.array(T, f32)
    i = cuda.threadIdx.x
    s[i] = a[i] * b[i]
    if i == 0:
        acc = f32(0)
        for k in range(T):
            acc += s[k]
        out[0] = acc


def warp_unsynced(a, out):
    s = cuda.shared.array(32, f32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    out[t] = s[t ^ 1]


def falloff(a, out, n):
    s = cuda.shared.array(T, f32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * T + t
    if i < n:
        s[t] = a[i]
        cuda.syncthreads()
        out[i] = s[t] + (s[t - 1] if t >= 1 else f32(0))


def bar_if_else(a, out):
    t = cuda.threadIdx.x
    if t % 2 == 0:
        out[t] = a[t]
        cuda.syncthreads()
    else:
        out[t] = -a[t]
        cuda.syncthreads()


def shfl_partial(a, out):
    t = cuda.threadIdx.x
    v = a[t]
    if t < 16:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, 1)
    out[t] = v


def smem_stride1(out):
    s = cuda.shared.array(8192, f32)
    t = cuda.threadIdx.x
    for k in range(t, 8192, 256):
        s[k] = f32(k)
    cuda.syncthreads()
    for it in range(4):
        j = (t + it) & 8191
        s[j] = s[j] * f32(1.0001) + f32(1)
    cuda.syncthreads()
    out[cuda.blockIdx.x * 256 + t] = s[t]


def sum_uninit(a, out, n):
    s = cuda.shared.array(T, f32)
    t = cuda.threadIdx.x
    if t < n:
        s[t] = a[t]
    cuda.syncthreads()
    if t == 0:
        acc = f32(0)
        for k in range(T):
            acc += s[k]
        out[0] = acc


R = lambda n, s=0: np.random.default_rng(s).random(n).astype(f32)
Z = lambda n: np.zeros(n, f32)
CASES = {"racecheck": [(dot_nobar, 1, T, lambda: (R(8), R(8, 1), Z(1))),
                       (warp_unsynced, 1, 32, lambda: (R(32), Z(32))),
                       (falloff, 2, T, lambda: (R(13), Z(13), 13)),
                       (smem_stride1, 2, 256, lambda: (Z(512),))],
         "synccheck": [(bar_if_else, 1, T, lambda: (R(8), Z(8))),
                       (shfl_partial, 1, 32, lambda: (R(32), Z(32))),
                       (falloff, 2, T, lambda: (R(13), Z(13), 13))],
         "initcheck": [(sum_uninit, 1, T, lambda: (R(8), Z(1), 5))]}


def run(tool, reps=1):
    res = {}
    for k, g, b, mk in CASES[tool]:
        kern, outs = cuda.jit(k), []
        for _ in range(reps):
            d = [cuda.to_device(x) if isinstance(x, np.ndarray) else x for x in mk()]
            kern[g, b](*d)
            outs.append([x.copy_to_host().tolist() for x in d if hasattr(x, "copy_to_host")][-1])
        res[k.__name__] = outs
    return res


if __name__ == "__main__":
    tool, out = sys.argv[1], sys.argv[2]
    if tool != "all":
        run(tool)
        sys.exit(0)
    os.makedirs(out, exist_ok=True)
    json.dump(run("racecheck", 10), open(f"{out}/plain.json", "w"))
    v = subprocess.run(["compute-sanitizer", "--version"], capture_output=True, text=True).stdout
    import numba
    open(f"{out}/meta.txt", "w").write(f"{v}\nnumba {numba.__version__} numpy {np.__version__}\n")
    for tool in CASES:
        p = subprocess.run(["compute-sanitizer", f"--tool={tool}", "--show-backtrace=no", sys.executable,
                            __file__, tool, out], capture_output=True, text=True, timeout=100)
        open(f"{out}/{tool}.txt", "w").write(p.stdout + p.stderr + f"\nexit {p.returncode}\n")
        print(tool, p.returncode, "\n".join(x for x in p.stdout.splitlines() if "Error" in x or "SUMM" in x))
