"""The memory model's counters: one row per memory instruction, one column per counter.

The compiled code adds into an int64 table ``counts[slot, COLUMN]`` (a slot is one IR
memory instruction); the per-line view sums rows of the same source line and the totals sum
all rows.  Column names are short; `METRICS` maps them to Nsight Compute's names.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# global memory, at L1 (per warp-level instruction): requests, sectors, bytes the lanes asked for
GLD_REQ, GLD_SECT, GLD_BYTES, GLD_HIT = 0, 1, 2, 3
GST_REQ, GST_SECT, GST_BYTES, GST_HIT = 4, 5, 6, 7
GAT_REQ, GAT_SECT, GAT_BYTES = 8, 9, 10
# local memory (per-thread stack arrays), at L1
LLD_REQ, LLD_SECT, LLD_BYTES, LLD_HIT = 11, 12, 13, 14
LST_REQ, LST_SECT, LST_BYTES, LST_HIT = 15, 16, 17, 18
# L2: sectors that arrive from L1 (reads = L1 load misses, writes = write-through stores,
# atomics) and how many of them hit
L2_RD_REQ, L2_RD, L2_RD_HIT = 19, 20, 21
L2_WR_REQ, L2_WR, L2_WR_HIT = 22, 23, 24
L2_AT_REQ, L2_AT, L2_AT_HIT = 25, 26, 27
# DRAM: bytes read on L2 misses (charged to the instruction that missed), bytes written back
# when a dirty line is evicted and bytes still dirty at the end (both charged to the
# instruction that last wrote the line)
DRAM_RD, DRAM_WR, DIRTY_END = 28, 29, 30
# shared memory: requests (warp instructions), wavefronts, ideal wavefronts, bytes
SLD_REQ, SLD_WF, SLD_IDEAL, SLD_BYTES = 31, 32, 33, 34
SST_REQ, SST_WF, SST_IDEAL, SST_BYTES = 35, 36, 37, 38
SAT_REQ, SAT_WF, SAT_IDEAL, SAT_BYTES = 39, 40, 41, 42
# constant memory: requests and distinct addresses per warp (each one a serialised access)
CLD_REQ, CLD_WF, CLD_BYTES = 43, 44, 45
# latency only (no Nsight counterpart): load sectors that hit a line whose fill was started by
# the same instruction instance (another warp of the chunk missed on it first) -- the data
# is still in flight, so the "hit" waits for that miss.  L1: hits on sectors another warp of
# the SM is fetching; L2: read hits on sectors being fetched from DRAM for another SM.
L1_PEND, L2_PEND = 46, 47
# DRAM occupancy (timing only): the bytes above rounded up to whole DRAM accesses (the
# access granularity), since a 32-byte read or write of an access costs the DRAM a whole one
DRAM_RD_BUSY, DRAM_WR_BUSY, DIRTY_END_BUSY = 48, 49, 50
N_COUNTERS = 51

NAMES = {v: k.lower() for k, v in dict(globals()).items()
         if k.isupper() and isinstance(v, int) and k != "N_COUNTERS"}


def new_table(rows=16):
    return np.zeros((rows, N_COUNTERS), dtype=np.int64)


def grow(table, rows):
    """The table with at least `rows` rows (old rows kept)."""
    if rows <= table.shape[0]:
        return table
    out = new_table(max(rows, 2 * table.shape[0]))
    out[:table.shape[0]] = table
    return out


FAR_SHARE_PLUS_ONE = 1.5


def l2_tag_sectors(t, sector_bytes=32):
    """Sector look-ups in the L2 slices (what lts__t_bytes / 32 counts on the H200).

    The H100/H200 L2 is two partitions; a line lives in one of them (half the lines each).
    A request that finds no copy in the partition near its SM is looked up again in the far
    one.  The model has one L2, so it adds that second look-up for half of the requests that
    find no copy nearby: half the L2 read misses, half the writes and half the atomics (writes
    and atomics go to the line's home).  Sectors the DRAM fetched beyond those requested
    (the 64-byte read granularity) are installed with look-ups of their own.  This accounting
    reproduces the suite's lts__t_bytes within about 10 % (docs/memory.md)."""
    rd_miss = t[L2_RD] - t[L2_RD_HIT]
    at_miss = t[L2_AT] - t[L2_AT_HIT]
    tex = t[L2_RD] + t[L2_WR] + t[L2_AT]
    over = max(0, t[DRAM_RD] // sector_bytes - rd_miss - at_miss)
    return tex + (FAR_SHARE_PLUS_ONE - 1.0) * (rd_miss + t[L2_WR] + t[L2_AT]) + over


def _pct(num, den):
    return 100.0 * num / den if den else 0.0


# rows a metric reads: the totals, the atomics compiled to RED, and the other atomics
TOTAL, RED, ATOMIC = "total", "red", "atomic"


@dataclass(frozen=True)
class Sum:
    """factor * (the sum of columns `add` - the sum of columns `sub`) of one row."""
    add: tuple
    sub: tuple = ()
    row: str = TOTAL
    factor: float = 1

    def value(self, rows, sector_bytes):
        r = rows[self.row]
        return self.factor * (sum(r[c] for c in self.add) - sum(r[c] for c in self.sub))


@dataclass(frozen=True)
class Rate:
    """Percent: the sum of columns `num` over the sum of columns `den` (0 if none)."""
    num: tuple
    den: tuple

    def value(self, rows, sector_bytes):
        t = rows[TOTAL]
        return _pct(sum(t[c] for c in self.num), sum(t[c] for c in self.den))


@dataclass(frozen=True)
class TagSectors:
    """L2 tag look-ups (l2_tag_sectors), in sectors or in bytes."""
    in_bytes: bool

    def value(self, rows, sector_bytes):
        lts = l2_tag_sectors(rows[TOTAL], sector_bytes)
        return lts * sector_bytes if self.in_bytes else lts


_L1_SECT = (GLD_SECT, GST_SECT, LLD_SECT, LST_SECT)
_L1_HIT = (GLD_HIT, GST_HIT, LLD_HIT, LST_HIT)
_L2_SECT = (L2_RD, L2_WR, L2_AT)

# Nsight Compute metric -> how the model computes it from the counters (Report.metrics order)
METRICS = {
    "dram__bytes_read.sum": Sum((DRAM_RD,)),
    "dram__bytes_write.sum": Sum((DRAM_WR,)),
    "dram__bytes.sum": Sum((DRAM_RD, DRAM_WR)),
    "lts__t_bytes.sum": TagSectors(in_bytes=True),
    "lts__t_sectors.sum": TagSectors(in_bytes=False),
    "lts__t_requests_srcunit_tex.sum": Sum((L2_RD_REQ, L2_WR_REQ, L2_AT_REQ)),
    "lts__t_sectors_srcunit_tex_op_read.sum": Sum((L2_RD,)),
    "lts__t_sectors_srcunit_tex_op_write.sum": Sum((L2_WR,)),
    "lts__t_sectors_srcunit_tex_op_atom.sum": Sum((L2_AT,), row=ATOMIC),
    "lts__t_sectors_srcunit_tex_op_red.sum": Sum((L2_AT,), row=RED),
    "lts__t_sectors_op_atom.sum": Sum((L2_AT,), row=ATOMIC, factor=FAR_SHARE_PLUS_ONE),
    "lts__t_sectors_op_red.sum": Sum((L2_AT,), row=RED, factor=FAR_SHARE_PLUS_ONE),
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum": Sum((L2_RD_HIT,)),
    "lts__t_sectors_srcunit_tex_op_write_lookup_hit.sum": Sum((L2_WR_HIT,)),
    "lts__t_sector_hit_rate.pct": Rate((L2_RD_HIT, L2_WR_HIT, L2_AT_HIT), _L2_SECT),
    "lts__t_sector_op_read_hit_rate.pct": Rate((L2_RD_HIT,), (L2_RD,)),
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": Sum((GLD_REQ,)),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": Sum((GLD_SECT,)),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum": Sum((GLD_HIT,)),
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": Sum((GST_REQ,)),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": Sum((GST_SECT,)),
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum": Sum((GAT_REQ,), row=ATOMIC),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum": Sum((GAT_SECT,), row=ATOMIC),
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum": Sum((GAT_REQ,), row=RED),
    "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum": Sum((GAT_SECT,), row=RED),
    "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum": Sum((LLD_REQ,)),
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum": Sum((LLD_SECT,)),
    "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum": Sum((LST_REQ,)),
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum": Sum((LST_SECT,)),
    "l1tex__t_sectors.sum": Sum(_L1_SECT + (GAT_SECT,)),
    "l1tex__t_sector_hit_rate.pct": Rate(_L1_HIT, _L1_SECT + (GAT_SECT,)),
    "l1tex__t_sector_op_read_hit_rate.pct": Rate((GLD_HIT, LLD_HIT), (GLD_SECT, LLD_SECT)),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": Sum((SLD_WF,)),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": Sum((SST_WF,)),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum": Sum((SAT_WF,)),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum": Sum((SLD_WF, SST_WF, SAT_WF)),
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": Sum((SLD_WF,), (SLD_IDEAL,)),
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": Sum((SST_WF,), (SST_IDEAL,)),
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum": Sum((SAT_WF,), (SAT_IDEAL,)),
    "smsp__inst_executed_op_shared_ld.sum": Sum((SLD_REQ,)),
    "smsp__inst_executed_op_shared_st.sum": Sum((SST_REQ,)),
    "smsp__inst_executed_op_shared_atom.sum": Sum((SAT_REQ,)),
    "smsp__inst_executed_op_global_ld.sum": Sum((GLD_REQ,)),
    "smsp__inst_executed_op_global_st.sum": Sum((GST_REQ,)),
    "smsp__inst_executed_op_global_atom.sum": Sum((GAT_REQ,), row=ATOMIC),
    "smsp__inst_executed_op_global_red.sum": Sum((GAT_REQ,), row=RED),
    "simgpu__global_ld_bytes_requested.sum": Sum((GLD_BYTES,)),
    "simgpu__global_st_bytes_requested.sum": Sum((GST_BYTES,)),
    "simgpu__global_atom_bytes_requested.sum": Sum((GAT_BYTES,)),
    "simgpu__shared_ld_bytes.sum": Sum((SLD_BYTES,)),
    "simgpu__shared_st_bytes.sum": Sum((SST_BYTES,)),
    "simgpu__const_requests.sum": Sum((CLD_REQ,)),
    "simgpu__const_serialized_accesses.sum": Sum((CLD_WF,)),
    "simgpu__l2_dirty_bytes_at_end.sum": Sum((DIRTY_END,)),
    "simgpu__l1_sector_hits_in_flight.sum": Sum((L1_PEND,)),
    "simgpu__l2_sector_hits_in_flight.sum": Sum((L2_PEND,)),
}


def metrics(t, sector_bytes=32, red=None):
    """Nsight Compute metrics (METRICS) from a totals row `t` (a 1-d array of N_COUNTERS).
    `red`: the summed rows of the atomics compiled to RED (result unused), reported under
    op_red; the other atomics under op_atom."""
    t = [int(x) for x in t]
    r = [int(x) for x in red] if red is not None else [0] * N_COUNTERS
    rows = {TOTAL: t, RED: r, ATOMIC: [a - b for a, b in zip(t, r)]}
    return {name: float(m.value(rows, sector_bytes)) for name, m in METRICS.items()}


def line_row(t, sector_bytes=32):
    """The per-source-line counters (keys of Report.lines) from one summed row."""
    t = [int(x) for x in t]
    row = {}

    def put(key, v):
        if v:
            row[key] = v

    put("global_ld_requests", t[GLD_REQ])
    put("global_ld_sectors", t[GLD_SECT])
    put("global_st_requests", t[GST_REQ])
    put("global_st_sectors", t[GST_SECT])
    put("global_atom_requests", t[GAT_REQ])
    put("global_atom_sectors", t[GAT_SECT])
    put("local_requests", t[LLD_REQ] + t[LST_REQ])
    put("local_sectors", t[LLD_SECT] + t[LST_SECT])
    req = t[GLD_REQ] + t[GST_REQ] + t[GAT_REQ] + t[LLD_REQ] + t[LST_REQ]
    sect = t[GLD_SECT] + t[GST_SECT] + t[GAT_SECT] + t[LLD_SECT] + t[LST_SECT]
    if req:
        row["sectors_per_request"] = sect / req
        row["l1_bytes"] = sect * sector_bytes
        row["l1_hit_rate_pct"] = _pct(t[GLD_HIT] + t[GST_HIT] + t[LLD_HIT] + t[LST_HIT], sect)
        row["bytes_requested"] = t[GLD_BYTES] + t[GST_BYTES] + t[GAT_BYTES] + t[LLD_BYTES] + t[LST_BYTES]
    l2 = t[L2_RD] + t[L2_WR] + t[L2_AT]
    put("l2_bytes", l2 * sector_bytes)
    if l2:
        row["l2_hit_rate_pct"] = _pct(t[L2_RD_HIT] + t[L2_WR_HIT] + t[L2_AT_HIT], l2)
    put("dram_read_bytes", t[DRAM_RD])
    put("dram_write_bytes", t[DRAM_WR])
    put("l2_dirty_bytes_at_end", t[DIRTY_END])
    sreq = t[SLD_REQ] + t[SST_REQ] + t[SAT_REQ]
    if sreq:
        wf = t[SLD_WF] + t[SST_WF] + t[SAT_WF]
        ideal = t[SLD_IDEAL] + t[SST_IDEAL] + t[SAT_IDEAL]
        row["shared_requests"] = sreq
        row["shared_wavefronts"] = wf
        row["bank_conflicts"] = wf - ideal
        row["shared_bytes"] = t[SLD_BYTES] + t[SST_BYTES] + t[SAT_BYTES]
        row["wavefronts_per_request"] = wf / sreq
    put("const_requests", t[CLD_REQ])
    put("const_serialized_accesses", t[CLD_WF])
    return row
