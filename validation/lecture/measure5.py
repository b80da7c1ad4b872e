"""Call 5 on the H200: which cuBLAS kernel runs at each size of the mystery sweep, and the
attention kernels (efficient backend, backward) with their launch shapes and allocations.

    python3 validation/lecture/measure5.py $OUT

No timing loop here: GPU times are the profiler's kernel durations (CUPTI activity records),
so they exclude the host dispatch that the back-to-back timings of calls 1-4 include.

Parts:
  gemm      torch.matmul square bf16 N = 64..8192 step 64 (the mystery sweep) and the hold-out
            offsets N = 96 + 64 i, random normal operands; per size one warm-up call, then 3
            calls inside torch.profiler (CUDA activity), a fill_ marker kernel between sizes.
            From the exported chrome trace, per kernel: name, duration, grid, block, registers
            per thread, shared memory, blocks per SM (CUPTI's launch record).
  attention F.scaled_dot_product_attention B 1 H 16 d 64 bf16, efficient backend T 1024..8192
            causal and not, forward; flash and efficient forward + backward at T 2048 and 4096;
            the same trace fields.  Sizes of every allocation / free during one flash and one
            efficient backward at T = 2048 (torch.cuda.memory._record_memory_history, C++
            frames kept where they name the allocating function).
  host      the cost of entering and leaving sdpa_kernel(...) alone (host clock, 5000 times).
-> lecture_h200_kernels5.json

Known flaw (as run): a backward launches FillFunctor kernels of its own, so in
"attention_kernels" the groups from "flash fwd+bwd T=2048" on are shifted (17 marker groups
for 12 tags, "_warning"); the events themselves are all there, in order.  The gemm groups are
not affected (matmul launches no fill).
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time

T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


def smi():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,"
                               "power.draw,power.limit", "--format=csv,noheader"], capture_output=True, text=True,
                              timeout=20).stdout.strip()
    except Exception as exc:
        return repr(exc)


KEEP_ARGS = ("grid", "block", "registers per thread", "shared memory", "blocks per SM",
             "warps per SM", "est. achieved occupancy %")


def trace_kernels(prof, path):
    """Device events (kernels, memsets, memcpys) of a finished profiler, in start order."""
    prof.export_chrome_trace(path)
    with open(path) as f:
        tr = json.load(f)
    os.remove(path)
    evs = [e for e in tr.get("traceEvents", []) if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")]
    evs.sort(key=lambda e: e["ts"])
    out = []
    for e in evs:
        a = e.get("args", {})
        out.append({"name": e["name"], "cat": e["cat"], "ts": e["ts"], "dur_us": e.get("dur"),
                    **{k: a[k] for k in KEEP_ARGS if k in a}})
    return out


def profiled_groups(tag_fns, tmp, calls=3):
    """tag_fns: list of (tag, fn).  One profiler session; a marker fill_ kernel before each tag's
    calls; returns {tag: [device events of its `calls` calls]}."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    mark = torch.zeros(7, device="cuda", dtype=torch.int32)
    for _, fn in tag_fns:
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _, fn in tag_fns:
            mark.fill_(1)
            for _ in range(calls):
                fn()
            torch.cuda.synchronize()
        mark.fill_(1)
        torch.cuda.synchronize()
    evs = trace_kernels(prof, tmp)
    groups, cur = [], None
    for e in evs:
        if "FillFunctor" in e["name"]:
            cur = []
            groups.append(cur)
        elif cur is not None:
            cur.append(e)
    out = {}
    for (tag, _), g in zip(tag_fns, groups):
        out[tag] = g
    if len(groups) != len(tag_fns) + 1:
        out["_warning"] = f"{len(groups)} marker groups for {len(tag_fns)} tags"
    return out


def main(out_dir):
    import torch
    import torch.nn.functional as F
    props = torch.cuda.get_device_properties(0)
    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
           "gpu": props.name, "sm_count": props.multi_processor_count,
           "cublas": str(getattr(torch.backends.cuda, "preferred_blas_library", lambda: "?")()),
           "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), "smi_start": smi()}
    log("env", env)
    tmp = os.path.join(out_dir, "_trace.json")
    res = {"env": env, "method": __doc__}
    path = os.path.join(out_dir, "lecture_h200_kernels5.json")

    # warm-up: clocks up
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t = time.time()
    while time.time() - t < 1.5:
        for _ in range(10):
            torch.matmul(a, a)
        torch.cuda.synchronize()
    del a
    env["smi_after_warmup"] = smi()

    # ---------------- gemm: names at every size of the sweeps ----------------
    sizes = sorted(set(range(64, 8193, 64)) | set(range(96, 8193, 64)))
    gem = {}
    chunk = 24
    for i in range(0, len(sizes), chunk):
        ops = []
        tensors = []
        for n in sizes[i:i + chunk]:
            A = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
            B = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
            tensors.append((A, B))
            ops.append((str(n), lambda A=A, B=B: torch.matmul(A, B)))
        gem.update(profiled_groups(ops, tmp, calls=3))
        del tensors, ops
        torch.cuda.empty_cache()
        log("gemm", sizes[i], "..", sizes[min(i + chunk, len(sizes)) - 1])
    res["gemm_square_bf16"] = gem
    json.dump(res, open(path, "w"), indent=0)

    # ---------------- attention kernels ----------------
    from torch.nn.attention import SDPBackend, sdpa_kernel
    bes = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION}
    att = {}
    try:
        ops = []
        keep = []
        for T in (1024, 2048, 4096, 8192):
            q, k, v = (torch.randn(1, 16, T, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
            keep.append((q, k, v))
            for c in (False, True):
                def f(q=q, k=k, v=v, c=c):
                    with sdpa_kernel(bes["efficient"]):
                        return F.scaled_dot_product_attention(q, k, v, is_causal=c)
                ops.append((f"efficient fwd T={T} causal={int(c)}", f))
        for T in (2048, 4096):
            q, k, v = (torch.randn(1, 16, T, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                       for _ in range(3))
            g = torch.randn(1, 16, T, 64, device="cuda", dtype=torch.bfloat16)
            keep.append((q, k, v, g))
            for be in bes:
                def f(q=q, k=k, v=v, g=g, be=be):
                    with sdpa_kernel(bes[be]):
                        o = F.scaled_dot_product_attention(q, k, v)
                    o.backward(g)
                    q.grad = k.grad = v.grad = None
                ops.append((f"{be} fwd+bwd T={T}", f))
        att.update(profiled_groups(ops, tmp, calls=2))
        del keep, ops
    except Exception as exc:
        att["error"] = repr(exc)[:400]
    res["attention_kernels"] = att
    json.dump(res, open(path, "w"), indent=0)
    log("attention kernels done")

    # ---------------- host cost of the context manager alone ----------------
    host = {}
    for be in ("flash", "efficient", "math"):
        b = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
             "math": SDPBackend.MATH}[be]
        with sdpa_kernel(b):
            pass
        t = time.perf_counter()
        for _ in range(5000):
            with sdpa_kernel(b):
                pass
        host[f"sdpa_kernel_ctx_{be}_s"] = (time.perf_counter() - t) / 5000
    res["host"] = host
    env["smi_end"] = smi()
    res["elapsed_s"] = time.time() - T0
    json.dump(res, open(path, "w"), indent=0)
    log("host", host)

    # ---------------- allocations during one backward ----------------
    mem = {}
    res["backward_allocations"] = mem
    for be, stacks in (("flash", None), ("efficient", None), ("flash", "all")):
        key = be + ("" if stacks is None else "_cpp_frames")
        try:
            T = 2048
            q, k, v = (torch.randn(1, 16, T, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                       for _ in range(3))
            g = torch.randn(1, 16, T, 64, device="cuda", dtype=torch.bfloat16)
            with sdpa_kernel(bes[be]):
                o = F.scaled_dot_product_attention(q, k, v)
            o.backward(g)
            q.grad = k.grad = v.grad = None
            torch.cuda.synchronize()
            with sdpa_kernel(bes[be]):
                o = F.scaled_dot_product_attention(q, k, v)
            torch.cuda.synchronize()
            base = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            if stacks:
                torch.cuda.memory._record_memory_history(max_entries=100000, context="all", stacks="all")
            else:
                torch.cuda.memory._record_memory_history(max_entries=100000, context="alloc", stacks="python")
            o.backward(g)
            torch.cuda.synchronize()
            snap = torch.cuda.memory._snapshot()
            torch.cuda.memory._record_memory_history(enabled=None)
            peak = torch.cuda.max_memory_allocated() - base
            evs = []
            for e in snap.get("device_traces", [[]])[0]:
                if e.get("action") not in ("alloc", "free_requested", "free_completed"):
                    continue
                fr = [f"{x.get('name', '')[:120]}" for x in e.get("frames", [])]
                fr = [x for x in fr if any(w in x.lower() for w in ("flash", "mha", "efficient", "attention",
                                                                      "empty", "zeros", "accum", "backward",
                                                                      "contiguous", "clone", "copy", "grad"))][:8]
                evs.append({"action": e["action"], "size": e.get("size"), "addr": e.get("addr"), "frames": fr})
            mem[key] = {"T": T, "B": 1, "H": 16, "d": 64, "peak_over_base_bytes": peak,
                        "base_bytes": base, "events": evs}
            del q, k, v, g, o
        except Exception as exc:
            mem[key] = {"error": repr(exc)[:400]}
        json.dump(res, open(path, "w"), indent=0)
        log("mem", key, mem[key].get("peak_over_base_bytes"),
            [(e["action"][0], e["size"]) for e in mem[key].get("events", [])][:40])

    res["elapsed_s"] = time.time() - T0
    json.dump(res, open(path, "w"), indent=0)
    # short table for the reply
    for n in (1728, 1792, 2496, 2560, 3200, 3264, 3456, 3520, 4608, 4672, 8192):
        g = gem.get(str(n), [])
        ks = [e for e in g if e["cat"] == "kernel"]
        if ks:
            print(n, ks[-1]["name"][:70], ks[-1].get("grid"), ks[-1]["dur_us"])
    for tag, g in att.items():
        if isinstance(g, list):
            print(tag, [(e["name"][:60], e.get("grid"), e["dur_us"]) for e in g if e["cat"] == "kernel"][:4])


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    main(out)
