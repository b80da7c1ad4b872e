"""A sampled launch's first touches: L1 and L2 misses the full launch would not have.

A sampled launch (timing/sampling.sample_runs) runs slices of a few waves, each starting
where blocks the full launch runs before it did not run.  Data that many blocks read -- a
vector every row gathers from (SpMV's x), the planes a 3-D stencil's neighbouring blocks
share, a broadcast operand -- is then missed in the L2 by the sample's first reader of each
sector, where the full launch misses it once for all its readers and hits it afterwards: the
sample over-counts L2 misses and DRAM reads by the share of its first touches that the full
launch re-reads (the 3-D stencil 384^3: L2 hit rate 45 % sampled, 75 % over all blocks).

`FirstTouch` records, for the global loads of a sampled launch, how many sectors of each
array each instruction touched first (no earlier load or store of this launch touched them:
cold misses, as the L2 starts empty), and how many distinct sectors of each array the launch
touched.  `warmed_table` moves the cold misses a full launch would not have to hits:

    the full launch touches about min(S, D x scale) sectors of an array of S sectors of which
    the sample touched D (scale: all blocks / blocks run); of the sample's D first touches,
    scaled, only that many are first touches in the full launch: keep = min(1, S / (D scale));
    the rest, (1 - keep) of each instruction's first touches, re-read a sector some earlier
    block read, and hit as the sample's own re-reads of the array's sectors hit (h: its L2
    hits over its L2 reads that were not first touches; 1 where the sample has none and the
    array fits in the L2, else 0).

Data read once (a stream: D x scale <= S) keeps every miss.  The DRAM reads of an
instruction shrink with its misses.  Only a sampled launch's figures for the timing model
(MemoryModel.instruction_stats, dram_bytes) use it; its counters (the Report's) stay as run.

The same holds per SM for the L1 and a small array (at most an L1's worth: a filter's taps,
a broadcast operand, LayerNorm's gamma and beta) that every block reads: the sample's SMs
miss it once per sampled slice's first block, the full launch once per SM for all its waves
(the 1-D convolution's 15 taps: 11.8 % of their sectors go to the L2 sampled, 0.2 % over all
blocks).  Per SM and such array: keep = min(1, S x SMs / (D1 x scale)), D1 the (SM, sector)
pairs the sample touched; the L1 misses moved to hits leave the L2's reads, and the pending
hits (on data a cold miss was bringing in) shrink with the misses.

Which instruction re-reads: a first touch moves with the instruction that made it.  Where
several load instructions read the same sectors of an array (a stencil's centre and halo
loads) the full launch's first reader of a sector is the one whose block runs first, which
the sample does not show; the L2 correction is made only for arrays read by one load
instruction (SpMV's x, a broadcast's operands); a stencil's shared planes stay as sampled
(docs/timing.md, "Sampled against full").
"""

from __future__ import annotations

import numpy as np

from . import counters as C


class FirstTouch:
    """Per global array: the sectors this launch touched (L2) and, for arrays of at most
    `l1_sectors` sectors, the (SM, sector) pairs its loads touched (L1); per load instruction
    (slot) and array: the sectors it touched first at each level, and which load instructions
    read each array."""

    def __init__(self, sector_bytes, sm_count, l1_bytes):
        self.shift = int(sector_bytes).bit_length() - 1
        self.sm_count = int(sm_count)
        self.l1_sectors = max(1, int(l1_bytes) >> self.shift)
        self.arrays = {}            # id(array) -> [base, seen, touched, seen per SM or None, touched per SM]
        self.cold = {}              # slot -> {id(array): sectors it touched first in the L2}
        self.cold1 = {}             # slot -> {id(array): (SM, sector) pairs it touched first}
        self.readers = {}           # id(array) -> load slots that read it

    def note(self, slot, array, kind, addr, mask, warp_sm):
        """A global load or store (`kind` "ld"/"st") of `array` at `addr` (lanes in `mask`;
        warp_sm: the SM of each warp of the chunk)."""
        key = id(array)
        rec = self.arrays.get(key)
        if rec is None:
            nbytes = max(1, int(array.size) * int(array.itemsize))
            n = max(1, -(-nbytes >> self.shift))
            rec = self.arrays[key] = [int(array.base_addr), np.zeros(n, bool), 0,
                                      np.zeros(n * self.sm_count, bool) if n <= self.l1_sectors else None, 0]
        base, seen, seen1 = rec[0], rec[1], rec[3]
        lanes = None if mask.full else np.flatnonzero(mask.arr)
        a = addr if lanes is None else addr[lanes]
        sec = (a - base) >> self.shift
        inside = (sec >= 0) & (sec < seen.size)
        if not inside.all():
            sec = sec[inside]
            lanes = (np.arange(len(addr)) if lanes is None else lanes)[inside]
        if kind == "ld":
            self.readers.setdefault(key, set()).add(slot)
            self.cold.setdefault(slot, {}).setdefault(key, 0)
            if seen1 is not None:
                w = (np.arange(len(addr)) if lanes is None else lanes) >> 5
                pair = warp_sm[w] * seen.size + sec
                new1 = pair[~seen1[pair]]
                if new1.size:
                    new1 = np.unique(new1)
                    seen1[new1] = True
                    rec[4] += new1.size
                    d = self.cold1.setdefault(slot, {})
                    d[key] = d.get(key, 0) + new1.size
        new = sec[~seen[sec]]
        if not new.size:
            return
        new = np.unique(new)
        seen[new] = True
        rec[2] += new.size
        if kind == "ld":
            self.cold[slot][key] += new.size

    def warmed_table(self, table, scale, l2_bytes):
        """`table` (the counter table) with the first-touch misses a launch `scale` times
        larger would not have moved to hits, L1 then L2 (module docstring); the table itself
        where nothing moves."""
        if scale <= 1.0 or not (self.cold or self.cold1):
            return table
        out = table.astype(np.float64)
        moved_any = self._warm_l1(out, scale)
        moved_any |= self._warm_l2(out, scale, l2_bytes)
        return out if moved_any else table

    def _warm_l1(self, t, scale):
        hits, reads = {}, {}            # per array: the sample's L1 hits on sectors it had touched
        for slot, per in self.cold1.items():
            c = sum(per.values())
            for key, n in per.items():
                share = n / c if c else 0.0
                hits[key] = hits.get(key, 0.0) + share * t[slot, C.GLD_HIT]
                reads[key] = reads.get(key, 0.0) + share * max(0.0, t[slot, C.GLD_SECT] - c)
        moved_any = False
        for slot, per in self.cold1.items():
            moved = 0.0
            for key, n in per.items():
                rec = self.arrays[key]
                keep = min(1.0, rec[1].size * self.sm_count / (rec[4] * scale)) if rec[4] else 1.0
                h = min(1.0, hits[key] / reads[key]) if reads[key] > 0 else 1.0
                moved += n * (1.0 - keep) * h
            misses1 = t[slot, C.L2_RD]                  # load sectors that left the L1
            moved = min(moved, misses1)
            if moved <= 0:
                continue
            moved_any = True
            f = 1.0 - moved / misses1                   # what is left of the L1 misses
            t[slot, C.GLD_HIT] += moved
            t[slot, C.L1_PEND] *= f                     # hits pending on the misses that went
            for col in (C.L2_RD, C.L2_RD_HIT, C.L2_PEND, C.DRAM_RD, C.DRAM_RD_BUSY):
                t[slot, col] *= f
        return moved_any

    def _warm_l2(self, t, scale, l2_bytes):
        sector = 1 << self.shift
        moved_any = False
        for slot, per in self.cold.items():
            moved = 0.0
            for key, c in per.items():
                if not c or len(self.readers.get(key, ())) != 1:
                    continue                            # several readers: which re-reads is not known
                _, seen, touched = self.arrays[key][:3]
                keep = min(1.0, seen.size / (touched * scale)) if touched else 1.0
                if keep >= 1.0:
                    continue
                reads = max(0.0, t[slot, C.L2_RD] - c)  # the sample's re-reads (its one reader's)
                if reads > 0:
                    h = min(1.0, t[slot, C.L2_RD_HIT] / reads)
                else:
                    h = 1.0 if seen.size * sector <= l2_bytes else 0.0
                moved += c * (1.0 - keep) * h
            misses = t[slot, C.L2_RD] - t[slot, C.L2_RD_HIT]
            moved = min(moved, misses)
            if moved <= 0:
                continue
            moved_any = True
            f = 1.0 - moved / misses
            t[slot, C.L2_RD_HIT] += moved
            for col in (C.DRAM_RD, C.DRAM_RD_BUSY):     # (its hits pending on other SMs' fetches
                t[slot, col] *= f                       # stay: they follow the wave's refetches)
        return moved_any
