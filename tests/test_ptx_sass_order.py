"""NaN choices that ptxas' SASS makes (simgpu/ptx/sass_order.py): the f64 operand order read from
the SASS, neg/abs folded into their readers' operand modifiers (``.keepnan``), and the warning for
a register read that nothing writes (simgpu/ptx/uninit.py).  The card's answers these follow:
validation/ptx_semantics/nan_seq/ (inline-PTX sequences on an H100) and campaign c2."""
import warnings

import numpy as np
import pytest

from simgpu import settings
from simgpu.errors import SimGPUWarning
from simgpu.ptx import parser, runner, semantics
from simgpu.sass.toolchain import compiled_path_available

needs_ptxas = pytest.mark.skipif(not compiled_path_available()[0], reason="no ptxas/nvdisasm here")

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p0, .param .u64 p1)
{
 .reg .f64 %d<20>; .reg .f32 %f<20>; .reg .b64 %rd<10>; .reg .pred %p<4>; .reg .b32 %r<10>;
 ld.param.u64 %rd1, [p0]; ld.param.u64 %rd2, [p1];
 cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
"""
TAIL = """ ret;
}
"""


def lines(text):
    """One instruction per line, as NVVM writes them (the SASS maps to PTX lines)."""
    return "".join(" " + t.strip() + ";\n" for t in text.split(";") if t.strip())


def f64(bits):
    return np.array([bits], np.uint64).view(np.float64)[0]


def bits64(x):
    return int(np.array([x], np.float64).view(np.uint64)[0])


def run(body, inp, nout=1):
    src = np.asarray(inp, np.uint64).copy()
    out = np.zeros(nout, np.uint64)
    runner.run(HEAD + body + TAIL, "k", 1, 1, (src, out))
    return [int(x) for x in out]


def test_keepnan_semantics():
    """neg/abs.keepnan: sign-bit operations that pass a NaN through (payload, sign, quiet bit)."""
    neg = semantics.lookup("neg", ("keepnan",), ("f32",))
    ab = semantics.lookup("abs", ("keepnan",), ("f64",))
    x = np.array([0xFF812345, 0x3FC00000], np.uint32).view(np.float32)
    assert neg(x).view(np.uint32).tolist() == [0xFF812345, 0xBFC00000]
    y = np.array([0xFFF0000000000001, 0xC000000000000000], np.uint64).view(np.float64)
    assert ab(y).view(np.uint64).tolist() == [0xFFF0000000000001, 0x4000000000000000]
    # without it: the measured stand-alone results (FADD: canonical; DADD: quieted, sign kept)
    assert semantics.lookup("neg", (), ("f32",))(x).view(np.uint32).tolist() == [0x7FFFFFFF, 0xBFC00000]


@needs_ptxas
def test_folded_neg_into_cvt_keeps_the_payload():
    """neg.f32 folded into F2F.F64.F32 -R: the NaN's payload and sign come through (card:
    nan_seq neg_f32_cvt_f64); stand-alone (stored) it is the canonical NaN (an FADD)."""
    body = lines("ld.global.f32 %f1, [%rd1]; neg.f32 %f2, %f1; cvt.f64.f32 %d1, %f2; st.global.f64 [%rd2], %d1;"
                 "ld.global.f32 %f3, [%rd1+4]; neg.f32 %f4, %f3; st.global.f32 [%rd2+8], %f4;")
    src = np.array([0xFF812345 | (0xFF812345 << 32)], np.uint64)
    out = run(body, src, 2)
    assert out[0] == 0xFFF82468A0000000           # quieted by F2F, sign kept, payload widened
    assert out[1] & 0xFFFFFFFF == 0x7FFFFFFF
    m = parser.parse(HEAD + body + TAIL)
    ops = [(st.opcode, st.mods) for st in m.functions["k"].body if not isinstance(st, tuple) and st.opcode == "neg"]
    assert ops == [("neg", ("keepnan",)), ("neg", ())]


@needs_ptxas
def test_f64_operand_order_from_the_sass():
    """add.f64 d, b, a with a loaded first: ptxas' DADD reads (a, b) and the unit returns its second
    operand's NaN (b) -- whatever the PTX order; with the SASS off the definition-order rule
    gives the same here, and PTX order the other one."""
    qa, qb = 0x7FF8000000000001, 0xFFF8DEAD0000BEEF
    body = lines("ld.global.f64 %d1, [%rd1]; ld.global.f64 %d2, [%rd1+8]; add.f64 %d3, %d2, %d1;"
                 "st.global.f64 [%rd2], %d3;")
    assert run(body, [qa, qb]) == [qb]
    m = parser.parse(HEAD + body + TAIL)
    add = next(st for st in m.functions["k"].body if not isinstance(st, tuple) and st.opcode == "add")
    assert [o[1] for o in add.operands[1:]] == ["%d1", "%d2"]


@needs_ptxas
def test_max_f64_order_from_the_sass():
    """max.f64 of two NaNs: ptxas' DSETP.MAX + selects return the second SASS operand's NaN."""
    qa, qb = 0x7FF0000000000001, 0x7FFFFFFFE0000000
    body = lines("ld.global.f64 %d1, [%rd1]; ld.global.f64 %d2, [%rd1+8]; max.f64 %d3, %d2, %d1;"
                 "st.global.f64 [%rd2], %d3;")
    assert run(body, [qa, qb]) == [qb]


def test_sass_nan_off_keeps_ptx_rules():
    body = lines("ld.global.f32 %f1, [%rd1]; neg.f32 %f2, %f1; cvt.f64.f32 %d1, %f2; st.global.f64 [%rd2], %d1;")
    with settings.override(ptx_sass_nan=False):
        m = parser.parse(HEAD + body + TAIL)
    neg = next(st for st in m.functions["k"].body if not isinstance(st, tuple) and st.opcode == "neg")
    assert neg.mods == ()


def test_uninitialised_register_read_warns():
    """A register read that no instruction writes (LLVM poison): one warning naming the PTX line,
    the register, block and thread; simgpu reads 0."""
    body = " atom.global.add.u64 %rd5, [%rd2], %rd7;\n"
    src = np.zeros(1, np.uint64)
    out = np.array([5], np.uint64)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        runner.run(HEAD + body + TAIL, "k", 1, 2, (src, out))
    msgs = [str(x.message) for x in w if issubclass(x.category, SimGPUWarning)]
    assert len(msgs) == 1, msgs
    assert "%rd7" in msgs[0] and "PTX line 9 " in msgs[0] and "block (0, 0, 0), thread (0, 0, 0)" in msgs[0]
    assert out.tolist() == [5]


def test_no_warning_when_every_read_register_is_written():
    body = " ld.global.u64 %rd7, [%rd1]; atom.global.add.u64 %rd5, [%rd2], %rd7;\n"
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        runner.run(HEAD + body + TAIL, "k", 1, 1, (np.ones(1, np.uint64), np.zeros(1, np.uint64)))
    assert not [x for x in w if issubclass(x.category, SimGPUWarning)]


def test_signbit_semantics():
    """neg/abs.signbit: the sign-bit operation on a NaN too (payload and quiet bit kept), as an
    FSEL's -R/|R| or ptxas' compile-time folding gives it."""
    x = np.array([0x7FC00000, 0xFF812345, 0x3FC00000], np.uint32).view(np.float32)
    assert semantics.lookup("neg", ("signbit",), ("f32",))(x).view(np.uint32).tolist() == [0xFFC00000, 0x7F812345, 0xBFC00000]
    assert semantics.lookup("abs", ("signbit",), ("f32",))(x).view(np.uint32).tolist() == [0x7FC00000, 0x7F812345, 0x3FC00000]
    y = np.array([0xFFF8000000000000, 0x7FF0000000000001], np.uint64).view(np.float64)
    assert semantics.lookup("abs", ("signbit",), ("f64",))(y).view(np.uint64).tolist() == [0x7FF8000000000000, 0x7FF0000000000001]
    assert semantics.lookup("neg", ("signbit", "keepnan"), ("f32",)) is None


@needs_ptxas
def test_neg_folded_into_a_select_flips_a_nans_sign():
    """neg.f32 read by selp.f32: ptxas folds it into FSEL R, -R2, R5, which flips the sign bit of a
    NaN too (card: nan_seq neg_f32_selp, 0x7fc00000 -> 0xffc00000); a float reader beside the
    select keeps its NaN unchanged (the select reads its own signbit copy)."""
    body = lines("ld.global.f32 %f1, [%rd1]; ld.global.f32 %f2, [%rd1+4]; neg.f32 %f3, %f1;"
                 "setp.gt.f32 %p1, %f2, 0f00000000; selp.f32 %f4, %f3, %f2, %p1; st.global.f32 [%rd2], %f4;"
                 "cvt.f64.f32 %d1, %f3; st.global.f64 [%rd2+8], %d1;")
    src = np.array([0x7FC00000 | (0x3FC00000 << 32)], np.uint64)
    out = run(body, src, 2)
    assert out[0] & 0xFFFFFFFF == 0xFFC00000
    assert out[1] == 0x7FF8000000000000           # F2F of -R: the NaN's own sign
    m = parser.parse(HEAD + body + TAIL)
    ops = [(st.opcode, st.mods) for st in m.functions["k"].body if not isinstance(st, tuple) and st.opcode == "neg"]
    assert ops == [("neg", ("keepnan",)), ("neg", ("signbit",))]


@needs_ptxas
def test_abs_of_a_constant_nan_is_folded_on_the_bits():
    """abs.f64 of a mov'd constant NaN: ptxas evaluates it at compile time (+QNAN immediates in
    campaign c2's k1736), clearing the sign; of a loaded NaN, folded into DFMA |R|, the sign stays."""
    body = lines("mov.f64 %d1, 0dFFF8000000000000; abs.f64 %d2, %d1; ld.global.f64 %d3, [%rd1];"
                 "fma.rn.f64 %d4, %d3, %d3, %d2; st.global.f64 [%rd2], %d4;"
                 "ld.global.f64 %d5, [%rd1+8]; abs.f64 %d6, %d5; fma.rn.f64 %d7, %d3, %d3, %d6; st.global.f64 [%rd2+8], %d7;")
    out = run(body, [0x3FF0000000000000, 0xFFF8000000000000], 2)
    assert out == [0x7FF8000000000000, 0xFFF8000000000000]


@needs_ptxas
def test_materialised_neg_still_folded_into_a_float_reader():
    """neg.f32 that a store needs as bits (FADD R9, -R2, -RZ: the canonical NaN) and a cvt reads:
    ptxas' F2F.F64.F32 R6, -R2 takes the source with the modifier, so the cvt reads a keepnan copy
    (campaign c2's k0926: the card's 0x7ff8000020000000 for 0x7fc00001)."""
    body = lines("ld.global.f32 %f1, [%rd1]; neg.f32 %f2, %f1; mov.b32 %r1, %f2; st.global.b32 [%rd2], %r1;"
                 "cvt.f64.f32 %d1, %f2; st.global.f64 [%rd2+8], %d1;")
    out = run(body, [0x7FC00001], 2)
    assert [out[0] & 0xFFFFFFFF, out[1]] == [0x7FFFFFFF, 0x7FF8000020000000]


@needs_ptxas
def test_abs_then_neg_into_a_select():
    """selp.f32 of neg(abs(x)): ptxas' FSEL R, -|R4|, ... applies both modifiers to the bits, so a
    negative NaN comes out negative (campaign c2's k1898: 0xffc6f568 stays 0xffc6f568)."""
    body = lines("ld.global.f32 %f1, [%rd1]; ld.global.f32 %f2, [%rd1+4]; abs.f32 %f3, %f1; neg.f32 %f4, %f3;"
                 "setp.gt.f32 %p1, %f2, 0f00000000; selp.f32 %f5, %f4, %f3, %p1; st.global.f32 [%rd2], %f5;")
    src = np.array([0xFFC6F568 | (0x3FC00000 << 32)], np.uint64)
    assert run(body, src)[0] & 0xFFFFFFFF == 0xFFC6F568


def _sass(rows):
    """SassInstr list from (label, predicate, opcode, operands, ptx line) rows."""
    from simgpu.sass.disasm import SassInstr
    return [SassInstr(offset=16 * i, opcode=op, operands=ops, predicate=pred, ptx_line=line, label=lab)
            for i, (lab, pred, op, ops, line) in enumerate(rows)]


def test_operand_writer_follows_the_control_flow():
    """The register a DADD reads at a join was written on the paths that reach it, not by the
    instruction just above it in address order: there a block that branches away (c2's k1791 in
    the LTO code: an ``IMAD.MOV.U32 R6`` of another value, then ``BRA``, then the DADD's block)."""
    from simgpu.ptx import sass_order as so
    code = _sass([
        ("", "", "DADD", "R6, R2, R4", 10),              # a: the value the DADD reads, on the path from here
        ("", "@P0", "BRA", "`(.L_x_1)", 11),
        ("", "", "DMUL", "R6, R20, R20", 20),              # another value, on a path that leaves
        ("", "", "NOP", "", 20),
        ("", "", "BRA", "`(.L_x_2)", 21),
        (".L_x_1", "", "DMUL", "R12, R8, R8", 30),         # b
        ("", "", "DADD", "R14, R6, R12", 40),
        (".L_x_2", "", "EXIT", "", 41),
    ])
    preds = so._predecessors(code)
    assert preds[5] == [1] and preds[7] == [4, 6]
    assert so._writer(code, 6, frozenset((6, 7))) == 20             # straight line: the wrong one
    assert so._reaching(code, 6, frozenset((6, 7)), preds) == {10}
    assert so._source_of(code, 6, frozenset((6, 7)), {10}, {30}, preds) == "a"
    assert so._source_of(code, 6, frozenset((12, 13)), {10}, {30}, preds) == "b"


def test_operand_writer_through_a_call_and_a_predicated_write():
    """A CALL writes the registers its subroutine writes (the slow path's result); a predicated
    write and the value before it both reach."""
    from simgpu.ptx import sass_order as so
    code = _sass([
        ("", "", "DMUL", "R8, R2, R2", 50),
        ("", "@P1", "DADD", "R8, R4, 1", 51),
        ("", "", "CALL.REL.NOINC", "`($slow)", 52),
        ("", "", "DADD", "R10, R8, R6", 60),
    ])
    sub = _sass([("", "", "DFMA", "R6, R2, R2, R4", 52), ("", "", "RET.REL.NODEC", "R20 `(k)", 52)])
    preds = so._predecessors(code)
    assert so._reaching(code, 3, frozenset((8, 9)), preds, {"$slow": sub}) == {50, 51}
    assert so._reaching(code, 3, frozenset((6, 7)), preds, {"$slow": sub}) == {52}
    assert None in so._reaching(code, 3, frozenset((6, 7)), preds, {})       # callee unknown
