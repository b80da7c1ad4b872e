"""On the card: what issue 27's targets need from the card, for every kernel of the issue at once.
Run on an H100 on 2026-12-07 (targets_device.sh, ncu with --clock-control none): targets/h100/.
The cases are targets_cases.py's (shared with targets_sim.py, simgpu's side).

    python3 targets_device.py time   -> $OUT/targets_card_time.json (+ targets_outputs.npz)
        per case: registers (CompiledKernel.n_regs), do_bench median (warmup=25, rep=100, L2
        flushed), CUPTI kernel durations (torch.profiler, median of 20 calls), outputs (raw bits
        of the arrays of up to 8 MB, sha256 of every one)
    ncu --metrics ... python3 targets_device.py ncu   (targets_device.sh)
        one launch per case, in the order of the cases (ncu's CSV rows follow it):
        smsp__inst_executed.sum, gpu__time_duration.sum, launch__registers_per_thread,
        sm__cycles_elapsed.avg.per_second, launch__grid_size

The CUDA C mma.sync GEMM is compiled with NVRTC through cupy; the CUDA C wgmma + TMA GEMM needs
host tensor maps and runs from cuda_c/wgmma_tma_device.sh instead."""
import datetime, hashlib, json, os, statistics, subprocess, sys, traceback, types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import targets_cases  # noqa: E402
OUT = os.environ.get("OUT", "/tmp/out")
MODE = sys.argv[1] if len(sys.argv) > 1 else "time"


class Card:
    """targets_cases' backend on the card: torch tensors, Triton's JIT, cupy for CUDA C."""

    def __init__(self):
        import torch, triton
        from triton.tools.tensor_descriptor import TensorDescriptor
        self.torch, self.TD = torch, TensorDescriptor
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))

    def array(self, a):
        return self.torch.from_numpy(np.ascontiguousarray(a)).cuda()

    def full(self, shape, dtype, value):
        return self.torch.full(tuple(shape), value, dtype=getattr(self.torch, np.dtype(dtype).name), device="cuda")

    def desc(self, x, shape, strides, block):
        return self.TD(x.view(*shape), shape, strides, block)

    def desc_from(self, x, block):
        return self.TD.from_tensor(x, block)

    def triton(self, kern, grid, args, meta):
        return lambda: kern[grid](*args, **meta)

    def cuda_c(self, src, name, grid, block, args, arch):
        import cupy
        k = cupy.RawModule(code=src, options=(f"-arch={arch}",)).get_function(name)
        args = tuple(cupy.asarray(self.torch.as_tensor(a)) if isinstance(a, self.torch.Tensor) else a for a in args)
        def launch():
            k(grid, (block,), args)
            return types.SimpleNamespace(n_regs=k.num_regs)   # ptxas' count, as cupy reports it
        return launch


def cases():
    return targets_cases.cases(Card())


def _np(t):
    return t.get() if hasattr(t, "get") else t.cpu().numpy()


def cupti_us(fn, n=20):
    import torch
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
    d = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            d.setdefault(e.name, []).append(e.device_time)            # as lecture/device_run.py
    return {k: statistics.median(v) for k, v in d.items()}


def main():
    import torch, triton
    os.makedirs(OUT, exist_ok=True)
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "mode": MODE, "triton": triton.__version__,
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "cuda": torch.version.cuda, "cases": {}}
    try:
        res["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit",
                                            "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except Exception as e:
        res["nvidia_smi"] = str(e)
    arrays = {}
    for name, make in cases():
        r = res["cases"][name] = {}
        try:
            fn, outs = make()
            ck = fn()                                   # ncu mode: this is the one profiled launch
            torch.cuda.synchronize()
            r["n_regs"] = getattr(ck, "n_regs", None)
            for i, o in enumerate(outs):
                a = np.ascontiguousarray(_np(o))
                r[f"out{i}_sha256"] = hashlib.sha256(a.tobytes()).hexdigest()
                if MODE == "time" and a.nbytes <= 8 << 20:
                    arrays[f"{name}_out{i}"] = a.view(np.uint8)
            if MODE == "time":
                from triton.testing import do_bench
                r["dobench_median_us"] = do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3
                r["cupti_us"] = cupti_us(fn)
        except Exception:
            r["error"] = traceback.format_exc()
        print("CASE", name, {k: v for k, v in r.items() if "sha" not in k}, flush=True)
    json.dump(res, open(os.path.join(OUT, f"targets_card_{MODE}.json"), "w"), indent=1)
    if arrays:
        np.savez_compressed(os.path.join(OUT, "targets_outputs.npz"), **arrays)


if __name__ == "__main__":
    main()
