"""Program representation: basic blocks, CFG, immediate post-dominators and the linear layout.

For each parsed function, :func:`analyse` splits the body into basic blocks, links them into a
CFG (with a virtual exit node for ``ret``/``exit``), computes immediate dominators and
immediate post-dominators (Cooper-Harvey-Kennedy iteration), and a *loop-nested topological
order* of the blocks: a topological order of the forward edges in which every loop (strongly
connected component, found recursively with the loop's entry block as head) occupies a
contiguous range and its exits come after it.  :func:`link` lays the blocks of every function
out in that order as one instruction array, so that "the smallest PC first" scheduling in the
executor waits at each branch's immediate post-dominator for the lanes still on the way there
(see ``executor.py``).  A fall-through that the new order breaks gets an explicit jump.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

from simgpu.errors import SimGPUError
from simgpu.ptx.parser import Instr

BRANCHES = ("bra", "brx")
TERMINATORS = ("ret", "exit", "trap")


@dataclass
class Block:
    id: int
    start: int                      # first instruction index (in FuncInfo.instrs)
    end: int                        # one past the last
    labels: list = field(default_factory=list)
    succs: list = field(default_factory=list)
    preds: list = field(default_factory=list)


@dataclass
class FuncInfo:
    fn: object                      # parser.Function
    instrs: list                    # Instr only, labels removed
    labels: dict                    # label -> instruction index
    blocks: list
    exit: int                       # id of the virtual exit node (== len(blocks))
    idom: list
    ipdom: list                     # block id -> block id, exit, or None (cannot reach exit)
    order: list                     # loop-nested topological block order
    vars: dict = field(default_factory=dict)


def split_blocks(body):
    """Instruction list, label table and basic blocks of a function body."""
    instrs, labels, pending = [], {}, []
    leaders = {0}
    for st in body:
        if isinstance(st, tuple):
            if st[0] == "label":
                labels[st[1]] = len(instrs)
                leaders.add(len(instrs))
            continue
        instrs.append(st)
        if st.opcode in BRANCHES + TERMINATORS:
            leaders.add(len(instrs))
    starts = sorted(x for x in leaders if x < len(instrs)) or [0]
    blocks = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else len(instrs)
        blocks.append(Block(k, s, e))
    by_start = {b.start: b.id for b in blocks}
    for name, idx in labels.items():
        if idx in by_start:
            blocks[by_start[idx]].labels.append(name)
    return instrs, labels, blocks, by_start


def link_cfg(instrs, labels, blocks, by_start):
    exit_id = len(blocks)
    for b in blocks:
        last = instrs[b.end - 1] if b.end > b.start else None
        fall = by_start.get(b.end, exit_id)
        if last is None:
            succ = [fall]
        elif last.opcode in BRANCHES:
            tgt = last.operands[0]
            if tgt[0] != "sym" or tgt[1] not in labels:
                raise SimGPUError(f"PTX line {last.line}: branch to unknown label {tgt}")
            t = by_start.get(labels[tgt[1]], exit_id)
            succ = [t] if last.guard is None else [t, fall]
        elif last.opcode in TERMINATORS:
            succ = [exit_id] if last.guard is None else [exit_id, fall]
        else:
            succ = [fall]
        b.succs = list(dict.fromkeys(succ))
        for s in b.succs:
            if s != exit_id:
                blocks[s].preds.append(b.id)
    return exit_id


def dominators(n, entry, succs, preds):
    """Immediate dominators (Cooper, Harvey & Kennedy).  Nodes 0..n-1; succs/preds callables.
    Unreachable nodes get None; the entry gets itself."""
    order, seen, stack = [], {entry}, [(entry, iter(succs(entry)))]
    while stack:
        node, it = stack[-1]
        for s in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(succs(s))))
                break
        else:
            order.append(node)
            stack.pop()
    order.reverse()
    rpo = {v: i for i, v in enumerate(order)}
    idom = [None] * n
    idom[entry] = entry
    changed = True
    while changed:
        changed = False
        for v in order[1:]:
            new = None
            for p in preds(v):
                if idom[p] is None:
                    continue
                if new is None:
                    new = p
                    continue
                a, b = p, new
                while a != b:
                    while rpo[a] > rpo[b]:
                        a = idom[a]
                    while rpo[b] > rpo[a]:
                        b = idom[b]
                new = a
            if new is not None and idom[v] != new:
                idom[v] = new
                changed = True
    return idom


def post_dominators(blocks, exit_id):
    """Immediate post-dominator of each block (exit_id for 'the function exit')."""
    n = exit_id + 1
    succ = [b.succs for b in blocks] + [[]]
    pred = [b.preds for b in blocks] + [[b.id for b in blocks if exit_id in b.succs]]
    ip = dominators(n, exit_id, lambda v: pred[v], lambda v: succ[v])
    return ip[:exit_id]


def ipdom_of(succs, exit_node):
    """Immediate post-dominators for a hand-written CFG: succs[i] lists i's successors,
    exit_node is the (virtual) exit.  Returns a list indexed by node."""
    n = len(succs)
    preds = [[] for _ in range(n)]
    for v, ss in enumerate(succs):
        for s in ss:
            preds[s].append(v)
    return dominators(n, exit_node, lambda v: preds[v], lambda v: succs[v])


def loop_nested_order(nodes, head, succs):
    """Topological order of the forward edges among ``nodes`` in which each strongly
    connected component (loop) is contiguous and ordered recursively from its entry."""
    nodes = set(nodes)
    index, low, onstack, stack, sccs = {}, {}, set(), [], []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        onstack.add(v)
        for w in succs(v):
            if w not in nodes or w == head:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in onstack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                onstack.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(comp)

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 4 * len(nodes) + 1000))
    try:
        strong(head)
    finally:
        sys.setrecursionlimit(old)
    out = []
    for comp in reversed(sccs):
        if len(comp) == 1 and (comp[0] == head or comp[0] not in succs(comp[0])):
            out.append(comp[0])
            continue
        cset = set(comp)
        entries = [v for v in comp if any(v in succs(u) for u in nodes - cset)]
        sub_head = min(entries or comp)
        out.extend(loop_nested_order(cset, sub_head, succs))
    return out


def analyse(fn):
    """FuncInfo for a parsed function with a body."""
    instrs, labels, blocks, by_start = split_blocks(fn.body)
    exit_id = link_cfg(instrs, labels, blocks, by_start)
    succ = [b.succs for b in blocks]
    pred = [b.preds for b in blocks]
    idom = dominators(len(blocks), 0, lambda v: [s for s in succ[v] if s != exit_id],
                      lambda v: pred[v]) if blocks else []
    ipdom = post_dominators(blocks, exit_id)
    order = loop_nested_order(range(len(blocks)), 0,
                              lambda v: [s for s in succ[v] if s != exit_id])
    seen = set(order)
    order += [b.id for b in blocks if b.id not in seen]          # unreachable code, text order
    info = FuncInfo(fn, instrs, labels, blocks, exit_id, idom, ipdom, order)
    info.vars = {v.name: v for v in fn.vars}
    return info


@dataclass
class Linked:
    """All functions laid out as one instruction array (see :func:`link`)."""
    code: list                      # Instr per pc (synthetic jumps have opcode 'bra' and line 0)
    func_of: list                   # function name per pc
    target: dict                    # pc -> branch target pc
    entry_pc: dict                  # function name -> first pc
    infos: dict                     # function name -> FuncInfo


def link(infos, entry):
    """Lay out ``entry`` and the functions in ``infos`` in loop-nested block order.  Every
    block's fall-through, if it no longer follows it, becomes an explicit ``bra.uni``."""
    code, func_of, target, entry_pc = [], [], {}, {}
    names = [entry] + [n for n in infos if n != entry]
    fixups = []
    for name in names:
        info = infos[name]
        entry_pc[name] = len(code)
        block_pc = {}
        for pos, bid in enumerate(info.order):
            b = info.blocks[bid]
            block_pc[bid] = len(code)
            for k in range(b.start, b.end):
                ins = info.instrs[k]
                if ins.opcode in BRANCHES:
                    fixups.append((len(code), info, block_pc, info.labels[ins.operands[0][1]]))
                code.append(ins)
                func_of.append(name)
            last = info.instrs[b.end - 1] if b.end > b.start else None
            falls = last is None or (last.opcode not in TERMINATORS + BRANCHES
                                     or last.guard is not None)
            nxt = b.id + 1
            if falls and nxt < len(info.blocks):
                after = info.order[pos + 1] if pos + 1 < len(info.order) else None
                if after != nxt:
                    jump = Instr("bra", ("uni",), (), [("sym", "<fallthrough>")], None,
                                 last.loc if last else None, 0, "<fall-through>")
                    fixups.append((len(code), info, block_pc, info.blocks[nxt].start))
                    code.append(jump)
                    func_of.append(name)
            elif falls:
                code.append(Instr("ret", (), (), [], None, last.loc if last else None, 0,
                                  "<end of function>"))
                func_of.append(name)
    for pc, info, block_pc, instr_idx in fixups:
        bid = next(b.id for b in info.blocks if b.start == instr_idx)
        target[pc] = block_pc[bid]
    return Linked(code, func_of, target, entry_pc, infos)
