"""The timing model's view of the compiled code: PTX instructions costed by ptxas' SASS.

On the compiled path (runtime/ptx_path.py) the executor reports every executed PTX
instruction (``inst(ev)``, an events.InstrEvent: its ``pc`` and the chunk lanes that ran it) and,
after it, the memory access it made (``mem(ev)``, an events.MemEvent).  The trace recorder of
both paths (trace.TraceRecorder) turns these into entries with `PtxCode` as its cost source, so
the sampling, the per-warp programs (program.py) and the SM simulation (sim.py) are shared by
both paths.

What an entry costs comes from the SASS, not from estimates (`PtxOp`):

* issue cycles: the number of SASS instructions ptxas made from that PTX line (a CALL to a
  slow-path subroutine counts the subroutine once, as sass facts give it);
* pipes: each SASS opcode's pipe (sass/opclasses.py), in the simulator's pipe names;
* latency: the slowest pipe's latency, plus half the rest of a routine's instructions on the
  critical path (params.op_latency, as for the IR);
* dependencies: the PTX registers read (guard predicate included) and written;
* the tensor pipe: an HMMA/IMMA/HGMMA/... occupies its SMSP's tensor pipe for its work in
  units of 1024 dense fp16 FLOPs per warp (``tensor_units``: HMMA.16816 4, HGMMA.64x128x16,
  whose 64 rows are split over the warpgroup's 4 warps, 64; tf32 counts twice, fp8/int8 half
  an fp16 FLOP), each unit ``params.interval["tensor"]`` cycles (the datasheet's dense fp16
  rate: docs/timing.md); WARPGROUP.ARRIVE/DEPBAR issue only;
* FLOPs: FADD/FMUL = 1, FFMA = 2 (and the FP64/FP16 forms) per thread, as Nsight Compute's
  roofline counts executed SASS; ``HFMA2.MMA`` with zero operands is ptxas' register-move
  idiom, not arithmetic, and counts none.

Loops are found in the linked program (program.link lays every loop out as one contiguous
range starting at its head): a branch back to an earlier pc of the same function closes the
loop whose head is its target.  An execution of a head pc by sampled warps is one iteration,
so loop sampling (sampling.py) works as on the IR path.
"""
from __future__ import annotations

import re

from ..sass.opclasses import base_opcode, pipe_of
from .opcosts import measured

NO_DST = frozenset(("st", "red", "bar", "barrier", "bra", "brx", "ret", "exit", "trap", "membar",
                    "fence", "prefetch", "prefetchu", "call", "nanosleep", "cp", "discard",
                    "vprintf", "pmevent", "griddepcontrol", "setmaxnreg"))
IR_OP = {"ld": "ld", "ldu": "ld", "st": "st", "atom": "atomic", "red": "atomic"}
_FP32 = frozenset("FFMA FFMA32I FADD FADD32I FMUL FMUL32I FSWZADD HFMA2 HADD2 HMUL2 HMNMX2 FMNMX".split())
# I2FP (sm_90's int -> float) is not here: it issues on the ALU, measured (timing/opcosts.py)
_CONV = frozenset("F2F F2I I2F I2I FRND F2IP".split())
FLOPS = {"FFMA": 2, "FFMA32I": 2, "FADD": 1, "FADD32I": 1, "FMUL": 1, "FMUL32I": 1,
         "DFMA": 2, "DADD": 1, "DMUL": 1, "HFMA2": 4, "HADD2": 2, "HMUL2": 2}
# sass/opclasses pipe (Nsight Compute's names) -> the simulator's pipe (params.py)
SIM_PIPE = {"fma": "fp32", "fmaheavy": "imad", "alu": "int", "xu": "sfu", "lsu": "lsu", "adu": "adu",
            "cbu": "branch", "uniform": "uniform", "fp64": "fp64", "fp16": "fp32", "tensor": "tensor",
            "tex": "lsu", "none": "none", "unknown": "int"}


_TENSOR_SHAPE = re.compile(r"^[A-Z]+\.(\d+)x(\d+)x(\d+)|^[A-Z]+\.(16|8)(8|16)(4|8|16|32|64|128|256)(?:\.|$)")
# FLOP weight of an element type, relative to fp16 (the datasheet's dense rates: tf32 1/2, fp8
# and int8 2x, fp64 DMMA 1/16 of fp16's)
_TENSOR_WEIGHT = (("TF32", 2.0), ("E4M3", 0.5), ("E5M2", 0.5), ("S8", 0.5), ("U8", 0.5))


def tensor_units(opcode, ins=None):
    """Work of one warp's tensor-core SASS instruction, in units of 1024 dense fp16 FLOPs (0
    for WARPGROUP.* and shapes it cannot read): HMMA.16816.F32 -> 4, HGMMA.64x128x16.F32 ->
    64 (a warp does 16 of the 64 rows).  An opcode without its shape (SASS facts cached before
    the disassembly kept "64x128x16") takes it from ``ins``, the wgmma PTX it came from."""
    base = base_opcode(opcode)
    m = _TENSOR_SHAPE.match(opcode)
    if m is None and base.endswith("GMMA") and ins is not None and ins.opcode == "wgmma":
        shape = next((x for x in ins.mods if x.startswith("m64n")), "")
        p = re.match(r"m(\d+)n(\d+)k(\d+)$", shape)
        if p:
            opcode = f"{base}.{p.group(1)}x{p.group(2)}x{p.group(3)}." + ".".join(ins.types).upper()
            m = _TENSOR_SHAPE.match(opcode)
    if base == "WARPGROUP" or m is None:
        return 0.0
    if m.group(1):
        M, N, K = (int(m.group(i)) for i in (1, 2, 3))
    else:
        M, N, K = (int(m.group(i)) for i in (4, 5, 6))
    if base.endswith("GMMA"):
        M //= 4                            # one warp of the warpgroup: 16 of the 64 rows
    w = next((f for t, f in _TENSOR_WEIGHT if f".{t}" in opcode), 1.0)
    if base in ("IMMA", "IGMMA", "QGMMA"):
        w = 0.5
    elif base == "DMMA":
        w = 16.0
    elif base in ("BMMA", "BGMMA"):
        w = 1.0 / 32
    return 2.0 * M * N * K * w / 1024.0


def sim_pipe(opcode, cc=(9, 0)):
    """The simulator's pipe for one SASS opcode: conversions on the conversion unit, shuffles,
    barriers and branches on their own, the rest by sass/opclasses.  Integer adds and moves
    issue on the pipe their opcode names (measured, validation/microbench/opcodes.py under ncu:
    IADD3 and MOV on the ALU only, VIADD, IMAD.IADD and IMAD.MOV on the FMA-heavy (IMAD) pipe
    only), not on whichever frees first ("iadd", the IR path's rule for a PTX add whose SASS
    it does not know).  BRA, ULDC and UMOV take an issue slot and no pipe ("none"; BRA as
    "branch"): ncu counts them in no pipe.  LDC, BAR and S2UR issue to the ADU ("adu", 0.5 a
    cycle per SM on Hopper: GPU.adu_per_sm_cycle); the barrier's wait is its OpSpec kind's."""
    base = base_opcode(opcode)
    if base in _FP32:
        return "fp32"
    if base in _CONV:
        return "conv"
    if base == "SHFL":
        return "shfl"
    if base == "BAR":
        return "adu"            # a block barrier is an ADU instruction (ncu counts BAR there)
    if base == "BRA":
        return "branch"
    return SIM_PIPE.get(pipe_of(opcode, cc), "int")


def sass_mix(sass_ops, ins=None, cc=(9, 0)):
    """{simulator pipe: work} of SASS opcodes ``sass_ops``: one issue per instruction, the
    tensor pipes in units of 1024 dense fp16 FLOPs (``tensor_units``; ``ins``: the PTX
    instruction they came from, for a wgmma's shape)."""
    mix = {}
    for s in sass_ops:
        p = sim_pipe(s, cc)
        k = 1
        m = measured(s, cc)
        if m is not None and m.units != 1 and p == m.pipe:
            k = m.units                    # e.g. IMAD.WIDE: two intervals of the IMAD pipe
        if p == "tensor":
            k = tensor_units(s, ins)
            if not k:                      # WARPGROUP.ARRIVE / DEPBAR: issue only
                p, k = "none", 1
            elif not base_opcode(s).endswith("GMMA"):
                p = "tensor_sync"          # one warp's mma.sync: its own measured rate
        mix[p] = mix.get(p, 0) + k
    return mix


def sass_latency(sass_ops, latency, cc=(9, 0)):
    """Cycles from issue to result of the slowest of ``sass_ops``: each opcode's measured
    latency (timing/opcosts.py) where there is one, else its pipe's (``latency``: the
    TimingParams' {pipe: cycles}); None for no instructions."""
    out = None
    for s in sass_ops:
        m = measured(s, cc)
        if m is not None and m.pipe == "branch":
            continue                    # BRA's measured 19.8 is a taken branch's stall, no result's latency
        v = m.latency if m is not None and m.latency is not None else latency.get(sim_pipe(s, cc), 4.0)
        out = v if out is None or v > out else out
    return out


def sass_flops(sass_ops):
    """FLOPs per thread of SASS opcodes (FFMA 2, FADD/FMUL 1, ...; HFMA2.MMA's move idiom 0)."""
    return sum(FLOPS.get(base_opcode(s), 0) for s in sass_ops if not s.startswith("HFMA2.MMA"))


class PtxOp:
    """One PTX instruction as the timing model costs it (built once per pc)."""
    __slots__ = ("id", "op", "opcode", "line", "loc", "n", "mix", "dsts", "srcs", "flops", "bar", "branch",
                 "tma", "ins", "cc", "sass_ops", "smem_operand_bytes", "mbar", "tag", "_variants")

    def __init__(self, ins, func, sass_ops, source, cc=(9, 0)):
        self.ins, self.cc = ins, cc
        self.id = ins.line                  # the PTX line: memory statistics are keyed by it
        self.opcode = ins.opcode
        self.op = IR_OP.get(ins.opcode, ins.opcode)
        self.loc = source
        self.line = (source.file, source.line) if source is not None else None
        self.n = len(sass_ops)
        self.sass_ops = tuple(sass_ops)
        self.mix = sass_mix(sass_ops, ins, cc)
        self.flops = sass_flops(sass_ops)
        self.dsts, self.srcs = operand_registers(ins, func)
        # TMA (ptx/ops_tma.py): a tensor copy's traffic is several memory events (summed in mem());
        # a load's data is what the issuing warp's mbarrier waits on *the same mbarrier* wait for:
        # a pseudo register per mbarrier address (PtxCode.cost names it at each execution from
        # the address operand's value, `mbar`), so a software pipeline's wait for stage i does
        # not wait for the copy of stage i + 2 issued just before it
        self.tma = ins.opcode == "cp" and "tensor" in ins.mods
        self.mbar = self.tag = self._variants = None
        if self.tma and "mbarrier::complete_tx::bytes" in ins.mods:
            self.dsts = (f"{func}:%tma",)
            self.mbar = mbarrier_operand(ins.operands[-1], func)
        elif ins.opcode == "mbarrier" and ins.mods[:1] in (("try_wait",), ("test_wait",)):
            self.srcs = self.srcs + (f"{func}:%tma",)
            self.mbar = mbarrier_operand(ins.operands[1], func) if len(ins.operands) > 1 else None
        self.smem_operand_bytes = wgmma_smem_bytes(ins)
        self.bar = ins.opcode in ("bar", "barrier") and "warp" not in ins.mods
        self.branch = ins.opcode in ("bra", "brx", "ret", "exit")

    def __repr__(self):
        return f"<PtxOp PTX line {self.id} {self.opcode} n={self.n} {self.mix}>"

    def at_mbarrier(self, tag):
        """This TMA load or mbarrier wait on the mbarrier `tag` (its address): a copy whose
        pseudo register is that mbarrier's (made once per tag)."""
        if self._variants is None:
            self._variants = {}
        v = self._variants.get(tag)
        if v is None:
            v = object.__new__(PtxOp)
            for k in PtxOp.__slots__:
                setattr(v, k, getattr(self, k))
            name = lambda r: f"{r}@{tag}" if r.endswith(":%tma") else r     # noqa: E731
            v.dsts, v.srcs = tuple(map(name, self.dsts)), tuple(map(name, self.srcs))
            v.tag, v.mbar, v._variants = tag, None, None
            self._variants[tag] = v
        return v


def mbarrier_operand(op, func):
    """The mbarrier address operand ``[reg+off]`` / ``[sym+off]`` of a TMA load or an mbarrier
    wait: ((function, register) or None, the static part), or None for another form."""
    if op[0] != "addr" or op[1] is None:
        return None
    if op[1][0] == "reg":
        return (func, op[1][1]), op[2]
    return None, (op[1][1], op[2])


def mbarrier_tag(mbar, ev):
    """The mbarrier address an execution of a TMA load or wait uses (its first executing lane's,
    from the executor's registers: the PTX path's InstrEvent.state), or None where unknown."""
    reg, off = mbar
    if reg is None:
        return off
    regs = getattr(ev.state, "regs", None)
    v = regs.get(reg) if regs is not None else None
    if v is None:
        return None
    if getattr(v, "ndim", 0):
        lanes = ev.lanes
        v = v[lanes[0]] if lanes is not None and len(lanes) else v[0]
    return int(v) + off


def wgmma_smem_bytes(ins):
    """Bytes of shared memory a warpgroup's ``wgmma.mma_async`` reads through its descriptors:
    B (16 x N 16-bit elements), and A (64 x 16) when A is a descriptor too; 0 for any other
    instruction (the PTX ISA's shapes; simgpu runs the 16-bit m64nNk16 forms)."""
    if ins.opcode != "wgmma" or not ins.mods or ins.mods[0] != "mma_async":
        return 0
    shape = next((m for m in ins.mods if m.startswith("m64n") and m.endswith("k16")), None)
    if shape is None:
        return 0
    n = int(shape[4:-3])
    a_desc = len(ins.operands) > 1 and ins.operands[1][0] != "vec"
    return 2 * 16 * n + (2 * 64 * 16 if a_desc else 0)


def operand_registers(ins, func):
    """(registers written, registers read) of a PTX instruction, named '<function>:<reg>'."""
    ops = list(ins.operands)
    dst_ops = [] if (ins.opcode in NO_DST or not ops) else [ops.pop(0)]
    dsts, srcs = [], []
    for o in dst_ops:
        _registers(o, func, dsts)
    for o in ops:
        _registers(o, func, srcs)
    if ins.guard is not None:
        srcs.append(f"{func}:{ins.guard[0]}")
    return tuple(dsts), tuple(dict.fromkeys(srcs))


def _registers(op, func, out):
    kind = op[0]
    if kind == "reg":
        out.append(f"{func}:{op[1]}")
    elif kind in ("vec", "list"):
        for o in op[1]:
            _registers(o, func, out)
    elif kind == "pair":
        _registers(op[1], func, out)
        _registers(op[2], func, out)
    elif kind == "not":
        _registers(op[1], func, out)
    elif kind == "addr" and op[1] is not None and op[1][0] == "reg":
        out.append(f"{func}:{op[1][1]}")


class PtxCode:
    """Per pc of the linked program (ptx.program.Linked): its PtxOp (built on first use) and
    the loops around it (heads, outermost first) -- the compiled path's cost source of the
    trace recorder (trace.Code), whose positions are pcs."""

    def __init__(self, linked, sass, source, cc=(9, 0)):
        self.linked, self.sass, self.source, self.cc = linked, sass, source, cc
        self.ops = [None] * len(linked.code)
        self.end = {}                       # loop head pc -> last pc of the loop
        func_of = linked.func_of
        for pc, ins in enumerate(linked.code):
            t = linked.target.get(pc)
            if ins.opcode in ("bra", "brx") and t is not None and t <= pc and func_of[t] == func_of[pc]:
                self.end[t] = max(self.end.get(t, t), pc)
        self.heads = self.end               # trace.Code: the loop heads
        heads = sorted(self.end)
        self.loops_at = [()] * len(linked.code)
        for h in heads:
            for pc in range(h, self.end[h] + 1):
                self.loops_at[pc] = self.loops_at[pc] + (h,)

    def op(self, pc):
        o = self.ops[pc]
        if o is None:
            ins = self.linked.code[pc]
            sass = self.sass.get(ins.line, ()) if ins.line else ()
            o = self.ops[pc] = PtxOp(ins, self.linked.func_of[pc], sass, self.source.get(ins.line), self.cc)
        return o

    def where(self, ev):
        """trace.Code: a record's position, its pc."""
        return ev.pc

    def cost(self, ev):
        """trace.Code: the executed pc's PtxOp and its FLOPs per thread (a TMA load or an
        mbarrier wait: its copy for the mbarrier this execution uses)."""
        o = self.op(ev.pc)
        if o.mbar is not None:
            tag = mbarrier_tag(o.mbar, ev)
            if tag is not None:
                o = o.at_mbarrier(tag)
        return o, o.flops

    def branch_op(self, ev):
        """trace.Code: a ``bra`` is recorded as the instruction it is (its ``inst``)."""
        return None

    def inside(self, pc, head):
        """Whether pc is in the loop at `head` (or in a function called from it)."""
        f = self.linked.func_of
        return head <= pc <= self.end[head] or f[pc] != f[head]


__all__ = ["PtxCode", "PtxOp", "sim_pipe", "sass_mix", "sass_latency", "sass_flops", "operand_registers"]
