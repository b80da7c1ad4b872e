"""Analysis of a linked PTX program that the run-time checks need: its loops.

A loop is a branch back to a pc at or before it in the same function (the layout puts every
loop in one contiguous pc range).  For each loop: the registers that decide it (every
branch's guard in it, closed over what computes them inside the loop) and whether they read
memory or the loop writes it -- what the runaway-loop check (runtime/ptx_path.py's
PtxLoopWatch, exec/budget.py's rules) must snapshot to prove that a loop makes no progress.
"""
from __future__ import annotations

from collections import defaultdict

_NO_DST = frozenset(("st", "red", "bar", "barrier", "bra", "brx", "ret", "exit", "trap", "membar",
                     "fence", "call", "prefetch", "prefetchu", "discard", "nanosleep", "pmevent",
                     "cp", "griddepcontrol", "setmaxnreg"))
_MEM_READ = frozenset(("ld", "ldu", "atom", "tex", "tld4", "suld", "ldmatrix"))
_MEM_WRITE = frozenset(("st", "atom", "red", "sust", "sured", "call", "stmatrix"))
_INVARIANT_SPACES = ("param", "const")


def regs_of(op, out):
    """The register names an operand mentions (addresses, pairs, vectors, negations)."""
    if not isinstance(op, tuple) or not op:
        if isinstance(op, list):
            for x in op:
                regs_of(x, out)
        return out
    k = op[0]
    if k == "reg":
        out.add(op[1])
    elif k in ("pair", "not"):
        for x in op[1:]:
            regs_of(x, out)
    elif k in ("vec", "list"):
        for x in op[1]:
            regs_of(x, out)
    elif k == "addr":
        regs_of(op[1], out)
    return out


class PtxLoop:
    """One loop of the linked program: pcs [head, end] of one function; its deciding
    registers (every branch's guard in it, closed over what computes them in the loop), and
    whether they read memory / the loop writes memory (then the whole state must repeat)."""

    def __init__(self, image, head, end):
        linked = image.linked
        code, fn = linked.code, linked.func_of[head]
        self.head, self.end, self.fn = head, end, fn
        pcs = [pc for pc in range(head, end + 1) if linked.func_of[pc] == fn]
        deps, seeds, reads = defaultdict(set), set(), set()
        self.writes_memory = False
        calls = any(code[pc].opcode == "call" for pc in pcs)    # a callee's return comes by .param
        for pc in pcs:
            ins = code[pc]
            op = ins.opcode
            g = {ins.guard[0]} if ins.guard else set()
            if op in _MEM_WRITE:
                self.writes_memory = True
            if op in ("bra", "brx", "ret", "exit", "trap"):
                seeds |= g
                if op == "brx":
                    regs_of(ins.operands, seeds)
                continue
            writes = "red" in ins.mods if op in ("bar", "barrier") else op not in _NO_DST
            if not writes or not ins.operands:     # bar.red (syncthreads_count & co.) writes
                continue
            dst = regs_of(ins.operands[0], set())
            src = regs_of(ins.operands[1:], set()) | g
            if ins.guard:           # a predicated write keeps the old value where the guard fails
                src |= dst
            invariant = op in ("ld", "ldu") and (
                ("const" in ins.mods or "nc" in ins.mods) or ("param" in ins.mods and not calls))
            memory = op in _MEM_READ and not invariant
            for d in dst:
                deps[d] |= src
                if memory:
                    reads.add(d)
        state, todo = set(), list(seeds)
        while todo:
            r = todo.pop()
            if r not in state:
                state.add(r)
                todo.extend(deps.get(r, ()))
        self.deciding = sorted((fn, r) for r in state if r in deps)
        self.reads_memory = bool(state & reads)
        self.full = self.reads_memory and self.writes_memory
        self.lines = sorted({code[pc].loc[1] for pc in pcs if code[pc].loc and code[pc].loc[1]})
        locs = [code[pc].loc for pc in pcs if code[pc].loc and code[pc].loc[1]]
        self.loc = None
        if locs:
            first = min(locs, key=lambda lc: lc[1])
            self.loc = image.module.source(first)



class PtxLoops:
    """The loops of an Image's linked program, by head pc: a branch back to a pc at or before
    it in the same function (the layout puts every loop in one contiguous range)."""

    def __init__(self, image):
        linked = image.linked
        self.image, self.func_of = image, linked.func_of
        ends = {}
        for pc, t in linked.target.items():
            if t <= pc and linked.func_of[t] == linked.func_of[pc]:
                ends[t] = max(ends.get(t, t), pc)
        self.heads = ends
        self._loops = {}

    def get(self, head):
        lp = self._loops.get(head)
        if lp is None:
            lp = self._loops[head] = PtxLoop(self.image, head, self.heads[head])
        return lp
