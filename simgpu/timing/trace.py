"""Recording what sampled warps executed: the timing model's view of the functional run.

`TraceRecorder` is an executor observer, the one of both executors: it reads the records
(events.py) and nothing of the executor.  For the blocks it samples (see `sampling.py`) it
appends one *entry* per executed instruction (and, where the code says so, per decision):
which sampled warps were active, and for memory instructions per-warp facts (sectors,
lines, wavefronts, atomic contention) from the ``mem`` records that follow its ``inst``.
Everywhere else it only counts FLOPs.

What differs between the executors comes from the *code*, the cost source the recorder is
given (`Code`): the IR kernel (ir_code.IrCode: its ops costed by sass/costs.py, its
structured loops) or the compiled program (ptx_trace.PtxCode: each PTX instruction costed
by ptxas' SASS, the loops the linked program lays out).  A record's position in the code
(``code.where``: an IR node, a pc) says which loops enclose it; a record at a loop *head*
(the IR's loop test, the first pc of a compiled loop) executed by sampled warps is one
iteration.  Loops are recorded for at most `max_iterations` iterations per loop instance
(counted over the sampled warps); iterations past that are counted, not recorded, and the
simulator extrapolates them (docs/timing.md, "Sampling").
"""
from __future__ import annotations

from typing import Protocol

import numpy as np

from ..exec.state import Observer

WARP = 32


class Code(Protocol):
    """The cost source of a TraceRecorder (ir_code.IrCode, ptx_trace.PtxCode)."""
    heads: object               # the positions that are loop heads (``pos in heads``)
    loops_at: object            # position -> loop heads around it, outermost first (itself for a head)

    def where(self, ev) -> object:
        """The position of a record's instruction (InstrEvent) or decision (BranchEvent)."""

    def cost(self, ev) -> tuple:
        """(the entry's instruction, as program.py costs it; FLOPs per executing thread)."""

    def branch_op(self, ev) -> object:
        """The entry's instruction of a decision, or None where decisions are instructions."""

    def inside(self, pos, head) -> bool:
        """Whether position ``pos`` is in the loop at ``head``."""


class Entry:
    __slots__ = ("ins", "act", "mem", "loops")

    def __init__(self, ins, act, mem, loops):
        self.ins, self.act, self.mem, self.loops = ins, act, mem, loops


class LoopInstance:
    """One instance of a loop (a new one each time its parent loop moves on): its iterations
    over the sampled warps (``count``: head records), and per iteration how many sampled warps
    ran it (``active``; a data-dependent trip count leaves fewer warps in its late iterations:
    model.loop_factor extrapolates with them)."""
    __slots__ = ("node_id", "count", "truncated", "group", "active")

    def __init__(self, node_id, group):
        self.node_id, self.count, self.truncated, self.group = node_id, 0, False, group
        self.active = []


class GroupTrace:
    """Entries of one group of sampled blocks (e.g. the first wave's blocks of one SM)."""

    def __init__(self, name, blocks, wpb):
        self.name, self.blocks, self.wpb = name, list(blocks), wpb
        self.entries = []          # chunk by chunk, in execution order
        self.loops = []            # LoopInstance, in order of first iteration
        self.work = 0.0            # warp instructions its warps issued (SASS where known), every iteration

    @property
    def n_warps(self):
        return len(self.blocks) * self.wpb


class TraceRecorder(Observer):
    """Records the sampled groups' entries (see the module docstring).  memory_info:
    callable(ev, lanes, act) -> dict of per-warp arrays; code_of: returns the launch's `Code`
    (called at the first chunk, once the program runs)."""

    def __init__(self, groups, max_iterations, memory_info, code_of):
        self.groups = groups                      # list of GroupTrace
        self.max_iterations = max_iterations      # None: record everything
        self.memory_info = memory_info
        self.code_of = code_of
        self.code = None
        self.block_to = {}
        for g in groups:
            for k, b in enumerate(g.blocks):
                self.block_to[b] = (g, k)
        self.flops = 0.0
        self.active = False
        self._last = None
        self._acts_lanes = self._acts_last = None
        self._tail_ops = {}                       # pcs of a run's tail -> their PtxOps (inst_tail)

    # -- executor hooks ---------------------------------------------------------------
    def chunk_begin(self, chunk):
        if self.code is None:
            self.code = self.code_of()
        self._last = None
        self._acts_lanes = self._acts_last = None
        lo, hi = chunk.first_block, chunk.first_block + chunk.n_blocks
        parts = [(b, g, k) for b, (g, k) in self.block_to.items() if lo <= b < hi]
        self.active = bool(parts)
        if not self.active:
            return
        # one "view" per group present in the chunk: chunk warp indices of its blocks' warps
        self.views = []
        by_group = {}
        for b, g, k in sorted(parts, key=lambda p: p[0]):
            by_group.setdefault(id(g), (g, []))[1].append((k, b - lo))
        for g, items in by_group.values():
            items.sort()
            cols = np.concatenate([np.arange(lb * chunk.wpb, (lb + 1) * chunk.wpb) for _, lb in items])
            gcols = np.concatenate([np.arange(k * g.wpb, (k + 1) * g.wpb) for k, _ in items])
            lanes = (cols[:, None] * WARP + np.arange(WARP)[None, :])
            self.views.append((g, cols, gcols, lanes))
        self.chunk = chunk
        self.loop_state = {}                    # loop head -> (parent serial, LoopInstance)
        self.last_serial = {}
        self.serial = 0
        self.skip = None                        # the loop head whose iterations are not recorded
        self.nwarps = chunk.n_warps
        self.n_real = chunk.n_blocks * chunk.tpb
        self._all = None

    def chunk_end(self, chunk):
        self.active = False

    def inst(self, ev):
        """One executed instruction: its FLOPs, and an entry for the sampled warps."""
        op, f = self.code.cost(ev)
        lanes = ev.lanes
        if f:
            self.flops += f * (len(lanes) if lanes is not None else ev.mask.n_threads)
        self._last = None
        if not self.active:
            return
        st = self._acts(lanes) if lanes is not None else self._acts_mask(ev.mask)
        if st[1]:
            self._record(self.code.where(ev), op, st)

    def inst_tail(self, recs, pcs, lanes, warps):
        """Instructions ``pcs`` of a straight-line run after its first, each run by ``lanes``
        (ptx/emit.Emitter.inst_many), in one call: what ``inst`` does for each, in order, where
        the code gives each its cost by its pc alone (PtxCode.op; a TMA load or mbarrier wait
        reads the executor's registers: False, then they come one at a time)."""
        code = self.code
        op_of = getattr(code, "op", None)
        if op_of is None:
            return False
        ops = self._tail_ops.get(pcs)
        if ops is None:
            ops = [op_of(pc) for pc in pcs]
            if any(o.mbar is not None for o in ops):
                return False
            self._tail_ops[pcs] = ops
        n = len(lanes)
        for o in ops:
            if o.flops:
                self.flops += o.flops * n
        self._last = None
        if not self.active:
            return True
        st = self._acts(lanes)
        if st[1]:
            for pc, o in zip(pcs, ops):
                self._last = None
                self._record(pc, o, st)
        return True

    def branch(self, ev):
        """A decision: an entry where the code makes it one (the IR's; a ``bra`` is recorded
        as the instruction it is)."""
        op = self.code.branch_op(ev)
        if op is None:
            return
        self._last = None
        if not self.active:
            return
        st = self._acts_mask(ev.mask)
        if st[1]:
            self._record(self.code.where(ev), op, st)

    def mem(self, ev):
        """The memory access of the instruction just recorded: its per-warp facts."""
        if not self._last or self.memory_info is None:
            return
        wa = ev.mask.warp_any
        for v, e in self._last:
            g, cols, gcols, lanes = self.views[v]
            act = wa[cols]
            if not act.any():
                continue
            info = _full_info(self.memory_info(ev, lanes, act), gcols, g.n_warps)
            info["space"], info["kind"] = ev.space, ev.kind
            prev = e.mem
            if prev is not None and e.ins.tma:       # a TMA copy: its events summed, global kept
                if (prev["space"], prev["kind"]) == (ev.space, ev.kind):
                    info = {k: (prev[k] + v if k in ("sectors", "lines", "active", "wavefronts") else v)
                            for k, v in info.items()}
                elif prev["space"] == "global":
                    continue
            e.mem = info

    # -- entries ------------------------------------------------------------------------
    def _record(self, pos, op, st):
        """The entry of an instruction at `pos` run by the sampled warps `st` (_acts)."""
        code = self.code
        acts, _, ks, warps, anys = st
        n = getattr(op, "n", 1) or 1            # PtxOp: its SASS instructions; an IR op: one
        for (g, *_), k in zip(self.views, ks):
            g.work += n * k                      # counted before loops are cut (sampling.py)
        if pos in code.heads:
            self._iteration(pos, warps)
        if self.skip is not None:
            if code.inside(pos, self.skip):
                return
            self.skip = None
        loops = self._enclosing(pos)
        last = []
        for v, ((g, cols, gcols, _), act) in enumerate(zip(self.views, acts)):
            if anys[v]:
                e = Entry(op, _full(act, gcols, g.n_warps), None, loops)
                g.entries.append(e)
                last.append((v, e))
        self._last = last

    def _acts(self, lanes):
        """Per view: which of its warps executed `lanes` (every warp when every thread did);
        whether any did; per view how many did, their sum, and whether any did (`_state`).
        The PTX executor passes one lane array to every instruction of a step sequence (a
        straight-line run, a converged stretch), so the answer is kept for the last array
        seen (lane arrays are never written in place)."""
        if lanes is self._acts_lanes:
            return self._acts_last
        st = _state(self._acts_of(lanes))
        self._acts_lanes, self._acts_last = lanes, st
        return st

    def _acts_of(self, lanes):
        if len(lanes) == self.n_real:
            if self._all is None:
                wa = np.zeros(self.nwarps, bool)
                wa[lanes >> 5] = True
                self._all = [wa[cols] for _, cols, _, _ in self.views]
            return self._all
        wa = np.zeros(self.nwarps, bool)
        wa[lanes >> 5] = True
        return [wa[cols] for _, cols, _, _ in self.views]

    def _acts_mask(self, mask):
        """_acts of a record that carries its mask (the IR's, every BranchEvent)."""
        wa = mask.warp_any
        return _state([wa[cols] for _, cols, _, _ in self.views])

    # -- loops ----------------------------------------------------------------------------
    def _iteration(self, head, warps=0):
        """One more iteration of the loop at `head`, run by `warps` sampled warps (a new
        instance when its parent loop moved on since the last one)."""
        outer = self.code.loops_at[head][:-1]
        parent = self.last_serial.get(outer[-1], 0) if outer else 0
        self.serial += 1
        st = self.loop_state.get(head)
        if st is None or st[0] != parent:
            inst = LoopInstance(head, None)
            for g, *_ in self.views:
                g.loops.append(inst)
            st = self.loop_state[head] = (parent, inst)
        inst = st[1]
        inst.count += 1
        inst.active.append(warps)
        self.last_serial[head] = self.serial
        if self.max_iterations is not None and inst.count > self.max_iterations:
            inst.truncated = True
            if self.skip is None:
                self.skip = head

    def _enclosing(self, pos):
        """(LoopInstance, iteration) of every loop around `pos`, outermost first."""
        out = []
        for h in self.code.loops_at[pos]:
            st = self.loop_state.get(h)
            if st is not None:
                out.append((st[1], st[1].count))
        return tuple(out)


def _state(acts):
    """(acts, whether any view's warp ran, per view its warps that ran, their sum, per view
    whether any ran): what _record reads of the sampled warps of one record."""
    ks = [int(np.count_nonzero(a)) for a in acts]
    return acts, any(ks), ks, sum(ks), [k > 0 for k in ks]


def _full(act, gcols, n):
    if len(gcols) == n:
        return act
    out = np.zeros(n, dtype=bool)
    out[gcols] = act
    return out


def _full_info(info, gcols, n):
    if len(gcols) == n:
        return info
    out = {}
    for k, v in info.items():
        if isinstance(v, list):             # per-warp tuples (an atomic's units): no array of them
            a = [()] * n
            for g, x in zip(np.asarray(gcols).tolist(), v):
                a[g] = x
        else:
            a = np.zeros(n, dtype=np.asarray(v).dtype)
            a[gcols] = v
        out[k] = a
    return out


__all__ = ["TraceRecorder", "Code", "GroupTrace", "Entry", "LoopInstance"]
