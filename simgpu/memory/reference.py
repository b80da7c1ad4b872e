"""A pure-Python statement of what engine.global_event and banks.shared_event compute.

Slow (one Python step per byte) and obvious: sets as lists in recency order, sectors as
Python sets.  The tests check the compiled code against it on random accesses, and
benchmarks/bench_cache.py measures the compiled code's speed against it.
"""
from __future__ import annotations

from . import counters as C
from .cache import (P_DIRTY, P_GRAN, P_LINE_SHIFT, P_SECTOR_BYTES, P_SECTOR_SHIFT, P_SETS1, P_SETS2, P_SPL,
                    P_WAYS1, P_WAYS2, set_index)
from .engine import ATOM, LD, LOCAL_LD, LOCAL_ST, ST

_COUNTER_COLUMNS = {LD: (C.GLD_REQ, C.GLD_SECT, C.GLD_BYTES, C.GLD_HIT, C.L2_RD_REQ, C.L2_RD, C.L2_RD_HIT),
         ST: (C.GST_REQ, C.GST_SECT, C.GST_BYTES, C.GST_HIT, C.L2_WR_REQ, C.L2_WR, C.L2_WR_HIT),
         ATOM: (C.GAT_REQ, C.GAT_SECT, C.GAT_BYTES, None, C.L2_AT_REQ, C.L2_AT, C.L2_AT_HIT),
         LOCAL_LD: (C.LLD_REQ, C.LLD_SECT, C.LLD_BYTES, C.LLD_HIT, C.L2_RD_REQ, C.L2_RD, C.L2_RD_HIT),
         LOCAL_ST: (C.LST_REQ, C.LST_SECT, C.LST_BYTES, C.LST_HIT, C.L2_WR_REQ, C.L2_WR, C.L2_WR_HIT)}


class ReferenceMemory:
    """L1s and L2 as lists of [line, valid, ...] in recency order (most recent first)."""

    def __init__(self, prm, n_sms):
        self.p = [int(x) for x in prm]
        p = self.p
        self.l1 = [[[] for _ in range(p[P_SETS1])] for _ in range(n_sms)]
        self.l2 = [[] for _ in range(p[P_SETS2])]
        self.cnt = {}

    def _row(self, slot):
        return self.cnt.setdefault(slot, [0] * C.N_COUNTERS)

    def _warp_lines(self, addr, mask, w, size):
        """{line: (sector set, byte set)} in first-touch order, and the active lane count."""
        ls, ss = self.p[P_LINE_SHIFT], self.p[P_SECTOR_SHIFT]
        lines, active = {}, 0
        for i in range(w * 32, w * 32 + 32):
            if not mask[i]:
                continue
            active += 1
            for b in range(int(addr[i]), int(addr[i]) + size):
                sectors, nbytes = lines.setdefault(b >> ls, (set(), set()))
                sectors.add((b & ((1 << ls) - 1)) >> ss)
                nbytes.add(b & ((1 << ls) - 1))
        return lines, active

    def _l2(self, line, sectors, nbytes, op, slot, fetched):
        """fetched: {(line, sector)} this event brought from DRAM so far (updated)."""
        p = self.p
        gran, sb, spl = p[P_GRAN], p[P_SECTOR_BYTES], p[P_SPL]
        row = set_index(line, p[P_SETS2], 1.0 / p[P_SETS2])
        s = self.l2[row]
        e = next((x for x in s if x[0] == line), None)
        if e is None:
            if len(s) == p[P_WAYS2]:
                self._write_back(s.pop())                 # write back dirty, fill partial sectors
            e = [line, set(), set(), set(), 0, set()]    # line, valid, dirty, partial, writer, bytes
        else:
            s.remove(e)
        s.insert(0, e)
        valid, dirty, partial = e[1], e[2], e[3]
        was_dirty = bool(dirty)
        if op == 1:                                      # every store sector counts as a hit
            e[5] |= nbytes
            valid |= {k for k in sectors if all(k * sb + b in e[5] for b in range(sb))}
            dirty |= sectors
            partial |= sectors
            partial -= valid
            e[4] = slot
            self._dirty_cap(s, row, was_dirty)
            return len(sectors), 0, 0, 0
        hits = len(sectors & valid)
        pend = len({(line, k) for k in sectors & valid} & fetched) if op == 0 else 0
        need = sectors - valid
        fill = {c * gran + k for c in {x // gran for x in need} for k in range(gran)
                if c * gran + k < spl} - valid
        valid |= fill
        partial -= fill
        fetched |= {(line, k) for k in fill}
        busy = len({x // gran for x in need}) * gran * sb
        if op == 2:
            dirty |= sectors
            e[4] = slot
            self._dirty_cap(s, row, was_dirty)
        return hits, len(fill) * sb, pend, busy

    def _write_back(self, old):
        """Write back line record `old`'s dirty sectors, reading its partial ones to merge."""
        gran, sb = self.p[P_GRAN], self.p[P_SECTOR_BYTES]
        if old[2]:
            self._row(old[4])[C.DRAM_WR] += len(old[2]) * sb
            self._row(old[4])[C.DRAM_RD] += len(old[3]) * sb
            self._row(old[4])[C.DRAM_WR_BUSY] += len({x // gran for x in old[2]}) * gran * sb
            self._row(old[4])[C.DRAM_RD_BUSY] += len({x // gran for x in old[3]}) * gran * sb

    def _dirty_cap(self, s, row, was_dirty):
        """Eager write-back: the line s[0] just became dirty; if set `row` (most recently used
        first) now holds more dirty lines than its share of P_DIRTY, its least recently used
        other dirty line is written back and stays, clean and valid."""
        dcap, sets = self.p[P_DIRTY], self.p[P_SETS2]
        if dcap <= 0 or was_dirty or not s[0][2]:
            return
        cap = (dcap * (row + 1)) // sets - (dcap * row) // sets
        dirty = [x for x in s if x[2]]
        if len(dirty) > cap and dirty[-1] is not s[0]:
            old = dirty[-1]
            self._write_back(old)
            old[1] |= old[3]
            old[2].clear()
            old[3].clear()

    @staticmethod
    def _atomic_extra(addr, mask, w, ls, ss):
        """{(line, sector): accesses beyond the first}: the most lanes on one address in it, - 1."""
        counts = {}
        for i in range(w * 32, w * 32 + 32):
            if mask[i]:
                counts[int(addr[i])] = counts.get(int(addr[i]), 0) + 1
        extra = {}
        for a, c in counts.items():
            key = (a >> ls, (a & ((1 << ls) - 1)) >> ss)
            extra[key] = max(extra.get(key, 0), c - 1)
        return extra

    def _l1_set(self, sm, line):
        """The set of SM `sm`'s L1 that holds `line` (a list, most recently used first)."""
        p = self.p
        return self.l1[sm][set_index(line, p[P_SETS1], 1.0 / p[P_SETS1])]

    def _l1_access(self, sm, line, sectors, nbytes, kind, row, c, filled):
        """A load or store of `sectors` of `line` at the L1 of SM `sm`: counts its hits (and
        hits in flight: `filled` holds this event's L1 fills) in `row`; returns the request
        that goes on to the L2 (line, sectors, bytes written, 0), or None."""
        sb = self.p[P_SECTOR_BYTES]
        s = self._l1_set(sm, line)
        e = next((x for x in s if x[0] == line), None)
        if e is None:                                # loads and stores allocate
            if len(s) == self.p[P_WAYS1]:
                s.pop()
            e = [line, set(), set()]                 # line, valid, written
        else:
            s.remove(e)
        s.insert(0, e)
        if kind in (LD, LOCAL_LD):
            row[c[3]] += len(sectors & e[1])
            row[C.L1_PEND] += len({(sm, line, k) for k in sectors & e[1]} & filled)
            miss = sectors - e[1]
            filled |= {(sm, line, k) for k in miss}
            e[1] |= miss
            return (line, miss, set(), 0) if miss else None
        full = set(sectors) if kind == LOCAL_ST else {k for k in sectors if all(k * sb + b in nbytes for b in range(sb))}
        row[c[3]] += len(sectors & (e[1] | e[2]))
        e[1] |= full
        e[2] |= sectors
        return line, sectors, nbytes, 0

    def _l1_invalidate(self, sm, line, sectors):
        """An atomic: the L1 of SM `sm` drops the sectors (atomics run in the L2)."""
        e = next((x for x in self._l1_set(sm, line) if x[0] == line), None)
        if e is not None:
            e[1] -= sectors
            e[2] -= sectors

    def _l1_pass(self, addr, mask, size, kind, sm_order, warp_sm, row, c):
        """Coalescing and the L1s, warps in `sm_order`: {warp: its requests to the L2}."""
        ls, ss = self.p[P_LINE_SHIFT], self.p[P_SECTOR_SHIFT]
        queue = {}
        filled = set()                                       # (sm, line, sector) L1 fills of this event
        for w in sm_order:
            lines, active = self._warp_lines(addr, mask, w, size)
            if not active:
                continue
            row[c[0]] += 1
            row[c[2]] += active * size
            extra = self._atomic_extra(addr, mask, w, ls, ss) if kind == ATOM else {}
            q = queue.setdefault(w, [])
            for line, (sectors, nbytes) in lines.items():
                ex = sum(v for (L, _), v in extra.items() if L == line)
                row[c[1]] += len(sectors) + ex
                if kind == ATOM:
                    self._l1_invalidate(warp_sm[w], line, sectors)
                    q.append((line, sectors, set(), ex))
                    continue
                request = self._l1_access(warp_sm[w], line, sectors, nbytes, kind, row, c, filled)
                if request is not None:
                    q.append(request)
        return queue

    def _l2_pass(self, queue, order, op, slot, row, c):
        """The queued requests through the L2, warps in `order`."""
        fetched = set()
        for w in order:
            for line, sectors, nbytes, ex in queue.get(w, ()):
                hits, dram, pend, busy = self._l2(line, sectors, nbytes, op, slot, fetched)
                row[C.L2_PEND] += pend
                row[C.DRAM_RD_BUSY] += busy
                row[c[4]] += 1
                row[c[5]] += len(sectors) + ex
                row[c[6]] += hits + ex
                row[C.DRAM_RD] += dram

    def global_event(self, addr, mask, size, kind, order, sm_order, warp_sm, slot):
        """What engine.global_event adds to row `slot`: pass 1 (coalescing and L1) SM by SM,
        pass 2 (L2) in the schedule's order."""
        row, c = self._row(slot), _COUNTER_COLUMNS[kind]
        queue = self._l1_pass(addr, mask, size, kind, sm_order, warp_sm, row, c)
        op = 0 if kind in (LD, LOCAL_LD) else (1 if kind in (ST, LOCAL_ST) else 2)
        self._l2_pass(queue, order, op, slot, row, c)

    def dirty_bytes(self):
        return sum(len(e[2]) * self.p[P_SECTOR_BYTES] for s in self.l2 for e in s)


def shared_wavefronts(addrs, size, banks=32, bank_bytes=4):
    """Wavefronts of one warp's shared access (addrs: the active lanes' byte offsets in lane
    order, None for an inactive lane): per group of lanes moving at most banks*bank_bytes
    bytes, the largest number of distinct words one bank holds."""
    group = 32 if size <= bank_bytes else max(1, banks * bank_bytes // size)
    total = ideal = 0
    for g0 in range(0, 32, group):
        words = {w for a in addrs[g0:g0 + group] if a is not None
                 for w in range(a // bank_bytes, (a + size - 1) // bank_bytes + 1)}
        if any(a is not None for a in addrs[g0:g0 + group]):
            per_bank = {}
            for w in words:
                per_bank[w % banks] = per_bank.get(w % banks, 0) + 1
            total += max(per_bank.values())
            ideal += 1
    return total, ideal
