"""Passes over the typed IR that mirror what the compiler does to the code: which indices are
known non-negative (numba then skips its negative-index wrap-around), which multiply-adds
NVVM contracts into FMA/IMAD, what LLVM hoists out of loops, and which memory space each
access is in.  `contract(fn)` runs them all and marks the instructions' attrs, which the
cost estimate (simgpu/sass/costs.py) reads.
"""
from __future__ import annotations

import numpy as np

from . import types as T
from .nodes import Break, Call, Const, Continue, If, Instr, Loop, Return, walk


def _arith_kind(ins):
    """fp64 | fp16 | fp32 | int: the kind of arithmetic an add, sub or mul does (NVVM contracts
    a multiply into an add of the same kind only)."""
    tys = ins.arg_tys or ((ins.ty,) if ins.ty is not None else ())
    t = tys[0] if tys else None
    return {T.FLOAT64: "fp64", T.FLOAT16: "fp16", T.FLOAT32: "fp32"}.get(t, "int")


def _indices(ins):
    if ins.op == "ld":
        return ins.args[1:]
    if ins.op == "st":
        return ins.args[2:]
    k = ins.attrs.get("nidx", 1)
    return ins.args[len(ins.args) - k:]


def _known_nonneg(a, nonneg, fn):
    if isinstance(a, Const):
        return isinstance(a.value, (int, float)) and a.value >= 0
    t = fn.var_types.get(a)
    return a in nonneg or (t is not None and getattr(t, "signed", True) is False)


def _nonnegative(fn):
    """Names whose every assignment is provably >= 0 (what LLVM sees in numba's code, roughly):
    constants >= 0, unsigned values, and +, *, //, %, >>, & and min/max of such values;
    `x & c` for a constant c >= 0; variables of range loops with constant bounds (unrolled).
    Not special registers or cuda.grid: numba makes them signed and ptxas keeps the check.  Other range-loop variables are not (numba's range lowering
    hides the bound).  Iterated to a fixed point."""
    defs = {}
    for s in walk(fn.body):
        if isinstance(s, Instr) and s.dst is not None:
            defs.setdefault(s.dst, []).append(s)
        elif isinstance(s, Loop) and s.range_var:
            ra = s.range_args
            const = len(ra) == 3 and all(isinstance(a, Const) for a in ra) and ra[0].value >= 0 and ra[2].value > 0
            defs.setdefault(s.range_var, []).append("const-range" if const else None)
    good = set()

    def ok(a):
        return _known_nonneg(a, good, fn)

    def proves(s):
        if s is None:
            return False
        if s == "const-range":                 # unrolled: the variable is a constant in each copy
            return True
        op = s.op
        if op in ("sreg", "grid", "gridsize", "dim", "size", "ndim", "popc", "clz", "ffs"):
            # numba types these as signed integers and sign-extends them; ptxas keeps the
            # wrap-around even for cuda.grid(1) and threadIdx.x ([MB] gran_read_stride*: SEL/
            # ISETP/IADD3/IADD3.X around a[cuda.grid(1) * stride]; the suite's copy, hist_shared)
            return False
        if op in ("copy", "cast", "pos", "abs"):
            return op == "abs" or all(ok(a) for a in s.args)
        if op == "and":
            return any(ok(a) for a in s.args)
        if op in ("add", "mul", "floordiv", "mod", "rshift", "min", "max", "or", "lshift"):
            return all(ok(a) for a in s.args)
        return False

    changed = True
    while changed:
        changed = False
        for name, ds in defs.items():
            if name not in good and all(proves(d) for d in ds):
                good.add(name)
                changed = True
    return good


def _uses(fn):
    """How many times each value name is read anywhere in the function."""
    n = {}

    def use(v):
        if isinstance(v, str):
            n[v] = n.get(v, 0) + 1

    for s in walk(fn.body):
        if isinstance(s, Instr):
            for a in s.args:
                use(a)
        elif isinstance(s, If):
            use(s.cond)
        elif isinstance(s, Loop):
            use(s.cond)
            for a in s.range_args:
                use(a)
        elif isinstance(s, Return):
            use(s.value)
    return n


_IMPURE = ("ld", "atomic", "shfl", "vote", "activemask", "call")


def _loop_variant(loop, all_defs):
    """Names whose value changes from one iteration of `loop` to the next (what LLVM cannot
    hoist): its range variable, values loaded or exchanged in it, values carried around it
    (assigned in it and also elsewhere, or more than once) and anything computed from those."""
    defs = {}
    for part in (loop.cond_body, loop.body):
        for s in walk(part):
            if isinstance(s, Instr) and s.dst is not None:
                defs.setdefault(s.dst, []).append(s)
    var = {loop.range_var} if loop.range_var else set()
    for n, ds in defs.items():
        if len(ds) > 1 or all_defs.get(n, 0) > len(ds) or any(d.op in _IMPURE for d in ds):
            var.add(n)
    changed = True
    while changed:
        changed = False
        for n, ds in defs.items():
            if n not in var and any(isinstance(a, str) and a in var for d in ds for a in d.args):
                var.add(n)
                changed = True
    return var


def _accesses(stmts, loop_var, all_defs):
    """(memory access, the names its innermost enclosing loop changes, or None outside
    loops) for every global, local or shared access, in program order."""
    for s in stmts:
        if isinstance(s, Instr):
            if s.op in ("ld", "st", "atomic") and s.args and isinstance(s.args[0], str):
                yield s, loop_var
        elif isinstance(s, If):
            yield from _accesses(s.then, loop_var, all_defs)
            yield from _accesses(s.orelse, loop_var, all_defs)
        elif isinstance(s, Loop):
            inner = _loop_variant(s, all_defs)
            for part in (s.cond_body, s.body):
                yield from _accesses(part, inner, all_defs)
        elif isinstance(s, Call):
            yield from _accesses(s.body, loop_var, all_defs)


def contract(fn):
    """Mark each multiply whose single use is an add/sub of the same type (an FMA or IMAD
    after NVVM's contraction) with attrs['contracted'] = True, and each memory access with
    attrs['space'] (for the cost estimate).  Also mark, for the interpreter, the float adds it
    computes with one rounding as the GPU does (_mark_fused).  Idempotent; returns how many
    multiplies were contracted."""
    if getattr(fn, "_contracted", None) is not None:
        return fn._contracted
    nonneg = _nonnegative(fn)
    all_defs = {}
    for s in walk(fn.body):
        if isinstance(s, Instr) and s.dst is not None:
            all_defs[s.dst] = all_defs.get(s.dst, 0) + 1
    for s, loop_defs in _accesses(fn.body, None, all_defs):  # memory space and index facts of each access
        t = fn.var_types.get(s.args[0])
        if getattr(t, "space", None):
            s.attrs.setdefault("space", t.space)
        idx = _indices(s)
        s.attrs["nidx_addr"] = max(1, len(idx))
        # numba's wrap-around of a signed index; LLVM hoists it out of a loop when the index
        # does not change in the loop (the naive matmul's row/col checks sit before its k loop)
        s.attrs["wrap_dims"] = sum(1 for a in idx if not _known_nonneg(a, nonneg, fn)
                                   and (loop_defs is None or a in loop_defs))
        s.attrs["vary_rows"] = sum(1 for a in idx[:-1] if isinstance(a, str)
                                   and (loop_defs is None or a in loop_defs))
    uses = _uses(fn)
    muls = {}
    for s in walk(fn.body):
        if isinstance(s, Instr) and s.op == "mul" and s.dst is not None and uses.get(s.dst) == 1:
            muls[s.dst] = s
    k = 0
    for s in walk(fn.body):
        if isinstance(s, Instr) and s.op in ("add", "sub"):
            for a in s.args:
                m = muls.get(a) if isinstance(a, str) else None
                if m is not None and _arith_kind(m) == _arith_kind(s) and not m.attrs.get("contracted"):
                    m.attrs["contracted"] = True
                    s.attrs["fma"] = True
                    k += 1
                    break
    _mark_fused(fn, uses, all_defs)
    fn._contracted = k
    return k


def _is_fadd(s):
    """An fadd in LLVM's eyes: add, or sub of a constant (InstCombine makes it an add of -c)."""
    return s.op == "add" or s.op == "sub" and isinstance(s.args[1], Const)


def _mul_groups(fn, all_defs):
    """Each float multiply defined once -> the names holding its value (its copies)."""
    once = {s.dst: s for s in walk(fn.body)
            if isinstance(s, Instr) and s.dst is not None and all_defs.get(s.dst) == 1}
    groups = {}
    for name, s in once.items():
        src = name
        while src in once and once[src].op == "copy" and isinstance(once[src].args[0], str):
            src = once[src].args[0]
        m = once.get(src)
        if m is not None and m.op == "mul" and _arith_kind(m) != "int":
            groups.setdefault(src, {src})
            groups[src].add(name)
    return groups


def _mark_fused(fn, uses, all_defs):
    """Mark the float adds NVPTX contracts into fma.rn, for the interpreter to compute with one
    rounding: an fadd (_is_fadd) of an fmul of the same type whose uses (through copies) are all
    such fadds, at most 4 of them (NVPTXISelLowering's PerformADDCombine); the first fmul
    operand wins; the adds in the multiply's basic block, or its single add sunk into an if
    (_basic_blocks).  c - a*b and a*b - c (c not a constant) stay unfused, as the GPU computes
    them (measured on the compiled path).  Sets attrs['fma_mul'] = (operand index, the multiply's
    name) on the add and attrs['fma_operands'] on the multiply."""
    groups = _mul_groups(fn, all_defs)
    alias = {n: m for m, names in groups.items() for n in names}
    users = {}
    for s in walk(fn.body):
        if isinstance(s, Instr) and not (s.op == "copy" and s.dst in alias):
            for a in s.args:
                if isinstance(a, str) and a in alias:
                    users.setdefault(alias[a], []).append(s)
    muls = {s.dst: s for s in walk(fn.body) if isinstance(s, Instr) and s.dst in groups}
    readers = _readers(fn)
    block, sink_to = _basic_blocks(fn.body)
    for m, us in users.items():
        n_uses = sum(uses.get(n, 0) for n in groups[m]) - (len(groups[m]) - 1)
        if len(us) != n_uses or len(us) > 4 or not all(_is_fadd(u) for u in us):
            continue
        mb = block[id(muls[m])]
        if not all(block[id(u)] == mb for u in us) and not (len(us) == 1 and _sinks(block[id(us[0])], mb, sink_to)):
            continue            # the DAG combine sees one basic block; LLVM sinks a single use into an if
        for u in us:
            k = next(i for i, a in enumerate(u.args) if isinstance(a, str) and alias.get(a) == m)
            narrow = _narrowed(u, muls[m], readers.get(u.dst, []), uses, fn.var_types)
            if u.op == "sub" and k != 0 or _arith_kind(u) != _arith_kind(muls[m]) and not narrow:
                continue
            if "fma_mul" not in u.attrs:
                u.attrs["fma_mul"] = (k, m)
                muls[m].attrs["fma_operands"] = True
                if narrow:
                    u.attrs["fma_float32"] = True


def _basic_blocks(stmts):
    """(id(instruction) -> its basic block number, block -> the block an instruction of which
    InstCombine may sink into it).  A block ends at an If or a Loop; an inlined device
    function's body continues its caller's block.  The first block of an If's branch can take a
    single-use instruction from the block holding the If (its unique predecessor); a loop body
    cannot."""
    block, sink_to = {}, {}
    counter = [0]

    def run(ss, cur):
        for s in ss:
            if isinstance(s, Instr):
                block[id(s)] = cur
            elif isinstance(s, Call):
                cur = run(s.body, cur)
            elif isinstance(s, If):
                for side in (s.then, s.orelse):
                    counter[0] += 1
                    sink_to[counter[0]] = cur
                    run(side, counter[0])
                counter[0] += 1
                cur = counter[0]
            elif isinstance(s, Loop) and _fully_unrolled(s):
                cur = run(s.body, cur)
            elif isinstance(s, Loop):
                for part in (s.cond_body, s.body):
                    counter[0] += 1
                    run(part, counter[0])
                counter[0] += 1
                cur = counter[0]
        return cur
    run(stmts, 0)
    return block, sink_to


def _fully_unrolled(loop, max_trips=4):
    """A range loop LLVM unrolls completely, so that its body joins the surrounding block:
    constant bounds, at most `max_trips` iterations (measured on the compiled path: a load, an
    add and a store per iteration are unrolled at 4 trips, not at 8), no branches inside."""
    ra = loop.range_args
    if not (loop.range_var and len(ra) == 3 and all(isinstance(a, Const) for a in ra)):
        return False
    try:
        trips = len(range(int(ra[0].value), int(ra[1].value), int(ra[2].value)))
    except (TypeError, ValueError):
        return False
    return 0 < trips <= max_trips and not any(isinstance(x, (If, Loop, Break, Continue, Return))
                                              for x in walk(loop.body))


def _sinks(b, target, sink_to):
    while b is not None and b != target:
        b = sink_to.get(b)
    return b == target


def _readers(fn):
    out = {}
    for s in walk(fn.body):
        if isinstance(s, Instr):
            for a in s.args:
                if isinstance(a, str):
                    out.setdefault(a, []).append(s)
    return out


def _narrowed(u, m, rd, uses, var_types):
    """float32 a*b +/- a float64 constant that is a float32 value, the sum only stored to a
    float32 array: LLVM computes the sum in float32 (the fptrunc of the store narrows it), and
    NVPTX then contracts it (fma.rn.f32; measured on the compiled path)."""
    if _arith_kind(m) != "fp32" or _arith_kind(u) != "fp64" or u.dst is None:
        return False
    c = u.args[1] if isinstance(u.args[1], Const) else u.args[0]
    if not isinstance(c, Const) or not isinstance(c.value, float) or float(np.float32(c.value)) != c.value:
        return False
    if not (len(rd) == 1 == uses.get(u.dst, 0) and rd[0].op == "st" and rd[0].args[1] == u.dst):
        return False
    return getattr(var_types.get(rd[0].args[0]), "dtype", None) == T.FLOAT32


__all__ = ["contract"]
