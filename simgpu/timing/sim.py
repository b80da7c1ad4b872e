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

from .memfacts import NO_FACTS
from .params import LSU_QUEUE_CYCLES, WIDE_SECTORS
from .program import ALIAS, ALU, ATOM, BAR, BRANCH, CLD, LD, ON_CHIP, ST

# Advance simpy's clock in place (no event) when a warp's next step comes before every other
# scheduled event: what popping its timeout would do.  False: one event per step (the
# differential test, tests/test_timing_inline_clock.py, runs both).
INLINE_CLOCK = hasattr(simpy.Environment(), "_queue") and hasattr(simpy.Environment(), "_now")

STALLS = ("memory", "dependency", "barrier", "pipe", "not_selected")
STALL_MEMORY, STALL_DEPENDENCY, STALL_BARRIER, STALL_PIPE, STALL_NOT_SELECTED = range(len(STALLS))
REPORTED_PIPES = ("fp32", "fp64", "int", "imad", "sfu", "conv", "shfl", "adu")

# where a global request is served (and, for a hit on data in flight, whose latency it pays)
LEVEL_L1, LEVEL_L2, LEVEL_DRAM = range(3)
FULL = 1.0 - 1e-9               # an error-diffusion accumulator at this has drawn one outcome


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
        self.stall = [0.0] * len(STALLS)        # cycles by reason, indexed by STALL_*
        self.stall_by_line = {}
        self.issue_by_line = {}
        self.pipe_busy = {}
        self.warps = 0
        self.warp_cycles = 0.0
        self._busy = {}                         # OpSpec -> ((pipe, busy cycles per issue), ...)

    def on_issue(self, sp, n):
        self.issued += n
        pb = self.pipe_busy
        for q, b in self.busy(sp):
            pb[q] = pb.get(q, 0.0) + b
        if sp.line is not None:
            self.issue_by_line[sp.line] = self.issue_by_line.get(sp.line, 0.0) + n

    def busy(self, sp):
        """((pipe, busy cycles per issue of `sp`), ...), once per OpSpec."""
        busy = self._busy.get(sp)
        if busy is None:
            iv = self.interval          # flexible integer work ("iadd"): the SM counts its split
            busy = self._busy[sp] = tuple((p, k * iv.get(p, 1.0)) for p, k in sp.pipes if p != "iadd")
        return busy

    def on_stall(self, reason, cycles, sp):
        self.stall[reason] += cycles
        if sp.line is not None:
            d = self.stall_by_line.get(sp.line)
            if d is None:
                d = self.stall_by_line[sp.line] = [0.0] * len(STALLS)
            d[reason] += cycles


class CacheDraw:
    """Where one instruction's requests are served, drawn without randomness (error
    diffusion): each probability of the instruction's MemStat accumulates per request, and
    the request takes that outcome when its accumulator reaches one."""
    __slots__ = ("to_l2", "l2_miss", "l2_pending", "l1_pending", "l1_pending_miss")

    def __init__(self):
        self.to_l2 = 0.0                # requests that reach the L2 (not L1 hits)
        self.l2_miss = 0.0              # of those, misses that go to DRAM
        self.l2_pending = 0.0           # of the L2 hits, hits on data still coming from DRAM
        self.l1_pending = 0.0           # of the L1 hits, hits on data still in flight
        self.l1_pending_miss = 0.0      # of those, data that was an L2 miss

    def draw(self, st, to_l2):
        """(level serving the request, None or the level whose latency a hit on data in
        flight pays); `to_l2`: the request's share reaching the L2."""
        level, in_flight = LEVEL_L1, None
        self.to_l2 += to_l2
        if self.to_l2 >= FULL:
            self.to_l2 -= 1.0
            level = LEVEL_L2
            self.l2_miss += 1.0 - st.l2_hit
            if self.l2_miss >= FULL:
                self.l2_miss -= 1.0
                level = LEVEL_DRAM
            elif st.l2_pend > 0.0:
                self.l2_pending += st.l2_pend
                if self.l2_pending >= FULL:
                    self.l2_pending -= 1.0
                    in_flight = LEVEL_DRAM
        elif st.l1_pend > 0.0:
            self.l1_pending += st.l1_pend
            if self.l1_pending >= FULL:
                self.l1_pending -= 1.0
                in_flight = LEVEL_L2
                self.l1_pending_miss += (1.0 - st.l2_hit) + st.l2_hit * st.l2_pend
                if self.l1_pending_miss >= FULL:
                    self.l1_pending_miss -= 1.0
                    in_flight = LEVEL_DRAM
        return level, in_flight


class Registers:
    """A warp's register slots: the cycle each one's value is ready, and whether it comes
    from memory (a wait on it is a memory stall, else a dependency stall)."""
    __slots__ = ("ready", "from_memory")

    def __init__(self):
        self.ready, self.from_memory = {}, {}

    def write(self, dst, t, from_memory):
        if dst >= 0:
            self.ready[dst], self.from_memory[dst] = t, from_memory


def pipes_free_at(pipes, interval, sp):
    """The cycle the pipes of `sp` that are slower than issue take a new instruction (an
    integer add: whichever integer pipe frees first)."""
    tp = 0.0
    for p, n in sp.pipes:
        if p == "iadd":
            f = min(pipes["int"], pipes["imad"])
            if f > tp:
                tp = f
        elif pipes[p] > tp and interval[p] > 1.0:
            tp = pipes[p]
    return tp


def slow_pipes(interval, sp):
    """(the pipes of `sp` slower than issue, whether it has flexible integer work): what
    pipes_free_at reads, once per OpSpec."""
    return (tuple(p for p, n in sp.pipes if p != "iadd" and interval[p] > 1.0),
            any(p == "iadd" for p, n in sp.pipes))


def reserve_pipes(pipes, interval, sp, start):
    """Occupy the pipes of `sp` from `start`; integer adds are split between the two integer
    pipes so that both finish together.  Returns (cycles the split put on the ALU, on the IMAD
    pipe), or None without integer adds."""
    flex = 0.0
    for p, n in sp.pipes:
        if p == "iadd":
            flex = n
        else:
            pipes[p] = start + n * interval[p]
    if flex:
        return split_iadd(pipes, interval, flex, start)
    return None


def split_iadd(pipes, interval, flex, start):
    """reserve_pipes' split of `flex` integer adds between the two integer pipes from `start`:
    (cycles on the ALU, on the IMAD pipe)."""
    ia, ib = interval["int"], interval["imad"]
    fa = pipes["int"] if pipes["int"] > start else start
    fb = pipes["imad"] if pipes["imad"] > start else start
    x = min(max((fb - fa + flex * ib) / (ia + ib), 0.0), flex)
    pipes["int"] = fa + x * ia
    pipes["imad"] = fb + (flex - x) * ib
    return x * ia, (flex - x) * ib


class SM:
    """One simulated SM: its blocks, warps, SMSPs and its share of the memory system."""

    def __init__(self, env, params, blocks_per_sm, warps_per_block, listener=None, timeline=None):
        P = self.P = params
        self.env = env
        self.blocks_per_sm, self.warps_per_block = blocks_per_sm, warps_per_block
        self.schedulers = P.schedulers
        self.port_free = [0.0] * self.schedulers            # end of the reserved issue cycles
        self.port_holes = [[] for _ in range(self.schedulers)]   # free cycles left before it: [(a, b)]
        self.pipe_free = [dict.fromkeys(P.interval, 0.0) for _ in range(self.schedulers)]
        self.l1_free = 0.0
        self.l1_busy = 0.0
        self.l2 = Server(P.l2_bytes_per_cycle / P.sm_count)
        self.dram = Server(P.dram_bytes_per_cycle / P.sm_count)
        self.atom_address = {}          # hot address (or instruction id) -> its atomics server
        self.atom_unit = {}             # address // unit_bytes -> that L2 atomic unit (this SM's share)
        self.atom_busy = 0.0
        self.cache_draws = {}           # instruction id -> CacheDraw
        self.in_flight = {}             # (instruction instance, wave) -> cycle its data in flight arrives
        self.drain = 0.0                # the last cycle the memory system is busy with this SM's requests
        self.dram_draws = 0             # DRAM-served loads so far (their latency's place in its spread)
        self.counters = listener or Counters(P.interval)
        self.timeline = timeline
        self.active_sms = None
        self.launch_free = 0.0
        self.launch_busy = 0.0
        self.resident = 0
        self._occ_t = 0.0
        self._plans = {}                # OpSpec -> _issue_plan(): what its issue reads
        self.iadd_busy = [0.0, 0.0]     # integer adds' busy cycles on the ALU, on the IMAD pipe

    # -- bandwidth share ------------------------------------------------------------------
    def set_phase(self, active_sms):
        if active_sms == self.active_sms:
            return
        self.active_sms = active_sms
        P = self.P
        self.l2.set_rate(P.l2_bytes_per_cycle / active_sms, round(P.l2_slices / active_sms))
        self.dram.set_rate(P.dram_bytes_per_cycle / active_sms, round(P.dram_channels / active_sms))

    def _occupancy(self, delta):
        now = self.env.now
        self.counters.warp_cycles += self.resident * (now - self._occ_t)
        self._occ_t = now
        self.resident += delta

    # -- blocks -----------------------------------------------------------------------------
    def run(self, blocks):
        """blocks: list of (programs, active_sms[, wave]).  Returns the cycle the SM is done.
        Blocks of different waves running the same programs do not share data in flight."""
        env = self.env
        self.slots = simpy.Store(env, capacity=self.blocks_per_sm)
        for s in range(self.blocks_per_sm):
            self.slots.put(s)
        procs = [env.process(self.block(i, *b)) for i, b in enumerate(blocks)]   # b: (programs, active_sms[, wave])
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
        wpb = self.warps_per_block
        ws = [env.process(self.warp(prog, (slot * wpb + j) % self.schedulers, bar, (slot, j), wave))
              for j, prog in enumerate(live)]
        self._occupancy(len(ws))
        self.counters.warps += len(ws)
        yield simpy.AllOf(env, ws)
        if self.timeline is not None:
            self.timeline.block(slot, index, t0, env.now)
        self.slots.put(slot)

    # -- warps ------------------------------------------------------------------------------
    def warp(self, prog, smsp, bar, wid, wave=0):
        """A warp's process on sub-partition `smsp`: per instruction, wait for its operands,
        issue it, and wait for its pipe, barrier or memory request as its kind says."""
        env = self.env
        regs = Registers()
        ready, ready_from_memory = regs.ready, regs.from_memory
        solo = INLINE_CLOCK         # resumed by an event of its own (see the inline clock below)
        for sp, facts in prog:
            now = env.now
            # its operands: the cycle all of them are ready (`now` at the earliest), and
            # whether the last of them to be ready comes from memory
            t, from_memory = now, False
            for s in sp.deps:
                r = ready.get(s, 0.0)
                if r > t:
                    t, from_memory = r, ready_from_memory[s]
            k = sp.kind
            if k == ALIAS:                       # no instruction: the value is renamed
                regs.write(sp.dst, t, from_memory)
                continue
            if t > now:
                at = env.now + (t - now)           # where simpy's timeout would land
                if solo and (not env._queue or env._queue[0][0] > at):
                    self._count_wait(sp, wid, now, t, from_memory)     # the clock moves inline
                    env._now = at
                else:
                    yield from self._wait_operands(sp, wid, now, t, from_memory)
                    solo = INLINE_CLOCK
                now = t
            start = self._issue(sp, smsp, wid, now)
            end = start + sp.n
            if k == ALU or k == BRANCH:
                if sp.hold:                 # a routine's own in-order waits (program.OpSpec.hold)
                    end += sp.hold
                    self.counters.on_stall(STALL_DEPENDENCY, sp.hold, sp)
                if sp.smem:                 # wgmma's shared operands take the SM's data path
                    regs.write(sp.dst, self._tensor_operands(sp, start), False)
                else:
                    regs.write(sp.dst, start + sp.latency, False)
            elif k == BAR:
                yield from self._barrier(sp, bar, wid, end - now)
                solo = False                # the barrier's release resumes every waiting warp
                continue
            else:
                end = self._memory_instruction(sp, facts, start, end, wave, regs)
            at = env.now + (end - now)             # (bit for bit what Timeout schedules)
            if solo and (not env._queue or env._queue[0][0] > at):
                # Inline clock (issue 26): no other event comes before `end`, and the event that
                # resumed this warp (its own timeout, or its start) resumes nothing else, so
                # the timeout's event would be the next one processed: the clock moves to
                # `end` and the warp goes on, as simpy would, without the event.
                env._now = at
                continue
            yield env.timeout(end - now)
            solo = INLINE_CLOCK
        bar.leave()
        self._occupancy(-1)

    def _count_wait(self, sp, wid, now, t, from_memory):
        self.counters.on_stall(STALL_MEMORY if from_memory else STALL_DEPENDENCY, t - now, sp)
        if self.timeline is not None:
            self.timeline.warp(wid, "memory" if from_memory else "dependency", now, t)

    def _wait_operands(self, sp, wid, now, t, from_memory):
        self._count_wait(sp, wid, now, t, from_memory)
        yield self.env.timeout(t - now)

    def _issue(self, sp, smsp, wid, now):
        """Reserve the issue port and pipes for `sp`; returns its issue cycle."""
        plan = self._plans.get(sp)
        if plan is None:
            plan = self._plans[sp] = self._issue_plan(sp)
        slow, has_iadd, fixed, flex, busy = plan
        pipes = self.pipe_free[smsp]
        tp = 0.0                             # pipes_free_at, from the pipes it reads
        if has_iadd:
            tp = min(pipes["int"], pipes["imad"])
        for p in slow:
            if pipes[p] > tp:
                tp = pipes[p]
        n = sp.n
        earliest = tp if tp > now else now
        if self.port_holes[smsp]:
            start = self.issue_slot(smsp, earliest, n)
        else:                                # issue_slot without holes to fill
            pf = self.port_free[smsp]
            start = pf if pf > earliest else earliest
            if start > pf:
                self.port_holes[smsp].append((pf, start))
            self.port_free[smsp] = start + n
        if start > now:
            self._count_issue_wait(sp, wid, now, tp, start)
        for p, d in fixed:                   # reserve_pipes, its products taken once
            pipes[p] = start + d
        if flex:                             # the integer adds' cycles on each pipe, as reserved
            x, y = split_iadd(pipes, self.P.interval, flex, start)
            self.iadd_busy[0] += x
            self.iadd_busy[1] += y
        c = self.counters
        if busy is None:
            c.on_issue(sp, n)
        else:                                # Counters.on_issue
            c.issued += n
            pb = c.pipe_busy
            for q, b in busy:
                pb[q] = pb.get(q, 0.0) + b
            if sp.line is not None:
                c.issue_by_line[sp.line] = c.issue_by_line.get(sp.line, 0.0) + n
        if self.timeline is not None:
            self.timeline.warp(wid, "issue", start, start + n)
        return start

    def _issue_plan(self, sp):
        """What _issue reads of `sp`, once per OpSpec: (slow_pipes(), (pipe, its busy cycles
        from the issue cycle) of the pipes reserve_pipes sets, its integer adds, and the
        counters' busy cycles per issue if the listener is a Counters)."""
        interval = self.P.interval
        slow, has_iadd = slow_pipes(interval, sp)
        fixed, flex = [], 0.0
        for p, n in sp.pipes:
            if p == "iadd":
                flex = n
            else:
                fixed.append((p, n * interval[p]))
        c = self.counters
        busy = c.busy(sp) if type(c) is Counters else None
        return slow, has_iadd, tuple(fixed), flex, busy

    def _count_issue_wait(self, sp, wid, now, pipe_free, start):
        """Cycles from `now` to `start`: waiting for the pipe, then for the issue port."""
        c = self.counters
        wp = min(pipe_free, start) - now if pipe_free > now else 0.0
        if wp > 0:
            c.on_stall(STALL_PIPE, wp, sp)
        if start - now - wp > 0:
            c.on_stall(STALL_NOT_SELECTED, start - now - wp, sp)
        if self.timeline is not None:
            self.timeline.warp(wid, "pipe" if wp > 0 else "not_selected", now, start)

    def _barrier(self, sp, bar, wid, issue_cycles):
        env = self.env
        yield env.timeout(issue_cycles)
        t0 = env.now
        yield bar.arrive()
        if env.now > t0:
            self.counters.on_stall(STALL_BARRIER, env.now - t0, sp)
            if self.timeline is not None:
                self.timeline.warp(wid, "barrier", t0, env.now)

    def _memory_instruction(self, sp, facts, start, end, wave, regs):
        """Send the request; returns the cycle the warp may go on (its request in the LSU queue)."""
        t_l1, done = self.memory(sp, facts, start + 1, wave)
        if done > self.drain:
            self.drain = done
        if sp.mem_result:
            regs.write(sp.dst, done, True)
        if t_l1 - LSU_QUEUE_CYCLES > end:
            self.counters.on_stall(STALL_PIPE, t_l1 - LSU_QUEUE_CYCLES - end, sp)
            end = t_l1 - LSU_QUEUE_CYCLES
        return end

    def issue_slot(self, smsp, earliest, n):
        """Reserve n consecutive issue cycles on SMSP `smsp` at or after `earliest`: the first
        gap left by an earlier reservation that fits, else after the last reservation.  (A
        warp that waited for its pipe leaves the cycles before it to other warps, as the
        scheduler picks any eligible warp each cycle.)"""
        holes = self.port_holes[smsp]
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
        pf = self.port_free[smsp]
        start = pf if pf > earliest else earliest
        if start > pf:
            holes.append((pf, start))
            if len(holes) > 32:
                holes.pop(0)
        self.port_free[smsp] = start + n
        return start

    # -- memory -----------------------------------------------------------------------------
    def memory(self, sp, facts, t, wave=0):
        """(cycle the request enters the L1 data path, cycle its data is back).  Below, t_l1 is
        that first cycle, t_l2 and t_dram the cycles its L2 and DRAM bytes are through."""
        k = sp.kind
        if k in ON_CHIP:
            return self._on_chip(k, facts, t)
        f = facts if facts else NO_FACTS
        wf = max(1, f.l1_wavefronts or f.lines)       # memfacts.l1_cycles
        t_l1 = self._l1_path(t, wf)
        t_l2, t_dram = self._l2_and_dram(sp, f, t_l1 + wf)
        if k == ST:
            self.drain = max(self.drain, t_l2, t_dram)
            return t_l1, t_l2
        draw = self.cache_draws.get(sp.iid)
        if draw is None:
            draw = self.cache_draws[sp.iid] = CacheDraw()
        level, in_flight = draw.draw(sp.stat, sp.stat.l2_fraction if k == LD else 1.0)
        if k == ATOM:
            return t_l1, self._atomic(sp, f, t_l2, t_dram, level)
        if in_flight is not None:
            return t_l1, self._in_flight_arrival(f, wave, level, in_flight, t_l1, wf, t_l2)
        return t_l1, self._arrival(level, t_l1, wf, t_l2, t_dram)

    def _tensor_operands(self, sp, start):
        """A wgmma reading shared memory: its operands pass the SM's L1 / shared data path
        (128 B a cycle, shared with LSU traffic: cp.async and TMA writes, ld/st.shared); its
        result is ready after its pipe's work and after its operands plus the tensor latency."""
        t_l1 = self._l1_path(start, sp.smem)
        return max(start + sp.latency, t_l1 + sp.smem + self.P.latency["tensor"])

    def _l1_path(self, t, wavefronts):
        """The cycle a request of `wavefronts` enters the SM's L1 / shared data path."""
        t_l1 = self.l1_free if self.l1_free > t else t
        self.l1_free = t_l1 + wavefronts
        self.l1_busy += wavefronts
        return t_l1

    def _on_chip(self, k, facts, t):
        """Shared memory and the constant cache: the data path, then their latency."""
        wf = max(1, facts.wavefronts) if facts else 1
        t_l1 = self._l1_path(t, wf)
        lat = self.P.l1_hit_cycles if k == CLD else self.P.shared_cycles
        return t_l1, t_l1 + wf + lat

    def _l2_and_dram(self, sp, f, t):
        """The cycles this request's expected L2 and DRAM bytes are through (stores: L2 time
        per sector, and at least a minimum per request (line)); DRAM counts whole accesses,
        writes at their cost."""
        P, st = self.P, sp.stat
        l2_bytes = f.sectors * 32.0 * st.l2_fraction
        if sp.kind == ST:
            t_l2 = self.l2.serve(t, 32.0 * st.l2_fraction *
                                 max(f.sectors * P.l2_store_sector_cost, f.lines * P.l2_store_request_sectors))
        else:       # 16-byte-a-lane requests (cp.async, TMA, ld.v4) at the L2's wide read rate
            t_l2 = self.l2.serve(t, l2_bytes * P.l2_wide_cost if f.sectors >= WIDE_SECTORS else l2_bytes)
        t_dram = self.dram.serve(t, l2_bytes / 32.0 * st.dram_busy_per_l2)
        return t_l2, t_dram

    def _atomic(self, sp, f, t_l2, t_dram, level):
        """Atomics queue at their hot address and at the L2 atomic units they use."""
        P = self.P
        hot = f.hot if f.hot >= 0 else sp.iid
        s = self.atom_address.get(hot)
        if s is None:
            s = self.atom_address[hot] = Server(1.0)
        ta = s.serve(t_l2, f.serial * P.atomic_cycles)
        self.atom_busy += f.serial * P.atomic_cycles
        for unit, passes in f.unit_passes:
            u = self.atom_unit.get(unit)
            if u is None:
                u = self.atom_unit[unit] = Server(1.0)
            ta = max(ta, u.serve(t_l2, passes * P.atomic_pass_cycles))
        done = max(ta, t_dram if level == LEVEL_DRAM else t_l2) + P.l2_hit_cycles
        self.drain = max(self.drain, done)
        return done

    def _in_flight_arrival(self, f, wave, level, in_flight, t_l1, wf, t_l2):
        """A hit on data in flight: the first warp of this SM to run this instruction
        instance waits as long as the miss did; the others until that data arrives (or
        their own hit latency, if they come later), so SMs' blocks in lockstep pay the miss
        latency every time and blocks out of phase do not."""
        P = self.P
        miss = max(t_l2, t_l1 + wf) + (self._dram_latency() if in_flight == LEVEL_DRAM else P.l2_hit_cycles)
        if f.instance is None:
            return miss
        instance = (f.instance, wave)
        first = self.in_flight.get(instance)
        if first is None:
            self.in_flight[instance] = miss
            return miss
        own = t_l1 + wf + P.l1_hit_cycles if level == LEVEL_L1 else max(t_l2, t_l1 + wf) + P.l2_hit_cycles
        return max(own, first)

    def _arrival(self, level, t_l1, wf, t_l2, t_dram):
        P = self.P
        if level == LEVEL_L1:
            return t_l1 + wf + P.l1_hit_cycles
        if level == LEVEL_L2:
            return max(t_l2, t_l1 + wf) + P.l2_hit_cycles
        return max(t_l2, t_dram) + self._dram_latency()

    def _dram_latency(self):
        """A DRAM-served load's latency: the mean, spread uniformly over +- dram_spread_cycles
        (the card's latencies differ from access to access, so a warp waiting for K loads
        waits for the slowest: validation/microbench/latency_mlp.py's K-chase at DRAM).  The
        n-th load of this SM takes the n-th value of a fixed hash sequence (no random numbers:
        the same launch gives the same cycles)."""
        P = self.P
        if not P.dram_spread_cycles:
            return P.dram_cycles
        n = self.dram_draws
        self.dram_draws = n + 1
        return P.dram_cycles + P.dram_spread_cycles * (2.0 * _unit_hash(n) - 1.0)


def _unit_hash(n):
    """splitmix64's finaliser of n, as a fraction in [0, 1): consecutive n far apart."""
    z = (n * 0x9E3779B97F4A7C15 + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return ((z ^ (z >> 31)) >> 11) / float(1 << 53)


TOTALS = ("cycles", "issued", "l1", "l2", "dram", "atomic", "launch", "warp_cycles") + \
    tuple("stall_" + s for s in STALLS) + tuple("pipe_" + p for p in REPORTED_PIPES)
TOTAL_INDEX = {name: i for i, name in enumerate(TOTALS)}
CYCLES = TOTAL_INDEX["cycles"]


def totals(cycles, sm):
    """The SM's extensive quantities as a vector in TOTALS' order (extrapolated linearly
    like the time)."""
    c = sm.counters
    named = {"cycles": cycles, "issued": c.issued, "l1": sm.l1_busy, "l2": sm.l2.busy, "dram": sm.dram.busy,
             "atomic": max((s.busy for s in list(sm.atom_address.values()) + list(sm.atom_unit.values())),
                           default=0.0),
             "launch": sm.launch_busy, "warp_cycles": c.warp_cycles}
    named.update(("stall_" + s, c.stall[i]) for i, s in enumerate(STALLS))
    named.update(("pipe_" + p, c.pipe_busy.get(p, 0.0)) for p in REPORTED_PIPES)
    # integer adds ("iadd": IADD3, VIADD, MOV, IMAD.IADD, IMAD.MOV) count on the pipe the
    # simulation put each on, not all on the ALU
    named["pipe_int"] += sm.iadd_busy[0]
    named["pipe_imad"] += sm.iadd_busy[1]
    return np.array([named[name] for name in TOTALS], dtype=np.float64)


def simulate_sm(params, blocks, blocks_per_sm, warps_per_block, timeline=None):
    """Run one SM over `blocks` [(programs, active_sms)]; returns (cycles, SM)."""
    env = simpy.Environment()
    sm = SM(env, params, blocks_per_sm, warps_per_block, timeline=timeline)
    cycles = sm.run(blocks) if blocks else 0.0
    return cycles, sm


__all__ = ["SM", "Server", "Barrier", "Counters", "CacheDraw", "Registers", "simulate_sm", "totals",
           "STALLS", "TOTALS", "TOTAL_INDEX", "CYCLES"]
