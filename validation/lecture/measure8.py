"""Call 8 on the H200: the host cost of one SDPA forward + backward (the floor of a small training
step), and the launch records of the flash kernels at d = 64 and d = 128.

    python3 validation/lecture/measure8.py $OUT

Parts:
  host     1 x 1 x 64 x 64 bf16 q, k, v (requires_grad) and an upstream gradient: forward +
           backward (o.backward(g), grads dropped) per backend (default dispatch = no context,
           flash / efficient / math inside sdpa_kernel(...) entered at every call, and the same
           three with the context entered once around the loop); the Python thread's time per
           call (host clock around 1000 calls without a sync, after 50 warm-up calls), and
           events around 300 back-to-back calls (the GPU keeps up with the host: time per call)
  kernels  torch.profiler (CUDA activity) around one flash forward and one forward + backward at
           B 2 H 8 T 4096 d 128 and B 1 H 16 T 4096 d 64, causal and not (names, grid, block,
           registers, shared memory, duration), a spin_kernel marker between them
-> lecture_h200_call8.json
"""
from __future__ import annotations

import contextlib
import json
import os
import platform
import sys
import time

T0 = time.time()


def main(out_dir):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.profiler import ProfilerActivity, profile
    props = torch.cuda.get_device_properties(0)
    res = {"env": {"torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
                   "gpu": props.name, "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())},
           "method": __doc__}
    path = os.path.join(out_dir, "lecture_h200_call8.json")
    bes = {"flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
           "math": SDPBackend.MATH}
    q, k, v = (torch.randn(1, 1, 64, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    g = torch.randn(1, 1, 64, 64, device="cuda", dtype=torch.bfloat16)

    def step(ctx):
        with ctx():
            o = F.scaled_dot_product_attention(q, k, v)
        o.backward(g)
        q.grad = k.grad = v.grad = None

    def fwd(ctx):
        with torch.no_grad(), ctx():
            F.scaled_dot_product_attention(q, k, v)

    host = {}
    cases = [("default", contextlib.nullcontext, None)] + \
            [(be, (lambda be=be: sdpa_kernel(bes[be])), None) for be in bes] + \
            [(be + " (context once)", contextlib.nullcontext, be) for be in bes]
    for name, ctx, outer in cases:
        for what, fn in (("fwd_bwd", step), ("fwd", fwd)):
            with (sdpa_kernel(bes[outer]) if outer else contextlib.nullcontext()):
                for _ in range(50):
                    fn(ctx)
                torch.cuda.synchronize()
                t = time.perf_counter()
                for _ in range(1000):
                    fn(ctx)
                host_s = (time.perf_counter() - t) / 1000
                torch.cuda.synchronize()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                for _ in range(300):
                    fn(ctx)
                e.record()
                torch.cuda.synchronize()
            host[f"{name} {what}"] = {"host_clock_s": host_s, "back_to_back_s": s.elapsed_time(e) / 300 * 1e-3}
            print(f"{name:28s} {what:8s} host {host_s * 1e6:7.1f} us  back-to-back {s.elapsed_time(e) / 300 * 1e3:7.1f} us",
                  flush=True)
    res["host"] = host
    with open(path, "w") as f:
        json.dump(res, f, indent=0)

    kern = {}
    ops = []
    keep = []
    for (B, H, T, d) in ((2, 8, 4096, 128), (1, 16, 4096, 64)):
        qq, kk, vv = (torch.randn(B, H, T, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
        gg = torch.randn(B, H, T, d, device="cuda", dtype=torch.bfloat16)
        keep.append((qq, kk, vv, gg))
        for c in (False, True):
            def f(qq=qq, kk=kk, vv=vv, gg=gg, c=c):
                with sdpa_kernel(bes["flash"]):
                    o = F.scaled_dot_product_attention(qq, kk, vv, is_causal=c)
                o.backward(gg)
                qq.grad = kk.grad = vv.grad = None
            f()
            ops.append((f"flash fwd+bwd B={B} H={H} T={T} d={d} causal={int(c)}", f))
    torch.cuda.synchronize()
    tmp = os.path.join(out_dir, "_trace8.json")
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _, fn in ops:
            torch.cuda._sleep(1000)
            fn()
            torch.cuda.synchronize()
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()
    prof.export_chrome_trace(tmp)
    tr = json.load(open(tmp))
    os.remove(tmp)
    evs = sorted([e for e in tr.get("traceEvents", []) if e.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy")],
                 key=lambda e: e["ts"])
    groups, cur = [], None
    for e in evs:
        if "spin" in e["name"]:
            cur = []
            groups.append(cur)
        elif cur is not None:
            a = e.get("args", {})
            cur.append({"name": e["name"][:160], "dur_us": e.get("dur"), "grid": a.get("grid"), "block": a.get("block"),
                        "registers per thread": a.get("registers per thread"), "shared memory": a.get("shared memory")})
    for (tag, _), grp in zip(ops, groups):
        kern[tag] = grp
        print(tag, [(x["name"][:50], x["grid"], x["block"], x["registers per thread"], x["shared memory"], x["dur_us"])
                    for x in grp if "flash" in x["name"]])
    res["flash_kernels"] = kern
    res["elapsed_s"] = time.time() - T0
    with open(path, "w") as f:
        json.dump(res, f, indent=0)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    main(out)
