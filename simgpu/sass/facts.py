"""What the compiled kernel's SASS says per PTX line, and the PTX instruction as an observer
sees it (``PtxInst``): facts from ptxas and nvdisasm (simgpu/sass/toolchain.py), keyed by PTX line.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from ..ir.nodes import Loc
from .opclasses import base_opcode, pipe_of
from .flow import KernelPlan
from .paths import line_paths

_IR_OP = {"ld": "ld", "ldu": "ld", "st": "st", "atom": "atomic", "red": "atomic"}


def ir_op(opcode):
    """The IR-style op of a PTX opcode, as observers see it ('ld', 'st', 'atomic', or itself)."""
    return _IR_OP.get(opcode, opcode)


_CALL_TARGET = re.compile(r"`\(([^)]+)\)")
_LOCAL_SASS = ("LDL", "STL")


@dataclass(eq=False)
class PtxInst:
    """One PTX instruction of the compiled kernel, as an observer's ``ins``: ``id`` is its
    line in the PTX (stable over chunks and launches of the same code), ``loc`` the user's
    source line that the PTX ``.loc`` gave it (line 0 where the compiler gave none)."""
    id: int
    loc: Loc
    op: str                                  # IR-style op: 'ld' 'st' 'atomic' or the PTX opcode
    attrs: dict = field(default_factory=dict)   # opcode, ptx (text), space, sass (opcodes)

    def __repr__(self):
        return f"<PtxInst line {self.id}: {self.attrs.get('ptx', '')} @ {self.loc.file}:{self.loc.line}>"


class SassFacts:
    """What the compiled kernel's SASS says per PTX line: the SASS instructions it runs (its own
    and the subroutines it calls, on the fast path where ptxas made a slow path: sass/paths.py),
    their pipes, the user's source line."""

    def __init__(self, compiled, kernel_file=""):
        self.compiled = compiled
        self.kernel_file = kernel_file
        self.sass = {}                      # PTX line -> [opcode] its fast path runs (sass/paths.py)
        self.slow_paths = {}                # PTX line -> LinePath, for lines with a slow path
        for ks in compiled.facts.kernels.values():
            for line, path in line_paths(ks.instructions, ks.subroutines).items():
                self.sass.setdefault(line, []).extend(path.fast)
                if path.slow is not None:
                    self.slow_paths[line] = path
        self.count = {ln: len(v) for ln, v in self.sass.items()}
        self.pipes = {ln: histogram(pipe_of(op) for op in v) for ln, v in self.sass.items()}
        self.source = compiled.ptx_source
        self.plan, self.plan_error = None, None   # sass/flow.py: SASS block counts
        try:
            self.plan = KernelPlan(compiled)
        except Exception as e:  # noqa: BLE001 - counted per line instead, and said so
            self.plan_error = f"{type(e).__name__}: {e}"
        self._insts = {}
        self._local = None

    def loc(self, ptx_line):
        s = self.source.get(ptx_line)
        return Loc(s.file, s.line, s.col) if s else Loc(self.kernel_file, 0)

    def inst(self, ptx_line, opcode="", text="", space=None):
        i = self._insts.get(ptx_line)
        if i is None:
            i = self._insts[ptx_line] = PtxInst(
                ptx_line, self.loc(ptx_line), _IR_OP.get(opcode, opcode),
                {"opcode": opcode, "ptx": text, "space": space,
                 "sass": list(self.sass.get(ptx_line, ()))})
        elif space is not None and i.attrs["space"] is None:
            i.attrs["space"] = space
        return i

    def is_reduction(self, ptx_line):
        """ptxas made RED (no value returned) from this atomic."""
        return any(base_opcode(op).startswith("RED") for op in self.sass.get(ptx_line, ()))

    def issues_local(self, ptx_line=None):
        """Whether the compiled kernel touches local memory at all.  ptxas may keep a PTX
        .local array in registers (even a dynamically indexed one, as a chain of predicated
        moves); then it emits no LDL/STL and the PTX's ld/st.local issue nothing.  Decided per
        kernel, not per PTX line: the line table sometimes credits an LDL to the PTX line
        before the ld.local it came from."""
        if self._local is None:
            ops = [base_opcode(op) for v in self.sass.values() for op in v]
            self._local = not self.sass or any(op in _LOCAL_SASS for op in ops)
        return self._local


def histogram(items):
    h = defaultdict(int)
    for x in items:
        h[x] += 1
    return dict(h)
