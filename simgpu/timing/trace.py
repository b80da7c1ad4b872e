"""Recording what sampled warps executed: the timing model's view of the functional run.

`TraceRecorder` is an executor observer.  For the blocks it samples (see `sampling.py`) it
appends one *entry* per executed IR instruction or branch: which sampled warps were active,
and for memory instructions per-warp facts (sectors, lines, wavefronts, atomic contention).
Everywhere else it only counts FLOPs.  Loops are recorded for at most `max_iterations`
iterations per loop instance (counted over the sampled warps); iterations past that are
counted, not recorded, and the simulator extrapolates them (docs/timing.md, "Sampling").
"""
from __future__ import annotations

import numpy as np

from ..exec.state import Observer
from ..sass.costs import flops

WARP = 32


class Entry:
    __slots__ = ("ins", "act", "mem", "loops")

    def __init__(self, ins, act, mem, loops):
        self.ins, self.act, self.mem, self.loops = ins, act, mem, loops


class LoopInstance:
    __slots__ = ("node_id", "count", "truncated", "group")

    def __init__(self, node_id, group):
        self.node_id, self.count, self.truncated, self.group = node_id, 0, False, group


class GroupTrace:
    """Entries of one group of sampled blocks (e.g. the first wave's blocks of one SM)."""

    def __init__(self, name, blocks, wpb):
        self.name, self.blocks, self.wpb = name, list(blocks), wpb
        self.entries = []          # chunk by chunk, in execution order
        self.loops = []            # LoopInstance, in order of first iteration

    @property
    def n_warps(self):
        return len(self.blocks) * self.wpb


class TraceRecorder(Observer):
    def __init__(self, groups, max_iterations=16, memory_info=None):
        self.groups = groups                      # list of GroupTrace
        self.max_iterations = max_iterations      # None: record everything
        self.memory_info = memory_info            # callable(ev, lanes, act) -> dict of per-warp arrays
        self.block_to = {}
        for g in groups:
            for k, b in enumerate(g.blocks):
                self.block_to[b] = (g, k)
        self.flops = 0.0
        self._flops = {}
        self._branches = {}
        self.interp = None
        self.active = False

    # -- executor hooks ---------------------------------------------------------------
    def attach(self, interp):
        self.interp = interp

    def chunk_begin(self, chunk):
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
        self.loop_state = {}                    # loop node id -> (parent serial, LoopInstance)
        self.last_serial = {}
        self.serial = 0
        self.skip = None
        self._stack_sig = None
        self._loopvec = ()
        self._pending = None

    def chunk_end(self, chunk):
        self.active = False

    def inst(self, ev):
        ins, mask = ev.ins, ev.mask
        f = self._flops.get(ins.id)
        if f is None:
            f = self._flops[ins.id] = flops(ins)
        if f:
            self.flops += f * mask.n_threads
        if not self.active:
            return
        pending, self._pending = self._pending, None
        if not self._recording():
            return
        wa = mask.warp_any
        loops = self._loops()
        for v, (g, cols, gcols, lanes) in enumerate(self.views):
            act = wa[cols]
            if act.any():
                mem = pending[v] if pending is not None else None
                g.entries.append(Entry(ins, _full(act, gcols, g.n_warps), mem, loops))

    def mem(self, ev):
        if not self.active or self.memory_info is None or not self._recording():
            return
        out = []
        wa = ev.mask.warp_any
        for g, cols, gcols, lanes in self.views:
            act = wa[cols]
            info = self.memory_info(ev, lanes, act) if act.any() else None
            if info is not None:
                info = _full_info(info, gcols, g.n_warps)
                info["space"], info["kind"] = ev.space, ev.kind
            out.append(info)
        self._pending = out

    def branch(self, ev):
        node, mask, kind = ev.node, ev.mask, ev.kind
        if not self.active:
            return
        wa = mask.warp_any
        acts = [wa[cols] for _, cols, _, _ in self.views]
        if not any(a.any() for a in acts):
            return
        if kind == "loop":
            self._loop_iteration(node)
        if not self._recording():
            return
        loops = self._loops()
        key = (getattr(node, "id", None) or id(node), kind)
        b = self._branches.get(key)
        if b is None:
            b = self._branches[key] = BranchIns(node, kind)
        for (g, cols, gcols, lanes), act in zip(self.views, acts):
            if act.any():
                g.entries.append(Entry(b, _full(act, gcols, g.n_warps), None, loops))

    # -- loops ----------------------------------------------------------------------------
    def _loop_iteration(self, node):
        stack = self.interp.stack
        parent = 0
        for k in range(len(stack) - 2, -1, -1):
            if stack[k][0] == "loop":
                parent = self.last_serial.get(stack[k][1].id, 0)
                break
        self.serial += 1
        st = self.loop_state.get(node.id)
        if st is None or st[0] != parent:
            inst = LoopInstance(node.id, None)
            for g, *_ in self.views:
                g.loops.append(inst)
            st = self.loop_state[node.id] = (parent, inst)
        inst = st[1]
        inst.count += 1
        self.last_serial[node.id] = self.serial
        self._stack_sig = None
        if self.max_iterations is not None and inst.count > self.max_iterations:
            inst.truncated = True
            if self.skip is None:
                self.skip = (len(stack) - 1, stack[-1])

    def _recording(self):
        if self.skip is None:
            return True
        d, entry = self.skip
        st = self.interp.stack
        if len(st) > d and st[d] is entry:
            return False
        self.skip = None
        return True

    def _loops(self):
        """(LoopInstance, iteration) of every enclosing loop, outermost first."""
        st = self.interp.stack
        sig = (len(st), st[-1] if st else None)
        if sig != self._stack_sig:
            vec = []
            for kind, node, _ in st:
                if kind == "loop":
                    s = self.loop_state.get(node.id)
                    if s is not None:
                        vec.append(s[1])
            self._loopvec = tuple(vec)
            self._stack_sig = sig
        return tuple((li, li.count) for li in self._loopvec)


class BranchIns:
    """Stand-in 'instruction' for a branch entry: an If's or a loop iteration's."""
    op = "branch"
    id = -1
    dst = None
    args = ()
    attrs = {}
    loc = None

    def __init__(self, node, kind):
        self.node, self.kind = node, kind
        loc = getattr(node, "loc", None)
        self.line = (loc.file, loc.line) if loc is not None else None


BRANCH = BranchIns(None, "if")


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
        a = np.zeros(n, dtype=np.asarray(v).dtype)
        a[gcols] = v
        out[k] = a
    return out


__all__ = ["TraceRecorder", "GroupTrace", "Entry", "LoopInstance", "BranchIns", "BRANCH"]
