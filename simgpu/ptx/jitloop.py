"""Innermost loops compiled whole: their iterations run in one numba call (issue 26).

A loop of the linked program (a branch back to a pc at or before it: pcs ``head .. end``, one
contiguous range, program.link) is compiled when every instruction of it is in the numba
subset of jitseg.py (arithmetic, setp, selp, mov, cvt, ld.param, ld.global) or a ``bra``, its
only back edge is the ``bra`` at ``end`` (to ``head``), every other branch in it goes forward
(to a later pc of the loop, or out of it past ``end``), and no branch from outside enters it
past its head.  Its body may hold if/else blocks (Collatz's), its exits may be anywhere.

Why the interpreter's schedule is then simple (executor.py, "smallest (depth, PC) first"):
when the lanes at ``head`` have the smallest key and every other running lane's key is past
``end`` (checked at run time), no other lane runs until these have all left the loop: the
lanes that left wait at their exits (past ``end``), and the loop's lanes run in lock step,
iteration after iteration, each block of the body once per iteration, in pc order, for the
lanes of this iteration that reach it (forward branches only: every lane that will reach a
block in this iteration is there before it runs).  :func:`jitexec._loop` runs exactly that
schedule for the lanes, and counts per block: the iterations it ran in, its threads and the
warps of each visit, the warps that split at its branch, and each warp's visits.  From them
every count the interpreter makes follows: each instruction of a block was one step, notified
with the block's lanes, per visit (``Executor.steps``, the observers' ``InstrEvent``s); a
register written in a block was written once per visit (``reg_version``).

Observers get the loop's records as one summary (:class:`LoopRecord`, ``inst_loop``), and a
loop runs compiled only where every instruction and branch observer has ``inst_loop`` and
accepts the loop (``inst_loop_ok``: the instruction counter, not for a loop whose lines end a
loop it watches, nor under the deprecated ``max_loop_iterations``; the loop watch) and the
launch's instruction budget has room for the iterations of the call (``inst_loop_room``): the
numbers are the interpreter's, and the budget is checked where the interpreter checks it.
The no-progress check (exec/budget.py) is made inside the call on the registers that decide
the loop, at the same visits; when the state repeats, the call is thrown away and the
interpreter runs the loop (and reports it, in its words).  A global load outside every
allocation also throws the call away (the interpreter reports the fault).
"""
from __future__ import annotations

import numpy as np

from simgpu import settings
from simgpu.ptx import jitseg
from simgpu.ptx.analysis import PtxLoop
from simgpu.ptx.blocks import _fusable
from simgpu.ptx.jitexec import _loop

CALLS = [0]                     # compiled loop calls (tests check that the compiled path ran)


class _Unsupported(Exception):
    pass


def find_loops(kernel):
    """{head pc: [head, end]} of the kernel's innermost loop candidates (built on first use)."""
    linked = kernel.linked
    ends = {}
    for pc, t in linked.target.items():
        if t <= pc and linked.func_of[t] == linked.func_of[pc]:
            ends[t] = max(ends.get(t, t), pc)
    return {h: [h, e] for h, e in ends.items()}


def loop_at(kernel, pc):
    """The compiled Loop whose head is ``pc``, or None (built once, kept on the kernel)."""
    spec = kernel.loops.get(pc)
    if spec is None or isinstance(spec, Loop):
        return spec
    try:
        lp = Loop(kernel, spec[0], spec[1])
    except (_Unsupported, jitseg._Unsupported):
        lp = None
    kernel.loops[pc] = lp
    return lp


class _Program(jitseg.Segment):
    """The loop's micro-program: jitseg.Segment's translation, block after block, with one slot
    per register for the whole loop (every register it reads or writes enters from the
    executor: a lane that skips a block keeps its value)."""

    def __init__(self, kernel, blocks):
        self.reg_dtype = kernel.reg_dtype
        self.slots, self.inputs, self.writes = {}, [], {}
        self.consts, self.loads, self.launch_inputs, self.rows = [], [], [], []
        self.load_pcs = {}
        self.nslots = 0
        self.block_rows, self.block_writes, self.preds = [], [], []
        code = kernel.compiled
        for start, stop in blocks:
            r0, before = len(self.rows), dict(self.writes)
            pred = None
            for pc in range(start, stop):
                self._pc = pc
                c = code[pc]
                if c.ptx.opcode == "bra":
                    g = c.ptx.guard
                    pred = None if g is None else (self._read(c.func, ("reg", g[0]), "pred"), int(g[1]))
                else:
                    self._add(kernel, c)
            self.block_rows.append((r0, len(self.rows)))
            self.block_writes.append({k: n - before.get(k, 0) for k, n in self.writes.items()
                                      if n - before.get(k, 0)})
            self.preds.append(pred)
        self.prog = np.array(self.rows, np.int64).reshape(-1, jitseg.ROW)
        self.cslot = np.array([s for s, _ in self.consts], np.int64)
        self.cval = np.array([v for _, v in self.consts], np.uint64)
        self.read_first = [key for key, _ in self.inputs]
        self.input_slots = [(key, s) for key, s in self.slots.items() if key[0] != "@launch"]


class LoopRecord:
    """What the interpreter would have notified for one compiled loop call, summed: per
    notified pc (``pcs``, their records ``recs``): ``steps`` (the steps it ran in), ``warps`` and
    ``threads`` (summed over them), ``warp_visits`` (per warp ``warp0 + i``: the steps it took
    part in); ``branches``: (pc, record, divergent warps) of each executed ``bra`` whose target
    is not the next pc; ``head``, ``visits`` (its iterations), ``lanes`` (the lanes that entered)."""
    __slots__ = ("pcs", "recs", "steps", "warps", "threads", "warp_visits", "warp0", "branches",
                 "head", "visits", "lanes", "state")

    def where(self):
        """(block, thread) of the first lane, for the budget's messages."""
        return self.state.ch.where(int(self.lanes[0]))


class Loop:
    """A compiled innermost loop (see the module doc): ``run(ex, lanes)`` runs it."""

    def __init__(self, kernel, head, end):
        linked, code = kernel.linked, kernel.linked.code
        fn = linked.func_of[head]
        self.head, self.end, self.npcs = head, end, end - head + 1
        cuts, exits = {head}, []
        for pc in range(head, end + 1):
            ins = code[pc]
            if linked.func_of[pc] != fn:
                raise _Unsupported
            if ins.opcode == "bra":
                t = linked.target.get(pc)
                if t is None:
                    raise _Unsupported
                if pc == end:
                    if t != head:
                        raise _Unsupported
                elif not (pc < t <= end or t > end):
                    raise _Unsupported          # a continue, a nested loop's back edge
                if head < t <= end:
                    cuts.add(t)
                if pc + 1 <= end:
                    cuts.add(pc + 1)
                if t > end and t not in exits:
                    exits.append(t)
            elif _fusable(kernel, pc) is None:
                raise _Unsupported
        for pc, t in linked.target.items():
            if not head <= pc <= end and head < t <= end:
                raise _Unsupported              # entered from outside past its head
        if end + 1 not in exits:
            exits.append(end + 1)
        self.exit_pcs = np.array(exits, np.int64)
        starts = sorted(cuts)
        blocks = list(zip(starts, starts[1:] + [end + 1]))
        index = {s: b for b, (s, _) in enumerate(blocks)}

        def dest(t):
            return -1 if t == head else index[t] if t <= end else -2 - exits.index(t)
        self.p = p = _Program(kernel, blocks)
        term = []
        for b, (start, stop) in enumerate(blocks):
            last = stop - 1
            if code[last].opcode != "bra":
                term.append((0, -1, 0, b + 1, b + 1))
                continue
            pred = p.preds[b]
            ps, neg = pred if pred is not None else (-1, 0)
            term.append((1, ps, neg, dest(linked.target[last]), dest(last + 1)))
        self.blk = np.array([r for r in p.block_rows], np.int64).reshape(-1, 2)
        self.term = np.array(term, np.int64).reshape(-1, 5)
        self.blocks = blocks
        self.block_of = {pc: b for b, (s, e) in enumerate(blocks) for pc in range(s, e)}
        self.lined = [pc for pc in range(head, end + 1) if code[pc].line]
        self.bras = [pc for pc in range(head, end + 1)
                     if code[pc].opcode == "bra" and linked.target[pc] != pc + 1]
        self.block_len = np.array([e - s for s, e in blocks], np.int64)
        self.lines = {code[pc].line for pc in self.lined}
        self.watch = None           # the deciding registers' slots (PtxLoop, at the first run)
        # settings.ptx_jit_lanes, as for segments: the lanes up to which the loop runs compiled (a
        # 256x256 naive matmul, chunks of 16K lanes: 4x slower compiled than numpy per instruction)
        self.max_lanes = settings.current().ptx_jit_lanes
        self.work = max(1, len(p.rows))

    def run(self, ex, lanes, cap, window=None):
        """Run the loop for ``lanes`` (None: every lane of the chunk) at most ``cap`` iterations:
        (per-lane exit pcs (head: still in it), LoopRecord or None without an emitter, steps), or
        None when the call was thrown away (a load fault, no progress).  ``window``: the loop
        watch's (CYCLE_FROM, CYCLE_MAX) of exec/budget.progress_check, None: no check."""
        p, ch = self.p, ex.ch
        if self.watch is None:
            dec = PtxLoop(ex.im, self.head, self.end).deciding
            self.watch = np.array([p.slots[k] for k in dec if k in p.slots], np.int64)
        sub = None if lanes is None or lanes is ch.all_idx else lanes
        R = ex.regs
        vals = [R.get(key, jitseg._ZERO) for key, _ in p.input_slots]   # (never written: 0)
        uniform = sub is None and all(a.ndim == 0 for a in vals)
        n = 1 if uniform else (ch.L if sub is None else len(sub))
        M = np.empty((p.nslots, n), np.uint64)
        p.load_inputs(ex, M, sub, vals)
        for s, v in zip(p.cslot, p.cval):
            M[s] = v
        lane = np.zeros(1, np.int64) if uniform else (ch.all_idx if sub is None else sub)
        nb = len(self.blocks)
        nwarp = int(lane[-1] >> 5) - int(lane[0] >> 5) + 1
        visits, threads, warps, div = (np.zeros(nb, np.int64) for _ in range(4))
        wvis = np.zeros((nb, nwarp), np.int64)
        at = np.empty(n, np.int64)
        tb = jitseg.memory_table(ex.im.memory) if p.loads else jitseg._NO_TABLE
        cyc = window or (0, 0)
        status, it = _loop(p.prog, self.blk, self.term, M, lane, cap, self.watch, cyc[0], cyc[1],
                           visits, threads, warps, div, wvis, at, *tb)
        if status in (1, 3):
            return None
        CALLS[0] += 1
        if uniform:                 # one column stood for every lane of the chunk
            threads *= ch.L
            warps *= ch.nwarps
            wvis = np.repeat(visits[:, None], ch.nwarps, 1)
        self._commit(ex, sub, M, visits, uniform)
        pcs = np.where(at >= 0, self.exit_pcs[np.maximum(at, 0)], self.head)
        rec = None
        if ex.emit is not None:
            rec = self._record(ex, lanes, visits, threads, warps, div, wvis, it)
        steps = int((visits * self.block_len).sum())
        return pcs, rec, steps

    def _commit(self, ex, sub, M, visits, uniform):
        p, R, rv = self.p, ex.regs, ex.reg_version
        for key in p.read_first:
            if key not in R:
                R[key] = np.zeros((), p.reg_dtype[key])
        written = {}
        for b, w in enumerate(p.block_writes):
            if visits[b]:
                for key, k in w.items():
                    written[key] = written.get(key, 0) + k * int(visits[b])
        for key, k in written.items():
            rv[key] = rv.get(key, 0) + k
            s, S = p.slots[key], p.reg_dtype[key]
            if uniform:
                R[key] = M[s, 0].astype(S).reshape(())
            elif sub is None:
                R[key] = M[s].astype(S)
            else:
                ex.reg(key)[sub] = M[s]
        if p.loads and ex.wants_mem:     # (the interpreter's memory record names the space)
            for c in p.loads:
                if visits[self.block_of[p.load_pcs[c]]]:
                    ex.emit.insts(p.load_pcs[c], "global")

    def _record(self, ex, lanes, visits, threads, warps, div, wvis, it):
        em = ex.emit
        r = LoopRecord()
        bo = [self.block_of[pc] for pc in self.lined]
        keep = [i for i, b in enumerate(bo) if visits[b]]
        r.pcs = [self.lined[i] for i in keep]
        r.recs = [em.insts(pc) for pc in r.pcs]
        bo = [bo[i] for i in keep]
        r.steps = [int(visits[b]) for b in bo]
        r.warps = [int(warps[b]) for b in bo]
        r.threads = [int(threads[b]) for b in bo]
        r.warp_visits = [wvis[b] for b in bo]
        r.warp0 = 0 if lanes is None else int(lanes[0]) >> 5
        r.branches = [(pc, em.insts(pc), int(div[self.block_of[pc]])) for pc in self.bras
                      if visits[self.block_of[pc]]]
        r.head, r.visits, r.state = self.head, it, ex
        r.lanes = ex.all_lanes(lanes)
        return r
