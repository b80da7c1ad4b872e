"""Registers per thread, estimated from the IR (the compiled kernel's count is unknown).

Method: backward liveness over the structured IR (If: union of both sides; Loop: iterate to
a fixed point), counting each live scalar as one 32-bit register, or two for 64-bit types,
and each live array as its 64-bit base address.  Values the compiler turns into immediates
(casts of constants and copies of them, ntid/nctaid) and predicates (bools) take none.

    registers = max live registers + OVERHEAD, capped at gpu.max_registers_per_thread

OVERHEAD covers what the IR does not show: the address temporaries of loads and stores,
loop induction variables after unrolling, and ABI registers.  It is a documented
assumption (docs/timing.md), not a fit; `TimingModel(registers_per_thread=...)` and
`simgpu.predict(..., registers_per_thread=...)` override the estimate.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.nodes import Call, Const, If, Instr, Loop, walk

OVERHEAD = 10
MIN_REGISTERS = 16
_CONST_SREGS = ("ntid.", "nctaid.")


def _width(t):
    if isinstance(t, T.ArrayType):
        return 2
    if t is None or t == T.BOOL:
        return 0
    bw = getattr(t, "bitwidth", 32)
    return 2 if bw > 32 else 1


class _Liveness:
    def __init__(self, fn):
        self.types = fn.var_types
        self.consts = set()
        self.peak = 0

    def weight(self, live):
        return sum(_width(self.types.get(v)) for v in live)

    def uses(self, args):
        return {a for a in args if isinstance(a, str) and a not in self.consts}

    def instr(self, s, live):
        if s.dst is not None and s.dst in live:
            live = live - {s.dst}
        live = live | self.uses(s.args)
        self.peak = max(self.peak, self.weight(live | ({s.dst} if s.dst else set())))
        return live

    def block(self, stmts, live):
        for s in reversed(stmts):
            if isinstance(s, Instr):
                live = self.instr(s, live)
            elif isinstance(s, If):
                a = self.block(s.then, live)
                b = self.block(s.orelse, live)
                live = a | b | self.uses((s.cond,))
            elif isinstance(s, Loop):
                live = self.loop(s, live)
            elif isinstance(s, Call):
                live = self.block(s.body, live)
        return live

    def loop(self, s, live_out):
        extra = self.uses(tuple(s.range_args) + ((s.range_var,) if s.range_var else ()) + (s.cond,))
        live = live_out | extra
        for _ in range(4):
            inner = self.block(s.cond_body + s.body, live)
            new = live | inner
            if new == live:
                break
            live = new
        return live

    def find_consts(self, stmts):
        for s in stmts:
            if isinstance(s, Instr):
                if s.op == "cast" and s.args and isinstance(s.args[0], Const):
                    self.consts.add(s.dst)
                elif s.op == "copy" and s.args and (isinstance(s.args[0], Const) or s.args[0] in self.consts):
                    self.consts.add(s.dst)
                elif s.op == "sreg" and str(s.attrs.get("name", "")).startswith(_CONST_SREGS):
                    self.consts.add(s.dst)
                elif s.op in ("dim", "size", "ndim", "shared_array", "local_array", "const_array"):
                    self.consts.add(s.dst)
            elif isinstance(s, If):
                self.find_consts(s.then)
                self.find_consts(s.orelse)
            elif isinstance(s, Loop):
                self.find_consts(s.cond_body + s.body)
            elif isinstance(s, Call):
                self.find_consts(s.body)


def _reassigned(fn):
    """Names assigned more than once are not constants even if one assignment is."""
    seen, twice = set(), set()
    for s in walk(fn.body):
        if isinstance(s, Instr) and s.dst is not None:
            (twice if s.dst in seen else seen).add(s.dst)
    return twice


def max_live_registers(fn) -> int:
    """The most 32-bit registers live at any point of `fn` (see module docstring)."""
    lv = _Liveness(fn)
    lv.find_consts(fn.body)
    lv.consts -= _reassigned(fn)
    lv.block(fn.body, set())
    return lv.peak


def estimate_registers(fn, gpu) -> int:
    """Registers per thread the compiled kernel is estimated to use."""
    r = max_live_registers(fn) + OVERHEAD
    return int(min(gpu.max_registers_per_thread, max(MIN_REGISTERS, r)))


__all__ = ["estimate_registers", "max_live_registers", "OVERHEAD"]
