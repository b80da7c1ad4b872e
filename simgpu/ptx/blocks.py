"""Straight-line runs of a kernel compiled once into one Python function each (issue 26).

The per-instruction interpreter (executor.Executor._run) pays, for every instruction, a
scheduler step, the compiled closure, its guard, reader and writer closures, the semantics
wrapper (an ``np.errstate`` context) and ``advance``.  On kernels with few warps that is most of
the time.  :func:`compile_runs` finds, in the linked program, the maximal *runs* of consecutive
instructions that the builders marked ``fusable`` (instrs.py: unguarded arithmetic from the one
semantics table without the carry chain, ``setp``, scalar ``mov``; any other instruction,
memory, warp, control and whatever other op modules add, is never fused) whose operands are
registers or immediates, split at every branch target, and generates for each run one Python
function (compiled the second time the run is reached, Run.ready) that executes it for
the running lanes: the same semantics functions of the one PTX
table (``semantics.lookup``), with operands pre-resolved (register keys, storage and operand
dtypes, immediates as constants), registers read and written through the executor's own
``read_reg``/``write_reg`` rules, uniform (0-d) values kept scalar exactly as
``instrs.uniform_call`` does.  Observers are notified once per instruction, before it runs,
with the same arguments as the interpreter (``Executor.notify_instr``), so every event and
count is the same, in the same order.

The executor (``Executor._run``) calls a run's function only when the interpreter would have
executed every instruction of the run for the same lanes one after the other: while the chunk
is converged; or, diverged, when the lanes that run alone stay below every other running
lane's key for the whole run (the check ``_pick`` makes per step, made once); and when the
step budget is not exceeded on the way.  Otherwise the instruction runs alone, as before.
``settings.ptx_blocks`` (``SIMGPU_PTX_BLOCKS=0``) turns the compiled runs off; the
differential test (tests/test_ptx_blocks.py) runs both on many kernels and compares outputs,
counts and every observer event.
"""
from __future__ import annotations

import numpy as np

from simgpu import settings
from simgpu.ptx import jitseg
from simgpu.ptx.executor import convert_read
from simgpu.ptx.instrs import imm_value, uniform_call
from simgpu.ptx.memory import MemFault
from simgpu.ptx.types import np_dtype

MIN_RUN = 2                     # shorter runs gain nothing over the interpreter


COMPILE_AT = 2                  # a run is compiled when it is reached this often (code that runs
                                # once, a prologue, is not worth Python's compile: ~2 ms a run)


class Run:
    """A straight-line run: once compiled, ``fn(ex, lanes, notify)`` executes instructions
    ``start .. start + n - 1`` (``notify``: ``ex.notify_instr`` or None), each notified just
    before it runs; ``fast(ex, lanes, notify)`` does the same with the instructions of the
    numba subset (jitseg.py) grouped into segments of one compiled call each, the segment's
    instructions notified before it runs (for observers that read no state inside a run:
    ``Emitter.order_free``).  It is compiled when :meth:`ready` has been asked COMPILE_AT
    times (the kernel keeps it for its launches)."""
    __slots__ = ("kernel", "start", "n", "fn", "fast", "_source", "_fast_source", "hits")

    def __init__(self, kernel, start, n):
        self.kernel, self.start, self.n = kernel, start, n
        self.fn = self.fast = self._source = self._fast_source = None
        self.hits = 0

    def ready(self):
        """Whether the run is compiled (compiling it at its COMPILE_AT-th call)."""
        if self.fn is None:
            self.hits += 1
            if self.hits < COMPILE_AT:
                return False
            self._build()
        return True

    def _build(self):
        end = self.start + self.n
        self.fn, self._source = _compile(self.kernel, self.start, end)
        segs = _segments(self.kernel, self.start, end) if settings.current().ptx_jit else {}
        if segs:
            self.fast, self._fast_source = _compile(self.kernel, self.start, end, segs)
        else:
            self.fast, self._fast_source = self.fn, self._source

    @property
    def source(self):
        """The generated Python source (compiling the run if it is not yet)."""
        if self._source is None:
            self._build()
        return self._source

    @property
    def fast_source(self):
        """The generated Python source of ``fast``."""
        if self._source is None:
            self._build()
        return self._fast_source


def _segments(kernel, start, end):
    """{first pc: jitseg.Segment} for the maximal groups of consecutive instructions of
    ``start .. end - 1`` in the numba subset."""
    out, pc = {}, start
    while pc < end:
        if not jitseg.supported(kernel, pc):
            pc += 1
            continue
        e = pc + 1
        while e < end and jitseg.supported(kernel, e):
            e += 1
        seg = jitseg.build(kernel, pc, e)
        if seg is not None:
            out[pc] = seg
        pc = e
    return out


def _operand_ok(op):
    return op[0] in ("reg", "imm", "fimm", "sink")


def _fusable(kernel, pc):
    c = kernel.compiled[pc]
    spec = getattr(c.exec, "fusable", None)
    if spec is None:
        return None
    ops = c.ptx.operands
    dst = ops[0]
    if spec[0] in ("ldg", "ldparam"):       # ld.global d, [reg+off]; ld.param d, [kernel param]
        return spec                         # (ops_mem.build_ld checked them)
    if spec[0] == "movvec":                 # mov {a, b}, c / mov c, {a, b}: (un)packing
        parts = [o for op in ops for o in (op[1] if op[0] == "vec" else [op])]
        return spec if all(_operand_ok(o) and o[0] != "sink" for o in parts) else None
    if spec[0] == "setp" and dst[0] == "pair":
        if not (_operand_ok(dst[1]) and _operand_ok(dst[2])):
            return None
    elif not _operand_ok(dst):
        return None
    if not all(_operand_ok(o) and o[0] != "sink" for o in ops[1:]):
        return None
    return spec


def compile_runs(kernel):
    """{start pc: Run} for the kernel's fusable runs (runner.Kernel calls it once; each run is
    compiled when it is first reached again, Run.ready)."""
    code = kernel.linked.code
    cuts = set(kernel.linked.target.values()) | set(kernel.linked.entry_pc.values())
    runs, pc, n = {}, 0, len(code)
    while pc < n:
        if _fusable(kernel, pc) is None:
            pc += 1
            continue
        end = pc + 1
        while end < n and end not in cuts and _fusable(kernel, end) is not None:
            end += 1
        if end - pc >= MIN_RUN:
            runs[pc] = Run(kernel, pc, end - pc)
        pc = end
    return runs


class _Gen:
    def __init__(self, kernel):
        self.k, self.lines, self.n, self.ind = kernel, [], 0, ""
        self.ns = {"np": np, "CR": convert_read, "UC": uniform_call}

    def const(self, value, stem="C"):
        self.n += 1
        name = f"{stem}{self.n}"
        self.ns[name] = value
        return name

    def emit(self, line):
        self.lines.append("    " + self.ind + line)

    def read(self, func, op, t, var):
        """Lines setting ``var`` to operand ``op`` read as PTX type t (Executor.read_reg)."""
        if op[0] in ("imm", "fimm"):
            self.emit(f"{var} = {self.const(imm_value(op, t))}")
            return
        key = (func, op[1])
        S, T = self.k.reg_dtype[key], np_dtype(t)
        self.emit(f"a = R.get({key!r})")
        self.emit(f"if a is None: {var} = ex.read_reg({key!r}, {t!r}, lanes)")
        self.emit("else:")
        self.emit("    if a.ndim and sub is not None: a = a[sub]")
        if S == np.bool_ or T == np.bool_ or S.itemsize != T.itemsize:
            self.emit(f"    {var} = CR(a, {t!r})")
        else:
            self.emit(f"    {var} = a.view({self.const(T, 'T')})")

    def write(self, func, op, value, t):
        if op[0] == "sink":
            return
        self.emit(f"W({(func, op[1])!r}, {value}, {t!r}, lanes)")

    def call(self, fn, args, out):
        """``out = uniform_call(fn, args)`` without the wrapper's errstate (the executor's loop
        runs under np.errstate(all='ignore') already) when an operand is per lane."""
        f, raw = self.const(fn, "F"), self.const(fn.__wrapped__, "G")
        nd = " or ".join(f"{a}.ndim" for a in args)
        self.emit(f"if {nd}: {out} = asarray({raw}({', '.join(args)}))")
        self.emit(f"else: {out} = UC({f}, [{', '.join(args)}])")


def _compile(kernel, start, end, segments=None):
    g = _Gen(kernel)
    g.ns["asarray"] = np.asarray
    g.ns["MF"] = MemFault
    segments = segments or {}
    pc = start
    while pc < end:
        seg = segments.get(pc)
        if seg is None:
            _one(g, kernel, pc)
            pc += 1
            continue
        # a numba segment: computed (nothing changes), notified, its registers written; or, when
        # it cannot run (jitseg.Segment.compute: a load it does not take), instruction by instruction
        g.emit(f"# pc {pc}..{seg.end - 1}: one compiled segment")
        S = g.const(seg, "S")
        g.emit(f"st = {S}.compute(ex, sub)")
        g.emit("if st is None:")
        g.ind += "    "
        for q in range(pc, seg.end):
            _one(g, kernel, q)
        g.ind = g.ind[:-4]
        g.emit("else:")
        lined = tuple(q for q in range(pc, seg.end) if kernel.compiled[q].ptx.line)
        steps = seg.end - pc - len(lined)       # (notify_many counts the others)
        g.emit(f"    if N is not None: ex.steps += {steps}; ex.notify_many({lined!r}, lanes)" if steps
               else f"    if N is not None: ex.notify_many({lined!r}, lanes)")
        g.emit(f"    {S}.commit(ex, sub, st)")
        pc = seg.end
    head = ["def run(ex, lanes, N):",
            "    R, W = ex.regs, ex.write_reg",
            "    sub = None if lanes is None or lanes is ex.ch.all_idx else lanes"]
    source = "\n".join(head + g.lines) + "\n"
    exec(compile(source, f"<simgpu ptx run {kernel.kernel_name}:{start}>", "exec"), g.ns)
    return g.ns["run"], source


def _one(g, kernel, pc):
    """The lines of instruction ``pc``: notified, then run (the interpreter's semantics)."""
    c = kernel.compiled[pc]
    ins, func = c.ptx, c.func
    kind, fn, t, extra = c.exec.fusable
    g.emit(f"# pc {pc}: {ins.text}")
    I = g.const(c, "I")
    if ins.line:
        g.emit(f"if N is not None: ex.steps += 1; N({pc}, {I}, lanes)")
    else:
        g.emit("if N is not None: ex.steps += 1")
    ops = ins.operands
    if kind in ("movvec", "ldg", "ldparam"):    # the instruction's own closure (its advance is
        g.emit("try:")          # overwritten by run_fused); a fault as the interpreter reports it
        g.emit(f"    {g.const(c.exec, 'X')}(ex, lanes, {pc})")
        g.emit(f"except MF as e: ex.fault({I}.ptx, e.msg, e.pos)")
        return
    if kind == "mov":
        g.read(func, ops[1], t, "v0")
        g.write(func, ops[0], "v0", t)
    elif kind == "arith":
        args = []
        for k, (o, st) in enumerate(zip(ops[1:], extra)):
            g.read(func, o, st, f"v{k}")
            args.append(f"v{k}")
        g.call(fn, args, "r")
        g.write(func, ops[0], "r", t)
    else:                                   # setp
        comb = extra
        g.read(func, ops[1], t, "v0")
        g.read(func, ops[2], t, "v1")
        g.call(fn, ["v0", "v1"], "r")
        g.emit("r = asarray(r, bool)")
        dst = ops[0]
        wq = dst[2] if dst[0] == "pair" else None
        if comb is not None:
            g.read(func, ops[3], "pred", "c")
            cb = g.const(comb, "B")
            g.emit(f"p = {cb}(r, c)")
            if wq is not None:
                g.emit(f"q = {cb}(~r, c)")
        else:
            g.emit("p = r")
            if wq is not None:
                g.emit("q = ~r")
        g.write(func, dst[1] if dst[0] == "pair" else dst, "p", "pred")
        if wq is not None:
            g.write(func, wq, "q", "pred")
