"""Here: simgpu's side of the CUDA C mma.sync GEMM (kernels.py) through simgpu.cuda_source, on
simgpu.validate.unprofiled("H200") (what do_bench and CUPTI see) and on the profiled preset (what
ncu sees).  Outputs against numpy's float64 product and, when the card's run is here
(CARD_DIR=<unpacked targets_device.sh output>: targets_card_time.json, targets_outputs.npz,
targets_card_ncu.json + ncu.csv), against the card's bits, registers, do_bench, CUPTI and
smsp__inst_executed.  Writes results.json.  Run: PYTHONPATH=<simgpu> python compare.py [--quick]"""
import json
import os
import sys
import time

import numpy as np

import simgpu
from simgpu.validate import dobench_seconds, unprofiled

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kernels as C  # noqa: E402


def main():
    card_dir = os.environ.get("CARD_DIR")
    card = json.load(open(os.path.join(card_dir, "targets_card_time.json"))) if card_dir else None
    card_out = np.load(os.path.join(card_dir, "targets_outputs.npz")) if card_dir else None
    k = simgpu.cuda_source(C.MMA_SYNC_CU, "mma_sync_gemm", arch="sm_90")
    out = {"card": {kk: card[kk] for kk in ("date", "gpu", "cuda", "nvidia_smi")} if card else "not measured yet "
           "(validation/tensor_cores/targets_device.sh)", "cases": {}}
    cases = C.MMA_SYNC_CASES[:1] if "--quick" in sys.argv else C.MMA_SYNC_CASES
    for name, M, N, K in cases:
        a, bt = C.inputs(M, N, K)
        c = np.full((M, N), np.nan, np.float32)
        t0 = time.process_time()
        rep = k[C.grid(M, N), 128](a, bt, c, M, N, K, gpu=unprofiled("H200"))
        cpu = time.process_time() - t0
        prof = k[C.grid(M, N), 128](a, bt, np.empty_like(c), M, N, K, gpu="H200")   # ncu's clock
        exact = a.astype(np.float64) @ bt.astype(np.float64).T
        r = {"M": M, "N": N, "K": K, "blocks": C.grid(M, N)[0] * C.grid(M, N)[1],
             "max_abs_vs_float64": float(np.abs(c - exact).max()),
             "registers_simgpu": rep.metrics.get("launch__registers_per_thread"),
             "simgpu_kernel_us_unprofiled": rep.metrics["gpu__time_duration.sum"] / 1e3,
             "simgpu_dobench_us": dobench_seconds(rep) * 1e6,
             "simgpu_kernel_us_profiled": prof.metrics["gpu__time_duration.sum"] / 1e3,
             "simgpu_smsp__inst_executed.sum": prof.metrics["smsp__inst_executed.sum"],
             "launch_cpu_s": round(cpu, 1)}
        if card and name in card["cases"] and "error" not in card["cases"][name]:
            cc = card["cases"][name]
            hw = card_out[f"{name}_out0"].view(np.float32).reshape(M, N)
            r.update({"card_dobench_us": cc["dobench_median_us"], "card_cupti_us": cc["cupti_us"].get("mma_sync_gemm"),
                      "outputs_bit_equal": bool(np.array_equal(hw.view(np.uint32), c.view(np.uint32))),
                      "outputs_differing": int((hw.view(np.uint32) != c.view(np.uint32)).sum())})
        out["cases"][name] = r
        print(name, r, flush=True)
    json.dump(out, open(os.path.join(HERE, "results.json"), "w"), indent=1)


if __name__ == "__main__":
    main()
