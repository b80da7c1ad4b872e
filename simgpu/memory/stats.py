"""Per-instruction cache outcomes for the timing model, computed from the counter table.

For one memory instruction (over the whole launch), a `MemStat`:
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

Sampled execution (`scale` > 1: the counters cover 1/scale of the blocks) adds the
write-backs a full run would have done: the share of the dirty bytes left in the L2 that a
longer run would have written back (`evicted_fraction`: all but what the L2 keeps dirty at
most, the GPU's `l2_dirty_max_bytes`).  MemoryModel.instruction_stats and
MemoryModel.dram_bytes call the functions here; the timing layer reads only their results.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import counters as C


@dataclass(frozen=True)
class MemStat:
    """One memory instruction's cache outcomes (fractions, and bytes per L2 sector)."""
    l2_fraction: float = 1.0
    l2_hit: float = 0.0
    dram_per_l2: float = 32.0
    l1_pend: float = 0.0
    l2_pend: float = 0.0
    dram_busy_per_l2: float = 32.0


# without a memory model: every load sector goes to DRAM, every store stays in the L2
STREAM_LOAD = MemStat(1.0, 0.0, 32.0)
STREAM_STORE = MemStat(1.0, 1.0, 0.0, dram_busy_per_l2=0.0)


def _ratio(num, den, default):
    return num / den if den else default


def evicted_fraction(totals, scale, dirty_bytes):
    """Share of the dirty bytes left in the L2 at the end of a sampled run that the full run,
    `scale` times longer, would have written back during the kernel, where the L2 keeps at most
    `dirty_bytes` dirty (totals: the counter table summed over its rows; 0 for a full run).
    The full run ends with at most `dirty_bytes` of its writes dirty and has written the rest
    back; the sample's own write-backs (DRAM_WR, scaled) already stand for part of that, so of
    the dirty bytes at its end, scaled, all but `dirty_bytes` are written back:
    1 - dirty_bytes / (DIRTY_END x scale) (MemoryModel.dirty_capacity: the GPU's dirty limit,
    or its whole L2 where it has none)."""
    if scale <= 1.0:
        return 0.0
    left = float(totals[C.DIRTY_END]) * scale
    return max(0.0, 1.0 - dirty_bytes / left) if left else 0.0


def _load_stat(r, busy):
    l2_rd = r[C.L2_RD]
    l1_hits = r[C.GLD_HIT] + r[C.LLD_HIT]
    return MemStat(_ratio(l2_rd, r[C.GLD_SECT] + r[C.LLD_SECT], 1.0), _ratio(r[C.L2_RD_HIT], l2_rd, 0.0),
                   _ratio(r[C.DRAM_RD] + r[C.DRAM_WR], l2_rd, 0.0),
                   _ratio(r[C.L1_PEND], l1_hits, 0.0), _ratio(r[C.L2_PEND], r[C.L2_RD_HIT], 0.0),
                   _ratio(busy, l2_rd, 0.0))


def _store_stat(r, busy, write_cost, evicted):
    """Stores also own their share (`evicted`) of the bytes still dirty at the end."""
    l2_wr = r[C.L2_WR]
    return MemStat(_ratio(l2_wr, r[C.GST_SECT] + r[C.LST_SECT], 1.0), _ratio(r[C.L2_WR_HIT], l2_wr, 1.0),
                   _ratio(r[C.DRAM_WR] + r[C.DRAM_RD] + evicted * r[C.DIRTY_END], l2_wr, 0.0),
                   dram_busy_per_l2=_ratio(busy + write_cost * evicted * r[C.DIRTY_END_BUSY], l2_wr, 0.0))


def _atomic_stat(r, busy):
    l2_at = r[C.L2_AT]
    return MemStat(1.0, _ratio(r[C.L2_AT_HIT], l2_at, 0.0), _ratio(r[C.DRAM_RD] + r[C.DRAM_WR], l2_at, 0.0),
                   dram_busy_per_l2=_ratio(busy, l2_at, 0.0))


def instruction_stat(row, write_cost, evicted):
    """The MemStat of one row of the counter table, or None if the row has no global or
    local accesses (shared and constant memory never reach the caches)."""
    r = [int(x) for x in row]
    busy = r[C.DRAM_RD_BUSY] + write_cost * r[C.DRAM_WR_BUSY]
    if r[C.GLD_SECT] + r[C.LLD_SECT]:
        return _load_stat(r, busy)
    if r[C.GST_SECT] + r[C.LST_SECT]:
        return _store_stat(r, busy, write_cost, evicted)
    if r[C.GAT_SECT]:
        return _atomic_stat(r, busy)
    return None


def instruction_stats(table, slots, scale, dirty_bytes, write_cost):
    """{instruction id: MemStat} for the instructions (`slots`: id -> row) of `table`."""
    evicted = evicted_fraction(table.sum(axis=0), scale, dirty_bytes)
    out = {}
    for iid, s in slots.items():
        stat = instruction_stat(table[s], write_cost, evicted)
        if stat is not None:
            out[iid] = stat
    return out


def dram_bytes(table, scale, dirty_bytes):
    """Total DRAM bytes (read + write) of the kernel, scaled up (with the write-backs a longer
    run would do) for sampled execution."""
    t = table.sum(axis=0)
    evicted = evicted_fraction(t, scale, dirty_bytes)
    return float(t[C.DRAM_RD] + t[C.DRAM_WR] + evicted * t[C.DIRTY_END]) * scale
