"""The machine as simpy processes and resources: one simulated SM and its share of memory.

    dispatcher   a block process per block, waiting for one of the SM's `blocks_per_sm`
                 slots (a simpy Store of slot ids: the occupancy limit), then starting one
                 process per warp
    warp         runs its program: waits for the registers it reads (results of earlier
                 instructions: ALU latency, or loads arriving), for its pipe, for its
                 sub-partition's issue port (one warp instruction per cycle), and at
                 barriers for the rest of its block
    SMSP         `schedulers` issue ports and per-pipe reservations (a warp instruction
                 occupies a pipe for warp_size / lanes-per-SMSP cycles)
    L1 / shared  one data path per SM: a request takes one cycle per wavefront
    L2, DRAM     FIFO servers (slices, channels) with this SM's share of the bandwidth:
                 each request holds one for bytes / rate; queues build when demand
                 exceeds the share, so bandwidth saturates as on the card
    atomics      one FIFO server per hot address: lane operations on one word serialise

Time is in SM cycles.  Pipes, ports and memory servers are reservation tables (the next
free cycle), which is what a FIFO simpy Resource computes, without an event per grant; the
warps are simpy processes and barriers simpy events.  Everything the SM does is reported to
a `listener` (counters and the timeline recorder listen; nothing is patched in).
"""
from __future__ import annotations

import numpy as np
import simpy

from .params import LSU_QUEUE_CYCLES
from .program import ALIAS, ALU, ATOM, BAR, BRANCH, CLD, LD, SATOM, SLD, SST, ST

STALLS = ("memory", "dependency", "barrier", "pipe", "not_selected")
MEM, DEP, BARR, PIPE, NSEL = range(5)


class Server:
    """k FIFO servers sharing `rate` bytes per cycle; serve() returns the finish cycle."""

    def __init__(self, rate, k=1):
        self.set_rate(rate, k)
        self.free = [0.0] * self.k
        self.bytes = 0.0
        self.busy = 0.0

    def set_rate(self, rate, k=1):
        k = max(1, int(k))
        if getattr(self, "k", k) != k:
            f = max(self.free)
            self.free = [f] * k
        self.k, self.rate = k, rate
        self.per = k / rate if rate > 0 else 0.0

    def serve(self, t, nbytes):
        if nbytes <= 0:
            return t
        fr = self.free
        i = 0 if self.k == 1 else min(range(self.k), key=fr.__getitem__)
        start = fr[i] if fr[i] > t else t
        d = nbytes * self.per
        fr[i] = start + d
        self.bytes += nbytes
        self.busy += d / self.k
        return start + d


class Barrier:
    """A block-wide barrier: releases its waiting warps when all live warps arrived."""

    def __init__(self, env, n):
        self.env, self.n, self.count = env, n, 0
        self.ev = env.event()

    def arrive(self):
        self.count += 1
        ev = self.ev
        if self.count >= self.n:
            self._release()
        return ev

    def leave(self):
        self.n -= 1
        if self.count and self.count >= self.n:
            self._release()

    def _release(self):
        ev, self.ev, self.count = self.ev, self.env.event(), 0
        ev.succeed()


class Counters:
    """Listens to the SM: issue, stalls (by reason and source line), pipe and memory use."""

    def __init__(self, interval=None):
        self.interval = interval or {}
        self.issued = 0.0
        self.stall = [0.0] * len(STALLS)
        self.stall_by_line = {}
        self.issue_by_line = {}
        self.pipe_busy = {}
        self.warps = 0
        self.warp_cycles = 0.0

    def on_issue(self, sp, n):
        self.issued += n
        pb, iv = self.pipe_busy, self.interval
        for p, k in sp.pipes:
            q = "int" if p == "iadd" else p       # flexible integer work: counted with the ALU
            pb[q] = pb.get(q, 0.0) + k * iv.get(p, 1.0)
        if sp.line is not None:
            self.issue_by_line[sp.line] = self.issue_by_line.get(sp.line, 0.0) + n

    def on_stall(self, reason, cycles, sp):
        self.stall[reason] += cycles
        if sp.line is not None:
            d = self.stall_by_line.setdefault(sp.line, [0.0] * len(STALLS))
            d[reason] += cycles


class SM:
    def __init__(self, env, params, blocks_per_sm, warps_per_block, listener=None, timeline=None):
        P = self.P = params
        self.env = env
        self.bps, self.wpb = blocks_per_sm, warps_per_block
        self.nsp = P.schedulers
        self.port = [0.0] * self.nsp            # end of the reserved issue cycles
        self.holes = [[] for _ in range(self.nsp)]   # free cycles left before it: [(a, b)]
        self.pipe = [dict.fromkeys(P.interval, 0.0) for _ in range(self.nsp)]
        self.l1 = 0.0
        self.l1_busy = 0.0
        self.l2 = Server(P.l2_bytes_per_cycle / P.sm_count)
        self.dram = Server(P.dram_bytes_per_cycle / P.sm_count)
        self.atom = {}
        self.atom_unit = {}             # address // unit_bytes -> that L2 atomic unit (this SM's share)
        self.atom_busy = 0.0
        self.diffuse = {}
        self.inflight = {}              # instruction instance -> cycle its data in flight arrives
        self.drain = 0.0
        self.c = listener or Counters(P.interval)
        self.timeline = timeline
        self.phase = None
        self.launch_free = 0.0
        self.launch_busy = 0.0
        self.resident = 0
        self._occ_t = 0.0

    # -- bandwidth share ------------------------------------------------------------------
    def set_phase(self, active_sms):
        if active_sms == self.phase:
            return
        self.phase = active_sms
        P = self.P
        self.l2.set_rate(P.l2_bytes_per_cycle / active_sms, round(P.l2_slices / active_sms))
        self.dram.set_rate(P.dram_bytes_per_cycle / active_sms, round(P.dram_channels / active_sms))

    def _occupancy(self, delta):
        now = self.env.now
        self.c.warp_cycles += self.resident * (now - self._occ_t)
        self._occ_t = now
        self.resident += delta

    # -- blocks -----------------------------------------------------------------------------
    def run(self, blocks):
        """blocks: list of (programs, active_sms[, wave]).  Returns the cycle the SM is done.
        Blocks of different waves running the same programs do not share data in flight."""
        env = self.env
        self.slots = simpy.Store(env, capacity=self.bps)
        for s in range(self.bps):
            self.slots.put(s)
        procs = [env.process(self.block(i, b[0], b[1], b[2] if len(b) > 2 else 0)) for i, b in enumerate(blocks)]
        env.run(simpy.AllOf(env, procs))
        self._occupancy(0)
        return max(env.now, self.drain)

    def block(self, index, progs, active_sms, wave=0):
        env = self.env
        slot = yield self.slots.get()
        blc = self.P.block_launch_cycles
        if blc:                                  # the SM starts blocks one at a time
            start = self.launch_free if self.launch_free > env.now else env.now
            self.launch_free = start + blc
            self.launch_busy += blc
            yield env.timeout(start + blc - env.now)
        self.set_phase(active_sms)
        t0 = env.now
        live = [p for p in progs if p]
        bar = Barrier(env, len(live))
        ws = [env.process(self.warp(prog, (slot * self.wpb + j) % self.nsp, bar, (slot, j), wave))
              for j, prog in enumerate(live)]
        self._occupancy(len(ws))
        self.c.warps += len(ws)
        yield simpy.AllOf(env, ws)
        if self.timeline is not None:
            self.timeline.block(slot, index, t0, env.now)
        self.slots.put(slot)

    # -- warps ------------------------------------------------------------------------------
    def warp(self, prog, sp_i, bar, wid, wave=0):
        env, P, c = self.env, self.P, self.c
        ready, from_mem = {}, {}
        pipes, interval = self.pipe[sp_i], P.interval
        tl = self.timeline
        for sp, facts in prog:
            now = env.now
            t, mem = now, False
            for s in sp.deps:
                r = ready.get(s, 0.0)
                if r > t:
                    t, mem = r, from_mem[s]
            k = sp.kind
            if k == ALIAS:
                if sp.dst >= 0:
                    ready[sp.dst], from_mem[sp.dst] = t, mem
                continue
            if t > now:
                c.on_stall(MEM if mem else DEP, t - now, sp)
                if tl is not None:
                    tl.warp(wid, "memory" if mem else "dependency", now, t)
                yield env.timeout(t - now)
                now = t
            tp = 0.0
            flex = 0.0
            for p, n in sp.pipes:
                if p == "iadd":                             # an add: either integer pipe
                    flex = n
                    f = min(pipes["int"], pipes["imad"])
                    if f > tp:
                        tp = f
                elif pipes[p] > tp and interval[p] > 1.0:   # a pipe slower than issue
                    tp = pipes[p]
            start = self.issue_slot(sp_i, tp if tp > now else now, sp.n)
            if start > now:
                wp = min(tp, start) - now if tp > now else 0.0
                if wp > 0:
                    c.on_stall(PIPE, wp, sp)
                if start - now - wp > 0:
                    c.on_stall(NSEL, start - now - wp, sp)
                if tl is not None:
                    tl.warp(wid, "pipe" if wp > 0 else "not_selected", now, start)
            for p, n in sp.pipes:
                if p != "iadd":
                    pipes[p] = start + n * interval[p]
            if flex:                                        # split to finish both pipes together
                ia, ib = interval["int"], interval["imad"]
                fa = pipes["int"] if pipes["int"] > start else start
                fb = pipes["imad"] if pipes["imad"] > start else start
                x = min(max((fb - fa + flex * ib) / (ia + ib), 0.0), flex)
                pipes["int"] = fa + x * ia
                pipes["imad"] = fb + (flex - x) * ib
            c.on_issue(sp, sp.n)
            end = start + sp.n
            if tl is not None:
                tl.warp(wid, "issue", start, end)
            if k == ALU or k == BRANCH:
                if sp.dst >= 0:
                    ready[sp.dst], from_mem[sp.dst] = start + sp.latency, False
            elif k == BAR:
                yield env.timeout(end - now)
                t0 = env.now
                ev = bar.arrive()
                yield ev
                if env.now > t0:
                    c.on_stall(BARR, env.now - t0, sp)
                    if tl is not None:
                        tl.warp(wid, "barrier", t0, env.now)
                continue
            else:
                t1, done = self.memory(sp, facts, start + 1, wave)
                if done > self.drain:
                    self.drain = done
                if sp.dst >= 0 and sp.mem_result:
                    ready[sp.dst], from_mem[sp.dst] = done, True
                if t1 - LSU_QUEUE_CYCLES > end:
                    c.on_stall(PIPE, t1 - LSU_QUEUE_CYCLES - end, sp)
                    end = t1 - LSU_QUEUE_CYCLES
            yield env.timeout(end - now)
        bar.leave()
        self._occupancy(-1)

    def issue_slot(self, sp_i, earliest, n):
        """Reserve n consecutive issue cycles on SMSP sp_i at or after `earliest`: the first
        gap left by an earlier reservation that fits, else after the last reservation.  (A
        warp that waited for its pipe leaves the cycles before it to other warps, as the
        scheduler picks any eligible warp each cycle.)"""
        holes = self.holes[sp_i]
        now = self.env.now
        while holes and holes[0][1] <= now:
            holes.pop(0)
        for i, (a, b) in enumerate(holes):
            s0 = a if a > earliest else earliest
            if s0 + n <= b:
                rest = []
                if s0 > a:
                    rest.append((a, s0))
                if b > s0 + n:
                    rest.append((s0 + n, b))
                holes[i:i + 1] = rest
                return s0
        pf = self.port[sp_i]
        start = pf if pf > earliest else earliest
        if start > pf:
            holes.append((pf, start))
            if len(holes) > 32:
                holes.pop(0)
        self.port[sp_i] = start + n
        return start

    # -- memory -----------------------------------------------------------------------------
    def memory(self, sp, facts, t, wave=0):
        """(cycle the request enters the L1 data path, cycle its data is back)."""
        P, k = self.P, sp.kind
        if k in (SLD, SST, SATOM, CLD):
            wf = max(1, facts[0]) if facts else 1
            t1 = self.l1 if self.l1 > t else t
            self.l1 = t1 + wf
            self.l1_busy += wf
            lat = P.l1_hit_cycles if k == CLD else P.shared_cycles
            return t1, t1 + wf + lat
        sectors, lines, serial = facts[:3] if facts else (4, 1, 0.0)
        instance = (facts[4], wave) if facts and len(facts) > 4 else None
        wf = max(1, lines)
        t1 = self.l1 if self.l1 > t else t
        self.l1 = t1 + wf
        self.l1_busy += wf
        st = sp.stat
        l2b = sectors * 32.0 * st.l2_fraction
        if k == ST:     # L2 time of stores: per sector, and at least a minimum per request (line)
            t2 = self.l2.serve(t1 + wf, 32.0 * st.l2_fraction *
                               max(sectors * P.l2_store_sector_cost, lines * P.l2_store_request_sectors))
        else:
            t2 = self.l2.serve(t1 + wf, l2b)
        t3 = self.dram.serve(t1 + wf, l2b / 32.0 * st.dram_busy_per_l2)   # whole accesses, writes at their cost
        if k == ST:
            self.drain = max(self.drain, t2, t3)
            return t1, t2
        acc = self.diffuse.get(sp.iid)
        if acc is None:
            acc = self.diffuse[sp.iid] = [0.0, 0.0, 0.0, 0.0, 0.0]
        level = 0
        wait = 0                        # a hit on data in flight: as slow as the miss (1: L2, 2: DRAM)
        acc[0] += st.l2_fraction if k == LD else 1.0
        if acc[0] >= 1.0 - 1e-9:
            acc[0] -= 1.0
            level = 1
            acc[1] += 1.0 - st.l2_hit
            if acc[1] >= 1.0 - 1e-9:
                acc[1] -= 1.0
                level = 2
            elif st.l2_pend > 0.0:
                acc[2] += st.l2_pend
                if acc[2] >= 1.0 - 1e-9:
                    acc[2] -= 1.0
                    wait = 2
        elif st.l1_pend > 0.0:
            acc[3] += st.l1_pend
            if acc[3] >= 1.0 - 1e-9:
                acc[3] -= 1.0
                wait = 1
                acc[4] += (1.0 - st.l2_hit) + st.l2_hit * st.l2_pend
                if acc[4] >= 1.0 - 1e-9:
                    acc[4] -= 1.0
                    wait = 2
        if k == ATOM:
            hot = facts[3] if facts and len(facts) > 3 and facts[3] >= 0 else sp.iid
            s = self.atom.get(hot)
            if s is None:
                s = self.atom[hot] = Server(1.0)
            ta = s.serve(t2, serial * P.atomic_cycles)
            self.atom_busy += serial * P.atomic_cycles
            for unit, passes in (facts[5] if len(facts) > 5 else ()):     # the L2 slices' atomic units
                u = self.atom_unit.get(unit)
                if u is None:
                    u = self.atom_unit[unit] = Server(1.0)
                ta = max(ta, u.serve(t2, passes * P.atomic_pass_cycles))
            done = max(ta, t3 if level == 2 else t2) + P.l2_hit_cycles
            self.drain = max(self.drain, done)
            return t1, done
        if wait:
            # a hit on data in flight: the first warp of this SM to run this instruction
            # instance waits as long as the miss did; the others until that data arrives
            # (or their own hit latency, if they come later), so SMs' blocks in lockstep pay
            # the miss latency every time and blocks out of phase do not
            miss = max(t2, t1 + wf) + (P.dram_cycles if wait == 2 else P.l2_hit_cycles)
            if instance is None:
                return t1, miss
            first = self.inflight.get(instance)
            if first is None:
                self.inflight[instance] = miss
                return t1, miss
            own = t1 + wf + P.l1_hit_cycles if level == 0 else max(t2, t1 + wf) + P.l2_hit_cycles
            return t1, max(own, first)
        if level == 0:
            return t1, t1 + wf + P.l1_hit_cycles
        if level == 1:
            return t1, max(t2, t1 + wf) + P.l2_hit_cycles
        return t1, max(t2, t3) + P.dram_cycles


TOTALS = ("cycles", "issued", "l1", "l2", "dram", "atomic", "launch", "warp_cycles") + \
    tuple("stall_" + s for s in STALLS) + ("pipe_fp32", "pipe_fp64", "pipe_int", "pipe_sfu", "pipe_conv", "pipe_shfl")


def totals(cycles, sm):
    """The SM's extensive quantities as a vector (extrapolated linearly like the time)."""
    c = sm.c
    v = [cycles, c.issued, sm.l1_busy, sm.l2.busy, sm.dram.busy,
         max((s.busy for s in list(sm.atom.values()) + list(sm.atom_unit.values())), default=0.0),
         sm.launch_busy, c.warp_cycles]
    v += list(c.stall)
    v += [c.pipe_busy.get(p, 0.0) for p in ("fp32", "fp64", "int", "sfu", "conv", "shfl")]
    return np.array(v, dtype=np.float64)


def simulate_sm(params, blocks, blocks_per_sm, warps_per_block, timeline=None):
    """Run one SM over `blocks` [(programs, active_sms)]; returns (cycles, SM)."""
    env = simpy.Environment()
    sm = SM(env, params, blocks_per_sm, warps_per_block, timeline=timeline)
    cycles = sm.run(blocks) if blocks else 0.0
    return cycles, sm


__all__ = ["SM", "Server", "Barrier", "Counters", "simulate_sm", "totals", "STALLS", "TOTALS"]
