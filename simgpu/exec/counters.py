"""Instruction counters: an executor observer that turns masks into Nsight Compute's
instruction metrics (smsp__inst_executed, smsp__thread_inst_executed), per line too."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..errors import KernelError
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


class SassInstCounter(Observer):
    """smsp__inst_executed & co. on the PTX path: every SASS instruction counted at its SASS
    basic block's executions (sass/flow.py), derived from the PTX lines' warp executions, the
    PTX loops' trip counts per warp entry and the divergent branches counted here; threads
    likewise.  Exposes ``metrics()`` and ``by_line()`` like exec.counters.InstCounter."""

    def __init__(self, facts=None, resources=None, max_steps=None, kernel=""):
        self.facts = None
        self.per_line = {}          # PTX line -> [warp execs, thread execs]
        self.opcode = {}            # PTX line -> PTX opcode
        self.branches = defaultdict(lambda: [0, 0, 0])   # PTX line -> [warps, divergent, threads]
        self.resources = None
        self.cur_line = 0
        self.printed = []           # print()'s lines (the launch's Image.printed)
        self.max_steps = max_steps  # launch.max_loop_iterations: steps of one PTX line per chunk
        self._steps = defaultdict(int)
        self.chunk = None
        self.kernel = kernel
        self.grid_barriers = 0      # grid.sync() barriers the grid passed (cooperative groups)
        self.plan = None            # sass.flow.KernelPlan: SASS block counts from PTX loop trips
        self._watch = ()            # PTX lines where a watched loop's header or exit starts
        self._heads, self._exits = {}, {}
        self._cur = {}              # (function, PTX loop) -> per-warp iterations of the trip under way
        self.trips = defaultdict(lambda: defaultdict(int))   # (fn, loop) -> {trip: warp entries}
        self._rows = None
        self._wl = self._ww = None  # the last lanes array seen at a watched line, its warps
        if facts is not None:
            self.set_facts(facts, resources)

    def attach_output(self, printed):
        """The list the launch's print() lines go to (the Image's), for the report."""
        self.printed = printed

    def add_grid_barriers(self, n):
        """``n`` more grid-wide barriers (grid.sync()) passed by a chunk."""
        self.grid_barriers += int(n)

    def chunk_begin(self, chunk):
        """A new chunk: the loop budget counts its steps afresh."""
        self._steps.clear()
        self.chunk = chunk
        self._flush_all()

    def chunk_end(self, chunk):
        self._flush_all()

    # -- PTX loop trips per warp (sass/flow.py derives the SASS block counts from them) ----
    def _watch_loop(self, line, lanes):
        if lanes is self._wl:       # the executor passes one array while the chunk is converged
            w = self._ww
        else:
            w = lanes >> 5
            if len(w) > 1:
                w = w[np.flatnonzero(np.r_[True, w[1:] != w[:-1]])]
            self._wl, self._ww = lanes, w
        top = int(w[-1]) + 1
        for key in self._exits.get(line, ()):
            cur = self._cur.get(key)
            if cur is not None:
                self._flush(key, cur, w[w < len(cur)])
        for key in self._heads.get(line, ()):
            cur = self._cur.get(key)
            if cur is None or len(cur) < top:
                new = np.zeros(max(top, 2 * len(cur) if cur is not None else top), np.int64)
                if cur is not None:
                    new[:len(cur)] = cur
                cur = self._cur[key] = new
            cur[w] += 1

    def _flush(self, key, cur, w=None):
        """The trips of warps ``w`` (all: None) of loop ``key`` that are under way end."""
        v = cur if w is None else cur[w]
        v = v[v > 0]
        if len(v):
            h = self.trips[key]
            for n, c in zip(*np.unique(v, return_counts=True)):
                h[int(n)] += int(c)
            if w is None:
                cur[:] = 0
            else:
                cur[w] = 0

    def _flush_all(self):
        for key, cur in self._cur.items():
            self._flush(key, cur)

    def runaway(self, line, lanes):
        """A KernelError when one PTX instruction ran more than max_loop_iterations steps in a
        chunk: a loop around it iterated that often (the IR path's loop budget)."""
        s = self.facts.source.get(line) if self.facts else None
        loc = f"{s.file}:{s.line}" if s is not None else None
        c, lane = self.chunk, int(lanes[0])
        blk = c.block_of(lane) if c is not None else None
        thr = c.thread_of(lane) if c is not None else None
        raise KernelError(f"loop ran more than {self.max_steps} iterations (max_loop_iterations, "
                          "deprecated: use budget=simgpu.Budget(...))", loc=loc, kernel=self.kernel,
                          block=blk, thread=thr)

    def set_facts(self, facts, resources):
        self.facts, self.resources = facts, resources
        self.plan = facts.plan if facts is not None else None
        if self.plan is not None:
            self._heads, self._exits = self.plan.heads, self.plan.exits
            self._watch = set(self._heads) | set(self._exits)

    # -- the records of the PTX executor (ptx/emit.py) -----------------------------------
    def inst(self, ev):
        self.count(ev.ins.id, ev.ins.attrs["opcode"], ev.lanes, ev.warps)

    def branch(self, ev):
        """A bra whose lanes split: its warps with lanes on both sides are divergent."""
        if ev.taken is not None and ev.taken is not ev.mask:
            d = ev.divergent_warps
            if d:
                self.branches[ev.node.id][1] += d

    def count(self, line, opcode, lanes, warps=None):
        """`lanes`: the chunk lanes that executed PTX line `line` at one step (sorted);
        `warps`: how many warps they fill, if the caller knows."""
        self.cur_line = line
        n = len(lanes)
        if n == 0:
            return
        steps = self._steps[line] = self._steps[line] + 1
        if self.max_steps is not None and steps > self.max_steps:
            self.runaway(line, lanes)
        if warps is None:
            w = lanes >> 5
            warps = 1 + int(np.count_nonzero(w[1:] != w[:-1]))
        e = self.per_line.get(line)
        if e is None:
            e = self.per_line[line] = [0, 0]
            self.opcode[line] = opcode
        e[0] += warps
        e[1] += n
        if line in self._watch:
            self._watch_loop(line, lanes)
        if opcode == "bra":
            b = self.branches[line]
            b[0] += warps
            b[2] += n

    # -- results --------------------------------------------------------------------------
    def _n(self, line):
        return self.facts.count.get(line, 0) if self.facts else 1

    def sass_rows(self):
        """{PTX line (None: no line): [SASS warp executions, thread executions, undecided
        warp executions]} and {pipe: warp executions}: each SASS instruction counted at its
        block's executions (sass/flow.py), or, for code without a plan, a line's executions
        times its SASS instructions (sass/facts.py)."""
        if self._rows is not None and self._rows[0] == self._version():
            return self._rows[1], self._rows[2]
        self._flush_all()
        rows = defaultdict(lambda: [0.0, 0.0, 0.0])
        by_pipe = defaultdict(float)
        covered = set()
        if self.plan is not None:
            execs = {ln: w for ln, (w, _) in self.per_line.items()}
            tpw = {ln: t / w for ln, (w, t) in self.per_line.items() if w}
            covered = self.plan.lines
            div = {ln: d for ln, (_, d, _) in self.branches.items() if d}
            for ins, c, und, line, bline in self.plan.sass_executions(execs, self.trips, div):
                if not c:
                    continue
                r = rows[line]
                r[0] += c
                r[1] += c * tpw.get(bline, tpw.get(line, 0.0))
                if und:
                    r[2] += c
                by_pipe[ins.pipe] += c
        for line, (w, t) in self.per_line.items():
            if line in covered:
                continue
            n = self._n(line)
            r = rows[line]
            r[0] += w * n
            r[1] += t * n
            if self.facts:
                for p, k in self.facts.pipes.get(line, {}).items():
                    by_pipe[p] += w * k
        self._rows = (self._version(), dict(rows), dict(by_pipe))
        return self._rows[1], self._rows[2]

    def _version(self):
        return (len(self.per_line), sum(w for w, _ in self.per_line.values()))

    def totals(self):
        rows, by_pipe = self.sass_rows()
        warp = sum(r[0] for r in rows.values())
        thread = sum(r[1] for r in rows.values())
        return _int(warp), _int(thread), {p: _int(v) for p, v in by_pipe.items()}

    def metrics(self):
        warp, thread, by_pipe = self.totals()
        m = inst_metrics(warp, thread, self.branches, by_pipe)
        m["simgpu__ptx_inst_executed.sum"] = float(sum(w for w, _ in self.per_line.values()))
        if self.grid_barriers:
            m["simgpu__grid_barriers.sum"] = float(self.grid_barriers)
        for p, v in sorted(by_pipe.items()):
            m[f"smsp__inst_executed_pipe_{p}.sum"] = float(v)
        if self.facts:
            rows, _ = self.sass_rows()
            m["simgpu__inst_executed_no_source_line.sum"] = float(_int(sum(
                r[0] for ln, r in rows.items() if ln is None or self.facts.source.get(ln) is None)))
            m["simgpu__sass_inst_undecided.sum"] = float(_int(sum(r[2] for r in rows.values())))
        r = self.resources
        if r is not None:
            if r.registers is not None:
                m["launch__registers_per_thread"] = float(r.registers)
            m["simgpu__ptxas_spill_stores_bytes"] = float(r.spill_stores)
            m["simgpu__ptxas_spill_loads_bytes"] = float(r.spill_loads)
            m["simgpu__ptxas_stack_frame_bytes"] = float(r.stack_frame)
        return m

    def fill_report(self, rep):
        """What ran: the compiled kernel (rep.extras["ptx"]) and a line in print(report)."""
        if self.facts is None:
            return
        ck, r = self.facts.compiled, self.resources
        rep.extras["ptx"] = {"compiled": ck, "entry": ck.entry, "arch": ck.arch,
                             "registers": r.registers, "spill_stores": r.spill_stores,
                             "spill_loads": r.spill_loads, "stack_frame": r.stack_frame,
                             "shared_bytes": r.shared_bytes}
        rep.extras["executor"] = "ptx"
        rows, _ = self.sass_rows()
        total = sum(r[0] for r in rows.values())
        und = sum(r[2] for r in rows.values())
        rep.extras["sass_counts"] = {
            "method": "SASS basic blocks from PTX loop trips (sass/flow.py)" if self.plan is not None
            else "PTX executions x SASS per line (sass/facts.py)",
            "inst_executed": _int(total), "undecided_inst_executed": _int(und),
            "undecided_fraction": (und / total) if total else 0.0}
        rep.extras["printed"] = list(self.printed)     # print(): one line per thread per call

    def by_line(self):
        """(file, line) -> {inst_executed, thread_inst_executed[, divergent_branches]};
        code with no user line (the final ret) is left out (see the no_source_line metric)."""
        rows = defaultdict(lambda: {"inst_executed": 0, "thread_inst_executed": 0})
        src = self.facts.source if self.facts else {}
        sass, _ = self.sass_rows()
        for line, (w, t, _) in sass.items():
            s = src.get(line) if line is not None else None
            if s is None:
                continue
            r = rows[(s.file, s.line)]
            r["inst_executed"] += _int(w)
            r["thread_inst_executed"] += _int(t)
        for line, (w, d, t) in self.branches.items():
            s = src.get(line)
            if s is not None and d:
                r = rows[(s.file, s.line)]
                r["divergent_branches"] = r.get("divergent_branches", 0) + d
        return rows


def _int(x):
    """A count: an int where the block counts' shares made it fractional (rounded)."""
    return int(round(x))
