"""What each warp issues on the compiled path: the SASS that sass/flow.py says runs.

ptxas's SASS control flow is not the PTX's: it unrolls loops further (a main loop of k copies
and a remainder loop), keeps slow paths (IEEE division, sqrt, range reductions) behind
branches that are rarely taken, and moves instructions between lines.  `sass/flow.py` derives
every SASS basic block's executions from the PTX execution (the PTX lines' warp executions and
the PTX loops' trip counts); the instruction counters count with it.  This module gives the
timing model the same view, per warp:

1. A warp's recorded PTX execution (the PTX lines of the trace entries it was active in, in
   order) gives its own warp executions per line and its own trip counts per PTX loop (the
   counters' rule, `runtime/ptx_path.SassInstCounter._watch_loop`, for one warp).
2. `KernelPlan.sass_executions` turns them into that warp's executions of every SASS
   instruction: slow-path blocks 0, an unrolled main loop floor(n / k) iterations and its
   remainder n mod k for a trip of n, code sunk into or hoisted out of loops at its block's
   count, a CALL's subroutine at the CALL's count.
3. Each SASS instruction is issued at the PTX executions of a *host* line: its own PTX line
   when the warp ran it, else the first line of the PTX block its SASS block runs with, else
   the warp's first instruction; c executions of it over e executions of the host are spread
   by error diffusion (execution t issues floor((t + 1) c / e) - floor(t c / e) of it), so
   the warp issues exactly the flow's count.  An unrolled body's k copies of a line are thus
   spread over the k PTX iterations they stand for.
4. Where flow.py is undecided (its ``undecided`` blocks), and on lines no plan covers, the
   per-line rule stays: the PTX line's own SASS, once per execution of the line
   (``per_line`` counts the instructions issued that way).

The memory access of a PTX instruction stays where the PTX made it (its trace entry); the
SASS instructions issued with it carry that entry's dependencies (the PTX registers).  Pipes,
tensor work and latency per SASS opcode are the compiled path's (``ptx_trace.sass_mix``).
"""
from __future__ import annotations

import math
from collections import defaultdict

FIRST = 0              # host "line" of instructions the warp has no executed line for
_EPS = 1e-9


class WarpIssue:
    """One warp's issue pattern: for each executed host line, per execution the tuple of
    SASS opcodes issued there (sorted), and what was decided by the per-line fallback."""
    __slots__ = ("by_line", "per_line", "flow", "leftover")

    def __init__(self):
        self.by_line = {}           # host line -> [tuple of opcodes] per execution (t = 0 ..)
        self.per_line = 0.0         # instructions issued by the per-line fallback (undecided)
        self.flow = 0.0             # instructions issued from the flow's block counts
        self.leftover = ()          # opcodes issued at the warp's first instruction


class SassStream:
    """Per-warp SASS issue from a kernel's ``sass.flow.KernelPlan`` (see the module doc)."""

    def __init__(self, plan):
        self.plan = plan
        self.covered = plan.lines
        self.heads, self.exits = plan.heads, plan.exits
        self.watch = set(self.heads) | set(self.exits)
        self._cache = {}

    def trips(self, lines):
        """({PTX line: warp executions}, {(fn, PTX loop): {trip count: entries}}) of one warp
        whose executed PTX lines are ``lines`` (in order)."""
        execs = defaultdict(int)
        cur = {}
        trips = defaultdict(lambda: defaultdict(int))
        heads, exits, watch = self.heads, self.exits, self.watch
        for ln in lines:
            execs[ln] += 1
            if ln not in watch:
                continue
            for key in exits.get(ln, ()):
                n = cur.get(key)
                if n:
                    trips[key][n] += 1
                    cur[key] = 0
            for key in heads.get(ln, ()):
                cur[key] = cur.get(key, 0) + 1
        for key, n in cur.items():
            if n:
                trips[key][n] += 1
        return dict(execs), {k: dict(v) for k, v in trips.items()}

    def warp(self, lines):
        """The WarpIssue of a warp whose executed PTX lines are ``lines`` (cached by the
        warp's executions and trips: warps that ran alike share one)."""
        execs, trips = self.trips(lines)
        key = (tuple(sorted(execs.items())), tuple(sorted((k, tuple(sorted(v.items()))) for k, v in trips.items())))
        w = self._cache.get(key)
        if w is None:
            w = self._cache[key] = self._warp(execs, trips)
        return w

    def _warp(self, execs, trips):
        out = WarpIssue()
        rates = defaultdict(list)           # host line -> [(opcode, executions)]
        for ins, c, und, line, bline in self.plan.sass_executions(execs, trips, None):
            if und:                         # the per-line rule: once per execution of its line
                if line is not None and execs.get(line):
                    c = execs[line]
                    rates[line].append((ins.opcode, c))
                    out.per_line += c
                    continue
                out.per_line += c or 0      # no line the warp ran: flow.py's stated rule
            elif c:
                out.flow += c
            if not c:
                continue
            host = line if line is not None and execs.get(line) else bline if execs.get(bline) else FIRST
            rates[host].append((ins.opcode, c))
        left = []
        for host, items in rates.items():
            if host == FIRST:
                for op, c in items:
                    left.extend([op] * max(1, int(round(c))))
                continue
            e = execs[host]
            per = [[] for _ in range(e)]
            total = defaultdict(float)      # the copies of one opcode are spread together
            for op, c in items:
                total[op] += c
            phase = 0.0                     # and different opcodes staggered
            for op, c in total.items():
                r = c / e
                if abs(r - round(r)) < _EPS:          # the same every execution
                    k = int(round(r))
                    if k:
                        for p in per:
                            p.extend([op] * k)
                    continue
                prev = math.floor(phase + _EPS)
                for t in range(e):
                    nxt = math.floor(phase + (t + 1) * r + _EPS)
                    if nxt > prev:
                        per[t].extend([op] * (nxt - prev))
                    prev = nxt
                phase = (phase + r) % 1.0
            out.by_line[host] = [tuple(sorted(p)) for p in per]
        out.leftover = tuple(sorted(left))
        return out


__all__ = ["SassStream", "WarpIssue"]
