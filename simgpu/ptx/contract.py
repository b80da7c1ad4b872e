"""Floating-point contraction as ptxas does it: ``mul`` + ``add``/``sub`` with no rounding modifier
become one fused multiply-add.

The PTX ISA lets the code generator fuse them ("mul/add sequences with no rounding modifiers may be
optimized to use fused-multiply-add instructions on the target device"), and ptxas does (its
default ``--fmad=true``).  NVVM writes ``mul.f64``/``add.f64`` without ``.rn`` for ordinary LLVM
``fmul``/``fadd``, so numba-cuda's float expressions (``a * b + c``, and its ``%``/``//`` of floats:
``x - floor(x / y) * y``) are fused on the GPU: the product is not rounded.  Executing the PTX as
written gives a different last bit, or a different result (2^63 % 3.0 is 512.0 on the GPU after
numba's ``x - floor(x/y)*y``, 0.0 unfused).

Which pairs ptxas fuses was read from the SASS it makes (ptxas 13.5, sm_90; the cases are
``tests/test_ptx_contract.py``'s, each with its SASS), for f32 and f64:

* ``mul`` unguarded, no rounding modifier (``.ftz`` allowed); its result used only by unguarded
  ``add``/``sub`` (no rounding modifier; ``.sat`` allowed; ``.ftz`` as the mul's) of the same
  type in the same basic block, directly or through ``neg`` (whose results are used only so).  One
  use of another kind (a store, a compare, a second ``mul``, ``abs``, a ``selp``, an add in another
  block or guarded, ``t + t``) keeps the mul and every add that reads it unfused.
* An add whose two operands are both fusable products fuses its first operand's.
* The instructions that ptxas expands into a sequence with its own control flow end the window:
  a mul and an add with one of them in between are not fused (IEEE ``div``/``rcp``/``sqrt`` with a
  rounding modifier, f32 and f64; ``div``/``rem`` ``.s32``/``.s64``/``.u64``; ``rsqrt.approx.f64``
  without ``.ftz``), as are a label, a branch or a call.  Other instructions in between
  (loads, stores, atomics, ``setp``, ``cvt``, ``bar``, the other ``.approx`` ops, ``div.u32``,
  ``div.full.f32``, ...) do not stop it.

The fused add becomes ``fma.rn[.ftz][.sat]`` with the product's factors (negated as the add/sub
and ``neg`` say: a register factor through a ``neg`` into a new register, an immediate directly);
the ``mul`` and ``neg`` stay (their results are no longer read).  :func:`contract` rewrites a
parsed :class:`~simgpu.ptx.parser.Function` in place; the parser calls it on every function.
"""
from __future__ import annotations

import struct
from dataclasses import replace

from simgpu.ptx import sass_order

_FLOAT = ("f32", "f64")
_RND = ("rn", "rz", "rm", "rp")
_ENDS_BLOCK = ("bra", "brx", "call", "ret", "exit", "trap", "brkpt")


def _splits(ins):
    """Whether ptxas' expansion of ``ins`` ends the fusion window (measured, module docstring)."""
    op, mods, types = ins.opcode, ins.mods, ins.types
    if op in _ENDS_BLOCK:
        return True
    t = types[-1] if types else None
    if op in ("div", "rcp", "sqrt") and t in _FLOAT:
        return any(m in _RND for m in mods)
    if op in ("div", "rem"):
        return t in ("s32", "s64", "u64")
    if op == "rsqrt":
        return t == "f64" and "ftz" not in mods
    return False


def _is_reg(op):
    return isinstance(op, tuple) and len(op) == 2 and op[0] == "reg"


def _regs_read(ins):
    out = []

    def walk(o):
        if isinstance(o, tuple):
            if o and o[0] == "reg":
                out.append(o[1])
            else:
                for x in o[1:]:
                    if isinstance(x, (tuple, list)):
                        walk(x)
        elif isinstance(o, list):
            for x in o:
                walk(x)
    for o in ins.operands[1:]:
        walk(o)
    if ins.operands and isinstance(ins.operands[0], tuple) and ins.operands[0][0] in ("addr", "vec"):
        walk(ins.operands[0])          # st [addr], v / a vector destination's members are written
    if ins.guard is not None:
        out.append(ins.guard[0])
    return out


def _reg_written(ins):
    if ins.operands and _is_reg(ins.operands[0]) and ins.opcode not in ("st", "red", "bar", "bra"):
        return ins.operands[0][1]
    return None


def _flags(ins):
    """(ftz, sat) of a float add/sub/mul with no rounding modifier, or None."""
    mods = set(ins.mods)
    if mods - {"ftz", "sat"} or len(ins.types) != 1 or ins.types[0] not in _FLOAT or ins.guard is not None:
        return None
    return "ftz" in mods, "sat" in mods


def _neg_imm(op):
    kind, f, bits, width = op
    return (kind, -f, bits ^ (1 << (width - 1)), width)


def contract(fn):
    """Rewrite ``fn.body`` (a parsed Function) with ptxas' contractions; returns how many adds fused."""
    body = fn.body
    if not body:
        return 0
    n = len(body)
    block = [0] * n            # basic block index of each statement
    window = [0] * n           # fusion window index (a new one after each splitter)
    b = w = 0
    defs, uses = {}, {}
    for i, st in enumerate(body):
        if isinstance(st, tuple):
            if st[0] == "label":
                b += 1
                w += 1
            block[i], window[i] = b, w
            continue
        block[i], window[i] = b, w
        for r in _regs_read(st):
            uses.setdefault(r, []).append(i)
        d = _reg_written(st)
        if d is not None:
            defs.setdefault(d, []).append(i)
        if _splits(st):                # the window (and after a branch, the block) ends here
            b += st.opcode in _ENDS_BLOCK
            w += 1
    # candidate products and negations of them
    prod = {}                  # reg -> (mul index, negated)
    for i, st in enumerate(body):
        if isinstance(st, tuple) or st.opcode != "mul":
            continue
        fl = _flags(st)
        d = _reg_written(st)
        if fl is None or fl[1] or d is None or len(defs.get(d, ())) != 1:
            continue
        prod[d] = (i, False)
    for i, st in enumerate(body):
        if isinstance(st, tuple) or st.opcode != "neg" or st.guard is not None:
            continue
        src = st.operands[1] if len(st.operands) > 1 else None
        d = _reg_written(st)
        if (_is_reg(src) and src[1] in prod and not prod[src[1]][1] and d is not None
                and len(defs.get(d, ())) == 1 and st.types == body[prod[src[1]][0]].types
                and set(st.mods) <= {"ftz"} and ("ftz" in st.mods) == ("ftz" in body[prod[src[1]][0]].mods)):
            prod[d] = (prod[src[1]][0], True)

    def addable(i, mul_i):
        """Whether add/sub at i may absorb the product made at mul_i."""
        st, m = body[i], body[mul_i]
        if isinstance(st, tuple) or st.opcode not in ("add", "sub") or st.types != m.types:
            return False
        fl = _flags(st)
        if fl is None or fl[0] != ("ftz" in m.mods) or i < mul_i:
            return False
        if block[i] != block[mul_i] or window[i] != window[mul_i]:
            return False
        srcs = st.operands[1:3]
        if len(srcs) != 2 or srcs[0] == srcs[1]:
            return False
        # the factors must still hold the values they had at the mul
        for f in m.operands[1:3]:
            if _is_reg(f) and any(mul_i < j < i for j in defs.get(f[1], ())):
                return False
        return True

    choice = {}                # add index -> operand position (0/1) of the product it absorbs
    alive = set(prod)
    by_mul = {}                # mul index -> the registers holding its product (itself, its negations)
    for r, (mi, _neg) in prod.items():
        by_mul.setdefault(mi, []).append(r)
    while True:
        choice.clear()
        for i, st in enumerate(body):
            if isinstance(st, tuple) or st.opcode not in ("add", "sub"):
                continue
            srcs = st.operands[1:3]
            for k, s in enumerate(srcs):
                if _is_reg(s) and s[1] in alive and addable(i, prod[s[1]][0]):
                    choice[i] = k
                    break
        dead = set()
        for r in alive:
            mul_i = prod[r][0]
            # every reader of the product (and of its negations) must absorb it
            regs = [q for q in by_mul[mul_i] if q in alive]
            for q in regs:
                for u in uses.get(q, ()):
                    st = body[u]
                    if st.opcode == "neg" and _reg_written(st) in regs:
                        continue
                    if u not in choice or not _is_reg(st.operands[1 + choice[u]]) \
                            or st.operands[1 + choice[u]][1] != q:
                        dead.add(r)
                        break
                if r in dead:
                    break
        if not dead:
            break
        # a product with one unfusable reader stays unfused everywhere (with its negations)
        dead_muls = {prod[r][0] for r in dead}
        alive = {r for r in alive if prod[r][0] not in dead_muls}
    if not choice:
        return 0
    out, fresh = [], 0
    for i, st in enumerate(body):
        if i not in choice:
            out.append(st)
            continue
        k = choice[i]
        preg = st.operands[1 + k][1]
        mul_i, negated = prod[preg]
        m = body[mul_i]
        a, bb = m.operands[1], m.operands[2]
        other = st.operands[2 - k]
        neg_prod = negated != (st.opcode == "sub" and k == 1)     # c - p: the product negated
        neg_other = st.opcode == "sub" and k == 0                  # p - c: the addend negated
        t = st.types[0]
        pre = []

        def negate(op):
            nonlocal fresh
            if isinstance(op, tuple) and op[0] == "fimm":
                return _neg_imm(op)
            if isinstance(op, tuple) and op[0] == "imm":
                return _neg_imm(_as_fimm(op, t))
            name = f"%__fma_neg{fresh}"
            fresh += 1
            while name in fn.regs:
                name = f"%__fma_neg{fresh}"
                fresh += 1
            fn.regs[name] = t
            mods = ("ftz",) if "ftz" in m.mods else ()
            pre.append(replace(st, opcode="neg", mods=mods, types=(t,), operands=[("reg", name), op], guard=None))
            return ("reg", name)
        if neg_prod:
            if isinstance(bb, tuple) and bb[0] in ("fimm", "imm"):
                bb = negate(bb)
            else:
                a = negate(a)
        if neg_other:
            other = negate(other)
        mods = ("rn",) + tuple(x for x in ("ftz", "sat") if x in st.mods)
        out.extend(pre)
        out.append(replace(st, opcode="fma", mods=mods, operands=[st.operands[0], a, bb, other]))
    fn.body[:] = out
    return len(choice)


def _as_fimm(op, t):
    """An integer immediate written as a float operand (PTX allows it) as ("fimm", ...)."""
    f = float(op[1])
    if t == "f32":
        return ("fimm", f, struct.unpack("<I", struct.pack("<f", f))[0], 32)
    return ("fimm", f, struct.unpack("<Q", struct.pack("<d", f))[0], 64)


def order_f64_operands(fn, swaps=None):
    """ptxas orders the operands of f64 ``add``/``mul`` (``sub`` as an add of the negated operand;
    ``fma``'s two factors) by where their values were defined, earliest first, whatever the PTX
    order (read from its SASS: ``add.f64 d, x, y`` and ``add.f64 d, y, x`` both give
    ``DADD R, Rx, Ry`` when x was defined first).  The order matters for a NaN only: the unit
    returns the second SASS operand's NaN before the first's (DADD/DMUL; DFMA: second, third,
    first: the measured rules of ``sem_fp.F64_NAN_ORDER`` for operands defined in PTX order).
    Here: an add/mul/fma whose factors were defined in the other order has them swapped; a sub
    ``a - b`` with b defined first becomes ``(-b) + a`` (a ``neg`` into a new register; exact for
    every non-NaN value, and a NaN b keeps its sign as the unit's ``-R`` modifier does).  Operands
    with more than one definition (loop-carried) or none (immediates) keep their place.
    ``swaps`` ({id(Instr): bool}, ``sass_order.sass_swaps``): the order read from ptxas' SASS,
    which decides where it is known (min/max included: ptxas' DSETP.MIN/MAX sequence returns the
    second operand's NaN when both are NaN); the definition-order rule is the fallback.  Returns
    how many instructions were reordered."""
    body = fn.body
    if not body:
        return 0
    defs = {}
    for i, st in enumerate(body):
        if not isinstance(st, tuple):
            d = _reg_written(st)
            if d is not None:
                defs.setdefault(d, []).append(i)

    def pos(op):
        if _is_reg(op):
            dl = defs.get(op[1], ())
            return dl[0] if len(dl) == 1 else None
        return None
    out, n, fresh = [], 0, 0
    swaps = swaps or {}
    for st in body:
        if (isinstance(st, tuple) or st.opcode not in ("add", "sub", "mul", "fma", "min", "max")
                or st.types != ("f64",) or len(st.operands) < 3):
            out.append(st)
            continue
        a, b = st.operands[1], st.operands[2]
        swap = swaps.get(id(st))
        if swap is None:
            if st.opcode in ("min", "max"):
                out.append(st)
                continue
            pa, pb = pos(a), pos(b)
            swap = not (pa is None or pb is None or pa <= pb)
        if not swap:
            out.append(st)
            continue
        if st.opcode != "sub":
            ops = list(st.operands)
            ops[1], ops[2] = b, a
            out.append(replace(st, operands=ops))
        else:
            name = f"%__f64_order{fresh}"
            while name in fn.regs:
                fresh += 1
                name = f"%__f64_order{fresh}"
            fresh += 1
            fn.regs[name] = "f64"
            out.append(replace(st, opcode="neg", mods=(), operands=[("reg", name), b]))
            out.append(replace(st, opcode="add", operands=[st.operands[0], ("reg", name), a]))
        n += 1
    fn.body[:] = out
    return n


def mark_folded(fn, marks):
    """The ``neg``/``abs`` that ``marks`` names (``sass_order.folded_absneg``: ptxas folded them
    into their readers' operand modifiers) get its modifier: ``keepnan`` (a NaN passes through
    unchanged, as the FP units treat a modified NaN operand) or ``signbit`` (the sign bit changes
    on a NaN too, as in an FSEL); and for readers that see it otherwise, a copy with their
    modifier (``%__fold_sN``) that they read instead."""
    out, n, reread = [], 0, {}
    for st in fn.body:
        mark = None if isinstance(st, tuple) else marks.get(id(st))
        if mark is None:
            out.append(st)
            continue
        mod, copies = mark
        out.append(replace(st, mods=tuple(st.mods) + (mod,)) if mod else st)
        n += 1
        for cmod, ids in copies:
            if not ids:
                continue
            name = f"%__fold_s{n}_{cmod}"
            fn.regs[name] = st.types[0]
            out.append(replace(st, mods=tuple(st.mods) + (cmod,), operands=[("reg", name), *st.operands[1:]]))
            for rid in ids:
                reread.setdefault(rid, {})[st.operands[0]] = ("reg", name)
    fn.body[:] = [st if isinstance(st, tuple) or id(st) not in reread else
                  replace(st, operands=[st.operands[0], *[reread[id(st)].get(o, o) for o in st.operands[1:]]])
                  for st in out]
    return n


def contract_module(module, sass=None):
    """:func:`contract` and :func:`order_f64_operands` on every function with a body; with
    ``sass`` ({function name: KernelSass}, ``sass_order.kernel_sass``) the operand order and the
    folded neg/abs read from ptxas' SASS (:mod:`simgpu.ptx.sass_order`).  Returns the number of
    rewritten instructions."""
    n = 0
    for name, f in module.functions.items():
        if not f.body:
            continue
        n += contract(f)
        ks = sass.get(name) if sass else None
        swaps = None
        if ks is not None and ks.instructions:
            swaps = sass_order.sass_swaps(f, ks)
            n += mark_folded(f, sass_order.folded_absneg(f, ks))
        n += order_f64_operands(f, swaps)
    return n
