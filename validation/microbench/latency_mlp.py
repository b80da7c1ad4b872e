#!/usr/bin/env python3
"""Latency-bound launches: load-to-use latency per level, memory-level parallelism in one warp,
and few-block streaming (issue 22; the holdout's latency-bound misses).

  python3 validation/microbench/latency_mlp.py --mode card  --out DIR   # on the GPU, under ncu
  python3 validation/microbench/latency_mlp.py --mode model --out DIR [--gpu H100]  # simgpu

Questions, each isolated by one family of kernels (all named mb_*):

* ``chase{K}_{l1,l2,dram}``: one warp per SM (132 blocks x 32 threads) follows K independent
  pointer chains (every lane the same address: one sector a request), S steps each, ``passes``
  times from the same start.  A chain is a random cycle over 128-byte lines of a region of
  16 KiB (L1), 8 MiB (L2: each SM's K x 4096 lines overflow its L1) or 256 MiB (DRAM, cold:
  ncu flushes the caches before each kernel).  Time per step = load-to-use latency of the
  level (+ a few ALU cycles); with K chains, if the K loads overlap (memory-level
  parallelism: ptxas issues the K loads before the first use), the time per step stays that
  of K = 1.  L1/L2: the step time is (T(passes=2) - T(passes=1)) / S (pass 1 warms the
  cache); DRAM: (T(S=1536) - T(S=512)) / 1024.
* ``stream_f64_g{G}x{B}``: a grid-stride f64 sum (each thread adds a[i], i += grid size) over
  64 MiB (cold, DRAM) with G blocks of B threads: a latency-bound stream with few warps per SM;
  NVVM unrolls the loop and ptxas hoists its loads.  ``stream_f64_l2_r{R}``: the same over
  8 MiB, R sweeps (sweep 1 cold, the rest L2 hits): (T(R=3) - T(R=2)) is one L2 sweep.
* ``{sqrt,div,rsqrt,rsqrt_fast}_chain_s{S}``: one warp per SM runs a dependent chain of S
  IEEE ``sqrt``, ``1 / x``, ``1 / sqrt`` (each a MUFU fast path behind a branch to a slow-path
  subroutine, in a BSSY/BSYNC region) or fastmath ``1 / sqrt`` (MUFU.RSQ alone): cycles a step
  = (T(S=4096) - T(S=2048)) / 2048, the latency of the routine with its branches.
* ``empty_g1``: one block of 32 threads that stores one word: the launch floor.

Card mode runs every kernel once (under ncu: gpu__time_duration.sum, sm__cycles_elapsed.avg,
cache hit rates, DRAM bytes) and writes DIR/latency_mlp_card.json with the environment; model
mode predicts every kernel with simgpu (compiled path) and writes DIR/latency_mlp_model_<gpu>.json.
validation/microbench/latency_mlp_analyze.py turns both into per-step cycles.
"""
import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import _common  # noqa: E402,F401  (patches np.row_stack before numba.cuda is imported)
from numba import cuda  # noqa: E402

assert _common  # imported for its numpy patch

NSM = 132
LINE_WORDS = 32                     # int32 words in a 128-byte line
KS = (1, 2, 4, 8)


def chase_source(k):
    """Source of a kernel following k independent chains (generated: one variable a chain)."""
    v = [f"p{c}" for c in range(k)]
    lines = [f"def mb_chase{k}(nxt, starts, steps, passes, out):",
             "    b = cuda.blockIdx.x",
             "    acc = 0"]
    lines.append("    for r in range(passes):")
    for c in range(k):
        lines.append(f"        {v[c]} = starts[b * {k} + {c}]")
    lines.append("        for s in range(steps):")
    for c in range(k):
        lines.append(f"            {v[c]} = nxt[{v[c]}]")
    lines.append("        acc += " + " + ".join(v))
    lines.append("    if cuda.threadIdx.x == 0:")
    lines.append("        out[b] = acc")
    return "\n".join(lines) + "\n"


def mb_stream_f64(a, sweeps, out):
    i0 = cuda.grid(1)
    step = cuda.gridsize(1)
    acc = 0.0
    for r in range(sweeps):
        i = i0
        while i < a.size:
            acc += a[i]
            i += step
    out[i0] = acc


def mb_empty(out):
    if cuda.threadIdx.x == 0:
        out[0] = 1.0


def mb_sqrt_chain(x0, steps, out):
    i = cuda.grid(1)
    x = x0[i]
    for s in range(steps):
        x = math.sqrt(x + np.float32(1.5))
    out[i] = x


def mb_div_chain(x0, steps, out):
    i = cuda.grid(1)
    x = x0[i]
    for s in range(steps):
        x = np.float32(1.0) / (x + np.float32(1.5))
    out[i] = x


def mb_rsqrt_chain(x0, steps, out):
    i = cuda.grid(1)
    x = x0[i]
    for s in range(steps):
        x = np.float32(1.0) / math.sqrt(x + np.float32(1.5))
    out[i] = x


CHAINS = {"sqrt": mb_sqrt_chain, "div": mb_div_chain, "rsqrt": mb_rsqrt_chain}


def make_kernels():
    ks = {}
    for k in KS:
        ns = {"cuda": cuda}
        exec(chase_source(k), ns)          # noqa: S102 (our own generated source)
        ks[f"chase{k}"] = cuda.jit(ns[f"mb_chase{k}"])
    for name, f in CHAINS.items():
        ks[name] = cuda.jit(f)
    ks["rsqrt_fast"] = cuda.jit(fastmath=True)(mb_rsqrt_chain)
    ks["stream"] = cuda.jit(mb_stream_f64)
    ks["empty"] = cuda.jit(mb_empty)
    return ks


def cycle(nlines, rng):
    """A random cycle over `nlines` lines: nxt[line * 32] = next line's first word; and the order."""
    perm = rng.permutation(nlines).astype(np.int64)
    nxt = np.zeros(nlines * LINE_WORDS, dtype=np.int32)
    nxt[perm * LINE_WORDS] = (np.roll(perm, -1) * LINE_WORDS).astype(np.int32)
    return nxt, perm


def chase_starts(perm, k, spacing):
    """Start words of the k chains of each of NSM blocks, `spacing` positions apart on the cycle."""
    n = len(perm)
    idx = (np.arange(NSM * k, dtype=np.int64) * spacing) % n
    return (perm[idx] * LINE_WORDS).astype(np.int32)


LEVELS = {"l1": (128, 4096), "l2": (65536, 4096), "dram": (2 * 1024 * 1024, None)}


def cases(tiny=False):
    """[(name, kernel key, grid, block, args builder(rng) -> tuple, params)]."""
    out = []
    for lvl, (nlines, steps) in LEVELS.items():
        if tiny:
            nlines, steps = min(nlines, 256), 8
        for k in KS:
            if lvl == "dram":
                spacing = max(1, nlines // (NSM * k))
                for s in ((16, 32) if tiny else (512, 1536)):
                    out.append((f"chase{k}_dram_s{s}", f"chase{k}", NSM, 32,
                                (nlines, k, spacing, s, 1), dict(level=lvl, k=k, steps=s, passes=1)))
            else:
                spacing = 1 if lvl == "l1" else max(1, nlines // (NSM * k))
                for p in (1, 2):
                    out.append((f"chase{k}_{lvl}_p{p}", f"chase{k}", NSM, 32,
                                (nlines, k, spacing, steps, p), dict(level=lvl, k=k, steps=steps, passes=p)))
    n = 4096 if tiny else 8 * 1024 * 1024
    for g, b in ((16, 128), (64, 128), (132, 32), (132, 128)):
        out.append((f"stream_f64_g{g}x{b}", "stream", g, b, ("stream", n, 1, g * b),
                    dict(n=n, sweeps=1, blocks=g, threads=b)))
    n2 = 1024 if tiny else 1024 * 1024
    for r in (2, 3):
        out.append((f"stream_f64_l2_r{r}", "stream", 64, 128, ("stream", n2, r, 64 * 128),
                    dict(n=n2, sweeps=r, blocks=64, threads=128)))
    for name in ("sqrt", "div", "rsqrt", "rsqrt_fast"):
        for st in ((8, 16) if tiny else (2048, 4096)):
            out.append((f"{name}_chain_s{st}", name, NSM, 32, ("chain", st), dict(steps=st)))
    out.append(("empty_g1", "empty", 1, 32, ("empty",), {}))
    return out


_CYCLES = {}


def host_args(spec, rng):
    if spec[0] == "stream":
        _, n, r, threads = spec
        return (rng.random(n), np.int64(r), np.zeros(threads, np.float64))
    if spec[0] == "chain":
        n = NSM * 32
        return (rng.random(n, dtype=np.float32), np.int64(spec[1]), np.zeros(n, np.float32))
    if spec[0] == "empty":
        return (np.zeros(1, np.float32),)
    nlines, k, spacing, steps, passes = spec
    if nlines not in _CYCLES:
        _CYCLES[nlines] = cycle(nlines, np.random.default_rng(nlines))
    nxt, perm = _CYCLES[nlines]
    return (nxt, chase_starts(perm, k, spacing), np.int64(steps), np.int64(passes), np.zeros(NSM, np.int64))


def env_record():
    rec = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": platform.python_version()}
    for cmd, key in ((["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit",
                       "--format=csv,noheader"], "nvidia_smi"), (["ncu", "--version"], "ncu"), (["nvcc", "--version"], "nvcc")):
        try:
            rec[key] = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[-1]
        except Exception as e:       # noqa: BLE001 (a record, not a check)
            rec[key] = f"unavailable: {e}"
    import numba
    rec["numba"] = numba.__version__
    try:
        import numba_cuda
        rec["numba_cuda"] = numba_cuda.__version__
    except Exception:                # noqa: BLE001
        pass
    return rec


def run_card(out_dir, only=None, tiny=False):
    import re
    ks = make_kernels()
    rng = np.random.default_rng(0)
    res = {"provenance": env_record(), "method": __doc__, "kernels": {}}
    for name, key, grid, block, spec, params in cases(tiny):
        if only and not re.search(only, name):
            continue
        args = host_args(spec, rng)
        dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        cuda.synchronize()
        t0 = time.time()
        ks[key][grid, block](*dev)
        cuda.synchronize()
        res["kernels"][name] = dict(params, grid=grid, block=block, host_wall_s=time.time() - t0)
        print(name, "done", flush=True)
        del dev
    try:
        sass = {k: (list(v.inspect_sass().values())[-1] if isinstance(v.inspect_sass(), dict) else v.inspect_sass())
                for k, v in ks.items()}
        res["sass"] = sass
    except Exception as e:           # noqa: BLE001
        res["sass_error"] = repr(e)
    with open(os.path.join(out_dir, "latency_mlp_card.json"), "w") as f:
        json.dump(res, f, indent=1)


def run_model(out_dir, gpu, only=None, tiny=False):
    import re
    from simgpu import predict
    ks = make_kernels()
    rng = np.random.default_rng(0)
    res = {"gpu": gpu, "kernels": {}}
    from simgpu.sass import toolchain_versions
    for name, key, grid, block, spec, params in cases(tiny):
        if only and not re.search(only, name):
            continue
        args = host_args(spec, rng)
        t0 = time.time()
        rep = predict(ks[key], grid, block, args, sample=True, executor="ptx", gpu=gpu)
        r = rep.extras["timing"]
        res["kernels"][name] = dict(params, ns=r.time_s * 1e9, cycles=r.cycles, bottleneck=r.bottleneck,
                                    wall_s=time.time() - t0)
        print(f"{name:24s} {r.time_s * 1e6:10.2f} us  {r.cycles:12.0f} cycles  {time.time() - t0:6.1f}s", flush=True)
    res["toolchain"] = toolchain_versions()
    with open(os.path.join(out_dir, f"latency_mlp_model_{gpu}.json"), "w") as f:
        json.dump(res, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=("card", "model"), required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpu", default="H200")
    ap.add_argument("--only", default=None)
    ap.add_argument("--tiny", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.mode == "card":
        run_card(a.out, a.only, a.tiny)
    else:
        run_model(a.out, a.gpu, a.only, a.tiny)


if __name__ == "__main__":
    main()
