"""On the card (one call, about a minute; run on an H100 2026-12-07 17:26 UTC: h100/launch_floor/): do_bench's floor for Triton launches that
take tensor descriptors -- a microbenchmark, no kernel of the targets.

On the H100 (targets/h100, 2026-12-07) do_bench's median exceeds CUPTI's kernel duration by
2.3-2.9 us for kernels of plain pointers (the floor simgpu adds, presets.DOBENCH_FLOOR_H100_NS)
but by 10-15 us for the TMA matmul and FA-2 (host TensorDescriptors: Triton's launcher encodes a
tensor map per descriptor per call; device descriptors: the global scratch comes from
triton.set_allocator per call).  This measures that host-side cost on launches that do almost
nothing (grid 1, 4 warps; one TMA load of a 16 x 16 fp16 tile per descriptor, one store):

    empty_ptr          an empty kernel of one pointer (the existing floor's kernel)
    host_desc_{1,2,4}  1, 2, 4 host TensorDescriptors (loaded from)
    dev_desc_{1,2}     1, 2 tl.make_tensor_descriptor inside the kernel (allocator per call)

    OUT=<dir> python3 launch_floor_device.py   -> $OUT/launch_floor.json
        per kernel: do_bench median (warmup=25, rep=100, as targets_device.py), CUPTI durations
        (median of 20), and the mean of 200 launches issued back to back (the host's issue rate).
Then, here: a host cost per descriptor for simgpu.validate.dobench_seconds, from these launches only."""
import datetime
import json
import os
import statistics
import sys
import traceback

import torch
import triton
from triton.tools.tensor_descriptor import TensorDescriptor

OUT = os.environ.get("OUT", "/tmp/out")


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_floor_kernels import dev_desc_1, dev_desc_2, empty_ptr, host_desc_1, host_desc_2, host_desc_4  # noqa: E402


def cupti_us(fn, n=20):
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
    d = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            d.setdefault(e.name, []).append(e.device_time)
    return {k: statistics.median(v) for k, v in d.items()}


def back_to_back_us(fn, n=200):
    """Mean time a launch of n issued back to back, no L2 flush between them (CUDA events):
    the host's issue rate where it is slower than the kernel."""
    fn()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(n):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) * 1e3 / n


def main():
    from triton.testing import do_bench
    os.makedirs(OUT, exist_ok=True)
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    mats = [torch.randn(64, 64, device="cuda").half() for _ in range(4)]
    descs = [TensorDescriptor.from_tensor(m, [16, 16]) for m in mats]
    o = torch.zeros(16, device="cuda", dtype=torch.float16)
    cases = {
        "empty_ptr": lambda: empty_ptr[(1,)](o, num_warps=4),
        "host_desc_1": lambda: host_desc_1[(1,)](o, *descs[:1], num_warps=4),
        "host_desc_2": lambda: host_desc_2[(1,)](o, *descs[:2], num_warps=4),
        "host_desc_4": lambda: host_desc_4[(1,)](o, *descs[:4], num_warps=4),
        "dev_desc_1": lambda: dev_desc_1[(1,)](o, mats[0], num_warps=4),
        "dev_desc_2": lambda: dev_desc_2[(1,)](o, mats[0], mats[1], num_warps=4),
    }
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "triton": triton.__version__,
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "cases": {}}
    for name, fn in cases.items():
        r = res["cases"][name] = {}
        try:
            fn()
            torch.cuda.synchronize()
            r["dobench_median_us"] = do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3
            r["cupti_us"] = cupti_us(fn)
            r["back_to_back_us"] = back_to_back_us(fn)
        except Exception:  # noqa: BLE001
            r["error"] = traceback.format_exc()
        print(name, r, flush=True)
    json.dump(res, open(os.path.join(OUT, "launch_floor.json"), "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
