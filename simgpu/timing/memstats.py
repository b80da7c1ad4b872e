"""Per-instruction cache outcomes, read from the memory model's counter table.

For one memory instruction (over the whole launch):
    l2_fraction    share of its L1 sectors that go on to the L2 (L1 misses; stores and
                   atomics: all)
    l2_hit         share of those L2 sectors that hit
    dram_per_l2    DRAM bytes per L2 sector (reads on misses at DRAM granularity, plus
                   write-backs of evicted dirty lines charged to the instruction)
    l1_pend        share of its L1 hits that hit data another warp's miss is still
                   bringing in (the same instruction instance missed on the line first)
    l2_pend        share of its L2 read hits on sectors still on their way from DRAM
    dram_busy_per_l2  DRAM time per L2 sector, in read bytes: reads and write-backs rounded
                   up to whole DRAM accesses, written bytes times the write cost
The simulator charges each request its *expected* L2 and DRAM bytes (so bandwidth totals
match the memory model) and gives requests L1/L2/DRAM latencies in the proportions above; a
hit on data in flight waits as long as the miss it merged with.

Without a memory model (``launch(memory=False)``) every load sector goes to DRAM and every
store stays in the L2: a first-touch streaming assumption, stated in docs/timing.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from ..memory import counters as C


@dataclass(frozen=True)
class MemStat:
    l2_fraction: float = 1.0
    l2_hit: float = 0.0
    dram_per_l2: float = 32.0
    l1_pend: float = 0.0
    l2_pend: float = 0.0
    dram_busy_per_l2: float = 32.0


STREAM_LOAD = MemStat(1.0, 0.0, 32.0)
STREAM_STORE = MemStat(1.0, 1.0, 0.0, dram_busy_per_l2=0.0)


def _div(a, b, default):
    return a / b if b else default


def evicted_fraction(mm, scale, l2_bytes):
    """Share of the dirty bytes left in the L2 that a run `scale` times longer would have
    written back during the kernel (sampled execution; 0 for a full run)."""
    if scale <= 1.0:
        return 0.0
    t = mm.cnt.sum(axis=0)
    written = float(t[C.DRAM_WR] + t[C.DIRTY_END]) * scale
    return max(0.0, 1.0 - l2_bytes / written) if written else 0.0


def from_memory_model(mm, scale=1.0, l2_bytes=0, write_cost=1.0):
    """{instruction id: MemStat} from a MemoryModel's counters, or {} if it has none.
    scale > 1: the counters cover 1/scale of the blocks (sampled execution)."""
    try:
        cnt, slots = mm.cnt, mm.slots
    except (ImportError, AttributeError):
        return {}
    ev = evicted_fraction(mm, scale, l2_bytes)
    out = {}
    for iid, s in slots.items():
        r = [int(x) for x in cnt[s]]
        ld = r[C.GLD_SECT] + r[C.LLD_SECT]
        st = r[C.GST_SECT] + r[C.LST_SECT]
        at = r[C.GAT_SECT]
        l2_rd, l2_wr, l2_at = r[C.L2_RD], r[C.L2_WR], r[C.L2_AT]
        busy = r[C.DRAM_RD_BUSY] + write_cost * r[C.DRAM_WR_BUSY]
        if ld:
            l1_hits = r[C.GLD_HIT] + r[C.LLD_HIT]
            out[iid] = MemStat(_div(l2_rd, ld, 1.0), _div(r[C.L2_RD_HIT], l2_rd, 0.0),
                               _div(r[C.DRAM_RD] + r[C.DRAM_WR], l2_rd, 0.0),
                               _div(r[C.L1_PEND], l1_hits, 0.0), _div(r[C.L2_PEND], r[C.L2_RD_HIT], 0.0),
                               _div(busy, l2_rd, 0.0))
        elif st:
            out[iid] = MemStat(_div(l2_wr, st, 1.0), _div(r[C.L2_WR_HIT], l2_wr, 1.0),
                               _div(r[C.DRAM_WR] + r[C.DRAM_RD] + ev * r[C.DIRTY_END], l2_wr, 0.0),
                               dram_busy_per_l2=_div(busy + write_cost * ev * r[C.DIRTY_END_BUSY], l2_wr, 0.0))
        elif at:
            out[iid] = MemStat(1.0, _div(r[C.L2_AT_HIT], l2_at, 0.0),
                               _div(r[C.DRAM_RD] + r[C.DRAM_WR], l2_at, 0.0),
                               dram_busy_per_l2=_div(busy, l2_at, 0.0))
    return out


def dram_bytes(mm, scale=1.0, l2_bytes=0):
    """Total DRAM bytes (read + write) during the kernel, or None without a memory model;
    scaled up (with the write-backs a longer run would do) for sampled execution."""
    try:
        t = mm.cnt.sum(axis=0)
    except (ImportError, AttributeError):
        return None
    ev = evicted_fraction(mm, scale, l2_bytes)
    return float(t[C.DRAM_RD] + t[C.DRAM_WR] + ev * t[C.DIRTY_END]) * scale


def default_stat(kind):
    return STREAM_STORE if kind == "st" else STREAM_LOAD


__all__ = ["MemStat", "from_memory_model", "dram_bytes", "default_stat"]
