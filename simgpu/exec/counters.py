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
    """smsp__inst_executed & co., one counter for both executors: it records, per executed
    instruction (``ins.id``), the warps and threads that ran it, the branches (executions and
    divergent warps), the barriers and, where the cost source names loops to watch, each loop's
    trip count per warp entry.  What a recorded instruction costs in SASS, and so every metric,
    comes from the cost source: :class:`IrSass` (simgpu's IR: an estimate of the SASS of each
    operation, the default) or :class:`CompiledSass` (the compiled code: ptxas' SASS, its basic
    blocks counted by sass/flow.py from the PTX loops' trips).

    ``max_steps``: the deprecated per-loop cap (launch.max_loop_iterations), steps of one
    instruction per chunk on code whose loops the executor does not watch itself."""

    inst_order_free = True          # counts records only: never reads the executor's state

    def __init__(self, costs=None, max_steps=None, kernel=""):
        self.costs = costs if costs is not None else IrSass()
        self.per_inst = {}          # ins.id -> [ins, warp execs, thread execs]
        # the cost source's branch key (IR: the If/Loop's loc; PTX: the bra's line) ->
        # [warp execs, divergent warp execs, thread execs]
        self.branches = defaultdict(lambda: [0, 0, 0])
        self.barriers = 0
        self.grid_barriers = 0      # grid.sync() barriers the grid passed (cooperative groups)
        self.printed = []           # print()'s lines (the launch's Image.printed)
        self.max_steps = max_steps
        self.kernel = kernel
        self.chunk = None
        self._steps = defaultdict(int)
        self._bra = self.costs.branch_instructions
        # loop trips per warp (sass/flow.py derives the SASS block counts from them)
        self._heads, self._exits = self.costs.loop_watch()
        self._watch = set(self._heads) | set(self._exits)
        self._cur = {}              # (function, loop) -> per-warp iterations of the trip under way
        self.trips = defaultdict(lambda: defaultdict(int))   # (fn, loop) -> {trip: warp entries}
        self._wl = self._ww = None  # the last lanes array seen at a watched line, its warps

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

    # -- the records ------------------------------------------------------------------------
    def inst(self, ev):
        ins, lanes = ev.ins, ev.lanes
        if lanes is None:           # the IR's records carry a mask
            m = ev.mask
            e = self.per_inst.get(ins.id)
            if e is None:
                e = self.per_inst[ins.id] = [ins, 0, 0]
            e[1] += m.n_warps
            e[2] += m.n_threads
            return
        self.count(ins, lanes, ev.warps)

    def inst_tail(self, recs, pcs, lanes, warps):
        """Records ``recs`` (instructions ``pcs`` of a straight-line run, each run by ``lanes``
        filling ``warps`` warps) in one call: what ``count`` does for each, in order."""
        n = len(lanes)
        steps, per, watch, ms = self._steps, self.per_inst, self._watch, self.max_steps
        for ins in recs:
            key = ins.id
            k = steps[key] = steps[key] + 1
            if ms is not None and k > ms:
                self.runaway(key, lanes)
            e = per.get(key)
            if e is None:
                e = per[key] = [ins, 0, 0]
            e[1] += warps
            e[2] += n
            if key in watch:
                self._watch_loop(key, lanes)
            if self._bra and ins.op == "bra":
                b = self.branches[key]
                b[0] += warps
                b[2] += n
        return True

    def inst_loop_ok(self, lines):
        """Whether a compiled loop (ptx/jitloop.py) whose notified PTX lines are ``lines`` may
        run in one call: not under the deprecated per-loop cap, and not where one of its lines
        ends a loop whose trips are watched (its flushes keep their order with its heads)."""
        return self.max_steps is None and not any(ln in self._exits for ln in lines)

    def inst_loop(self, r):
        """A compiled loop's records, summed (ptx/jitloop.LoopRecord): what ``count`` and
        ``branch`` do for each of them."""
        steps, per, bra = self._steps, self.per_inst, self._bra
        for ins, k, w, t, wv in zip(r.recs, r.steps, r.warps, r.threads, r.warp_visits):
            key = ins.id
            steps[key] += k
            e = per.get(key)
            if e is None:
                e = per[key] = [ins, 0, 0]
            e[1] += w
            e[2] += t
            top = r.warp0 + len(wv)
            for loop in self._heads.get(key, ()):
                self._trip_counts(loop, top)[r.warp0:top] += wv
            if bra and ins.op == "bra":
                b = self.branches[key]
                b[0] += w
                b[2] += t
        for _, ins, d in r.branches:
            b = self.branches[self.costs.branch_key(ins)]
            if d:
                b[1] += d

    def count(self, ins, lanes, warps=None):
        """`lanes`: the chunk lanes that executed `ins` at one step (sorted); `warps`: how many
        warps they fill, if the caller knows."""
        n = len(lanes)
        if n == 0:
            return
        key = ins.id
        steps = self._steps[key] = self._steps[key] + 1
        if self.max_steps is not None and steps > self.max_steps:
            self.runaway(key, lanes)
        if warps is None:
            w = lanes >> 5
            warps = 1 + int(np.count_nonzero(w[1:] != w[:-1]))
        e = self.per_inst.get(key)
        if e is None:
            e = self.per_inst[key] = [ins, 0, 0]
        e[1] += warps
        e[2] += n
        if key in self._watch:
            self._watch_loop(key, lanes)
        if self._bra and ins.op == "bra":
            b = self.branches[key]
            b[0] += warps
            b[2] += n

    def branch(self, ev):
        b = self.branches[self.costs.branch_key(ev.node)]
        if not self._bra:           # a control node, not an instruction: its executions here
            m = ev.mask
            b[0] += m.n_warps
            b[2] += m.n_threads
        if ev.taken is not None and ev.taken is not ev.mask:
            d = ev.divergent_warps
            if d:
                b[1] += d

    def barrier(self, ev):
        self.barriers += ev.mask.n_warps

    # -- loop trips per warp ----------------------------------------------------------------
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
            self._trip_counts(key, top)[w] += 1

    def _trip_counts(self, key, top):
        """Loop ``key``'s iterations per warp of the trips under way, for warps below ``top``."""
        cur = self._cur.get(key)
        if cur is None or len(cur) < top:
            new = np.zeros(max(top, 2 * len(cur) if cur is not None else top), np.int64)
            if cur is not None:
                new[:len(cur)] = cur
            cur = self._cur[key] = new
        return cur

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

    def runaway(self, key, lanes):
        """A KernelError when one instruction ran more than max_loop_iterations steps in a
        chunk: a loop around it iterated that often (the IR path's loop budget)."""
        loc = self.costs.location(key)
        c, lane = self.chunk, int(lanes[0])
        blk = c.block_of(lane) if c is not None else None
        thr = c.thread_of(lane) if c is not None else None
        raise KernelError(f"loop ran more than {self.max_steps} iterations (max_loop_iterations, "
                          "deprecated: use budget=simgpu.Budget(...))", loc=loc, kernel=self.kernel,
                          block=blk, thread=thr)

    # -- results: the cost source's -----------------------------------------------------------
    def totals(self):
        """(warp instructions, thread instructions, {class or pipe: warp instructions})."""
        self._flush_all()
        return self.costs.totals(self)

    def metrics(self):
        warp, thread, by_class = self.totals()
        m = inst_metrics(warp, thread, self.branches, by_class)
        if self.grid_barriers:
            m["simgpu__grid_barriers.sum"] = float(self.grid_barriers)
        self.costs.add_metrics(self, m)
        return m

    def fill_report(self, rep):
        """What ran, in rep.extras (the compiled path: the kernel, its SASS, print()'s lines)."""
        self._flush_all()
        self.costs.fill_report(self, rep)

    def by_line(self):
        """(file, line) -> {inst_executed, thread_inst_executed[, divergent_branches]}."""
        self._flush_all()
        return self.costs.by_line(self)


class IrSass:
    """The cost source of simgpu's IR: each operation's SASS estimated (sass/costs.py); a
    branch (If/Loop) is a control node whose executions the BranchEvents give."""

    branch_instructions = False

    def loop_watch(self):
        return {}, {}

    def branch_key(self, node):
        return node.loc

    def location(self, key):
        return None

    @staticmethod
    def _weighted(counter):
        """(instruction, SASS warp executions, SASS thread executions) of each recorded one."""
        for ins, w, t in counter.per_inst.values():
            n = sass_count(ins)
            yield ins, w * n, t * n

    def totals(self, counter):
        warp = thread = 0
        by_class = defaultdict(int)
        for ins, w, t in self._weighted(counter):
            warp += w
            thread += t
            by_class[op_class(ins)] += w
        for w, d, t in counter.branches.values():
            warp += w
            thread += t
            by_class["branch"] += w
        return warp, thread, dict(by_class)

    def add_metrics(self, counter, m):
        """Nothing beyond the common metrics."""

    def fill_report(self, counter, rep):
        """Nothing: the IR has no SASS of its own to show."""

    def by_line(self, counter):
        rows = defaultdict(lambda: {"inst_executed": 0, "thread_inst_executed": 0})
        for ins, w, t in self._weighted(counter):
            r = rows[(ins.loc.file, ins.loc.line)]
            r["inst_executed"] += w
            r["thread_inst_executed"] += t
        for loc, (w, d, t) in counter.branches.items():
            r = rows[(loc.file, loc.line)]
            r["inst_executed"] += w
            r["thread_inst_executed"] += t
            r["divergent_branches"] = r.get("divergent_branches", 0) + d
        return rows


class CompiledSass:
    """The cost source of the compiled code: every SASS instruction counted at its SASS basic
    block's executions (sass/flow.py), derived from the PTX lines' warp executions, the PTX
    loops' trip counts per warp entry and the divergent branches; where no plan covers a line,
    its executions times its SASS instructions (sass/facts.py).  Keys are PTX lines (the
    PtxInst's id); a ``bra`` is an instruction whose executions are its branch's."""

    branch_instructions = True

    def __init__(self, facts=None, resources=None):
        self.facts, self.resources = facts, resources
        self.plan = facts.plan if facts is not None else None   # sass.flow.KernelPlan
        self._rows = None

    def loop_watch(self):
        """PTX lines where a watched loop's header or exit starts -> the loops."""
        if self.plan is None:
            return {}, {}
        return self.plan.heads, self.plan.exits

    def branch_key(self, node):
        return node.id

    def location(self, line):
        s = self.facts.source.get(line) if self.facts else None
        return f"{s.file}:{s.line}" if s is not None else None

    def _n(self, line):
        return self.facts.count.get(line, 0) if self.facts else 1

    def sass_rows(self, counter):
        """{PTX line (None: no line): [SASS warp executions, thread executions, undecided
        warp executions]} and {pipe: warp executions}."""
        version = (len(counter.per_inst), sum(e[1] for e in counter.per_inst.values()))
        if self._rows is not None and self._rows[0] == version:
            return self._rows[1], self._rows[2]
        rows = defaultdict(lambda: [0.0, 0.0, 0.0])
        by_pipe = defaultdict(float)
        by_opcode = defaultdict(float)
        covered = set()
        if self.plan is not None:
            execs = {ln: w for ln, (_, w, _) in counter.per_inst.items()}
            tpw = {ln: t / w for ln, (_, w, t) in counter.per_inst.items() if w}
            covered = self.plan.lines
            div = {ln: d for ln, (_, d, _) in counter.branches.items() if d}
            for ins, c, und, line, bline, entries in self.plan.sass_executions(execs, counter.trips, div):
                if not c:
                    continue
                r = rows[line]
                r[0] += c
                r[1] += entries * tpw.get(bline, tpw.get(line, 0.0))
                if und:
                    r[2] += c
                by_pipe[ins.pipe] += c
                by_opcode[ins.opcode] += c
        for line, (_, w, t) in counter.per_inst.items():
            if line in covered:
                continue
            n = self._n(line)
            r = rows[line]
            r[0] += w * n
            r[1] += t * n
            if self.facts:
                for p, k in self.facts.pipes.get(line, {}).items():
                    by_pipe[p] += w * k
                for op in self.facts.sass.get(line, ()):
                    by_opcode[op] += w
        self._rows = (version, dict(rows), dict(by_pipe), dict(by_opcode))
        return self._rows[1], self._rows[2]

    def by_opcode(self, counter):
        """{SASS opcode with its modifiers: warp executions} (as ncu's Instruction Statistics)."""
        self.sass_rows(counter)
        return {op: _int(v) for op, v in sorted(self._rows[3].items()) if _int(v)}

    def totals(self, counter):
        rows, by_pipe = self.sass_rows(counter)
        warp = sum(r[0] for r in rows.values())
        thread = sum(r[1] for r in rows.values())
        return _int(warp), _int(thread), {p: _int(v) for p, v in by_pipe.items()}

    def add_metrics(self, counter, m):
        rows, by_pipe = self.sass_rows(counter)
        m["simgpu__ptx_inst_executed.sum"] = float(sum(e[1] for e in counter.per_inst.values()))
        for p, v in sorted(by_pipe.items()):
            m[f"smsp__inst_executed_pipe_{p}.sum"] = float(_int(v))
        if self.facts:
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

    def fill_report(self, counter, rep):
        """What ran: the compiled kernel (rep.extras["ptx"]) and a line in print(report)."""
        if self.facts is None:
            return
        ck, r = self.facts.compiled, self.resources
        rep.extras["ptx"] = {"compiled": ck, "entry": ck.entry, "arch": ck.arch,
                             "registers": r.registers, "spill_stores": r.spill_stores,
                             "spill_loads": r.spill_loads, "stack_frame": r.stack_frame,
                             "shared_bytes": r.shared_bytes}
        rep.extras["executor"] = "ptx"
        rows, _ = self.sass_rows(counter)
        total = sum(r[0] for r in rows.values())
        und = sum(r[2] for r in rows.values())
        rep.extras["sass_counts"] = {
            "method": "SASS basic blocks from PTX loop trips (sass/flow.py)" if self.plan is not None
            else "PTX executions x SASS per line (sass/facts.py)",
            "inst_executed": _int(total), "undecided_inst_executed": _int(und),
            "undecided_fraction": (und / total) if total else 0.0,
            "by_opcode": self.by_opcode(counter)}
        rep.extras["printed"] = list(counter.printed)     # print(): one line per thread per call

    def by_line(self, counter):
        """Code with no user line (the final ret) is left out (see the no_source_line metric)."""
        rows = defaultdict(lambda: {"inst_executed": 0, "thread_inst_executed": 0})
        src = self.facts.source if self.facts else {}
        sass, _ = self.sass_rows(counter)
        for line, (w, t, _) in sass.items():
            s = src.get(line) if line is not None else None
            if s is None:
                continue
            r = rows[(s.file, s.line)]
            r["inst_executed"] += _int(w)
            r["thread_inst_executed"] += _int(t)
        for line, (w, d, t) in counter.branches.items():
            s = src.get(line)
            if s is not None and d:
                r = rows[(s.file, s.line)]
                r["divergent_branches"] = r.get("divergent_branches", 0) + d
        return rows


def _int(x):
    """A count: an int where the block counts' shares made it fractional (rounded)."""
    return int(round(x))
