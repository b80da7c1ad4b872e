"""Here: simgpu's predicted time for the Triton tutorial matmul at the sizes
matmul_times.py timed on the H200 (h200/h200_matmul_times.json; same kernel, same config,
Triton 3.6.0 on both sides).  Large grids are sampled (sample=True: the first and the last
wave run, the rest is extrapolated by the timing model).  Writes matmul_results.json.
Run: PYTHONPATH=<simgpu>:<triton 3.6 target> python compare_matmul.py [MxNxK ...]"""
import json, os, shutil, sys, time
import numpy as np
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs("/tmp/simgpu_wgmma", exist_ok=True)
shutil.copy(os.path.join(HERE, "..", "wgmma", "kernels.py"), "/tmp/simgpu_wgmma/kernels.py")
sys.path.insert(0, "/tmp/simgpu_wgmma")
import triton, simgpu, kernels as K

card = json.load(open(os.path.join(HERE, "h200", "h200_matmul_times.json")))
META = card["meta"]
path = os.path.join(HERE, "matmul_results.json")
out = json.load(open(path)) if os.path.exists(path) else {"cases": {}}
out.update({"card": {k: card[k] for k in ("date", "gpu", "triton", "torch", "cuda", "method")},
            "here": {"triton": triton.__version__, "simgpu": simgpu.__version__}})
want = sys.argv[1:] or list(card["cases"])
for name in want:
    c = card["cases"][name]
    M, N, Kd = c["M"], c["N"], c["K"]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, Kd)).astype(np.float16)
    b = rng.standard_normal((Kd, N)).astype(np.float16)
    o = np.zeros((M, N), np.float16)
    grid = lambda m: (triton.cdiv(M, m["BLOCK_SIZE_M"]) * triton.cdiv(N, m["BLOCK_SIZE_N"]),)
    blocks = grid(META)[0]
    t0 = time.perf_counter()
    rep = simgpu.launch(K.matmul_kernel, grid, None, (a, b, o, M, N, Kd, Kd, 1, N, 1, N, 1),
                        sample=blocks > 132, **META)
    wall = time.perf_counter() - t0
    pred = rep.metrics["gpu__time_duration.sum"] / 1e3
    r = {"M": M, "N": N, "K": Kd, "blocks": blocks, "sampled": blocks > 132, "time_us_card": c["time_ms"] * 1e3,
         "time_us_simgpu": pred, "ratio": pred / (c["time_ms"] * 1e3), "bottleneck": rep.extras.get("bottleneck"),
         "registers_card": c["n_regs"], "registers_simgpu": rep.extras["ptx"].get("registers"),
         "simulation_s": wall}
    out["cases"][name] = r
    print(name, r, flush=True)
    json.dump(out, open(path, "w"), indent=1)
