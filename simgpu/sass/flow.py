"""SASS executions per SASS basic block, derived from the PTX execution.

ptxas does not keep the PTX's loops: it unrolls a PTX loop further (a main loop holding k
copies of the body plus a remainder loop, sometimes a straight-line copy for the last few
iterations), unrolls small constant loops completely, and moves instructions between lines.
Counting (PTX executions of a line) x (SASS instructions of that line) then over-counts an
unrolled loop by about its number of copies.  This module counts every SASS instruction at the
execution count of its *SASS basic block* instead.

Static part (``plan_function``), per function, no execution needed:

1. The PTX control-flow graph (basic blocks, natural loops of the back edges; a back edge is a
   branch to a block at or before it) parsed from the PTX text, and the same for the SASS of
   each function (``nvdisasm`` labels and ``BRA``/``EXIT``).
2. Each SASS block's *PTX block*: the PTX block holding most of its instructions' PTX lines
   (the line table).  Its *PTX loop* is that PTX block's innermost PTX loop.
3. Each SASS loop is mapped to the PTX loop most of its own instructions (those not in a
   nested SASS loop) come from.  Its *unroll factor* k is the median, over the PTX lines of
   that loop that compile one-to-one (loads, stores, atomics, f32/f64 add/mul/fma), of how many
   SASS copies of the line the SASS loop holds (1 when it has none of them).

Dynamic part (``FunctionPlan.block_counts``): the executor observes, per warp, every PTX
line's warp executions and every PTX loop's trip count per entry (the number of times the
warp ran the loop's header between entering and leaving it).  A SASS block B whose PTX block
is b, in innermost SASS loop S (if any), whose PTX loop is P, is counted as:

* **loop code** (S is mapped to P): the SASS loops of P take a trip of n iterations greedily,
  largest k first: the loop with factor k runs floor(r / k) times, r the iterations left (so a
  k=4 main loop and a k=1 remainder run floor(n/4) and n mod 4 times).  B runs S's iterations
  times the share of P's iterations that run b (``execs(b) / execs(header of P)``, at most 1:
  conditional code inside the body).  One SASS loop with k = 1 gives execs(b), the old count.
* **code of a PTX loop outside its SASS loops** (P has no SASS loop containing B: ptxas
  unrolled P completely, or B is the set-up between P's main and remainder loops): once per
  entry of P.
* **code sunk into a SASS loop** (S mapped to another PTX loop): S's iterations.
* otherwise (straight-line code): execs(b), as before.

*Undecided* (counted by a stated rule, reported as ``simgpu__sass_inst_undecided``): a block
with no PTX line (it takes the count of the block before it), a SASS loop none of whose own
instructions come from a PTX loop (its blocks take their PTX blocks' counts), and a SASS loop
of a PTX loop with several SASS loops that has no one-to-one line (k = 1 assumed).

Convergence barriers: a warp that a branch inside a ``BSSY ... BSYNC`` region splits reaches
the ``BSYNC`` in parts, and each part executes it; the BSYNC runs once more per divergent warp
execution of every PTX branch whose SASS lies in that (innermost) region.

Slow paths (sass/paths.py) keep their rule: the instructions a slow-path branch jumps over
run 0 times; a CALL runs its subroutine's instructions as many times as its block runs.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from .paths import _slow_path_branch, branch_target, label_index
from .ptxlines import number_ptx_lines

_PTX_LABEL = re.compile(r"^\s*([$\w.]+):\s*$")
_PTX_PRED = re.compile(r"^@!?%?\w+\s+")
_PTX_BRA_TARGET = re.compile(r"([$\w.]+)\s*;")
# PTX instructions that ptxas compiles to one SASS instruction of a known kind per copy (the
# copies of such a line inside a SASS loop count the loop's copies of the PTX body), and the
# SASS mnemonics that copy may have (an f32/f64 add or mul may be contracted into an FMA).
_ANCHORS = [
    (re.compile(r"^(ld|ldu)\.global\b"), ("LDG",)),
    (re.compile(r"^ld\.shared\b"), ("LDS",)),
    (re.compile(r"^st\.global\b"), ("STG",)),
    (re.compile(r"^st\.shared\b"), ("STS",)),
    (re.compile(r"^(atom|red)\.global\b"), ("ATOMG", "REDG", "ATOM", "RED")),
    (re.compile(r"^(atom|red)\.shared\b"), ("ATOMS",)),
    (re.compile(r"^(add|sub|mul|fma)(\.r[nzmp])?(\.ftz)?(\.sat)?\.f32\b"), ("FADD", "FMUL", "FFMA")),
    (re.compile(r"^(add|sub|mul|fma)(\.r[nzmp])?\.f64\b"), ("DADD", "DMUL", "DFMA")),
]


def _anchor(ptx_text):
    """The SASS mnemonics one copy of this PTX instruction compiles to (None: not an anchor)."""
    for rx, ops in _ANCHORS:
        if rx.match(ptx_text):
            return ops
    return None

# -- a control-flow graph over a list of instructions -------------------------------------
@dataclass
class Node:
    """What the graph builder needs of one instruction."""
    labels: tuple = ()
    kind: str = "other"         # 'branch', 'exit' (ret/exit/trap/EXIT/RET), 'indirect', 'other'
    target: str | None = None   # a branch's label
    predicated: bool = False


@dataclass
class Block:
    id: int
    start: int                  # first instruction's index
    end: int                    # one past the last
    succs: list = field(default_factory=list)
    preds: list = field(default_factory=list)


@dataclass
class Loop:
    id: int
    header: int                 # block id
    body: frozenset             # block ids
    parent: int | None = None   # the innermost loop around it


@dataclass
class Cfg:
    blocks: list
    block_of: list              # instruction index -> block id
    loops: list                 # Loop, outer loops before inner ones
    loop_of: dict               # block id -> innermost Loop id

    def loop_chain(self, b):
        """Loop ids around block ``b``, innermost first."""
        out, lp = [], self.loop_of.get(b)
        while lp is not None:
            out.append(lp)
            lp = self.loops[lp].parent
        return out


def build_cfg(nodes):
    """Basic blocks, edges and natural loops of ``nodes`` (list of Node, in layout order)."""
    n = len(nodes)
    at = {}
    for i, nd in enumerate(nodes):
        for name in nd.labels:
            at[name] = i
    leaders = {0} if n else set()
    for i, nd in enumerate(nodes):
        if nd.labels:
            leaders.add(i)
        if nd.kind != "other" and i + 1 < n:
            leaders.add(i + 1)
        if nd.kind == "branch" and nd.target in at:
            leaders.add(at[nd.target])
    starts = sorted(leaders)
    blocks, block_of = [], [0] * n
    for bi, s in enumerate(starts):
        e = starts[bi + 1] if bi + 1 < len(starts) else n
        blocks.append(Block(bi, s, e))
        for i in range(s, e):
            block_of[i] = bi
    for b in blocks:
        last = nodes[b.end - 1]
        succ = []
        if last.kind == "branch":
            if last.target in at:
                succ.append(block_of[at[last.target]])
            if last.predicated and b.end < n:
                succ.append(block_of[b.end])
        elif last.kind in ("exit", "indirect"):
            if last.predicated and b.end < n:
                succ.append(block_of[b.end])
        elif b.end < n:
            succ.append(block_of[b.end])
        b.succs = list(dict.fromkeys(succ))
        for s in b.succs:
            blocks[s].preds.append(b.id)
    dom = _dominates(blocks)
    bodies = {}
    for b in blocks:                            # back edge: to a block that dominates this one
        for h in b.succs:                       # (unreachable code: to one at or before it)
            if dom(h, b.id):
                body = bodies.setdefault(h, {h})
                stack = [b.id]
                while stack:
                    x = stack.pop()
                    if x not in body:
                        body.add(x)
                        stack.extend(blocks[x].preds)
    order = sorted(bodies, key=lambda h: -len(bodies[h]))
    loops = [Loop(i, h, frozenset(bodies[h])) for i, h in enumerate(order)]
    loop_of = {}
    for lp in loops:                            # outer (larger) first: inner ones overwrite
        around = [q for q in loops[:lp.id] if lp.body <= q.body]
        lp.parent = min(around, key=lambda q: len(q.body)).id if around else None
        for x in lp.body:
            loop_of[x] = lp.id
    return Cfg(blocks, block_of, loops, loop_of)


def _dominates(blocks):
    """``dom(h, b)``: block h dominates block b (every path from the entry, block 0, to b passes
    h; Cooper, Harvey & Kennedy's iterative algorithm).  A back edge b -> h is one whose target
    dominates its source: code ptxas places out of line after the jump back -- an mbarrier
    try_wait's retry loop at the end of the function, branching back into the middle -- is not a
    loop around everything between.  For a block not reachable from the entry, h <= b (layout)."""
    n = len(blocks)
    order, seen = [], [False] * n
    if n:
        stack, seen[0] = [(0, iter(blocks[0].succs))], True
        while stack:                            # depth-first postorder
            x, it = stack[-1]
            nxt = next((y for y in it if not seen[y]), None)
            if nxt is None:
                order.append(x)
                stack.pop()
            else:
                seen[nxt] = True
                stack.append((nxt, iter(blocks[nxt].succs)))
    rpo = order[::-1]
    num = {b: i for i, b in enumerate(rpo)}
    idom = {0: 0} if n else {}

    def meet(a, b):
        while a != b:
            while num[a] > num[b]:
                a = idom[a]
            while num[b] > num[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            ps = [p for p in blocks[b].preds if p in idom]
            new = ps[0]
            for p in ps[1:]:
                new = meet(p, new)
            if idom.get(b) != new:
                idom[b] = new
                changed = True

    def dom(h, b):
        if b not in idom:
            return h <= b
        if h not in idom:
            return False
        while True:
            if b == h:
                return True
            if b == 0:
                return False
            b = idom[b]
    return dom


# -- the PTX side --------------------------------------------------------------------------
@dataclass
class PtxFunction:
    """One PTX function's instructions (by PTX line), blocks and loops."""
    name: str
    lines: list                 # PTX line of each instruction, in order
    text: list                  # each instruction's text (predicate stripped)
    cfg: Cfg
    index: dict                 # PTX line -> instruction index
    guards: dict = field(default_factory=dict)   # PTX line -> its guard predicate ("%p1", "!%p1")

    def block_of_line(self, line):
        i = self.index.get(line)
        return None if i is None else self.cfg.block_of[i]

    def first_line(self, b):
        return self.lines[self.cfg.blocks[b].start]

    def header_line(self, lp):
        return self.first_line(self.cfg.loops[lp].header)

    def exit_lines(self, lp):
        """First lines of the blocks outside loop ``lp`` that its blocks branch to."""
        body = self.cfg.loops[lp].body
        out = {self.first_line(s) for b in body for s in self.cfg.blocks[b].succs if s not in body}
        return sorted(out)


def ptx_functions(ptx):
    """{function name: PtxFunction} of PTX text ``ptx`` (lines numbered from 1)."""
    numbered = number_ptx_lines(ptx)
    raw = ptx.splitlines()
    labels_before = {}
    pending = []
    inst = set(numbered.instruction_lines)
    for n, s in enumerate(raw, start=1):
        if m := _PTX_LABEL.match(s.split("//")[0]):
            pending.append(m.group(1))
        elif n in inst:
            if pending:
                labels_before[n] = tuple(pending)
            pending = []
    per_fn = defaultdict(list)
    for n in numbered.instruction_lines:
        per_fn[numbered.function_of_line.get(n)].append(n)
    out = {}
    for name, lines in per_fn.items():
        nodes, texts, guards = [], [], {}
        for n in lines:
            s = raw[n - 1].split("//")[0].strip()
            pred = bool(gm := _PTX_PRED.match(s))
            if pred:
                guards[n] = gm.group(0).strip().lstrip("@").strip()
            body = _PTX_PRED.sub("", s)
            op = body.split(None, 1)[0] if body else ""
            kind, target = "other", None
            if op in ("bra", "bra.uni"):
                kind = "branch"
                m = _PTX_BRA_TARGET.search(body)
                target = m.group(1) if m else None
            elif op.startswith("brx"):
                kind = "indirect"
            elif op in ("ret", "ret.uni", "exit", "trap"):
                kind = "exit"
            nodes.append(Node(labels_before.get(n, ()), kind, target, pred))
            texts.append(body)
        out[name] = PtxFunction(name, lines, texts, build_cfg(nodes), {n: i for i, n in enumerate(lines)}, guards)
    return out


# -- the SASS side -------------------------------------------------------------------------
def sass_nodes(instructions):
    nodes = []
    for ins in instructions:
        base = ins.base
        kind, target = "other", None
        if base == "BRA":
            kind, target = "branch", branch_target(ins)
            if target is None:
                kind = "indirect"
        elif base in ("BRX", "JMX"):
            kind = "indirect"
        elif base in ("EXIT", "RET", "BPT"):
            kind = "exit"
        nodes.append(Node(tuple(filter(None, ins.label.split(","))), kind, target, bool(ins.predicate)))
    return nodes


@dataclass
class BlockRule:
    """How one SASS block's executions follow from the PTX execution."""
    kind: str                   # 'line' 'loop' 'copies' 'entries' 'preheader' 'iters' 'same' 'prev'
    line: int | None = None     # the PTX block's first line ('line', 'loop': the share)
    ptx_loop: int | None = None  # 'entries' (of this PTX loop)
    sass_loop: int | None = None  # 'loop', 'iters', 'preheader'
    copies: int = 0             # 'copies': copies of the PTX loop's body in this block
    same: int | None = None     # 'same': the straight-line neighbour block it runs with
    undecided: bool = False


@dataclass
class FunctionPlan:
    """One function's SASS blocks and the rule for each; ``block_counts`` evaluates them."""
    ptx: PtxFunction
    sass_cfg: Cfg
    rules: list                 # per SASS block: BlockRule
    loop_map: dict              # SASS loop id -> PTX loop id
    unroll: dict                # SASS loop id -> k
    slow: set                   # SASS instruction indices on a slow path (run 0 times)
    instructions: list
    joins: dict = field(default_factory=dict)   # BSYNC index -> {PTX bra line: share}

    def tracked_loops(self):
        """PTX loops whose trip counts per entry the counts need: {loop id: (header line,
        [exit lines])}."""
        need = {r.ptx_loop for r in self.rules if r.kind in ("entries", "copies")}
        need |= set(self.loop_map.values())
        return {lp: (self.ptx.header_line(lp), self.ptx.exit_lines(lp)) for lp in need}

    def units(self):
        """{PTX loop: [(k, SASS loop id or None, SASS block id or None)]}: what runs a PTX
        loop's iterations, largest k first (loops before straight-line copies)."""
        by_ptx = defaultdict(list)
        for s, p in self.loop_map.items():
            by_ptx[p].append((self.unroll[s], s, None))
        for b, r in enumerate(self.rules):
            if r.kind == "copies":
                by_ptx[r.ptx_loop].append((r.copies, None, b))
        return {p: sorted(u, key=lambda x: (-x[0], x[1] is None, x[1] or 0, x[2] or 0))
                for p, u in by_ptx.items()}

    def iterations(self, trips):
        """({SASS loop id: iterations}, {SASS block id: runs}) of the loops and straight-line
        copies of the PTX loops, from ``trips``: {PTX loop id: {trip count: warp entries}}.
        Each trip of n iterations is taken greedily: a loop of k copies runs floor(r / k)
        times, a straight-line block of k copies min(1, floor(r / k)) times, r the iterations
        not yet taken."""
        loops, blocks = defaultdict(int), defaultdict(int)
        for p, units in self.units().items():
            for n, cnt in trips.get(p, {}).items():
                r = n
                for k, s, b in units:
                    q = r // k if s is not None else min(1, r // k)
                    if s is not None:
                        loops[s] += q * cnt
                        if q:                   # the loop is entered on this trip
                            blocks[("enter", s)] += cnt
                    else:
                        blocks[b] += q * cnt
                    r -= q * k
        return loops, blocks

    def block_counts(self, warp_execs, trips):
        """Warp executions of every SASS block. ``warp_execs``: PTX line -> warp executions;
        ``trips``: PTX loop id -> {trip count: warp entries}."""
        iters, once = self.iterations(trips)
        f = self.ptx
        counts = []
        for b, r in enumerate(self.rules):
            if r.kind == "line":
                c = warp_execs.get(r.line, 0)
            elif r.kind == "loop":
                head = warp_execs.get(f.header_line(self.loop_map[r.sass_loop]), 0)
                share = min(1.0, warp_execs.get(r.line, 0) / head) if head else 0.0
                c = iters.get(r.sass_loop, 0) * share
            elif r.kind == "copies":
                c = once.get(b, 0)
            elif r.kind == "entries":
                c = sum(trips.get(r.ptx_loop, {}).values())
            elif r.kind == "preheader":
                c = once.get(("enter", r.sass_loop), 0)
            elif r.kind == "iters":
                c = iters.get(r.sass_loop, 0)
            elif r.kind == "same":
                c = None            # below, once its neighbour is known
            elif r.kind == "prev":
                c = next((x for x in reversed(counts) if x is not None), warp_execs.get(f.lines[0], 0))
            else:
                c = 0
            counts.append(c)
        for b, r in enumerate(self.rules):
            seen, x = set(), b
            while self.rules[x].kind == "same" and x not in seen:
                seen.add(x)
                x = self.rules[x].same
            counts[b] = counts[x] if counts[x] is not None else 0
        return counts


def plan_function(instructions, ptxf: PtxFunction):
    """The FunctionPlan of one function's own SASS ``instructions`` against its PTX."""
    code = list(instructions)
    cfg = build_cfg(sass_nodes(code))
    pcfg = ptxf.cfg
    # each SASS block's PTX block: the one most of its instructions' lines are in
    pblock, same = [], {}
    for b in cfg.blocks:
        voters = [i for i in range(b.start, b.end) if code[i].base not in _NO_VOTE]
        c = Counter(pb for i in voters if not code[i].predicate
                    and (pb := ptxf.block_of_line(code[i].ptx_line)) is not None)
        if not c:                   # only predicated instructions: let them vote
            c = Counter(pb for i in voters if (pb := ptxf.block_of_line(code[i].ptx_line)) is not None)
        if not voters:              # a reconvergence point (BSYNC) alone: as its straight-line
            nb = _straight_neighbour(cfg, b)        # neighbour, which runs exactly as often
            if nb is not None:
                same[b.id] = nb
        if not c:
            c = Counter(pb for i in range(b.start, b.end)
                        if (pb := ptxf.block_of_line(code[i].ptx_line)) is not None)
        pblock.append(min(c, key=lambda x: (-c[x], x)) if c else None)
    ptx_loop_of = lambda pb: None if pb is None else pcfg.loop_of.get(pb)   # noqa: E731
    # SASS loop -> PTX loop: the innermost PTX loop of most of its own instructions
    loop_map, own = {}, defaultdict(list)
    for b in cfg.blocks:
        lp = cfg.loop_of.get(b.id)
        if lp is not None:
            own[lp].extend(range(b.start, b.end))
    for s, idx in own.items():
        c = Counter(pl for i in idx if (pl := ptx_loop_of(ptxf.block_of_line(code[i].ptx_line))) is not None)
        if c:
            loop_map[s] = min(c, key=lambda x: (-c[x], x))
    # unroll factors: SASS loops of a PTX loop, and straight-line blocks holding copies of it
    def copies(idx, p):
        """Copies of PTX loop p's body among SASS instructions ``idx``: the lower median over
        p's anchor lines present of their anchor SASS instructions (None: no anchor)."""
        per = Counter()
        for i in idx:
            ln = code[i].ptx_line
            if ln not in ptxf.index or pcfg.loop_of.get(ptxf.block_of_line(ln)) != p:
                continue
            ops = _anchor(ptxf.text[ptxf.index[ln]])
            if ops is not None and code[i].base in ops:
                per[ln] += 1
        ks = sorted(per.values())
        return ks[(len(ks) - 1) // 2] if ks else None

    unroll, no_anchor = {}, set()
    per_ptx = Counter(loop_map.values())
    for s, p in loop_map.items():
        k = copies(own[s], p)
        unroll[s] = k or 1
        if k is None and per_ptx[p] > 1:
            no_anchor.add(s)
    rules = []
    for b in cfg.blocks:
        pb = pblock[b.id]
        if b.id in same:
            rules.append(BlockRule("same", same=same[b.id]))
            continue
        s = cfg.loop_of.get(b.id)
        p = ptx_loop_of(pb)
        if pb is None:
            rules.append(BlockRule("prev", undecided=True))
            continue
        line = ptxf.first_line(pb)
        sass_chain = cfg.loop_chain(b.id)
        mapped = [loop_map.get(x) for x in sass_chain]
        if s is not None and s not in loop_map:
            rules.append(BlockRule("line", line, undecided=True))
        elif s is not None and loop_map[s] == p:
            rules.append(BlockRule("loop", line, sass_loop=s, undecided=s in no_anchor))
        elif p is not None and p not in mapped:
            # P's code outside any SASS loop of P: the outermost PTX loop around pb that no
            # enclosing SASS loop stands for runs this block once per entry
            chain = _ptx_chain(pcfg, p)
            q = p
            for x in chain:
                if x in mapped:
                    break
                q = x
            k = copies(range(b.start, b.end), p) if q == p else None
            h = _preheader_of(cfg, b, loop_map, p) if q == p else None
            if k is not None:           # straight-line copies of P's body: at most once a trip
                rules.append(BlockRule("copies", line, ptx_loop=p, copies=k))
            elif h is not None:         # the set-up of P's k-copy SASS loop: the trips that enter it
                rules.append(BlockRule("preheader", line, sass_loop=h))
            else:
                rules.append(BlockRule("entries", line, ptx_loop=q))
        elif s is not None:
            rules.append(BlockRule("iters", line, sass_loop=s))
        else:
            rules.append(BlockRule("line", line))
    _follow_sole_predecessors(code, cfg, rules, pblock)
    slow = set()
    at = label_index(code)
    spans = defaultdict(list)
    for i, ins in enumerate(code):
        if ins.ptx_line is not None:
            spans[ins.ptx_line].append(i)
    for line, idx in spans.items():
        d = _slow_path_branch(code, at, line, idx[0], idx[-1])
        if d is not None:
            slow.update(range(d + 1, at[branch_target(code[d])]))
    slow |= _retry_paths(code, cfg)
    return FunctionPlan(ptxf, cfg, rules, loop_map, unroll, slow, code, _joins(code, at, ptxf))


def _retry_paths(code, cfg):
    """SASS instruction indices of mbarrier try_wait retry loops, which run 0 times here.

    ptxas compiles ``L: mbarrier.try_wait ... p; @!p bra L;`` to a first try in line
    (``SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [bar], phase; @!P0 BRA retry``) and, out of line at
    the function's end, the retry loop (``retry: TRYWAIT P0; @!P0 BRA retry``) and the jump back
    (``BRA next``).  On the card a warp whose barrier phase has not completed goes round the
    retry loop (each TRYWAIT may suspend the warp up to a system-dependent time before it says
    no), so ncu's smsp__inst_executed counts 2 per retry and 1 for the jump back: a number that
    depends on the timing.  simgpu's try_wait succeeds at once (the TMA copies it waits for land
    first, ptx/ops_mbarrier.py), so the first try passes and the out-of-line blocks never run.
    Found by shape: a block starting with a TRYWAIT that branches to itself and that no block
    falls into, with the lone ``BRA`` after it that only it reaches."""
    out = set()
    blocks = cfg.blocks
    for b in blocks:
        first, last = code[b.start], code[b.end - 1]
        if not (first.base == "SYNCS" and "TRYWAIT" in first.opcode and b.id in b.succs and last.base == "BRA"):
            continue
        entered = [p for p in b.preds if p != b.id]
        if b.id > 0 and b.id - 1 in entered and code[blocks[b.id - 1].end - 1].base != "BRA":
            continue                            # fallen into: the first try itself
        if b.id > 0 and b.id - 1 in entered and code[blocks[b.id - 1].end - 1].predicate:
            continue
        out.update(range(b.start, b.end))
        if b.id + 1 < len(blocks):
            nb = blocks[b.id + 1]
            if nb.end - nb.start == 1 and code[nb.start].base == "BRA" and not code[nb.start].predicate \
                    and nb.preds == [b.id]:
                out.update(range(nb.start, nb.end))
    return out


def _joins(code, at, ptxf):
    """{index of a BSYNC: {PTX bra line: share}}: the PTX branches whose SASS BRA lies inside
    the BSSY ... BSYNC region of that convergence barrier (innermost region), each with its
    share of the line's BRAs inside regions (an unrolled loop has a copy in every region).
    On the GPU every part a divergent branch splits the warp into executes the BSYNC."""
    regions = []
    for i, ins in enumerate(code):
        if ins.base != "BSSY" or (j := at.get(branch_target(ins))) is None or j <= i:
            continue
        if code[j].base != "BSYNC" and code[j - 1].base == "BSYNC":
            j -= 1                  # the BSSY names the reconvergence point after the BSYNC
        if code[j].base == "BSYNC" and j > i:
            regions.append((i, j))
    if not regions:
        return {}
    owner = {}
    for k, ins in enumerate(code):
        ln = ins.ptx_line
        if ins.base != "BRA" or not ins.predicate or ln not in ptxf.index:
            continue
        if not ptxf.text[ptxf.index[ln]].startswith("bra"):
            continue
        inside = [(j - i, j) for i, j in regions if i < k < j]
        if inside:
            owner.setdefault(ln, []).append(min(inside)[1])
    # a SASS BRA that carries another line than its PTX branch's (ptxas laid the two ways out so
    # that the BRA carries a neighbour's line: GPU-Puzzles pooling's `if local_i - k >= 0`, whose
    # BRA carries the next line's bra.uni or a line of the code after it): its predicate's
    # latest write before it is the SASS of a PTX setp, and the PTX branches on that setp's
    # predicate are the ones it decides
    guard_of = defaultdict(list)            # PTX predicate register -> conditional bra lines
    for ln, g in ptxf.guards.items():
        if ptxf.text[ptxf.index[ln]].startswith("bra") and not ptxf.text[ptxf.index[ln]].startswith("bra.uni"):
            guard_of[g.lstrip("!")].append(ln)
    conditional = {ln for lines in guard_of.values() for ln in lines}
    carried = {c.ptx_line for c in code if c.base == "BRA"}
    linked = set()
    for k, ins in enumerate(code):
        ln = ins.ptx_line
        if ins.base != "BRA" or not ins.predicate or ln in conditional:
            continue                        # (a BRA of its own PTX conditional branch: above)
        inside = [(j - i, j) for i, j in regions if i < k < j]
        pred = ins.predicate.lstrip("@!")
        src = next((code[m] for m in range(k - 1, -1, -1)
                    if code[m].operands.split(",")[0].strip() == pred and code[m].base != "BRA"), None)
        if not inside or src is None or src.ptx_line not in ptxf.index:
            continue
        setp = ptxf.text[ptxf.index[src.ptx_line]]
        if not setp.startswith("setp"):
            continue
        dst = setp.split(None, 1)[1].split(",")[0].split("|")[0].strip() if " " in setp else ""
        for bl in guard_of.get(dst, ()):
            if (bl, min(inside)[1]) not in linked and bl not in carried:
                linked.add((bl, min(inside)[1]))
                owner.setdefault(bl, []).append(min(inside)[1])
    out = defaultdict(dict)
    for ln, js in owner.items():
        for j in js:
            out[j][ln] = out[j].get(ln, 0.0) + 1.0 / len(js)
    return dict(out)


# SASS that says nothing of which PTX block a SASS block runs with: control-flow marks without
# the PTX's work (a BSYNC at a join carries the line of the code before it), and ULDC, a kernel
# parameter's load, which ptxas hoists wherever it pleases with the line of the parameter's
# first use (layernorm's guard of its remainder loop held two ULDCs from the loops' bodies
# beside its predicated BRA, and ran as the skipped loop's entries: 0 a warp instead of 1)
_NO_VOTE = frozenset({"BSYNC", "BSSY", "WARPSYNC", "NOP", "BMOV", "ULDC"})


def _straight_neighbour(cfg, b):
    """The block that runs exactly as often as ``b``: its only successor whose only
    predecessor it is, or its only predecessor whose only successor it is (None: neither)."""
    if len(b.succs) == 1 and cfg.blocks[b.succs[0]].preds == [b.id] and b.succs[0] != b.id:
        return b.succs[0]
    if len(b.preds) == 1 and cfg.blocks[b.preds[0]].succs == [b.id] and b.preds[0] != b.id:
        return b.preds[0]
    return None


def _preheader_of(cfg, b, loop_map, p):
    """The SASS loop of PTX loop ``p`` that block ``b`` (outside it) leads into and nowhere else:
    ``b`` is its set-up, which a warp runs only on the trips that enter the loop (ptxas guards a
    k-copy main loop by the iterations left, and branches around the set-up when fewer are left:
    the GPU-Puzzles axis sum's 16-load loop, whose 3 set-up instructions ran on every trip of
    4); None if ``b`` is not such a block."""
    if len(b.succs) != 1:
        return None
    h = b.succs[0]
    s = cfg.loop_of.get(h)
    if s is None or cfg.loops[s].header != h or b.id in cfg.loops[s].body or loop_map.get(s) != p:
        return None
    return s


def _follow_sole_predecessors(code, cfg, rules, pblock):
    """A block whose only way in is from one block that can go nowhere else runs as often as
    that block (every warp that runs it runs the other, and no warp leaves between them), so a
    'line' block of another PTX block than its sole predecessor's takes that block's count
    ('same').  This is ptxas's tail duplication: a PTX block reached from several places (the
    return block, after ``@p bra RET``) is copied into one of them, and ``@p bra RET`` becomes
    ``@P EXIT``; the copy runs only for the warps that fell through (GPU-Puzzles dot product:
    warps 1-7 of a block leave at ``@P1 EXIT`` and never run the final EXIT, which counted
    every warp of the PTX return block).  A predecessor ending in a predicated EXIT is not one
    to follow (warps leave there)."""
    blocks = cfg.blocks
    for b in blocks:
        if rules[b.id].kind != "line" or rules[b.id].undecided or len(b.preds) != 1:
            continue
        a = blocks[b.preds[0]]
        if a.id == b.id or a.succs != [b.id] or rules[a.id].kind != "line" or pblock[a.id] == pblock[b.id]:
            continue
        if code[a.end - 1].base in ("EXIT", "RET", "BPT"):
            continue
        rules[b.id] = BlockRule("same", same=a.id)


def _ptx_chain(pcfg, lp):
    out = []
    while lp is not None:
        out.append(lp)
        lp = pcfg.loops[lp].parent
    return out


# -- a whole kernel ------------------------------------------------------------------------
def _rule_line(rules, b):
    """The PTX line whose executions decide SASS block b: its rule's line, or, for a block that
    runs as often as another (a BSYNC's block, kind 'same'), that block's line -- so its
    threads per warp execution are the reconverged warp's, not those of the branch body whose
    PTX line the BSYNC carries."""
    seen = set()
    while b is not None and b not in seen:
        seen.add(b)
        r = rules[b]
        if r.line is not None:
            return r.line
        b = r.same if r.kind == "same" else None
    return None


class KernelPlan:
    """Every function of a compiled kernel: the PTX loops to watch and, from what the executor
    observed, the SASS executions per PTX line (of the SASS instructions the line table gives
    each line) and per SASS opcode."""

    def __init__(self, compiled):
        fns = ptx_functions(compiled.ptx)
        self.plans = {}
        for name, ks in compiled.facts.kernels.items():
            f = fns.get(name)
            if f is not None and ks.instructions:
                self.plans[name] = plan_function(ks.instructions, f)
        self.lines = {ln for p in self.plans.values() for ln in p.ptx.index}
        self.subroutines = {n: s for ks in compiled.facts.kernels.values() for n, s in ks.subroutines.items()}
        # PTX loop watches: header line -> [(fn, loop)], exit line -> [(fn, loop)]
        self.heads, self.exits = defaultdict(list), defaultdict(list)
        for name, plan in self.plans.items():
            for lp, (head, exits) in plan.tracked_loops().items():
                self.heads[head].append((name, lp))
                for e in exits:
                    self.exits[e].append((name, lp))

    def sass_executions(self, warp_execs, trips, divergent=None):
        """[(SassInstr, warp executions, undecided, PTX line it is counted on, its block's PTX
        line, warp entries)] for every SASS instruction that runs (subroutine instructions once
        per CALL execution, on the CALL's line); ``trips``: {(fn, PTX loop): {trip count: warp
        entries}}; ``divergent``: {PTX bra line: divergent warp executions}: a BSYNC runs once
        more for each divergent execution of a branch inside its region, each time with part of
        the warp, so its warp entries (what its thread count scales with) stay the block's."""
        out = []
        divergent = divergent or {}
        for name, plan in self.plans.items():
            t = {lp: h for (fn, lp), h in trips.items() if fn == name}
            counts = plan.block_counts(warp_execs, t)
            for b, blk in enumerate(plan.sass_cfg.blocks):
                rule = plan.rules[b]
                c, und, bline = counts[b], rule.undecided, _rule_line(plan.rules, b)
                for i in range(blk.start, blk.end):
                    if i in plan.slow:
                        continue
                    ins = plan.instructions[i]
                    if c and i in plan.joins:
                        extra = sum(divergent.get(ln, 0) * sh for ln, sh in plan.joins[i].items())
                        out.append((ins, c + extra, und, ins.ptx_line, bline, c))
                        continue
                    out.append((ins, c, und, ins.ptx_line, bline, c))
                    if ins.base == "CALL" and (tg := branch_target(ins)) in self.subroutines:
                        for s in self.subroutines[tg]:
                            out.append((s, c, und, ins.ptx_line, bline, c))
        return out
