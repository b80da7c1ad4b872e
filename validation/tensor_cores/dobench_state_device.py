"""On the card (one call, about 3 minutes; NOT RUN YET): what in do_bench's state -- right after
its L2 flush, a 256 MB memset (triton's ``clear_cache``) -- makes a kernel slower than warm, on
simple kernels only, so that simgpu's post-flush costs come from microbenchmarks and not from
issue 27's kernels (dobench_excess_device.py, lecture/h100/dobench_excess: those kernels run 3-35 %
longer after the flush than warm; the empty kernel not at all).

States, set before every timed launch (the timed kernel's CUPTI duration, torch.profiler, median
of n launches):
    warm    nothing between launches: the kernel's data in the L2, TLBs warm;
    memset  do_bench's flush: the L2 left full of the memset's dirty lines, the TLBs holding its
            256 MB of pages;
    read    a 256 MB read-only kernel over another buffer: the L2 full of *clean* lines, the same
            TLB pressure.  memset - read = the cost of the dirty lines (write-back per miss);
            read - warm = L2 misses + cold TLBs.

Kernels (CuPy RawKernels, NVRTC):
    stream_read(S)  every byte of an S-byte buffer read once (float4, grid-stride, 132 x 4 blocks of
                    512 threads), S = 64 KiB ... 64 MiB: the write-back's cost per byte missed;
    chase_pages     one thread, 64 dependent 8-byte loads, each in a different 2 MiB page of a
                    256 MiB buffer (random order): latency per miss with a TLB miss each;
    chase_lines     the same in one 2 MiB page (64 random lines): latency per miss, one page;
    empty           an empty kernel (the launch).
Triton's near-empty descriptor kernels (lecture/launch_floor_kernels.py: one TMA load per host or
device descriptor) in the three states: the tensor-map fetch after the flush.
Then issue 27's cases (targets_cases.py, as targets_device.py makes them; not the CUDA C wgmma +
TMA GEMM): do_bench's median (warmup=25, rep=100) in 3 rounds over all cases, and per round
do_bench's loop re-timed with the host's time per iteration (flush + events + launch) against the
flush's GPU time: how far do_bench's median moves from run to run, and whether the host ever
falls behind (the targets run read FA-2 N = 128 host descriptors at 19.1 us, dobench_excess 7.7).

    OUT=<dir> python3 validation/tensor_cores/dobench_state_device.py -> $OUT/dobench_state.json
"""
import datetime
import json
import os
import statistics
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "lecture"))
OUT = os.environ.get("OUT", "/tmp/out")
MiB = 1 << 20

# one streaming read under two names (the profiler tells the measured read from the flush's)
_STREAM = r"""
extern "C" __global__ void NAME(const float4* a, long long n4, float* out) {
    float acc = 0.f;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
        float4 v = a[i];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 1234.5f) out[0] = acc;
}
"""
SRC = _STREAM.replace("NAME", "stream_read") + _STREAM.replace("NAME", "flush_read") + r"""
extern "C" __global__ void chase(const long long* next, long long start, int steps, long long* out) {
    long long p = start;
    for (int i = 0; i < steps; i++) p = next[p];
    out[0] = p;
}
extern "C" __global__ void empty(float* out) {}
"""


def durations(fn, between, n=30):
    """CUPTI durations (us) of every kernel of ``between(); fn()`` repeated n times: median, n."""
    import torch
    for _ in range(3):
        between()
        fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            between()
            fn()
        torch.cuda.synchronize()
    d = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            d.setdefault(e.name, []).append(e.device_time)
    return {k: {"median_us": statistics.median(v), "min_us": min(v), "n": len(v)} for k, v in d.items()}


def chain(n_elems, positions, rng):
    """A pointer chain (int64 element indices) visiting ``positions`` in a random order, closed."""
    order = rng.permutation(len(positions))
    nxt = np.zeros(n_elems, dtype=np.int64)
    pos = np.asarray(positions, dtype=np.int64)[order]
    nxt[pos] = np.roll(pos, -1)
    return nxt, int(pos[0])


def micro(res):
    import cupy
    import torch
    import triton
    mod = cupy.RawModule(code=SRC, options=("-arch=sm_90",))
    k_stream, k_flush, k_chase, k_empty = (mod.get_function(n) for n in ("stream_read", "flush_read", "chase", "empty"))
    out = cupy.zeros(4, dtype=cupy.float32)
    cache = triton.runtime.driver.active.get_empty_cache_for_benchmark()
    other = cupy.ones(256 * MiB // 4, dtype=cupy.float32)
    n4_other = other.size // 4
    states = {
        "warm": lambda: None,
        "memset": lambda: triton.runtime.driver.active.clear_cache(cache),
        "read": lambda: k_flush((132 * 8,), (512,), (other, np.int64(n4_other), out)),
    }
    res["flush_bytes"] = int(cache.numel() * cache.element_size())
    m = res["micro"] = {}

    def run(name, fn):
        r = m[name] = {}
        for s, between in states.items():
            try:
                r[s] = durations(fn, between)
            except Exception:  # noqa: BLE001
                r[s] = {"error": traceback.format_exc()}
        print(name, {s: {k: v["median_us"] for k, v in d.items() if "median_us" in v} for s, d in r.items()}, flush=True)

    run("empty", lambda: k_empty((1,), (32,), (out,)))
    buf = cupy.ones(64 * MiB // 4, dtype=cupy.float32)
    for S in (64 << 10, 1 * MiB, 4 * MiB, 16 * MiB, 32 * MiB, 64 * MiB):
        n4 = S // 16
        run(f"stream_read_{S}", lambda n4=n4: k_stream((132 * 4,), (512,), (buf, np.int64(n4), out)))
    rng = np.random.default_rng(27)
    n_el = 256 * MiB // 8
    per_page = 2 * MiB // 8
    pages = rng.choice(n_el // per_page, 64, replace=False)
    pos = [p * per_page + 16 * rng.integers(0, per_page // 16) for p in pages]        # a 128-byte line each
    nxt, start = chain(n_el, pos, rng)
    g_pages = cupy.asarray(nxt)
    lines = rng.choice(per_page // 16, 64, replace=False)
    base = 37 * per_page
    nxt2, start2 = chain(n_el, [base + 16 * int(x) for x in lines], rng)
    g_lines = cupy.asarray(nxt2)
    lo = cupy.zeros(1, dtype=cupy.int64)
    for steps in (0, 64):
        run(f"chase_pages_{steps}", lambda s=steps: k_chase((1,), (1,), (g_pages, np.int64(start), np.int32(s), lo)))
        run(f"chase_lines_{steps}", lambda s=steps: k_chase((1,), (1,), (g_lines, np.int64(start2), np.int32(s), lo)))
    del buf, g_pages, g_lines
    # Triton's near-empty descriptor kernels
    from triton.tools.tensor_descriptor import TensorDescriptor
    import launch_floor_kernels as K
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
    mats = [torch.randn(64, 64, device="cuda").half() for _ in range(4)]
    descs = [TensorDescriptor.from_tensor(x, [16, 16]) for x in mats]
    o = torch.zeros(16, device="cuda", dtype=torch.float16)
    for name, fn in (("tr_empty_ptr", lambda: K.empty_ptr[(1,)](o, num_warps=4)),
                     ("tr_host_desc_1", lambda: K.host_desc_1[(1,)](o, *descs[:1], num_warps=4)),
                     ("tr_host_desc_4", lambda: K.host_desc_4[(1,)](o, *descs[:4], num_warps=4)),
                     ("tr_dev_desc_1", lambda: K.dev_desc_1[(1,)](o, mats[0], num_warps=4)),
                     ("tr_dev_desc_2", lambda: K.dev_desc_2[(1,)](o, mats[0], mats[1], num_warps=4))):
        run(name, fn)
    del other


def loop_host(fn, flush, n=200):
    """do_bench's measuring loop (flush, start event, fn, end event): per iteration the event time
    and the host's time for the whole iteration; the flush's GPU time alone."""
    import torch
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    host = []
    for _ in range(10):
        flush()
        fn()
    torch.cuda.synchronize()
    for i in range(n):
        t = time.perf_counter()
        flush()
        starts[i].record()
        fn()
        ends[i].record()
        host.append((time.perf_counter() - t) * 1e6)
    torch.cuda.synchronize()
    ev = [s.elapsed_time(e) * 1e3 for s, e in zip(starts, ends)]
    return {"event_median_us": statistics.median(ev), "event_p10_us": float(np.percentile(ev, 10)),
            "event_p90_us": float(np.percentile(ev, 90)), "host_iter_median_us": statistics.median(host),
            "host_iter_p90_us": float(np.percentile(host, 90))}


def rounds(res, n_rounds=3):
    import torch
    import triton
    from triton.testing import do_bench
    import targets_device
    cache = triton.runtime.driver.active.get_empty_cache_for_benchmark()
    flush = lambda: triton.runtime.driver.active.clear_cache(cache)      # noqa: E731
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(10):
        flush()
    b.record()
    torch.cuda.synchronize()
    res["flush_gpu_us"] = a.elapsed_time(b) * 1e3 / 10
    fns = []
    for name, make in targets_device.cases():
        if name.startswith("wgmma_tma"):
            continue
        try:
            fn, _ = make()
            fn()
            torch.cuda.synchronize()
            fns.append((name, fn))
        except Exception:  # noqa: BLE001
            res.setdefault("errors", {})[name] = traceback.format_exc()
    r = res["rounds"] = {name: [] for name, _ in fns}
    for k in range(n_rounds):
        for name, fn in fns:
            try:
                d = {"dobench_median_us": do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3}
                d.update(loop_host(fn, flush))
            except Exception:  # noqa: BLE001
                d = {"error": traceback.format_exc()}
            r[name].append(d)
            print("ROUND", k, name, {x: round(v, 2) for x, v in d.items() if isinstance(v, float)}, flush=True)


def main():
    import torch
    import triton
    os.makedirs(OUT, exist_ok=True)
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "triton": triton.__version__,
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}
    t0 = time.time()
    try:
        micro(res)
    except Exception:  # noqa: BLE001
        res["micro_error"] = traceback.format_exc()
        print(res["micro_error"], flush=True)
    res["micro_s"] = time.time() - t0
    json.dump(res, open(os.path.join(OUT, "dobench_state.json"), "w"), indent=1)
    try:
        rounds(res)
    except Exception:  # noqa: BLE001
        res["rounds_error"] = traceback.format_exc()
        print(res["rounds_error"], flush=True)
    res["total_s"] = time.time() - t0
    json.dump(res, open(os.path.join(OUT, "dobench_state.json"), "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
