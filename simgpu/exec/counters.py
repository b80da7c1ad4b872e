"""Instruction counters: an executor observer that turns masks into Nsight Compute's
instruction metrics (smsp__inst_executed, smsp__thread_inst_executed), per line too."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from .state import Observer
from ..sass.costs import op_class, sass_count


def inst_metrics(warp, thread, branches, by_class):
    """Nsight Compute's instruction metrics from warp and thread instruction totals and the
    branches (loc -> [warp executions, divergent warp executions, thread executions]); both
    executors' counters report through this."""
    div = sum(d for _, d, _ in branches.values())
    nb = sum(w for w, _, _ in branches.values())
    return {
        "smsp__inst_executed.sum": float(warp),
        "smsp__thread_inst_executed.sum": float(thread),
        "smsp__thread_inst_executed_per_inst_executed.ratio": (thread / warp) if warp else 0.0,
        "simgpu__simt_efficiency.pct": 100.0 * thread / (32 * warp) if warp else 0.0,
        "simgpu__branch_warp_executions.sum": float(nb),
        "simgpu__divergent_branch_warp_executions.sum": float(div),
        "simgpu__inst_by_class": by_class,
    }


class InstCounter(Observer):
    def __init__(self):
        self.per_inst = {}                  # id -> [ins, warp_execs, thread_execs]
        self.branches = defaultdict(lambda: [0, 0, 0])   # loc -> [warp execs, divergent warp execs, thread execs]
        self.barriers = 0
        self.sass_cache = {}

    def inst(self, ev):
        ins, m = ev.ins, ev.mask
        e = self.per_inst.get(ins.id)
        if e is None:
            e = self.per_inst[ins.id] = [ins, 0, 0]
        e[1] += m.n_warps
        e[2] += m.n_threads

    def branch(self, ev):
        node, m, taken = ev.node, ev.mask, ev.taken
        b = self.branches[node.loc]
        b[0] += m.n_warps
        b[2] += m.n_threads
        if taken is not None and taken is not m and taken.any():
            t = taken.warp_any
            both = t & (m.arr.reshape(-1, 32) & ~taken.arr.reshape(-1, 32)).any(axis=1)
            b[1] += int(np.count_nonzero(both))

    def barrier(self, ev):
        self.barriers += ev.mask.n_warps

    # -- results ---------------------------------------------------------------
    def totals(self):
        warp = thread = 0
        by_class = defaultdict(int)
        for ins, w, t in self.per_inst.values():
            n = sass_count(ins)
            warp += w * n
            thread += t * n
            by_class[op_class(ins)] += w * n
        for w, d, t in self.branches.values():
            warp += w
            thread += t
            by_class["branch"] += w
        return warp, thread, dict(by_class)

    def metrics(self):
        warp, thread, by_class = self.totals()
        return inst_metrics(warp, thread, self.branches, by_class)

    def fill_report(self, rep):
        """Nothing beyond metrics() and by_line(): the IR has no SASS of its own to show."""

    def by_line(self):
        rows = defaultdict(lambda: {"inst_executed": 0, "thread_inst_executed": 0})
        for ins, w, t in self.per_inst.values():
            n = sass_count(ins)
            r = rows[(ins.loc.file, ins.loc.line)]
            r["inst_executed"] += w * n
            r["thread_inst_executed"] += t * n
        for loc, (w, d, t) in self.branches.items():
            r = rows[(loc.file, loc.line)]
            r["inst_executed"] += w
            r["thread_inst_executed"] += t
            r["divergent_branches"] = r.get("divergent_branches", 0) + d
        return rows
