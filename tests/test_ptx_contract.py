"""ptxas' floating-point contraction (simgpu/ptx/contract.py): which mul + add/sub pairs become one
fma, as read from the SASS ptxas 13.5 makes for sm_90 (the comment of each case: the SASS), and
what executing a fused pair gives."""
import numpy as np
import pytest

from simgpu.ptx import parser, runner

HEAD = """.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p0, .param .u64 p1)
{
 .reg .f64 %d<20>; .reg .f32 %f<20>; .reg .b64 %rd<10>; .reg .pred %p<4>; .reg .b32 %r<10>;
 ld.param.u64 %rd1, [p0]; ld.param.u64 %rd2, [p1];
 cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
 ld.global.f64 %d1, [%rd1]; ld.global.f64 %d2, [%rd1+8]; ld.global.f64 %d3, [%rd1+16]; ld.global.f64 %d4, [%rd1+24];
 ld.global.f32 %f1, [%rd1]; ld.global.f32 %f2, [%rd1+4]; ld.global.f32 %f3, [%rd1+8]; ld.global.f32 %f4, [%rd1+12];
"""
TAIL = """ ret;
}
"""

# (body, number of adds fused): ptxas' SASS for each, sm_90
CASES = {
    "mul add": ("mul.f64 %d5, %d1, %d2; add.f64 %d6, %d5, %d3; st.global.f64 [%rd2], %d6;", 1),  # DFMA
    "mul sub c-ab": ("mul.f64 %d5, %d1, %d2; sub.f64 %d6, %d3, %d5; st.global.f64 [%rd2], %d6;", 1),  # DFMA -R
    "mul sub ab-c": ("mul.f64 %d5, %d1, %d2; sub.f64 %d6, %d5, %d3; st.global.f64 [%rd2], %d6;", 1),
    "two adds": ("mul.f64 %d5, %d1, %d2; add.f64 %d6, %d5, %d3; add.f64 %d7, %d5, %d4; "
                 "st.global.f64 [%rd2], %d6; st.global.f64 [%rd2+8], %d7;", 2),                 # 2 DFMA
    "product stored too": ("mul.f64 %d5, %d1, %d2; add.f64 %d6, %d5, %d3; st.global.f64 [%rd2], %d6; "
                           "st.global.f64 [%rd2+8], %d5;", 0),                                  # DMUL DADD
    "mul.rn": ("mul.rn.f64 %d5, %d1, %d2; add.f64 %d6, %d5, %d3; st.global.f64 [%rd2], %d6;", 0),
    "add.rn": ("mul.f64 %d5, %d1, %d2; add.rn.f64 %d6, %d5, %d3; st.global.f64 [%rd2], %d6;", 0),
    "through neg": ("mul.f64 %d5, %d1, %d2; neg.f64 %d8, %d5; add.f64 %d6, %d8, %d3; "
                    "st.global.f64 [%rd2], %d6;", 1),                                           # DFMA -R
    "neg stored": ("mul.f64 %d5, %d1, %d2; neg.f64 %d8, %d5; add.f64 %d6, %d8, %d3; st.global.f64 [%rd2], %d6; "
                   "st.global.f64 [%rd2+8], %d8;", 0),
    "through abs": ("mul.f64 %d5, %d1, %d2; abs.f64 %d8, %d5; add.f64 %d6, %d8, %d3; st.global.f64 [%rd2], %d6;", 0),
    "t + t": ("mul.f64 %d5, %d1, %d2; add.f64 %d6, %d5, %d5; st.global.f64 [%rd2], %d6;", 0),
    "two products": ("mul.f64 %d5, %d1, %d2; mul.f64 %d7, %d3, %d4; add.f64 %d6, %d7, %d5; "
                     "st.global.f64 [%rd2], %d6;", 1),                   # DMUL d1*d2; DFMA d3*d4 + it
    "branch between": ("mul.f64 %d5, %d1, %d2; setp.gt.f64 %p1, %d4, 0d0000000000000000; @%p1 bra L1; "
                       "add.f64 %d6, %d5, %d3; st.global.f64 [%rd2], %d6; L1:", 0),
    "guarded add": ("mul.f64 %d5, %d1, %d2; setp.gt.f64 %p1, %d4, 0d0000000000000000; @%p1 add.f64 %d5, %d5, %d3; "
                    "st.global.f64 [%rd2], %d5;", 0),
    "f32 ftz": ("mul.ftz.f32 %f5, %f1, %f2; add.ftz.f32 %f6, %f5, %f3; st.global.f32 [%rd2], %f6;", 1),
    "f32 ftz mismatch": ("mul.ftz.f32 %f5, %f1, %f2; add.f32 %f6, %f5, %f3; st.global.f32 [%rd2], %f6;", 0),
    "f32 sat": ("mul.f32 %f5, %f1, %f2; add.sat.f32 %f6, %f5, %f3; st.global.f32 [%rd2], %f6;", 1),  # FFMA.SAT
    "product compared": ("mul.f64 %d5, %d1, %d2; add.f64 %d6, %d5, %d3; setp.gt.f64 %p1, %d5, %d4; "
                         "selp.f64 %d7, %d6, %d4, %p1; st.global.f64 [%rd2], %d7;", 0),
    "setp between": ("mul.f64 %d5, %d1, %d2; setp.gt.f64 %p1, %d3, %d4; add.f64 %d6, %d5, %d3; "
                     "selp.f64 %d7, %d6, %d4, %p1; st.global.f64 [%rd2], %d7;", 1),
    "div.rn between": ("mul.f64 %d5, %d1, %d2; div.rn.f64 %d9, %d3, %d4; add.f64 %d6, %d5, %d3; "
                       "st.global.f64 [%rd2], %d6; st.global.f64 [%rd2+8], %d9;", 0),
    "div.rn before": ("div.rn.f64 %d9, %d3, %d4; mul.f64 %d5, %d1, %d2; add.f64 %d6, %d5, %d3; "
                      "st.global.f64 [%rd2], %d6; st.global.f64 [%rd2+8], %d9;", 1),
    "div.s32 between": ("mul.f64 %d5, %d1, %d2; div.s32 %r5, %r1, %r2; add.f64 %d6, %d5, %d3; "
                        "st.global.f64 [%rd2], %d6; st.global.u32 [%rd2+8], %r5;", 0),
    "div.u32 between": ("mul.f64 %d5, %d1, %d2; div.u32 %r5, %r1, %r2; add.f64 %d6, %d5, %d3; "
                        "st.global.f64 [%rd2], %d6; st.global.u32 [%rd2+8], %r5;", 1),
    "div.full.f32 between": ("mul.f64 %d5, %d1, %d2; div.full.f32 %f9, %f3, %f4; add.f64 %d6, %d5, %d3; "
                             "st.global.f64 [%rd2], %d6; st.global.f32 [%rd2+8], %f9;", 1),
    "one add before a split, one after": ("mul.f64 %d5, %d1, %d2; add.f64 %d6, %d5, %d3; div.s32 %r5, %r1, %r2; "
                                          "add.f64 %d7, %d5, %d4; st.global.f64 [%rd2], %d6; "
                                          "st.global.f64 [%rd2+8], %d7; st.global.u32 [%rd2+16], %r5;", 0),
    "loop": ("mov.f64 %d6, %d3; L0: mul.f64 %d5, %d6, %d2; add.f64 %d6, %d5, %d1; setp.lt.f64 %p1, %d6, %d4; "
             "@%p1 bra L0; st.global.f64 [%rd2], %d6;", 1),
    "immediate factor": ("mul.f64 %d5, %d1, 0d4008000000000000; sub.f64 %d6, %d2, %d5; st.global.f64 [%rd2], %d6;", 1),
}


def _fmas(module):
    return sum(1 for st in module.functions["k"].body if not isinstance(st, tuple) and st.opcode == "fma")


@pytest.mark.parametrize("name", sorted(CASES))
def test_contraction_follows_ptxas(name):
    body, fused = CASES[name]
    m = parser.parse(HEAD + " " + body + "\n" + TAIL)
    assert _fmas(m) == fused


def _run(body, inputs, out_dtype):
    ptx = HEAD + " " + body + "\n" + TAIL
    out = np.zeros(4, out_dtype)
    runner.run(ptx, "k", 1, 1, (np.ascontiguousarray(inputs), out))
    return out


def test_fused_product_is_not_rounded():
    # numba's float x % 3.0 is x - floor(x / 3) * 3; for x = 2^63 the fused form gives 512 (the
    # H200's result in the generated kernel k0282), the rounded product 0
    body = ("div.rn.f64 %d9, %d1, 0d4008000000000000; cvt.rmi.f64.f64 %d9, %d9; "
            "mul.f64 %d5, %d9, 0d4008000000000000; sub.f64 %d6, %d1, %d5; st.global.f64 [%rd2], %d6;")
    out = _run(body, np.array([2.0 ** 63, 0, 0, 0]), np.float64)
    assert out[0] == 512.0


@pytest.mark.parametrize("sub,order", [(False, 0), (True, 0), (True, 1)])
def test_fused_signs(sub, order):
    a, b, c = 1.0 + 2.0 ** -30, 1.0 - 2.0 ** -30, -1.0
    op = "sub" if sub else "add"
    srcs = "%d5, %d3" if order == 0 else "%d3, %d5"
    body = f"mul.f64 %d5, %d1, %d2; {op}.f64 %d6, {srcs}; st.global.f64 [%rd2], %d6;"
    out = _run(body, np.array([a, b, c, 0.0]), np.float64)
    exact = {(False, 0): a * b + c, (True, 0): a * b - c, (True, 1): c - a * b}[(sub, order)]
    # the exact product a*b = 1 - 2^-60 is not a double: only the fused form keeps the 2^-60
    want = {(False, 0): -2.0 ** -60, (True, 0): 2.0 - 2.0 ** -60 + 0.0, (True, 1): -2.0 + 2.0 ** -60}
    assert out[0] == np.float64(want[(sub, order)]) or np.isclose(out[0], exact)
    if not sub:
        assert out[0] == -2.0 ** -60


# ptxas' f64 operand order (SASS: add.f64 d, x, y and add.f64 d, y, x both DADD R, Rx, Ry when x was
# defined first; sub.f64 d, y, x: DADD R, -Rx, Ry); the unit returns the second SASS operand's NaN
# first (DADD/DMUL), so with two NaN operands the later-defined one comes out
NAN_A, NAN_B = 0x7FF8000000000001, 0xFFF8DEAD0000BEEF


@pytest.mark.parametrize("op,order", [("add", "%d1, %d2"), ("add", "%d2, %d1"), ("mul.rn", "%d2, %d1"),
                                      ("sub", "%d1, %d2"), ("sub", "%d2, %d1")])
def test_two_nan_operands_give_the_later_defined(op, order):
    body = f"{op}.f64 %d6, {order}; st.global.f64 [%rd2], %d6;"
    out = _run(body, np.array([NAN_A, NAN_B, 0, 0], np.uint64).view(np.float64), np.float64)
    assert hex(out[:1].view(np.uint64)[0]) == hex(NAN_B)       # %d2 is loaded after %d1


def test_sub_reordered_is_exact():
    # (-b) + a for every sign of zero and ordinary values: the same bits as a - b
    vals = [0.0, -0.0, 1.5, -2.25, 1e308, -1e-310]
    for x in vals:
        for y in vals:
            out = _run("sub.f64 %d6, %d2, %d1; st.global.f64 [%rd2], %d6;", np.array([x, y, 0, 0]), np.float64)
            assert out[:1].view(np.uint64)[0] == np.array([y - x]).view(np.uint64)[0], (x, y)
