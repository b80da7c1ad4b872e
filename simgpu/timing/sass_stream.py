"""What each warp issues on the compiled path: the SASS that sass/flow.py says runs.

ptxas's SASS control flow is not the PTX's: it unrolls loops further (a main loop of k copies
and a remainder loop), keeps slow paths (IEEE division, sqrt, range reductions) behind
branches that are rarely taken, and moves instructions between lines.  `sass/flow.py` derives
every SASS basic block's executions from the PTX execution (the PTX lines' warp executions and
the PTX loops' trip counts); the instruction counters count with it.  This module gives the
timing model the same view, per warp:

1. A warp's recorded PTX execution (the PTX lines of the trace entries it was active in, in
   order) gives its own warp executions per line and its own trip counts per PTX loop (the
   counters' rule, `exec/counters.InstCounter._watch_loop`, for one warp).
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
4. Order (``SassStream.order``): inside the iterations of a trip that run in an unrolled SASS
   main loop of k copies, each group of k PTX iterations is issued in the SASS body's order
   (the k copies' loads before the arithmetic that uses them); elsewhere as executed.
5. Where flow.py is undecided (its ``undecided`` blocks), and on lines no plan covers, the
   per-line rule stays: the PTX line's own SASS, once per execution of the line
   (``per_line`` counts the instructions issued that way).

6. Latency of a routine with a slow path (``region_routines``, ``routine_timing``): where a
   line's SASS branches over a CALL to a slow-path subroutine inside a BSSY/BSYNC region (IEEE
   sqrt, division, reciprocal), its result comes after its fast path's critical path over the
   SASS registers plus the measured cost of the taken branch (``GPU.branch_region_cycles``),
   and the warp goes on when the routine's BSYNC issued (program.OpSpec.hold).

The memory access of a PTX instruction stays where the PTX made it (its trace entry); the
SASS instructions issued with it carry that entry's dependencies (the PTX registers).  Pipes,
tensor work and latency per SASS opcode are the compiled path's (``ptx_trace.sass_mix``).
"""
from __future__ import annotations

import math
import re
from collections import defaultdict

from ..sass.paths import branch_target, label_index, skips_slow_call

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
        self._order_cache = {}
        self._routines = None       # PTX line -> its fast path's SASS (region_routine), or None
        # per watched PTX loop (fn, loop): its units (k, SASS loop or None), largest k first,
        # the PTX lines of its own body, and per SASS loop of k > 1 copies each PTX line's
        # SASS positions in that loop's body (layout order)
        self.units, self.body, self.positions = {}, {}, {}
        for fn, fp in plan.plans.items():
            pcfg, f = fp.ptx.cfg, fp.ptx
            for lp, units in fp.units().items():
                key = (fn, lp)
                self.units[key] = [(k, s if s is not None else ("block", b)) for k, s, b in units]
                for k, s, b in units:       # a straight-line block of copies: its own positions
                    if s is None and b is not None:
                        blk = fp.sass_cfg.blocks[b]
                        pos = defaultdict(list)
                        for i in range(blk.start, blk.end):
                            ln = fp.instructions[i].ptx_line
                            if ln is not None and i not in fp.slow:
                                pos[ln].append(i)
                        self.positions[(fn, ("block", b))] = dict(pos)
                self.body[key] = {ln for ln, i in f.index.items() if pcfg.loop_of.get(pcfg.block_of[i]) == lp}
            for s_loop, k in fp.unroll.items():
                pos = defaultdict(list)
                for b in fp.sass_cfg.blocks:
                    if fp.sass_cfg.loop_of.get(b.id) != s_loop:
                        continue
                    for i in range(b.start, b.end):
                        ln = fp.instructions[i].ptx_line
                        if ln is not None and i not in fp.slow:
                            pos[ln].append(i)
                self.positions[(fn, s_loop)] = dict(pos)

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

    def order(self, lines, regs=None):
        """The order a warp whose executed PTX lines are ``lines`` issues them: as executed,
        except inside the iterations that run in a SASS loop of k copies (a trip of n: the
        first k floor(n / k) iterations run in a main loop of k copies, greedily as flow.py
        counts, the rest in loops of fewer, k = 1 included).  There each group of k PTX
        iterations is issued in the SASS loop body's order: the j-th copy of a PTX line at the
        position of the j-th copy of its SASS (so the loads ptxas hoisted go out together,
        before the arithmetic that uses them, also in a loop NVVM already unrolled in the PTX
        and ptxas did not unroll further); an execution without SASS of its own there follows
        the one before it.  ``regs``: PTX line -> (registers written, registers read); where
        given, no execution moves before one in its group whose register it reads, or that
        reads or writes a register it writes (the model's dependencies are the PTX
        registers).  Returns indices into ``lines``."""
        key = tuple(lines)
        got = self._order_cache.get(key)
        if got is not None:
            return got
        order = list(range(len(lines)))
        heads, exits, watch = self.heads, self.exits, self.watch
        starts = {}                 # loop key -> [entry index of each iteration's header]
        for x, ln in enumerate(lines):
            if ln not in watch:
                continue
            for k in exits.get(ln, ()):
                st = starts.pop(k, None)
                if st:
                    self._regroup(k, st, x, lines, order, regs)
            for k in heads.get(ln, ()):
                starts.setdefault(k, []).append(x)
        for k, st in starts.items():
            if st:
                self._regroup(k, st, len(lines), lines, order, regs)
        if len(self._order_cache) < 4096:
            self._order_cache[key] = order
        return order

    def _regroup(self, key, starts, end, lines, order, regs=None):
        units = self.units.get(key)
        if not units:
            return
        body = self.body[key]
        if any(lines[x] not in body for x in range(starts[0], end)):
            return                  # an inner loop or a call in the trip: issued as executed
        fn = key[0]
        bounds = starts + [end]
        n, it = len(starts), 0
        for k, s in units:
            q = (n - it) // k
            if isinstance(s, tuple):        # straight-line copies: run at most once a trip
                q = min(1, q)
            if q:
                pos = self.positions.get((fn, s), {})
                for g in range(q):
                    a, b = bounds[it + g * k], bounds[it + (g + 1) * k]
                    keys, prev = [], -1.0
                    for j in range(k):
                        for x in range(bounds[it + g * k + j], bounds[it + g * k + j + 1]):
                            p = pos.get(lines[x])
                            if p:
                                c = len(p)
                                lo, hi = (j * c) // k, ((j + 1) * c) // k
                                if hi > lo:
                                    prev = float(p[lo])
                            keys.append((prev, x))
                    if regs is not None:
                        keys = _respect_registers(keys, lines, regs)
                    keys.sort()
                    order[a:b] = [x for _, x in keys]
            it += q * k
            if it >= n:
                break

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
        for ins, c, und, line, bline, _ in self.plan.sass_executions(execs, trips, None):
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


    def routine(self, line):
        """The fast path of PTX line ``line``'s SASS where it branches over a slow path inside a
        BSSY/BSYNC region (IEEE ``sqrt.rn``, ``div.rn``, ``rcp.rn``: ``region_routines``), else None."""
        if self._routines is None:
            self._routines = {}
            for fp in self.plan.plans.values():
                for ln, r in region_routines(fp.instructions).items():
                    self._routines.setdefault(ln, r)
        return self._routines.get(line)


# -- the latency of a routine with a slow-path branch --------------------------------------------
_REG = re.compile(r"\b(U?R\d+|U?P\d)(\.64)?\b")


def _regs(text):
    out = []
    for m in _REG.finditer(text):
        r = m.group(1)
        out.append(r)
        if m.group(2) and r[0] in "RU":         # a 64-bit pair: the register and the next one
            head = r.rstrip("0123456789")
            out.append(f"{head}{int(r[len(head):]) + 1}")
    return out


def operand_registers(ins):
    """(registers written, registers read) of one SASS instruction, from nvdisasm's operands:
    the first operand and the predicates right after it are written (IADD3 R0, P1, P2, ...;
    ISETP P1, PT, ...), the rest and the guard predicate read; stores, branches and region
    markers write nothing.  RZ, PT, URZ and UPT are no registers."""
    ops = [o.strip() for o in ins.operands.split(",")]
    srcs = _regs(ins.predicate) if ins.predicate else []
    base = ins.base
    if not ops or not ops[0] or base.startswith(("ST", "RED", "BRA", "BSSY", "BSYNC", "CALL", "RET", "EXIT",
                                                  "BAR", "WARPSYNC")):
        return (), tuple(srcs + _regs(ins.operands))
    dsts = _regs(ops[0])
    k = 1
    while k < len(ops) and re.fullmatch(r"U?P\d|U?PT", ops[k]):
        dsts += _regs(ops[k])
        k += 1
    for o in ops[k:]:
        srcs += _regs(o)
    return tuple(dsts), tuple(srcs)


def region_routines(code):
    """{PTX line: ([(SassInstr, 'taken' for the fast path's branch or '')], others)} of one function's
    SASS ``code`` (address order): for each line with a predicated forward BRA that jumps over
    a CALL to a ``$__internal_`` slow-path subroutine made by the same line, inside a BSSY /
    BSYNC region (ptxas's IEEE sqrt, division, reciprocal), its first copy's fast path: the
    line's instructions up to that branch, then from its target up to the region's BSYNC (the
    branch is taken: the slow path is what it jumps over).  ``others``: the instructions of other
    lines ptxas placed inside that path (they issue in the routine's waits)."""
    at = label_index(code)
    out = {}
    for i, ins in enumerate(code):
        ln = ins.ptx_line
        if ln is None or ln in out or ins.base != "BRA" or not ins.predicate:
            continue
        t = at.get(branch_target(ins))
        if t is None or t <= i or not skips_slow_call(code, ln, i, t):
            continue
        # the region the branch sits in: a BSSY before it (any line's: ptxas moves them), with
        # no BSYNC between
        j = i - 1
        while j >= 0 and code[j].base not in ("BSSY", "BSYNC") and code[j].base != "BRA":
            j -= 1
        if j < 0 or code[j].base != "BSSY":
            continue
        own = [x for x in range(j + 1, i) if code[x].ptx_line == ln]
        path = [(code[x], "") for x in own]
        path.append((ins, "taken"))
        others = sum(1 for x in range(own[0] if own else i, i) if code[x].ptx_line != ln)
        x = t
        while x < len(code) and code[x].base != "BSYNC":
            if code[x].ptx_line == ln:
                path.append((code[x], ""))
            else:
                others += 1
            if code[x].base in ("BRA", "EXIT", "RET", "CALL"):
                break
            x += 1
        if x < len(code) and code[x].base == "BSYNC":
            path.append((code[x], ""))
            out[ln] = (path, others)
    return out


def routine_timing(path, latency_of, region_cycles):
    """(latency, resume) of a routine (``path``: a fast path of ``region_routines``), in cycles
    from its first issue: the warp issues it in order, one instruction a cycle, each waiting
    for the registers it reads (``latency_of(opcode)`` after their producer's issue), and the
    instruction after the taken branch ``region_cycles`` after the branch (what a taken branch
    over the slow path of a BSSY/BSYNC region costs the warp beyond its instructions, BSYNC
    included: validation/microbench/latency_mlp.py's sqrt and 1/x chains).  ``latency``: its
    last result is ready; ``resume``: the warp's next instruction may issue (after the
    BSYNC), so what follows the routine waits for it as an in-order warp does."""
    ready, t, done, after = {}, -1.0, 0.0, None
    for ins, how in path:
        dsts, srcs = operand_registers(ins)
        t = max([t + 1.0] + [ready.get(r, 0.0) for r in srcs] + ([after] if after is not None else []))
        after = t + region_cycles if how == "taken" else None
        lat = latency_of(ins.opcode)
        for r in dsts:
            ready[r] = t + lat
            done = max(done, t + lat)
    return max(done, t + 1.0), t + 1.0


def _respect_registers(keys, lines, regs):
    """``keys`` [(SASS position, index)] of a group in executed order, raised so that sorting
    them keeps every read after the write it reads, and every write after the earlier reads
    and writes of its register (ties keep the executed order)."""
    last_w, last_r = {}, {}
    out = []
    for p, x in keys:
        dsts, srcs = regs.get(lines[x], ((), ()))
        for r in srcs:
            w = last_w.get(r)
            if w is not None and w > p:
                p = w
        for r in dsts:
            w = last_w.get(r)
            if w is not None and w > p:
                p = w
            u = last_r.get(r)
            if u is not None and u > p:
                p = u
        for r in srcs:
            if last_r.get(r, -2.0) < p:
                last_r[r] = p
        for r in dsts:
            last_w[r] = p
        out.append((p, x))
    return out


__all__ = ["SassStream", "WarpIssue"]
