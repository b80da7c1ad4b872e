"""The PTX executor's half of the one observer contract (simgpu/events.py).

The executor reports what it does through an :class:`Emitter`, which builds the records of
simgpu/events.py -- ``InstrEvent``, ``MemEvent``, ``BranchEvent``, ``BarrierEvent`` -- and calls
the hooks of the observers that override them, in the documented order: per executed
instruction ``inst`` (before the instruction runs), then its ``mem`` records (after it computed
its addresses), its ``branch`` (a ``bra`` whose target is not the next instruction) and, for a
barrier, ``barrier`` (and ``barrier_divergence`` where a block's threads wait at another one).
Every model -- the instruction counter, the loop watch, the memory, timing and sanitizer
models, the stepper's recorder -- and every user's observer receives the same records; there is
no second, raw stream.

What the records need beyond the executor's own state is given at construction:

* ``insts(pc, space=None)``: the observer-facing instruction (``ins``) of the program counter
  ``pc`` -- a ``sass.facts.PtxInst``, the same object for every event of that instruction
  (``space``: the state space of a memory access, recorded on the instruction the first time);
  :class:`PlainInsts` makes them from the PTX alone, ``sass.facts.SassFacts`` with the SASS;
* ``arrays``: the launch's ``ArrayHandle``s, for ``MemEvent.array`` of a global access;
* ``local_issued``: False where ptxas kept the kernel's ``.local`` arrays in registers (then
  the PTX's ld/st.local reach no memory, and no record is made).

Lanes are the chunk's lanes (block-major, blocks padded to whole warps), as in both chunks.
"""
from __future__ import annotations

import numpy as np

from ..events import (ArrayHandle, BarrierEvent, BranchEvent, InstrEvent, Mask, MemEvent,
                      overrides)
from ..ir.nodes import Loc
from ..sass.facts import PtxInst, ir_op
from .executor import WAIT

_KIND = {"load": "ld", "store": "st", "atomic": "atom"}
_SPACE_HANDLES: dict[str, ArrayHandle] = {}


def memory_handles(memory):
    """ArrayHandles (bytes) of a DeviceMemory's allocations, for records made without a launch."""
    return [ArrayHandle(name or f"<allocation {k}>", "global", (buf.size,), np.dtype(np.uint8), buf,
                        base_addr=int(base))
            for k, (base, buf, name) in enumerate(zip(memory.bases, memory.bufs, memory.names))]


class PlainInsts:
    """``insts`` from the PTX alone (no SASS): one PtxInst per PTX line of ``code``."""

    def __init__(self, code, module):
        self.code, self.module, self._by_line = code, module, {}

    def __call__(self, pc, space=None):
        c = self.code[pc]
        i = self._by_line.get(c.line)
        if i is None:
            loc = Loc(self.module.files.get(c.loc[0], "?"), int(c.loc[1])) if c.loc and c.loc[1] \
                else Loc("", 0)
            i = self._by_line[c.line] = PtxInst(c.line, loc, ir_op(c.opcode),
                                                {"opcode": c.opcode, "ptx": c.text, "space": space,
                                                 "sass": []})
        elif space is not None and i.attrs["space"] is None:
            i.attrs["space"] = space
        return i


class Emitter:
    """Builds one chunk's records and calls the observers' hooks (see the module docstring).
    ``chunk`` is the chunk's simgpu.events.Chunk; ``code`` the linked program (``Instr`` per
    pc: ``line``, ``opcode``, ``text``)."""

    def __init__(self, observers, chunk, code, insts, arrays=(), local_issued=True):
        observers = list(observers)
        self.chunk, self.code, self.insts = chunk, code, insts
        self.arrays, self.local_issued = list(arrays), local_issued
        self.inst_obs = [o for o in observers if overrides(o, "inst")]
        self.mem_obs = [o for o in observers if overrides(o, "mem")]
        self.branch_obs = [o for o in observers if overrides(o, "branch")]
        self.barrier_obs = [o for o in observers if overrides(o, "barrier")]
        self.sync_obs = [o for o in observers if overrides(o, "barrier_divergence")]
        self.wants_inst = bool(self.inst_obs or self.barrier_obs or self.sync_obs)
        self.wants_mem = bool(self.mem_obs)
        self.wants_branch = bool(self.branch_obs)
        # every instruction observer declares it reads no executor state between a straight-line
        # run's instructions (``inst_order_free``): a run's records may then all precede it (a
        # run holds no barrier: barrier observers see nothing of it)
        self.order_free = all(getattr(o, "inst_order_free", False) for o in self.inst_obs)
        # an observer of global memory accesses (one that does not name the spaces it reads,
        # ``mem_spaces``, without "global"): global loads then take the interpreter's path
        self.watch_global = any("global" in getattr(o, "mem_spaces", ("global",))
                                for o in self.mem_obs)
        # compiled loops (jitloop.py): every instruction and branch observer takes a loop's
        # records summed (``inst_loop``); the loop watch's no-progress window, if one watches
        self.loop_obs = list(dict.fromkeys(self.inst_obs + self.branch_obs))
        self.loops_ok = self.order_free and all(hasattr(o, "inst_loop") for o in self.loop_obs)
        self.progress_window = next((o.progress_window for o in self.loop_obs
                                     if hasattr(o, "progress_window")), None)
        self._lanes = self._warps = self._full = None
        self._recs = {}             # inst_many: pcs -> their records

    # -- instructions ----------------------------------------------------------------------
    def inst(self, ex, pc, ins, lanes):
        """Instruction ``ins`` (a parser Instr) at ``pc`` is about to run for ``lanes`` (None:
        every lane of the chunk)."""
        if lanes is None:
            lanes = ex.ch.all_idx
        if not len(lanes):
            return
        if lanes is not self._lanes:     # the executor passes one array while the chunk is converged
            w = lanes >> 5
            self._lanes, self._warps = lanes, (1 + int(np.count_nonzero(w[1:] != w[:-1])))
        rec = self.insts(pc)
        if self.inst_obs:
            ie = InstrEvent(rec, self.chunk, lanes=lanes, pc=pc, state=ex, warps=self._warps)
            for o in self.inst_obs:
                o.inst(ie)
        if (self.barrier_obs or self.sync_obs) and ins.opcode in ("bar", "barrier"):
            scope = "warp" if ".warp" in ins.text else "block"
            if scope == "block" and self.sync_obs:
                self._divergence(ex, pc, rec, lanes)
            be = BarrierEvent(rec, Mask.of_lanes(lanes, self.chunk), scope)
            for o in self.barrier_obs:
                o.barrier(be)

    def inst_many(self, ex, pcs, lanes):
        """Instructions ``pcs`` (of a straight-line run, no barrier among them) are about to
        run one after the other for ``lanes``: their records, as ``inst`` makes them (for
        order-free observers only: blocks.Run.fast sends them before the run executes).  The
        first goes to every observer; then each observer gets the others in order, in one
        ``inst_tail(recs, pcs, lanes, warps)`` call where it has one and it accepts them."""
        if lanes is None:
            lanes = ex.ch.all_idx
        if not len(lanes):
            return
        if lanes is not self._lanes:
            w = lanes >> 5
            self._lanes, self._warps = lanes, (1 + int(np.count_nonzero(w[1:] != w[:-1])))
        warps, chunk, obs, insts = self._warps, self.chunk, self.inst_obs, self.insts
        first = pcs[0]                  # the first record to every observer (a loop head's place)
        ie = InstrEvent(insts(first), chunk, lanes=lanes, pc=first, state=ex, warps=warps)
        for o in obs:
            o.inst(ie)
        rest = pcs[1:]
        if not rest:
            return
        recs = self._recs.get(rest)
        if recs is None:
            recs = self._recs[rest] = [insts(pc) for pc in rest]
        for o in obs:                   # the others: in one call where the observer takes them so
            tail = getattr(o, "inst_tail", None)
            if tail is not None and tail(recs, rest, lanes, warps):
                continue
            for pc, rec in zip(rest, recs):
                o.inst(InstrEvent(rec, chunk, lanes=lanes, pc=pc, state=ex, warps=warps))

    def loop_ok(self, lines):
        """Whether every observer accepts a compiled loop whose notified PTX lines are ``lines``."""
        return all(o.inst_loop_ok(lines) for o in self.loop_obs)

    def loop_room(self):
        """Warp instructions a compiled loop may run before a budget is spent (None: no limit)."""
        rooms = [r for r in (o.inst_loop_room() for o in self.loop_obs
                             if hasattr(o, "inst_loop_room")) if r is not None]
        return min(rooms) if rooms else None

    def inst_loop(self, rec):
        """A compiled loop ran (jitloop.LoopRecord: its records summed): to every observer."""
        for o in self.loop_obs:
            o.inst_loop(rec)

    def _divergence(self, ex, pc, rec, lanes):
        """Threads of the blocks reaching this barrier that already wait at a different one:
        a barrier in divergent code (Observer.barrier_divergence)."""
        c = self.chunk
        blocks = np.zeros(c.n_blocks, bool)
        blocks[c.lane_block[lanes]] = True
        waiting = (ex.status == WAIT) & blocks[c.lane_block] & (ex.pc != pc + 1)
        if not waiting.any():
            return
        other = int(np.argmax(waiting))
        at = self.code[int(ex.pc[other]) - 1]
        code = self.insts(int(ex.pc[other]) - 1)
        other_loc = f"{code.loc.file}:{code.loc.line}" if code.loc.line else f"PTX line {at.line}"
        b = int(c.lane_block[other])
        same = np.asarray(lanes)[c.lane_block[lanes] == b]
        lane = int(same[0]) if len(same) else int(lanes[0])
        for o in self.sync_obs:
            o.barrier_divergence(rec, lane, other_loc, other)

    # -- branches --------------------------------------------------------------------------
    def branch(self, pc, lanes, taken):
        """The ``bra`` at ``pc`` executed by ``lanes``; ``taken``: per lane, or None (uniform)."""
        if not len(lanes):
            return
        t = None
        if taken is not None and np.ndim(taken):
            t = Mask.of_lanes(np.asarray(lanes)[np.asarray(taken, bool)], self.chunk)
        be = BranchEvent(self.insts(pc), Mask.of_lanes(lanes, self.chunk), t, "bra")
        for o in self.branch_obs:
            o.branch(be)

    # -- memory ----------------------------------------------------------------------------
    def mem(self, pc, space, kind, width, lanes, addresses, rows_alike=None):
        """Instruction ``pc`` accessed ``space`` at ``addresses`` (per lane of ``lanes``);
        rows_alike: MemEvent.rows_alike."""
        if space == "param":
            return
        if space == "local" and not self.local_issued:
            return                  # ptxas kept this .local access in registers
        c = self.chunk
        addr, mask, a0 = self._lanes_of(lanes, addresses, c)
        me = MemEvent(self.insts(pc, space), space, _KIND[kind], addr, mask, int(width),
                      self._array(space, a0), c, pc=pc, rows_alike=rows_alike)
        for o in self.mem_obs:
            o.mem(me)

    def _lanes_of(self, lanes, addresses, c):
        """(address per chunk lane (int64), Mask, first executing lane's address).  Every lane
        executing (the common case): the addresses as they are and one shared Mask."""
        n = len(lanes)
        if n == c.n_lanes and n:
            a = np.asarray(addresses, np.uint64)
            addr = a.view(np.int64) if a.flags.c_contiguous else a.astype(np.int64)
            if self._full is None:
                self._full = np.ones(c.n_lanes, bool)
            mask = Mask(self._full, c, full=True, n_threads=n, n_warps=c.n_warps)
            return addr, mask, addr[0]
        lanes = np.asarray(lanes, np.int64)
        addr = np.zeros(c.n_lanes, np.int64)
        addr[lanes] = np.asarray(addresses, np.uint64).astype(np.int64)
        return addr, Mask.of_lanes(lanes, c), addr[lanes[0]] if n else 0

    def _array(self, space, a0):
        if space == "global":
            for h in self.arrays:
                if h.base_addr <= a0 < h.base_addr + max(h.data.nbytes, 1):
                    return h
        h = _SPACE_HANDLES.get(space)
        if h is None:
            h = _SPACE_HANDLES[space] = ArrayHandle(
                f"<{space}>", space, (0,), np.dtype(np.uint8), np.zeros(0, np.uint8))
        return h
