"""MemoryModel: the executor observer that counts every byte at every level.

kernel.launch() builds one per launch, asks it how many blocks each chunk should hold
(`chunk_blocks`), feeds it every memory event and finally lets it fill the Report.
"""
from __future__ import annotations

import numpy as np

from ..events import Observer, ProgramFacts
from ..hardware.spec import HardwareError
from . import counters as C
from .banks import const_event, new_scratch as bank_scratch, shared_event
from .cache import (MAX_SECTORS_PER_LINE, P_DIRTY, P_WAYS1, P_WAYS2, EngineParams, dirty_bytes, log2_exact,
                    new_l1, new_l2)
from .engine import KINDS, MAX_LINES, global_event, new_scratch
from .schedule import ASSUMED_REGISTERS_PER_THREAD, Schedule, blocks_per_sm, carveout_bytes, l1_ways
from . import stats
from .tables import fill_report
from ..ir import types as T

LOCAL_BASE = (1 << 40) + (1 << 38)   # local memory: 256 GiB above where global arrays start (2**40)
_SHARED_COUNTER_COLUMNS = {"ld": (C.SLD_REQ, C.SLD_WF, C.SLD_IDEAL, C.SLD_BYTES),
                           "st": (C.SST_REQ, C.SST_WF, C.SST_IDEAL, C.SST_BYTES),
                           "atom": (C.SAT_REQ, C.SAT_WF, C.SAT_IDEAL, C.SAT_BYTES)}


def read_only(a):
    """`a` as a read-only array (a view when it is writable): the compiled engine (engine.py,
    banks.py) is then compiled for one array type, not for read-only and writable both --
    half the compile time of a first run (numba types read-only arrays apart)."""
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


class MemoryModel(Observer):
    """Coalescing, shared-memory banks, per-SM L1s, one L2 and DRAM for one launch."""

    def __init__(self, gpu, launch, facts=None):
        """``facts``: the program's (events.ProgramFacts; default ``launch.facts``, which the
        executor's prepare fills; defaults where neither has them)."""
        self.gpu, self.launch = gpu, launch
        l1, l2 = gpu.l1, gpu.l2
        if (l1.line_bytes, l1.sector_bytes) != (l2.line_bytes, l2.sector_bytes):
            raise HardwareError(f"{gpu.name}: the memory model needs the same line and sector size in "
                                f"L1 ({l1.line_bytes}/{l1.sector_bytes} B) and L2 ({l2.line_bytes}/{l2.sector_bytes} B)")
        spl = l2.sectors_per_line
        if spl > MAX_SECTORS_PER_LINE:
            raise HardwareError(f"{gpu.name}: the memory model supports at most {MAX_SECTORS_PER_LINE} "
                                f"sectors per line, not {spl}")
        # resident blocks as the card has them: with ptxas' registers where the launch knows them
        # (the compiled path, or registers_per_thread=), so that the memory model's waves are the
        # timing model's (32 registers assumed otherwise: schedule.py)
        regs = getattr(launch, "registers_per_thread", None) or ASSUMED_REGISTERS_PER_THREAD
        bps, smem_alloc = blocks_per_sm(gpu, launch.threads_per_block, launch.smem_bytes, regs)
        self.schedule = Schedule(gpu.sm_count, bps, launch.warps_per_block)
        self.carveout_bytes = carveout_bytes(gpu, bps * smem_alloc)
        ways1 = l1_ways(gpu, bps * smem_alloc)
        self.l1_bytes = ways1 * l1.sets * l1.line_bytes
        self.l1tag, self.l1 = new_l1(l1.sets, ways1, gpu.sm_count)
        self.l2, self.l2r = new_l2(l2.sets, l2.ways, l2.line_bytes)
        self.params = EngineParams.for_gpu(gpu, ways1)
        self.dram_access_bytes = self.params.dram_access_bytes
        self.prm = self.params.array()                # what the compiled engine reads
        self.clk = np.zeros(2, dtype=np.int64)        # L1 and L2 clocks (LRU stamps)
        self.bank_shift = log2_exact(gpu.shared_bank_bytes, "shared-memory bank width")
        self.bank_mask = (1 << log2_exact(gpu.shared_banks, "number of shared-memory banks")) - 1
        self.cnt = C.new_table()
        self.slots = {}               # instruction id -> row of self.cnt
        self.slot_ins = []
        self.sector_lookups = 0
        self._orders = {}
        self._order = None
        self.blocks_seen = 0
        self._scratch = self._bank_scratch = None
        self._local = None
        if facts is None:
            facts = launch.facts if launch.facts is not None else ProgramFacts()
        self.local_frame = facts.local_frame_bytes  # interleaves local memory per thread
        self.red_ids = facts.reduction_ids          # atomics compiled to RED

    # -- executor hooks ----------------------------------------------------------
    def chunk_blocks(self, per_chunk):
        return self.schedule.chunk_blocks(per_chunk)

    def chunk_begin(self, chunk):
        self.blocks_seen += chunk.n_blocks
        self._cache_share(chunk)
        s = self.schedule
        key = (chunk.first_block % s.wave_blocks, chunk.n_blocks)
        o = self._orders.get(key)
        if o is None:
            o = self._orders[key] = s.order(chunk.first_block, chunk.n_blocks)
        self._order = o
        self._local = None
        if self._scratch is None or self._scratch[3].shape[0] < chunk.n_warps * MAX_LINES:
            self._scratch = new_scratch(chunk.n_warps, self.gpu.l2.line_bytes)
            self._bank_scratch = bank_scratch(self.bank_mask + 1)
            self._const_seen = np.zeros(32, dtype=np.int64)

    def _cache_share(self, chunk):
        """A sampled launch's slice of a wave (``Launch.wanted_runs``: some slots of every SM,
        timing/sampling.sample_runs) runs without the rest of its wave, whose blocks would
        share the caches with it: it gets its share of each L1 and of the L2, the ways times
        the slice's blocks over the wave's (``Launch.sampled_wave_blocks``), so that its hit
        rates are the whole wave's (a uniform kernel's slices hit as its waves do: the scalar
        SpMV's L1 35 % with all ways, 9 % with its share, as in a whole wave).  Other chunks
        (whole waves, the partial last wave, any chunk of a launch that runs every block) get
        every way."""
        full = self.params.l1_ways, self.params.l2_ways, self.params.dirty_lines
        W = self.launch.sampled_wave_blocks
        f = 1.0
        if self.launch.wanted_runs is not None and W:
            f = min(1.0, chunk.n_blocks / min(W, self.launch.n_blocks - chunk.first_block))
        self.prm[P_WAYS1] = max(1, round(full[0] * f))
        self.prm[P_WAYS2] = max(1, round(full[1] * f))
        self.prm[P_DIRTY] = max(1, round(full[2] * f)) if full[2] else 0

    def mem(self, ev):
        slot = self._slot(ev.inst)
        addr = read_only(np.ascontiguousarray(ev.addr))    # a broadcast (uniform) address is copied
        mask = read_only(ev.mask.arr)
        space = ev.space
        if space == "shared":
            # the executor's rows_alike, for an access by every lane: blocks_repeat's answer
            alike = -1 if ev.rows_alike is None or not ev.mask.full else int(ev.rows_alike)
            r = shared_event(addr, mask, mask.view(np.uint8), ev.size, ev.chunk.n_warps, self.bank_shift,
                             self.bank_mask, ev.chunk.wpb, self._bank_scratch, alike)
            for col, v in zip(_SHARED_COUNTER_COLUMNS[ev.kind], r):
                self.cnt[slot, col] += v
        elif space == "const":
            req, passes, nbytes = const_event(addr, mask, ev.size, ev.chunk.n_warps, self._const_seen)
            self.cnt[slot, C.CLD_REQ] += req
            self.cnt[slot, C.CLD_WF] += passes
            self.cnt[slot, C.CLD_BYTES] += nbytes
        else:
            if space == "local":
                addr = read_only(self._local_addr(ev))
            order, sm_order, warp_sm = self._order
            self.sector_lookups += global_event(
                addr, mask, mask.view(np.uint8), ev.size, KINDS[(space, ev.kind)], order, sm_order, warp_sm,
                slot, self.cnt, self.l1tag, self.l1, self.l2, self.l2r, self.prm, self.clk, self._scratch)

    def launch_end(self, launch):
        dirty_bytes(self.l2, self.l2r, self.prm, self.cnt, C.DIRTY_END, False)   # one signature: one compile
        dirty_bytes(self.l2, self.l2r, self.prm, self.cnt, C.DIRTY_END_BUSY, True)

    def fill_report(self, rep):
        fill_report(self, rep)

    # -- what the timing model reads ---------------------------------------------------
    def instruction_stats(self, scale=1.0, l2_bytes=0, write_cost=1.0):
        """{instruction id: stats.MemStat} for every global/local memory instruction seen.
        scale > 1: the counters cover 1/scale of the blocks (sampled execution) of a GPU
        with an L2 of `l2_bytes`; write_cost: DRAM time of a written byte, in read bytes."""
        return stats.instruction_stats(self.cnt, self.slots, scale, self.dirty_capacity(l2_bytes), write_cost)

    def dram_bytes(self, scale=1.0, l2_bytes=0):
        """Total DRAM bytes (read + write) of the kernel, scaled up for sampled execution."""
        return stats.dram_bytes(self.cnt, scale, self.dirty_capacity(l2_bytes))

    def evicted_fraction(self, scale, l2_bytes):
        """Share of the bytes left dirty in the L2 a run `scale` times longer would write back."""
        return stats.evicted_fraction(self.cnt.sum(axis=0), scale, self.dirty_capacity(l2_bytes))

    def dirty_capacity(self, l2_bytes):
        """The most bytes an L2 of `l2_bytes` keeps dirty: the GPU's measured limit
        (``l2_dirty_max_bytes``, the engine's eager write-back: a full run never ends with
        more dirty), else the whole L2."""
        limit = self.params.dirty_lines * self.params.line_bytes
        return min(l2_bytes, limit) if limit else l2_bytes

    # -- helpers -------------------------------------------------------------------
    def _slot(self, ins):
        s = self.slots.get(ins.id)
        if s is None:
            s = self.slots[ins.id] = len(self.slot_ins)
            self.slot_ins.append(ins)
            self.cnt = C.grow(self.cnt, s + 1)
        return s

    def _local_addr(self, ev):
        """Local memory is interleaved by the hardware: the same per-thread offset of the 32
        threads of a warp lies in consecutive words (CUDA Programming Guide, "Local Memory")."""
        c = ev.chunk
        if self._local is None:
            wpb = c.wpb
            gwarp = (c.first_block + c.lane_block) * wpb + c.lane_tid // 32
            self._local = (LOCAL_BASE + gwarp * (self.local_frame * 32), c.lane_tid % 32)
        base, lane = self._local
        g = max(4, ev.size)
        o = np.asarray(ev.addr, dtype=np.int64)
        return base + (o // g) * (32 * g) + lane * g + o % g


def ir_local_frame(fn):
    """One thread's local frame of simgpu's IR program: its local arrays, 16-byte rounded (at
    least 16 bytes)."""
    size = 0
    for shape, dtype in getattr(fn, "local", {}).values():
        size += int(np.prod(shape)) * T.np_dtype(dtype).itemsize
    return max(16, -(-size // 16) * 16)
