"""Which NaN comes out where ptxas' SASS, not the PTX, decides it.

Two PTX-level choices are not what the card runs:

* **Operand order of f64 add/sub/mul/fma/min/max.**  DADD/DMUL/DFMA return the second SASS
  operand's NaN before the first's (DFMA: second, third, first), and ptxas' min/max sequence
  (``DSETP.MAX/MIN P0, P1, Ra, Rb`` and selects) returns Rb's when both are NaN: the measured
  rules of ``sem_fp.F64_NAN_ORDER`` hold for the SASS operand order, which ptxas picks by its
  register allocation, not as the PTX writes the operands.  :func:`sass_swaps` reads the order
  from the SASS of the kernel: for each such PTX instruction, the DADD/DMUL/DFMA/DSETP made from
  its line, and for each of its register operands the instruction that last wrote that register
  before it (following ``MOV``/``IMAD.MOV`` copies); that writer's PTX line names the PTX value,
  matched against the PTX operands (through ``neg``/``abs``/``mov`` of them, which ptxas folds
  into operand modifiers).  An instruction whose order cannot be read this way keeps
  ``contract.order_f64_operands``' definition-order rule.  Optional exception (``PHI_SECOND``,
  off by default): an add/sub/mul/min/max with exactly one operand merged from branches puts
  that one second, read off campaign c2's differences (16 kernels for, 3 against), not measured
  in isolation.
* **Folded ``neg``/``abs``.**  ptxas almost never gives a float ``neg``/``abs`` an instruction of
  its own: it becomes the ``-R``/``|R|`` modifier of the consumer.  The FP units ignore the modifier
  for a NaN operand (the NaN comes out with its own sign; F2F keeps its payload), so a folded
  ``neg.f32``/``abs.f32`` of a NaN is not the canonical NaN that a stand-alone one (an FADD) gives.
  :func:`folded_absneg` lists the ``neg``/``abs`` lines with no SASS of their own whose every
  reader is a float operation; the parser marks them ``.keepnan`` (the semantics table's
  sign-bit operation that passes a NaN through unchanged: ``sem_fmisc.absneg``).  An FSEL's
  modifier acts on the bits, NaN included (measured: validation/ptx_semantics/nan_seq), so a
  ``neg``/``abs`` read only by f32 selects, or of a constant ptxas folds, is ``.signbit``; a float
  reader whose SASS still reads the source with the modifier beside a materialised neg gets a
  ``.keepnan`` copy of its own.

The SASS comes from ``simgpu.sass.kernel.analyze_ptx`` (ptxas of this machine, cached on disk;
the same call the cost model makes).  Without ptxas, or when it refuses the PTX, nothing here
applies and the PTX-level rules stand.  ``settings.ptx_sass_nan`` (``SIMGPU_PTX_SASS_NAN=0``)
turns it off.
"""
from __future__ import annotations

import re

from simgpu import settings
from simgpu.sass.kernel import analyze_ptx
from simgpu.sass.toolchain import compiled_path_available

_F64_OPS = ("add", "sub", "mul", "fma", "min", "max")
_ALIAS_OPS = ("neg", "abs", "mov")
_MOVES = ("MOV", "IMAD.MOV.U32", "IMAD.MOV")
_NO_DEST = ("ST", "STG", "STS", "STL", "RED", "ATOM", "ATOMG", "ATOMS", "BRA", "EXIT", "BSYNC", "BSSY",
            "CALL", "RET", "BAR", "WARPSYNC", "NOP", "MEMBAR", "YIELD", "BREAK", "BPT")
_REG = re.compile(r"\bR(\d+)\b")
_OP_SPLIT = re.compile(r",\s*(?![^\[]*\])")


def _operands(s):
    return [t.strip() for t in _OP_SPLIT.split(s.operands)] if s.operands else []


def _is64(opcode):
    base = opcode.split(".")[0]
    if base in ("DADD", "DMUL", "DFMA"):
        return True
    parts = opcode.split(".")
    if base in ("F2F", "I2F", "F2I") and len(parts) > 1:
        return parts[1] in ("F64", "S64", "U64")
    if base in ("LDG", "LD", "LDS", "LDL", "LDC", "ULDC"):
        return "64" in parts
    return opcode.startswith("IMAD.WIDE")


def _dest(s):
    """(registers the instruction writes, as a set of 32-bit register numbers) or empty."""
    base = s.opcode.split(".")[0]
    if base in _NO_DEST:
        return frozenset()
    ops = _operands(s)
    if not ops:
        return frozenset()
    m = re.fullmatch(r"R(\d+)", ops[0])
    if not m:
        return frozenset()
    r = int(m.group(1))
    return frozenset((r, r + 1)) if _is64(s.opcode) else frozenset((r,))


def _writer(instrs, k, regs, depth=0):
    """PTX line of the value in 32-bit registers ``regs`` as read by instrs[k]: the last
    instruction before k that wrote one of them, through register copies; None: unknown.
    Straight-line: the previous instruction in address order, across branches."""
    for j in range(k - 1, -1, -1):
        s = instrs[j]
        if not (_dest(s) & regs):
            continue
        base = s.opcode
        if base in _MOVES and depth < 8:
            src = _operands(s)[-1]
            m = re.fullmatch(r"R(\d+)", src)
            if m:
                return _writer(instrs, j, frozenset((int(m.group(1)),)), depth + 1)
            return None
        return s.ptx_line
    return None


_TARGET = re.compile(r"`\(([^)]+)\)")


def _predecessors(instrs):
    """{index: [predecessor indices]} of the SASS control flow: the previous instruction unless it
    is an unconditional branch or exit, and every branch to the instruction's label."""
    at = {name: i for i, s in enumerate(instrs) for name in filter(None, (s.label or "").split(","))}
    preds = {i: [] for i in range(len(instrs))}
    for i, s in enumerate(instrs):
        base = s.opcode.split(".")[0]
        if base in ("BRA", "BRX", "JMP", "JMX"):
            m = _TARGET.search(s.operands or "")
            if m and m.group(1) in at:
                preds[at[m.group(1)]].append(i)
            # a branch with no predicate (BRA `(.L)`, not @P0 BRA, not BRA P1, `(.L)`) never falls through
            uncond = not s.predicate and (s.operands or "").lstrip().startswith("`")
            if not uncond and i + 1 < len(instrs):
                preds[i + 1].append(i)
        elif base in ("EXIT", "RET") and not s.predicate:
            continue
        elif i + 1 < len(instrs):
            preds[i + 1].append(i)
    return preds


def _call_writes(s, subroutines, memo):
    """The 32-bit registers a ``CALL`` may write: those its subroutine's instructions write (the
    registers the callee returns in and clobbers); None: a callee whose code is not here."""
    m = _TARGET.search(s.operands or "")
    name = m.group(1) if m else None
    if name not in memo:
        sub = subroutines.get(name) if name else None
        memo[name] = None if sub is None else frozenset().union(*(_dest(x) for x in sub))
    return memo[name]


def _reaching(instrs, k, regs, preds, subroutines=None, depth=0):
    """PTX lines of every instruction that may have written the value in ``regs`` read by
    instrs[k], along every control-flow path to it (through register copies; a predicated
    write and the writes before it both reach).  A set; it holds None where a path reaches the
    function's entry or cannot be followed."""
    seen, out, memo = set(), set(), {}
    stack = [(k, regs, depth)]
    while stack:
        i, rs, d = stack.pop()
        if (i, rs) in seen:
            continue
        seen.add((i, rs))
        if len(seen) > 4000:
            out.add(None)
            break
        for j in preds.get(i, ()):
            s = instrs[j]
            if s.opcode.startswith("CALL"):
                w = _call_writes(s, subroutines or {}, memo)
                if w is None or w & rs:     # the callee returns the value (or may: unknown)
                    out.add(s.ptx_line if w is not None else None)
                    continue
            if not (_dest(s) & rs):
                stack.append((j, rs, d))
                continue
            if s.opcode in _MOVES and d < 8:
                m = re.fullmatch(r"R(\d+)", _operands(s)[-1])
                if m:
                    stack.append((j, frozenset((int(m.group(1)),)), d + 1))
                else:
                    out.add(None)
            else:
                out.add(s.ptx_line)
            if s.predicate:                 # it may not have written: the earlier value reaches too
                stack.append((j, rs, d))
        if not preds.get(i) and i == 0:
            out.add(None)
    return out


def _source_of(instrs, k, regs, la, lb, preds, subroutines=None):
    """"a"/"b": the operand (PTX alias lines ``la``/``lb``) whose value instrs[k] reads in ``regs``:
    the one whose definitions are among the writers that reach it along the control flow (other
    writers there -- a constant ptxas placed on a branch's line, a path that is not taken with
    this operand -- do not decide); where neither operand's definitions reach, the straight-line
    writer decides; None: both, or unknown."""
    lines = _reaching(instrs, k, regs, preds, subroutines)
    ina, inb = bool(lines & la), bool(lines & lb)
    if ina != inb:
        return "a" if ina else "b"
    if ina:
        return None
    line = _writer(instrs, k, regs)
    return "a" if line in la else "b" if line in lb else None


def _is_reg(op):
    return isinstance(op, tuple) and op[0] == "reg"


def _is_const(tok):
    t = tok.lstrip("-|").rstrip("|")
    return t == "RZ" or t.startswith(("c[", "0x", "+INF", "-INF", "INF", "QNAN", "+QNAN", "-QNAN")) or t[:1].isdigit()


def _pair(tok):
    """The register pair an f64 SASS operand names (``-|R12|`` -> {12, 13}), or None."""
    m = _REG.search(tok)
    if not m or "[" in tok:
        return None
    r = int(m.group(1))
    return frozenset((r, r + 1))


def _def_lines(fn):
    """PTX register -> the lines of the instructions that write it."""
    out = {}
    for st in fn.body:
        if isinstance(st, tuple) or not st.operands:
            continue
        d = st.operands[0]
        if isinstance(d, tuple) and d[0] == "reg" and not st.opcode.startswith(("st", "red", "bar", "bra")):
            out.setdefault(d[1], []).append(st)
    return out


def _alias_lines(reg, defs, depth=0, phi_moves=False):
    """PTX lines whose SASS may hold the value of register ``reg``: its definitions, and through
    a single ``neg``/``abs``/``mov`` definition those of its source (``phi_moves``: also through
    each ``mov`` of a register with several definitions, which ptxas coalesces into one register:
    the copy has no SASS of its own, its source's writer writes the value)."""
    out = set()
    for st in defs.get(reg, ()):
        out.add(st.line)
        if ((len(defs[reg]) == 1 or (phi_moves and st.opcode == "mov")) and st.opcode in _ALIAS_OPS
                and depth < 6 and len(st.operands) == 2 and st.guard is None
                and isinstance(st.operands[1], tuple) and st.operands[1][0] == "reg"):
            out |= _alias_lines(st.operands[1][1], defs, depth + 1, phi_moves)
    return out


def _shared_lines(fn):
    """PTX lines holding more than one instruction (the SASS cannot tell them apart)."""
    seen, out = set(), set()
    for st in fn.body:
        if isinstance(st, tuple) or (st.operands and isinstance(st.operands[0], tuple)
                                     and st.operands[0][0] == "reg" and st.operands[0][1].startswith("%__")):
            continue                # simgpu's own (contract.py's negations): not in the PTX text
        if st.line in seen:
            out.add(st.line)
        seen.add(st.line)
    return out


def _sass_sources(s, op):
    ops = _operands(s)
    if op in ("min", "max"):
        return ops[2:4]
    return ops[1:4] if op == "fma" else ops[1:3]


def sass_swaps(fn, ks):
    """{id(Instr): True/False} for the f64 add/sub/mul/fma/min/max of ``fn`` whose SASS order of
    the two (fma: factor) operands could be read: True where the SASS has them the other way
    round from the PTX."""
    instrs = ks.instructions
    by_line = {}
    for k, s in enumerate(instrs):
        if s.ptx_line is not None:
            by_line.setdefault(s.ptx_line, []).append(k)
    defs = _def_lines(fn)
    shared = _shared_lines(fn)
    preds = _predecessors(instrs)
    out = {}
    for st in fn.body:
        if (isinstance(st, tuple) or st.opcode not in _F64_OPS or st.types != ("f64",)
                or len(st.operands) < 3 or st.line in shared):
            continue
        a, b = st.operands[1], st.operands[2]
        ra, rb = _is_reg(a), _is_reg(b)
        if not (ra or rb) or a == b or (not (ra and rb) and st.opcode != "fma"):
            continue                # an immediate's place matters only for fma's NaN order
        if st.opcode in ("min", "max"):
            want = ("DSETP." + st.opcode.upper(),)
        else:
            want = {"add": ("DADD",), "sub": ("DADD",), "mul": ("DMUL",), "fma": ("DFMA",)}[st.opcode]
        cands = [k for k in by_line.get(st.line, ()) if instrs[k].opcode.startswith(want)]
        if len(cands) != 1:
            continue
        k = cands[0]
        srcs = _sass_sources(instrs[k], st.opcode)[:2]
        if len(srcs) < 2:
            continue
        phi = [_is_reg(o) and len(defs.get(o[1], ())) > 1 for o in (a, b)]
        if PHI_SECOND and phi[0] != phi[1] and st.opcode != "fma":
            out[id(st)] = phi[0]    # a value merged from branches goes second (its NaN returned)
            continue
        la = _alias_lines(a[1], defs, phi_moves=True) if ra else set()
        lb = _alias_lines(b[1], defs, phi_moves=True) if rb else set()
        if la & lb:
            continue
        got = []
        for tok in srcs:
            if _is_const(tok):      # RZ, a literal or a constant bank: the PTX immediate
                got.append(None if ra and rb else ("b" if ra else "a"))
                continue
            pr = _pair(tok)
            got.append(_source_of(instrs, k, pr, la, lb, preds, ks.subroutines) if pr else None)
        if got in (["a", "b"], ["a", None], [None, "b"]):     # one traced operand places both
            out[id(st)] = False
        elif got in (["b", "a"], ["b", None], [None, "a"]):
            out[id(st)] = True
    return out


_FLOAT_READERS = ("add", "sub", "mul", "fma", "mad", "div", "rcp", "sqrt", "rsqrt", "cvt", "setp", "set",
                  "min", "max", "neg", "abs", "testp", "ex2", "lg2", "sin", "cos", "tanh")


def folded_absneg(fn, ks):
    """{id: (modifier or None, [(modifier, [reader ids])])} for the float ``neg``/``abs`` of ``fn``
    whose NaN is not the stand-alone one: the modifier for the instruction, and copies with another
    modifier that the listed readers read instead.  Those ptxas gave no SASS of their own
    (nothing from their line): ``"keepnan"`` where every reader is a float operation (folded into
    the ``-R``/``|R|`` of an FP unit, which passes a NaN through); ``"signbit"`` (the sign bit
    changes on a NaN too) where ptxas evaluates it on the bits: every reader an f32 ``selp``
    (``FSEL R, -R2, R5``: measured, nan_seq ``neg_f32_selp``/``abs_f32_selp``), or the source a
    constant (one ``mov`` of an immediate: ptxas folds it at compile time, ``DFMA R4, R2, R2,
    +QNAN`` for an abs of 0dFFF8000000000000).  Float readers and f32 selects: ``"keepnan"`` for the
    instruction, and a ``signbit`` copy for the selects.  Other readers (a store, a bit operation,
    a shuffle): the measured stand-alone rule, except for a float reader whose SASS still reads the
    source with the modifier (``F2F.F64.F32 R, -R22`` beside the FADD that feeds the shuffle,
    c2's k0926), which gets a ``keepnan`` copy (ptxas puts a
    stored neg's own ``FADD``/``DADD`` on the store's line, so "no SASS of its own" does not mean
    folded there).  A NaN constant that reaches a neg/abs only along some paths (a register with
    several definitions) is folded by ptxas too, but not here (campaign c2's k1469, k1736, k1737)."""
    lines = {s.ptx_line for s in ks.instructions if s.ptx_line is not None}
    readers = {}
    for st in fn.body:
        if isinstance(st, tuple):
            continue
        for o in st.operands[1:]:
            if isinstance(o, tuple) and o[0] == "reg":
                readers.setdefault(o[1], []).append(st)
    out = {}
    shared = _shared_lines(fn)
    defs = _def_lines(fn)
    instrs = ks.instructions
    by_line = {}
    for k, s in enumerate(instrs):
        if s.ptx_line is not None:
            by_line.setdefault(s.ptx_line, []).append(k)
    for st in fn.body:
        if (isinstance(st, tuple) or st.opcode not in ("neg", "abs") or st.types not in (("f32",), ("f64",))
                or st.guard is not None or st.line in shared or len(st.operands) != 2):
            continue
        d = st.operands[0]
        if not (isinstance(d, tuple) and d[0] == "reg") or d[1].startswith("%__"):
            continue
        rs = readers.get(d[1], [])
        if not rs:
            continue
        single = len(defs.get(d[1], ())) == 1      # else a copy would miss the other definitions
        sel = [_select_like(r, st.types[0], readers) for r in rs]
        fl = [_float_reader(r) and not s for r, s in zip(rs, sel)]
        if st.line not in lines:
            if _constant(st.operands[1], defs) or all(sel):
                out[id(st)] = ("signbit", [])
                continue
            if all(f or s for f, s in zip(fl, sel)) and (single or not any(sel)):
                out[id(st)] = ("keepnan", [("signbit", [id(r) for r, s in zip(rs, sel) if s])])
                continue
        # materialised (its own FADD/DADD, or a reader that needs the bits): a float reader whose
        # SASS still takes the source with the modifier (F2F.F64.F32 R, -R22) reads it folded
        src = st.operands[1]
        if not _is_reg(src) or not single:
            continue
        src_lines = _alias_lines(src[1], defs)
        folded = [id(r) for r, f in zip(rs, fl)
                  if f and _reads_modified(instrs, by_line.get(r.line, ()), src_lines, st.types[0] == "f64")]
        if folded:
            out[id(st)] = (None, [("keepnan", folded)])
    return out


_FP_SASS = ("F2F", "FADD", "FMUL", "FFMA", "FSETP", "FMNMX", "DADD", "DMUL", "DFMA", "DSETP", "FCHK")


def _reads_modified(instrs, ks_idx, src_lines, wide):
    """One of the SASS instructions ``instrs[k]`` (k in ``ks_idx``: a reader's line) is an FP
    operation with a ``-R``/``|R|`` operand whose value comes from ``src_lines``."""
    for k in ks_idx:
        s = instrs[k]
        if not s.opcode.startswith(_FP_SASS):
            continue
        for tok in _operands(s)[1:]:
            if not tok.startswith(("-R", "|R", "-|R")):
                continue
            m = _REG.search(tok)
            if not m:
                continue
            r = int(m.group(1))
            if _writer(instrs, k, frozenset((r, r + 1)) if wide else frozenset((r,))) in src_lines:
                return True
    return False


def _select_like(r, t, readers, depth=0):
    """An f32 ``selp``, or an f32 ``neg``/``abs`` folded into selects only (``FSEL R, -|R4|, ...``:
    both modifiers act on the bits there)."""
    if _is_select(r, t):
        return True
    if depth > 4 or r.opcode not in ("neg", "abs") or r.types != (t,) or t != "f32" or r.guard is not None:
        return False
    d = r.operands[0]
    rs = readers.get(d[1], []) if _is_reg(d) else []
    return bool(rs) and all(_select_like(x, t, readers, depth + 1) for x in rs)


def _is_select(r, t):
    """A ``selp`` of f32 values: ptxas' FSEL, whose ``-R``/``|R|`` is a sign-bit operation (f64
    selects are two 32-bit FSELs, and ptxas gives an f64 neg/abs its own DADD there)."""
    return r.opcode == "selp" and t == "f32" and bool(r.types) and r.types[-1] == "f32"


def _float_reader(r):
    """A reader whose SASS takes a ``-R``/``|R|`` operand as an FP unit does (a NaN passes): a
    float operation, not an f32 ``selp`` (FSEL changes the sign bit), a store or a bit operation."""
    return r.opcode in _FLOAT_READERS and bool(r.types) and r.types[-1] in ("f32", "f64")


def _constant(src, defs):
    """The operand is an immediate, or a register whose one definition moves an immediate."""
    if isinstance(src, tuple) and src[0] in ("imm", "fimm"):
        return True
    if not _is_reg(src):
        return False
    ds = defs.get(src[1], ())
    return (len(ds) == 1 and ds[0].opcode == "mov" and ds[0].guard is None and len(ds[0].operands) == 2
            and isinstance(ds[0].operands[1], tuple) and ds[0].operands[1][0] in ("imm", "fimm"))


def _target_cc(module):
    for t in module.target:
        m = re.fullmatch(r"sm_(\d+)(\d)a?", t)
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


def _wanted(module):
    for fn in module.functions.values():
        for st in fn.body or ():
            if isinstance(st, tuple):
                continue
            if st.opcode in _F64_OPS and st.types == ("f64",):
                return True
            if st.opcode in ("neg", "abs") and st.types in (("f32",), ("f64",)):
                return True
    return False


_PROVIDER = None

#: an f64 add/sub/mul/min/max with exactly one operand merged from branches (several PTX
#: definitions) puts that operand second, whatever the SASS read here says: read off campaign
#: c2's differences, not measured in isolation (docs/design.md); False: the SASS order there too.
#: Off: a rule read off the set it would be scored on is a fit, not a measurement (on, c2 gives
#: 1975 of 2000 bit-equal, c2_compare_phi.json; off 1962, c2_compare.json)
#: (Session 33: the kernels it fixed ran numba-cuda's LTO code, whose DADD takes the operands the other
#: way round: the SASS order of the code that ran explains them; docs/design.md, c2 item 7.)
PHI_SECOND = False


def use_sass(provider):
    """Read the SASS from ``provider(text) -> {function name: KernelSass} | None`` first (None:
    ptxas of this machine).  validation/generated/compare.py --card-sass gives it the SASS the
    card's own ptxas made, to measure what the card ran; returns the previous provider."""
    global _PROVIDER
    old, _PROVIDER = _PROVIDER, provider
    return old


def kernel_sass(module, text):
    """{function name: KernelSass} of ptxas' code for ``text`` (the module's PTX), or None when
    there is none to read (turned off, no ptxas, not sm_90-family PTX, ptxas refused it)."""
    if not settings.current().ptx_sass_nan or not _wanted(module):
        return None
    if _PROVIDER is not None:
        got = _PROVIDER(text)
        if got is not None:
            return got
    cc = _target_cc(module)
    if cc is None or cc[0] < 9 or not compiled_path_available()[0]:
        return None
    try:
        facts = analyze_ptx(text, cc)
    except Exception:  # noqa: BLE001 -- ptxas refusing the PTX: the PTX-level rules stand
        return None
    return facts.kernels
