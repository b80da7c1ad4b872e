"""Speed of the compiled memory model: sector lookups per second on an H200-sized L1/L2,
against the pure-Python reference (simgpu/memory/reference.py) measured in the same run.

    python benchmarks/bench_cache.py

Each pattern is one warp-level instruction executed by a full wave of the H200 (132 SMs x
8 blocks x 8 warps = 8,448 warps, 270,336 lanes), repeated over fresh addresses so every
call does real work.  "L1 sectors/s" counts the sectors looked up in the L1s; "all
lookups/s" adds the sectors looked up in the L2 (L1 misses, stores, atomics).  The target
(issue 3) is 20 million sector lookups per second.
"""
from __future__ import annotations

import time

import numpy as np

from simgpu.hardware import H200
from simgpu.memory import counters as C
from simgpu.memory.cache import new_l1, new_l2
from simgpu.memory.engine import LD, ST, global_event, new_scratch
from simgpu.memory.reference import ReferenceMemory
from simgpu.memory.schedule import Schedule

GPU = H200
SMS, BPS, WPB = GPU.sm_count, 8, 8
LANES = SMS * BPS * WPB * 32


def patterns():
    lane = np.arange(LANES, dtype=np.int64)
    warp, l = lane // 32, lane % 32
    base = 1 << 40
    return {
        # name: (kind, address function of the repetition r)
        "coalesced float32 loads (streaming)": (LD, lambda r: base + (r * LANES + lane) * 4),
        "coalesced float32 stores (streaming)": (ST, lambda r: base + (r * LANES + lane) * 4),
        "naive-matmul B[k, col] loads (L2 reuse)": (LD, lambda r: base + (r % 64) * 4096 + (warp % 32) * 128 + l * 4),
        "naive-matmul A[row, k] loads (L1 reuse)": (LD, lambda r: base + (warp // 4) * 4096 + (r % 64) * 4 + l * 0),
        "transpose column stores (stride 16 KiB)": (ST, lambda r: base + (l * 4096 + warp % 4096) * 4 + r * 4),
    }


def make_state():
    sets1 = GPU.l1.sets
    ways1 = (GPU.l1.size_bytes - 8 * 1024) // (sets1 * GPU.l1.line_bytes)
    prm = np.array([7, 5, 4, sets1, ways1, GPU.l2.sets, GPU.l2.ways, 1, 32], dtype=np.int64)
    return prm, new_l1(sets1, ways1, SMS), new_l2(GPU.l2.sets, GPU.l2.ways)


def bench_compiled(kind, addr_of, reps, sched):
    prm, (l1tag, l1), (l2, l2r) = make_state()
    order, sm_order, warp_sm = sched
    nw = len(order)
    cnt, clk = C.new_table(1), np.zeros(2, dtype=np.int64)
    scratch = new_scratch(nw, GPU.l2.line_bytes)
    mask = np.ones(LANES, dtype=bool)
    mask8 = mask.view(np.uint8)
    addrs = [addr_of(r) for r in range(reps + 1)]
    global_event(addrs[0], mask, mask8, 4, kind, order, sm_order, warp_sm, 0, cnt, l1tag, l1, l2, l2r, prm, clk, scratch)
    t0 = time.perf_counter()
    for a in addrs[1:]:
        global_event(a, mask, mask8, 4, kind, order, sm_order, warp_sm, 0, cnt, l1tag, l1, l2, l2r, prm, clk, scratch)
    dt = time.perf_counter() - t0
    c = cnt[0] - 0
    l1_sect = int(c[C.GLD_SECT] + c[C.GST_SECT])
    l2_sect = int(c[C.L2_RD] + c[C.L2_WR])
    first = reps + 1
    return dt, l1_sect * reps / first, (l1_sect + l2_sect) * reps / first


def bench_reference(kind, addr_of, sched, warps=256):
    """The reference on the first `warps` warps of one repetition (it is slow)."""
    prm, _, _ = make_state()
    ref = ReferenceMemory(prm, SMS)
    order, sm_order, warp_sm = sched
    keep = set(range(warps))
    o = [w for w in order if w in keep]
    so = [w for w in sm_order if w in keep]
    mask = np.ones(LANES, dtype=bool)
    a = addr_of(1)
    t0 = time.perf_counter()
    ref.global_event(a, mask, 4, kind, o, so, warp_sm, 0)
    dt = time.perf_counter() - t0
    c = ref.cnt[0]
    return dt, c[C.GLD_SECT] + c[C.GST_SECT], c[C.GLD_SECT] + c[C.GST_SECT] + c[C.L2_RD] + c[C.L2_WR]


def main(reps=20):
    sched = Schedule(SMS, BPS, WPB).order(0, SMS * BPS)
    print(f"memory-model throughput, {GPU.name}: {SMS} L1s of {GPU.l1.sets} sets, L2 {GPU.l2.sets} sets x "
          f"{GPU.l2.ways} ways; {LANES:,} lanes per instruction, {reps} instructions per pattern\n")
    print(f"  {'pattern':<42}{'L1 sectors/s':>14}{'all lookups/s':>15}{'reference':>13}{'ratio':>8}")
    worst, tot_n, tot_t, ref_n, ref_t = None, 0.0, 0.0, 0.0, 0.0
    for name, (kind, addr_of) in patterns().items():
        dt, l1s, alls = bench_compiled(kind, addr_of, reps, sched)
        rdt, rl1, rall = bench_reference(kind, addr_of, sched)
        fast, slow = alls / dt, rall / rdt
        worst = fast if worst is None else min(worst, fast)
        tot_n, tot_t, ref_n, ref_t = tot_n + alls, tot_t + dt, ref_n + rall, ref_t + rdt
        print(f"  {name:<42}{l1s / dt / 1e6:>12.1f} M{fast / 1e6:>13.1f} M{slow / 1e6:>11.3f} M{fast / slow:>7.0f}x")
    print(f"  {'all patterns together':<42}{'':>14}{tot_n / tot_t / 1e6:>13.1f} M{ref_n / ref_t / 1e6:>11.3f} M"
          f"{(tot_n / tot_t) / (ref_n / ref_t):>7.0f}x")
    print(f"\n  target 20 M sector lookups/s: all patterns together {tot_n / tot_t / 1e6:.1f} M, "
          f"slowest pattern {worst / 1e6:.1f} M (requests of one sector: per-warp cost dominates).\n"
          "  reference = simgpu/memory/reference.py, pure Python, same rules, measured in this run")


if __name__ == "__main__":
    main()
