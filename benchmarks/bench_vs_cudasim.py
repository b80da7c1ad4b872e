"""simgpu (PTX path and IR path) vs numba's CUDA simulator on the same kernel sources.

Each side runs at a size it can finish; we compare *rates* (threads/s, or multiply-adds/s
for the matmul whose per-thread work grows with size).  The simulator runs in a
subprocess with NUMBA_ENABLE_CUDASIM=1.  simgpu runs with the memory model on, on both of
its paths: executor="ptx" (the code numba-cuda compiles, runtime/ptx_path.py) and
executor="ir" (simgpu's own IR interpreter).  The timing model is on where the PTX path
supports it (``get_executor("ptx").supports_timing``) and then on both paths, else off on
both, so the two simgpu columns always do the same modelling.  The kernel is compiled (and
its numba helpers warmed) before the timed runs; a timed simgpu run is one ``launch`` call.
Prints the median of ``--repeat`` runs per side and the ratios of the medians, from wall-clock
time and from CPU time (the process' CPU seconds, every thread's: on a loaded machine the wall
clock also counts time the process waited for a core), and simgpu's CPU seconds per launch.

``--startup`` also measures, in fresh subprocesses with an empty ``SIMGPU_CACHE_DIR``, the
PTX path's first compile (numba-cuda -> PTX, ptxas/nvdisasm for the SASS facts) and the cached
start (a second process launching the same kernel with the compile cached on disk): the time
of the first ``launch`` call, and the process' time from start (imports included).

    python benchmarks/bench_vs_cudasim.py [--repeat 3] [--quick] [--startup] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

T_START = time.perf_counter()

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

# name: (kernel in simgpu.kernels, size for cudasim, size for simgpu, work unit)
CASES = {
    "vector add": ("vadd", 4096, 1 << 24, "threads"),
    "tree reduction (shared, barriers)": ("tree_reduce", 1024, 1 << 22, "threads"),
    "16x16 tiled matmul": ("matmul_tiled_shape", 32, 512, "multiply-adds"),
}
QUICK = {"vadd": 1 << 20, "tree_reduce": 1 << 18, "matmul_tiled_shape": 128}
SIDES = ("cudasim", "ir", "ptx")


def make(kernel, n, rng):
    if kernel == "vadd":
        a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        return (-(-n // 256),), (256,), (a, b, np.zeros(n, np.float32)), n
    if kernel == "tree_reduce":
        x = rng.random(n, dtype=np.float32)
        return (-(-n // 128),), (128,), (x, np.zeros(-(-n // 128), np.float32)), n
    A, B = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    g = -(-n // 16)
    return (g, g), (16, 16), (A, B, np.zeros((n, n), np.float32)), n ** 3


def ptx_timing():
    """Timing model on where the PTX path supports it (then on both simgpu paths)."""
    from simgpu.runtime.executor import get_executor
    return bool(getattr(get_executor("ptx"), "supports_timing", False))


def kernel_for(kernel, sim):
    import simgpu.kernels
    fn = getattr(simgpu.kernels, kernel)
    if sim in ("cudasim", "ptx"):               # numba compiles it: numba.cuda's names
        from simgpu.validate.runner import as_numba_function
        fn = as_numba_function(fn)
    return fn


def run_here(kernel, n, sim):
    """(work units per second of wall-clock time, per second of CPU time) of one launch of
    `kernel` at size n on side `sim`."""
    rng = np.random.default_rng(0)
    grid, block, args, work = make(kernel, n, rng)
    fn = kernel_for(kernel, sim)
    if sim == "cudasim":
        from numba import cuda
        k = cuda.jit(fn)
        t, c = time.perf_counter(), time.process_time()
        k[grid, block](*args)
    else:
        import simgpu
        timing = ptx_timing()
        t, c = time.perf_counter(), time.process_time()
        simgpu.launch(fn, grid, block, args, memory=True, timing=timing, executor=sim)
    return work / (time.perf_counter() - t), work / (time.process_time() - c)


def run_cudasim(kernel, n):
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    code = (f"import sys; sys.path.insert(0, {HERE!r}); import bench_vs_cudasim as b; "
            f"print(*b.run_here({kernel!r}, {n}, 'cudasim'))")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    return tuple(float(v) for v in r.stdout.strip().splitlines()[-1].split())


def startup_child(kernel):
    """In a fresh process: seconds for imports and for the first launch of `kernel` (PTX)."""
    t0 = time.perf_counter()
    import simgpu
    fn = kernel_for(kernel, "ptx")
    grid, block, args, _ = make(kernel, 16 if kernel.startswith("matmul") else 256,
                                np.random.default_rng(0))
    t1 = time.perf_counter()
    simgpu.launch(fn, grid, block, args, memory=True, timing=ptx_timing(), executor="ptx")
    t2 = time.perf_counter()
    print(json.dumps({"import": t1 - t0, "launch": t2 - t1, "process": t2 - T_START}))


def _child(code, env):
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure_startup(kernel, repeat):
    """(first compile, cached start): medians over `repeat` fresh kernel-cache directories.
    Python's bytecode is cached (in a private PYTHONPYCACHEPREFIX, warmed by one run first,
    even where PYTHONDONTWRITEBYTECODE is set) as in an installed simgpu, so the first compile
    times the kernel's compilation, not Python's compilation of simgpu's sources."""
    code = (f"import sys; sys.path.insert(0, {HERE!r}); import bench_vs_cudasim as b; "
            f"b.startup_child({kernel!r})")
    first, cached = [], []
    with tempfile.TemporaryDirectory() as pyc:
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        base["PYTHONPYCACHEPREFIX"] = pyc
        with tempfile.TemporaryDirectory() as d:
            _child(code, dict(base, SIMGPU_CACHE_DIR=d))        # bytecode warm-up
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as d:
                env = dict(base, SIMGPU_CACHE_DIR=d)
                first.append(_child(code, env))
                cached.append(_child(code, env))
    med = lambda rows, k: statistics.median(r[k] for r in rows)   # noqa: E731
    return {name: {k: med(rows, k) for k in ("import", "launch", "process")}
            for name, rows in (("first compile", first), ("cached start", cached))}


def measure(kernel, n_sim, n_ours, repeat):
    """(median rate per side, every rate per side, median CPU rate per side): rates from the
    wall clock, CPU rates from the CPU time."""
    for sim in ("ir", "ptx"):                   # compile and warm up outside the timings
        run_here(kernel, 64 if kernel.startswith("matmul") else 1024, sim)
    both = {"cudasim": [run_cudasim(kernel, n_sim) for _ in range(repeat)]}
    for sim in ("ir", "ptx"):
        both[sim] = [run_here(kernel, n_ours, sim) for _ in range(repeat)]
    rates = {s: [w for w, _ in v] for s, v in both.items()}
    cpu = {s: statistics.median(c for _, c in v) for s, v in both.items()}
    return {s: statistics.median(v) for s, v in rates.items()}, rates, cpu


def print_rows(rows, timing):
    print(f"simgpu: memory model on, timing model {'on' if timing else 'off'} (both paths); "
          "medians of the repeats; rates in work units per second")
    print(f"{'kernel':36s} {'unit/s':>14s} {'numba cudasim':>14s} {'simgpu IR':>14s} {'simgpu PTX':>14s} "
          f"{'PTX/cudasim':>12s} {'IR/cudasim':>11s} {'PTX/IR':>7s}")
    for r in rows:
        m = r["median"]
        print(f"{r['case']:36s} {r['unit']:>14s} {m['cudasim']:14,.0f} {m['ir']:14,.0f} {m['ptx']:14,.0f} "
              f"{m['ptx'] / m['cudasim']:11,.0f}x {m['ir'] / m['cudasim']:10,.0f}x "
              f"{m['ptx'] / m['ir']:6.2f}x")
    print("from CPU time (medians; simgpu's CPU seconds per launch at its size):")
    print(f"{'kernel':36s} {'PTX/cudasim':>12s} {'IR/cudasim':>11s} {'PTX s':>8s} {'IR s':>8s}")
    for r in rows:
        c = r["cpu_median"]
        print(f"{r['case']:36s} {c['ptx'] / c['cudasim']:11,.0f}x {c['ir'] / c['cudasim']:10,.0f}x "
              f"{r['work'] / c['ptx']:8.2f} {r['work'] / c['ir']:8.2f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smaller simgpu sizes")
    ap.add_argument("--startup", action="store_true", help="also time first compile and cached start")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    rows = []
    for title, (kernel, n_sim, n_ours, unit) in CASES.items():
        if a.quick:
            n_ours = QUICK[kernel]
        med, all_rates, cpu = measure(kernel, n_sim, n_ours, a.repeat)
        work = n_ours ** 3 if kernel.startswith("matmul") else n_ours      # make()'s work units
        rows.append(dict(case=title, unit=unit, cudasim_size=n_sim, simgpu_size=n_ours, work=work,
                         median=med, rates=all_rates, cpu_median=cpu,
                         ptx_vs_cudasim_cpu=cpu["ptx"] / cpu["cudasim"],
                         ptx_vs_cudasim=med["ptx"] / med["cudasim"],
                         ir_vs_cudasim=med["ir"] / med["cudasim"], ptx_vs_ir=med["ptx"] / med["ir"]))
    print_rows(rows, ptx_timing())
    result = {"timing": ptx_timing(), "cases": rows}
    if a.startup:
        result["startup"] = st = measure_startup("vadd", a.repeat)
        for name, v in st.items():
            print(f"PTX path, {name:14s}: first launch {v['launch']:.2f} s, imports {v['import']:.2f} s, "
                  f"process start to end {v['process']:.2f} s (vadd, medians)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
