"""The timing model's view of the IR kernel: the cost source (trace.Code) of the IR executor.

An executed IR instruction is its own trace entry (program.py costs its op: sass/costs.py);
a decision the interpreter reports (an If, a loop test, a break/continue/return) is an entry
too, a `BranchIns`, paying its LOOP_COST row.  Loops are the IR's structured `Loop` nodes: a
node's position is the node (its ``id``), the loops around it are the Loops it is nested in
(through inlined device functions: each call site is lowered on its own), and a loop's head is
its test -- the ``loop`` BranchEvent the interpreter reports at the top of every iteration.
"""
from __future__ import annotations

from ..ir.nodes import Call, If, Loop
from ..sass.costs import flops


def position(node):
    """A node's position: its id (break/continue/return have none: the node itself)."""
    return getattr(node, "id", None) or id(node)


class IrCode:
    """Per IR node of kernel ``fn``: the loops around it (heads, outermost first)."""

    def __init__(self, fn):
        self.fn = fn                        # kept: positions of id-less nodes are their identities
        self.heads = set()
        self.loops_at = {}
        self._flops = {}
        self._branches = {}
        self._walk(fn.body, ())

    def _walk(self, stmts, loops):
        for st in stmts:
            k = type(st)
            if k is Loop:
                inner = loops + (st.id,)
                self.heads.add(st.id)
                self.loops_at[st.id] = inner
                self._walk(st.cond_body, inner)
                self._walk(st.body, inner)
                continue
            self.loops_at[position(st)] = loops
            if k is If:
                self._walk(st.then, loops)
                self._walk(st.orelse, loops)
            elif k is Call:
                self._walk(st.body, loops)

    def where(self, ev):
        return position(ev.ins) if hasattr(ev, "ins") else position(ev.node)

    def cost(self, ev):
        ins = ev.ins
        f = self._flops.get(ins.id)
        if f is None:
            f = self._flops[ins.id] = flops(ins)
        return ins, f

    def branch_op(self, ev):
        node, kind = ev.node, ev.kind
        key = (position(node), kind)
        b = self._branches.get(key)
        if b is None:
            b = self._branches[key] = BranchIns(node, kind)
        return b

    def inside(self, pos, head):
        return head in self.loops_at[pos]


class BranchIns:
    """Stand-in 'instruction' for a branch entry: an If's or a loop iteration's."""
    op = "branch"
    id = -1
    dst = None
    args = ()
    attrs: dict = {}
    loc = None

    def __init__(self, node, kind):
        self.node, self.kind = node, kind
        loc = getattr(node, "loc", None)
        self.line = (loc.file, loc.line) if loc is not None else None


__all__ = ["IrCode", "BranchIns", "position"]
