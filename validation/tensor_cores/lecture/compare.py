"""Here: simgpu's prediction (gpu="H100", the card of h100/card_lecture.json) for the tutorial
matmul at the issue's shapes (one config, kernels.MM_META), like for like with the card:
  * the kernel's own time: simgpu's gpu__time_duration against CUPTI's kernel duration;
  * do_bench's median: simgpu.validate.dobench_seconds (kernel + the floor measured with empty
    kernels, derive_floor.py) against the card's do_bench median.
Both are simulated on simgpu.validate.unprofiled(GPU): the card ran do_bench and CUPTI outside a
profiler, at its unprofiled SM clock (1.794 GHz measured on the same die, ../clock/), not at the
1.979 GHz Nsight Compute runs it at (GPU's clock_hz); --profiled keeps clock_hz (the figures
before session 31).  Grids over one wave are sampled.  Writes results.json.
Run: PYTHONPATH=<simgpu>:<triton 3.6> python compare.py [MxNxK ...]"""
import json, os, shutil, statistics, sys, time
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs("/tmp/simgpu_lecture", exist_ok=True)
shutil.copy(os.path.join(HERE, "kernels.py"), "/tmp/simgpu_lecture/kernels.py")
sys.path.insert(0, "/tmp/simgpu_lecture")
import triton, simgpu, kernels as L
from simgpu.validate import dobench_seconds, unprofiled

GPU = "H100"
card = json.load(open(os.path.join(HERE, "h100", "card_lecture.json")))
path = os.path.join(HERE, "results.json")
out = json.load(open(path)) if os.path.exists(path) else {"matmul": {}}
out["card"] = {k: card[k] for k in ("date", "gpu", "triton", "torch", "cuda", "nvidia_smi", "method")}
out["here"] = {"triton": triton.__version__, "simgpu": simgpu.__version__, "gpu": GPU,
               "sm_clock": "unprofiled(GPU): simgpu.validate.unprofiled" if "--profiled" not in sys.argv else "clock_hz"}


def simulate(M, N, Kd, gpu=None):
    gpu = gpu if gpu is not None else unprofiled(GPU)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, Kd)).astype(np.float16)
    b = rng.standard_normal((Kd, N)).astype(np.float16)
    o = np.zeros((M, N), np.float16)
    grid = lambda m: (triton.cdiv(M, m["BLOCK_SIZE_M"]) * triton.cdiv(N, m["BLOCK_SIZE_N"]),)
    blocks = grid(L.MM_META)[0]
    t0 = time.perf_counter()
    rep = simgpu.launch(L.matmul_kernel, grid, None, (a, b, o, M, N, Kd, Kd, 1, N, 1, N, 1),
                        sample=blocks > 132, gpu=gpu, **L.MM_META)
    return rep, blocks, time.perf_counter() - t0


if __name__ == "__main__":
    profiled = "--profiled" in sys.argv
    want = [a for a in sys.argv[1:] if not a.startswith("--")] or [f"{m}x{n}x{k}" for m, n, k in L.TABLE if m < 4096]
    for name in want:
        M, N, Kd = map(int, name.split("x"))
        c = card["matmul"][name]
        rep, blocks, wall = simulate(M, N, Kd, gpu=GPU if profiled else unprofiled(GPU))
        k_us = rep.metrics["gpu__time_duration.sum"] / 1e3
        d_us = dobench_seconds(rep) * 1e6
        out["matmul"][name] = {
            "blocks": blocks, "sampled": blocks > 132,
            "card_kernel_us": c["kernel_us"], "simgpu_kernel_us": k_us, "kernel_ratio": k_us / c["kernel_us"],
            "card_dobench_us": c["median_us"], "simgpu_dobench_us": d_us, "dobench_ratio": d_us / c["median_us"],
            "bottleneck": rep.extras.get("bottleneck"), "registers_card": c["n_regs"],
            "registers_simgpu": rep.extras["ptx"].get("registers"), "simulation_s": wall,
            "sm_clock_hz": rep.gpu.clock_hz if hasattr(rep, "gpu") and hasattr(rep.gpu, "clock_hz") else None}
        print(name, out["matmul"][name], flush=True)
        json.dump(out, open(path, "w"), indent=1)
    r = [v["dobench_ratio"] for v in out["matmul"].values()]
    print("do_bench: median |error|", statistics.median(abs(x - 1) for x in r), "range", min(r), max(r))
