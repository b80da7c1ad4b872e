"""Here (no device): simgpu's side of every issue-27 target case (targets_cases.py, the launches
targets_device.py ran on the card), on ``simgpu.validate.unprofiled(GPU)`` (default H100, the
card of targets/h100/): registers (ptxas'), smsp__inst_executed.sum, the kernel time
(gpu__time_duration.sum, against CUPTI's duration), ``dobench_seconds(rep)`` (against do_bench's
median) and the sha256 of every output array (against the card's).  Each case runs twice: as
ncu sees it (the caches empty: ``kernel_us``, ``dobench_cold_us``) and as do_bench runs it, right
after its 256 MB memset (``memory=simgpu.memory.AfterFlush``: the L2 full of the memset's dirty
lines; ``kernel_after_flush_us``, and ``dobench_us`` = ``dobench_seconds`` of that launch).  Every block runs (sample=False:
the full outputs, so their sha256 can be compared).  Writes targets_sim.json (merged per case).

Run (Triton 3.6.0, as on the card: a --target install first on the path):
    PYTHONPATH=<simgpu>:<triton 3.6 target> SIMGPU_TOOLCHAIN=/work/tc13 python targets_sim.py [case ...] [--gpu H100]"""
import hashlib
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import targets_cases  # noqa: E402

import triton  # noqa: E402
import simgpu  # noqa: E402
from simgpu.memory import AfterFlush  # noqa: E402
from simgpu.runtime.triton_door import triton_ptxas_path  # noqa: E402
from simgpu.validate import dobench_seconds, unprofiled  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402


class Sim:
    """targets_cases' backend on simgpu: numpy arrays through simgpu.jit and simgpu.cuda_source."""

    def __init__(self, gpu):
        self.gpu = gpu
        self.memory = True          # the memory model of the launches (AfterFlush: do_bench's state)

    def array(self, a):
        return np.ascontiguousarray(a)

    def full(self, shape, dtype, value):
        return np.full(tuple(shape), value, dtype)

    def desc(self, x, shape, strides, block):
        return TensorDescriptor(simgpu.as_tensor(x.reshape(shape)), shape, strides, block)

    def desc_from(self, x, block):
        return TensorDescriptor.from_tensor(simgpu.as_tensor(x), block)

    def triton(self, kern, grid, args, meta):
        return lambda: simgpu.jit(kern)[grid](*args, gpu=self.gpu, memory=self.memory, **meta)

    def cuda_c(self, src, name, grid, block, args, arch):
        k = simgpu.cuda_source(src, name, arch=arch)
        return lambda: k[grid, block](*args, gpu=self.gpu, memory=self.memory)

    def tensor_map(self, x, box, swizzle):
        return simgpu.tensor_map(x, box, swizzle=swizzle)


def sha(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def main():
    argv = sys.argv[1:]
    gpu_name = argv[argv.index("--gpu") + 1] if "--gpu" in argv else "H100"
    want = [a for i, a in enumerate(argv) if not a.startswith("--") and (i == 0 or argv[i - 1] != "--gpu")]
    gpu = unprofiled(gpu_name)
    path = os.path.join(HERE, "targets_sim.json")
    out = json.load(open(path)) if os.path.exists(path) else {"cases": {}}
    out["here"] = {"triton": triton.__version__, "simgpu": simgpu.__version__, "numpy": np.__version__,
                   "gpu": f"unprofiled({gpu_name!r})", "sm_clock_hz": gpu.clock_hz,
                   "toolchain": os.environ.get("SIMGPU_TOOLCHAIN", "(default)"),
                   "triton_ptxas": triton_ptxas_path((9, 0))}
    sim = Sim(gpu)
    for name, make in targets_cases.cases(sim):
        if want and name not in want:
            continue
        t0 = time.time()
        launch, outs = make()
        sim.memory = True
        rep = launch()
        t1 = time.time()
        sim.memory = AfterFlush
        flushed = launch()                   # the same launch in do_bench's state (same outputs)
        sim.memory = True
        m = rep.metrics
        r = {"registers": m.get("launch__registers_per_thread"),
             "smsp__inst_executed.sum": m.get("smsp__inst_executed.sum"),
             "kernel_us": m["gpu__time_duration.sum"] / 1e3, "dobench_cold_us": dobench_seconds(rep) * 1e6,
             "kernel_after_flush_us": flushed.metrics["gpu__time_duration.sum"] / 1e3,
             "dobench_us": dobench_seconds(flushed) * 1e6,
             "dram_write_after_flush_bytes": flushed.metrics.get("dram__bytes_write.sum"),
             "bottleneck": rep.extras.get("bottleneck"), "simulation_s": round(t1 - t0, 1),
             "simulation_after_flush_s": round(time.time() - t1, 1)}
        for i, o in enumerate(outs):
            r[f"out{i}_sha256"] = sha(o)
        out["cases"][name] = r
        print(name, {k: v for k, v in r.items() if "sha" not in k}, flush=True)
        json.dump(out, open(path, "w"), indent=1)


if __name__ == "__main__":
    main()
