"""On the card (one call, about 2 minutes; NOT RUN YET): where do_bench's median of the FA-2 and
TMA-matmul launches goes beyond the kernel's CUPTI duration (10.6-16 us on the H100 of
2026-12-07, targets/h100) when near-empty launches with as many descriptors add only 0.1-1.1 us
(lecture/h100/launch_floor).

Two explanations predict different things:
* host-bound: Triton's launch of these kernels takes longer on the host than do_bench's L2 flush
  (a 256 MB memset, about 95 us) takes on the GPU, so the GPU waits for the launch between
  do_bench's start event and the kernel.  Then (c) stays high with the flush replaced by a GPU
  sleep of the same length, (b) stays near the warm CUPTI duration, and (e) exceeds the memset;
* the kernel itself is slower after the flush (an L2 full of the memset's dirty lines, cold TLBs
  and tensor-map fetches): then (b), the kernel's own CUPTI duration inside do_bench, is about
  do_bench's median less the plain floor, and (c) falls to the warm figure.

Per case (targets_cases.py's, as targets_device.py makes them, plus near-empty kernels):
    (a) do_bench median (warmup=25, rep=100), as the targets were measured;
    (b) CUPTI durations of every kernel while do_bench runs (torch.profiler around it): the
        kernel's median duration in do_bench's state, and the flush memset's;
    (c) do_bench's loop with the flush replaced by torch.cuda._sleep of the memset's length
        (the GPU stays ahead of the host, the caches stay warm): median of the event times;
    (d) the warm CUPTI duration (median of 20 launches back to back), as targets_device.py;
    (e) the host's time per launch inside the loop of (a) (time.perf_counter around fn()).

    OUT=<dir> python3 validation/tensor_cores/dobench_excess_device.py -> $OUT/dobench_excess.json
"""
import datetime
import json
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "lecture"))
import targets_device  # noqa: E402  (its Card backend and cupti_us)

OUT = os.environ.get("OUT", "/tmp/out")
CASES = ("add_4096", "lecture_1024x1024x1024", "tma_mm_128x128x128", "tma_mm_100x72x80", "fa_host_128",
         "fa_host_256_causal", "fa_dev_128", "fa_lecture_1024", "fa_lecture_1024_causal")


def profiled_dobench(fn):
    """(a) and (b): do_bench's median and every kernel's CUPTI durations while it ran."""
    import torch
    from triton.testing import do_bench
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        med = do_bench(fn, warmup=25, rep=100, return_mode="median")
        torch.cuda.synchronize()
    d = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            d.setdefault(e.name, []).append(e.device_time)
    return med * 1e3, {k: {"median_us": statistics.median(v), "n": len(v)} for k, v in d.items()}


def plain_dobench(fn):
    import torch
    from triton.testing import do_bench
    torch.cuda.synchronize()
    return do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3


def loop(fn, between, n=300):
    """do_bench's measuring loop with ``between()`` in place of its flush: event-time median and
    the host's time per fn() call (median)."""
    import torch
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    host = []
    for _ in range(20):
        between()
        fn()
    torch.cuda.synchronize()
    for i in range(n):
        between()
        starts[i].record()
        t = time.perf_counter()
        fn()
        host.append(time.perf_counter() - t)
        ends[i].record()
    torch.cuda.synchronize()
    return (statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3,
            statistics.median(host) * 1e6)


def sleep_cycles_for(us):
    """torch.cuda._sleep's argument for about ``us`` microseconds (calibrated here)."""
    import torch
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    torch.cuda._sleep(1_000_000)
    b.record()
    torch.cuda.synchronize()
    per_us = 1_000_000 / (a.elapsed_time(b) * 1e3)
    return int(us * per_us)


def main():
    import torch
    import triton
    os.makedirs(OUT, exist_ok=True)
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "triton": triton.__version__,
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "cases": {}}
    cache = triton.runtime.driver.active.get_empty_cache_for_benchmark()
    flush = lambda: triton.runtime.driver.active.clear_cache(cache)   # noqa: E731  (do_bench's own)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3):
        a.record()
        flush()
        b.record()
    torch.cuda.synchronize()
    res["flush_us"] = a.elapsed_time(b) * 1e3
    cycles = sleep_cycles_for(res["flush_us"])
    res["sleep_cycles"] = cycles
    sleep = lambda: torch.cuda._sleep(cycles)                        # noqa: E731
    import launch_floor_kernels as K
    o = torch.zeros(16, device="cuda", dtype=torch.float16)
    cases = [("empty_ptr", lambda: (lambda: K.empty_ptr[(1,)](o, num_warps=4), []))]
    cases += [(n, m) for n, m in targets_device.cases() if n in CASES]
    for name, make in cases:
        r = res["cases"][name] = {}
        try:
            fn, _ = make()
            fn()
            torch.cuda.synchronize()
            r["a_dobench_us"] = plain_dobench(fn)
            r["a_dobench_profiled_us"], r["b_cupti_in_dobench"] = profiled_dobench(fn)
            r["c_sleep_loop_us"], r["c_host_us_per_launch"] = loop(fn, sleep)
            r["flush_loop_us"], r["e_host_us_per_launch"] = loop(fn, flush)
            r["d_cupti_warm"] = targets_device.cupti_us(fn)
        except Exception:  # noqa: BLE001
            r["error"] = traceback.format_exc()
        print(name, r, flush=True)
    json.dump(res, open(os.path.join(OUT, "dobench_excess.json"), "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
