"""From recorded entries to per-warp programs the simulator runs.

Each executed IR instruction becomes an `OpSpec` (built once per instruction): its kind,
SASS count (issue cycles), pipes, latency, the register slot it writes and the slots it
reads.  A warp's program is the list of (OpSpec, its memory facts: memfacts.MemFacts,
OnChipFacts or None) of the entries in which that warp was active, in execution order --
divergent paths appear one after the other, as the hardware runs them.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..ir.nodes import Const
from ..sass.costs import pipe_mix, sass_count
from .memfacts import MemFacts, OnChipFacts
from .memstats import default_stat
from .ptx_trace import PtxOp, sass_latency, sass_mix
from .sass_stream import routine_timing

ALIAS, ALU, LD, ST, ATOM, SLD, SST, SATOM, CLD, BAR, BRANCH = range(11)
ON_CHIP = (SLD, SST, SATOM, CLD)      # served by the SM's shared memory / constant cache
KIND_NAMES = ("alias", "alu", "ld", "st", "atom", "sld", "sst", "satom", "cld", "bar", "branch")
# Warps alike share one program, built once (warp_classes); False: one build per warp (the
# differential test, tests/test_timing_warp_classes.py, runs both).
SHARE_ALIKE = True


class OpSpec:
    __slots__ = ("kind", "n", "pipes", "latency", "dst", "deps", "line", "iid", "stat", "mem_result", "smem", "hold")

    def __init__(self, kind, n, pipes, latency, dst, deps, line, iid, stat=None):
        self.kind, self.n, self.pipes, self.latency = kind, n, pipes, latency
        self.dst, self.deps, self.line, self.iid, self.stat = dst, deps, line, iid, stat
        self.mem_result = kind in (LD, CLD, SLD, SATOM, ATOM)
        self.smem = 0.0         # L1 / shared data-path cycles of a tensor op's shared operands
        self.hold = 0.0         # cycles the warp waits after its issue cycles before its next
                                # instruction (a routine whose own instructions wait in order)

    def __repr__(self):
        return f"<OpSpec {KIND_NAMES[self.kind]} n={self.n} line={self.line}>"


UNIT = {"conv": "sfu"}          # conversions issue to the XU pipe, as MUFU does

# SASS per iteration of a loop, beyond its body ([MB] validation/timing_microbench.py -> validation/data/h200_loop_overhead_microbench.json: FMA-chain
# loops, unrolled 4x by NVVM): `for i in range(n)` with an int32 n costs 3.5 (ISETP, IADD3/VIADD,
# IMAD + a quarter BRA), with an int64 n 5.5; a compile-time trip count or a while loop is
# unrolled further (0.4 per iteration; a while loop's test and increment are IR ops of their own).
# By pipe: the compare/select/shift part on the ALU, the counter increments and moves (VIADD,
# IMAD.MOV) on either integer pipe ("iadd"), as in the naive matmul's SASS (4 and 4 of 8).
LOOP_COST = {"range32": {"int": 1.25, "iadd": 2.0, "branch": 0.25},
             "range64": {"int": 2.75, "iadd": 2.5, "branch": 0.25},
             "const": {"int": 0.25, "branch": 0.125}, "while": {"branch": 1.0}, "if": {"branch": 1.0}}


def merge_units(mix):
    out = {}
    for p, n in mix.items():
        u = UNIT.get(p, p)
        out[u] = out.get(u, 0) + n
    return tuple(out.items())


class ProgramBuilder:
    """Builds OpSpecs for one kernel and per-warp programs for one group of sampled blocks."""

    def __init__(self, params, memstats, var_types=None, stream=None):
        self.params = params
        self.memstats = memstats            # instruction id -> MemStat
        self.var_types = var_types or {}
        self.stream = stream                # sass_stream.SassStream (compiled path) or None
        self.issued_flow = self.issued_per_line = 0.0   # SASS issued, by how it was decided
        self.slots = {}
        self.specs = {}
        self.branch_specs = {}
        self._op_latency = {}

    def branch_spec(self, ins):
        key = loop_kind(ins, self.var_types)
        sp = self.branch_specs.get(key)
        if sp is None:
            mix = LOOP_COST[key]
            n = sum(mix.values())
            sp = self.branch_specs[key] = OpSpec(BRANCH, n, merge_units(mix), self.params.latency["branch"],
                                                 -1, (), getattr(ins, "line", None), -1)
        return sp

    def slot(self, name):
        s = self.slots.get(name)
        if s is None:
            s = self.slots[name] = len(self.slots)
        return s

    def spec(self, ins, space=None, mkind=None):
        if isinstance(ins, PtxOp):
            return self.ptx_spec(ins, space, mkind)
        if ins.op == "branch":
            return self.branch_spec(ins)
        sp = self.specs.get(ins.id)
        if sp is not None:
            return sp
        n = sass_count(ins)
        mix = pipe_mix(ins)
        deps = tuple(self.slot(a) for a in ins.args if isinstance(a, str))
        dst = self.slot(ins.dst) if ins.dst is not None else -1
        line = (ins.loc.file, ins.loc.line) if ins.loc is not None else None
        kind = ALU
        if ins.op in ("syncthreads",):
            kind = BAR
        elif ins.op in ("ld", "st", "atomic") and space is not None:
            kind = memory_kind(space, mkind)
        elif n == 0:
            kind = ALIAS
        stat = None
        if kind in (LD, ST, ATOM):
            stat = self.memstats.get(ins.id) or default_stat(mkind)
        lat = self.params.op_latency(mix) if kind == ALU else 0.0
        sp = self.specs[ins.id] = OpSpec(kind, n, merge_units(mix), lat, dst, deps, line, ins.id, stat)
        return sp

    def ptx_spec(self, op, space, mkind, sass=None):
        """The OpSpec of a compiled PTX instruction as a memory access of `space` when the
        executed instance made one; it issues the SASS opcodes `sass` (sass_stream.py: what
        the SASS flow runs at this execution), or, with None, the SASS ptxas made from its
        line (ptx_trace.PtxOp: the per-line rule)."""
        key = (op.id, op.tag, space, mkind, sass)       # tag: the mbarrier of a TMA load or wait
        sp = self.specs.get(key)
        if sp is not None:
            return sp
        if sass is None:
            n0, mix = op.n, op.mix
        else:
            n0, mix = len(sass), sass_mix(sass, op.ins, op.cc)
        if space is not None:
            kind = memory_kind(space, mkind)
        else:
            kind = BAR if op.bar else (BRANCH if op.branch else ALU) if n0 else ALIAS
        n = max(n0, 1) if space is not None or kind == BAR else n0
        mix = mix or ({"lsu": 1} if n else {})
        dst = self.slot(op.dsts[0]) if op.dsts else -1
        for d in op.dsts[1:]:              # a vector's other registers: ready with the first
            self.slots.setdefault(d, dst)
        deps = tuple(self.slot(r) for r in op.srcs)
        stat = self.memstats.get(op.id) or default_stat(mkind) if kind in (LD, ST, ATOM) else None
        lat = 0.0
        if kind in (ALU, BRANCH):
            ops = op.sass_ops if sass is None else sass
            lat = self.params.op_latency(mix, sass_latency(ops, self.params.latency, op.cc), len(ops))
        hold = 0.0
        if kind == ALU and self.stream is not None and (got := self.stream.routine(op.id)) is not None:
            # a slow-path branch in a BSSY/BSYNC region (IEEE sqrt, division): its fast path's
            # critical path, and the warp waits until its last instruction issued, less the
            # issue cycles of other lines' instructions ptxas placed inside it (they are
            # issued after it here)
            path, others = got
            lat, resume = routine_timing(path, self._opcode_latency, self.params.region_cycles)
            hold = max(0.0, resume - n - others)
        sp = self.specs[key] = OpSpec(kind, n, merge_units(mix), lat, dst, deps, op.line, op.id, stat)
        sp.hold = hold
        if op.smem_operand_bytes and kind == ALU:   # wgmma: a warp's quarter of its warpgroup's reads
            sp.smem = op.smem_operand_bytes / 4.0 / self.params.l1_bytes_per_cycle
        return sp

    def _opcode_latency(self, opcode):
        got = self._op_latency.get(opcode)
        if got is None:
            got = self._op_latency[opcode] = sass_latency((opcode,), self.params.latency)
        return got

    def programs(self, group, keep_iterations=None):
        """Per-warp programs of `group`; loop instances in `keep_iterations` (LoopInstance ->
        iterations) are cut after that many iterations."""
        kept = []
        for e in group.entries:
            if keep_iterations and e.loops and any(it > keep_iterations.get(li, it) for li, it in e.loops):
                continue
            kept.append(e)
        nw = group.n_warps
        if not kept:
            return [[] for _ in range(nw)]
        acts = np.stack([e.act for e in kept])
        items = []
        for e in kept:
            mem = e.mem
            space = mkind = None
            if mem is not None:
                space, mkind = mem["space"], mem["kind"]
            items.append((self.spec(e.ins, space, mkind), mem))
        # Warps alike (active in the same entries, with the same memory facts in each) have
        # one program: it is built once, for the first of them, and shared (the simulator
        # only reads programs).  Built in order of each class's first warp, so specs and
        # register slots are made in the order a warp-by-warp build makes them.
        progs = [None] * nw
        for w, members in warp_classes(acts, [m for _, m in items if m is not None]):
            idx = np.nonzero(acts[:, w])[0]
            if self.stream is not None and len(idx) and isinstance(kept[idx[0]].ins, PtxOp):
                f0, p0 = self.issued_flow, self.issued_per_line
                prog = self._sass_program(w, idx, kept, items)
                k = len(members) - 1            # what the other warps of the class issue
                self.issued_flow += k * (self.issued_flow - f0)
                self.issued_per_line += k * (self.issued_per_line - p0)
            else:
                prog = []
                for i in idx:
                    sp, mem = items[i]
                    if mem is None:
                        prog.append((sp, None))
                    else:
                        prog.append((sp, warp_facts(sp.kind, mem, w, id(kept[i]))))
            for v in members:
                progs[v] = prog
        return progs

    def _sass_program(self, w, idx, kept, items):
        """Warp w's program on the compiled path: at each of its PTX executions the SASS the
        flow says runs there (sass_stream.py); lines no plan covers issue their own SASS."""
        stream = self.stream
        covered = stream.covered
        lines = [kept[i].ins.id for i in idx]
        issue = stream.warp(lines)
        by_line = issue.by_line
        seen = defaultdict(int)
        prog = []
        first = True
        regs = {}
        for i in idx:
            op = kept[i].ins
            if op.id not in regs:
                regs[op.id] = (op.dsts, op.srcs)
        order = stream.order(lines, regs)
        for x in order:
            i, ln = idx[x], lines[x]
            e = kept[i]
            sp0, mem = items[i]
            op = e.ins
            if ln in covered:
                t = seen[ln]
                seen[ln] = t + 1
                pat = by_line.get(ln)
                sass = pat[t] if pat is not None and t < len(pat) else ()
                if first and issue.leftover:
                    sass = tuple(sorted(sass + issue.leftover))
                first = False
                sp = self.ptx_spec(op, mem["space"] if mem is not None else None,
                                   mem["kind"] if mem is not None else None, sass)
            else:
                sp = sp0
                self.issued_per_line += sp.n
            prog.append((sp, None if mem is None else warp_facts(sp.kind, mem, w, id(e))))
        self.issued_flow += issue.flow
        self.issued_per_line += issue.per_line
        return prog


_FACT_KEYS = ("sectors", "lines", "wavefronts", "serial", "hot", "l1")


def warp_classes(acts, mems):
    """[(first warp, [warps])] of the warps that are alike: the same column of `acts`
    (entries x warps) and the same per-warp facts in every recorded memory entry `mems`
    (memfacts.memory_info's arrays; what warp_facts reads).  In order of the first warp."""
    nw = acts.shape[1]
    if not SHARE_ALIKE:
        return [(w, [w]) for w in range(nw)]
    rows = [np.packbits(acts, axis=0).astype(np.float64)]
    for m in mems:
        for k in _FACT_KEYS:
            v = m.get(k)
            if v is not None:
                rows.append(np.asarray(v, dtype=np.float64)[None, :])
        ul = m.get("unit_load")
        if ul is not None:                  # atomics' per-unit passes: tuples, named by number
            ids = {}
            rows.append(np.array([[ids.setdefault(t, len(ids)) for t in ul]], dtype=np.float64))
    key = np.ascontiguousarray(np.concatenate(rows).T)
    first = {}
    out = []
    for w in range(nw):
        kb = key[w].tobytes()
        c = first.get(kb)
        if c is None:
            first[kb] = c = len(out)
            out.append((w, []))
        out[c][1].append(w)
    return out


def memory_kind(space, mkind):
    """The OpSpec kind of a memory access: on-chip (shared, constant) or through the L1."""
    kind = {("shared", "ld"): SLD, ("shared", "st"): SST, ("shared", "atom"): SATOM,
            ("const", "ld"): CLD}.get((space, mkind))
    return kind if kind is not None else {"ld": LD, "st": ST, "atom": ATOM}[mkind]


def loop_kind(ins, var_types):
    """Which LOOP_COST row a branch entry pays (ir_code.BranchIns carries its node)."""
    node = getattr(ins, "node", None)
    if getattr(ins, "kind", "if") != "loop" or node is None:
        return "if"
    if getattr(node, "range_var", None) is None:
        return "while"
    stop = node.range_args[1] if len(node.range_args) > 1 else None
    if isinstance(stop, Const):
        return "const"
    t = var_types.get(stop)
    return "range64" if getattr(t, "bitwidth", 64) > 32 else "range32"


def warp_facts(kind, mem, w, instance):
    """Warp w's facts of a recorded memory entry `mem` (memfacts.memory_info's per-warp arrays):
    OnChipFacts for shared memory and the constant cache, else MemFacts, `instance` naming
    the executed instruction instance (the trace entry) that the group's warps share: hits
    on data in flight wait for the first of them (sim.SM.memory)."""
    if kind in ON_CHIP:
        return OnChipFacts(int(mem["wavefronts"][w]))
    serial = mem.get("serial")
    l1 = mem.get("l1")
    l1w = int(l1[w]) if l1 is not None else 0
    if serial is None:
        return MemFacts(int(mem["sectors"][w]), int(mem["lines"][w]), 0.0, -1, instance, l1_wavefronts=l1w)
    unit_passes = mem.get("unit_load")
    return MemFacts(int(mem["sectors"][w]), int(mem["lines"][w]), float(serial[w]), int(mem["hot"][w]), instance,
                    unit_passes[w] if unit_passes is not None else (), l1w)


__all__ = ["ProgramBuilder", "OpSpec", "warp_facts", "ON_CHIP", "ALIAS", "ALU", "LD", "ST", "ATOM", "SLD", "SST", "SATOM",
           "CLD", "BAR", "BRANCH", "KIND_NAMES"]
