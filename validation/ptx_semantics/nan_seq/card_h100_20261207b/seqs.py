"""Short PTX sequences whose NaN result depends on ptxas' SASS (folded neg/abs, operand order,
min/max select sequences): the cases of device_nan_seq.py (issue 25 item 3, 2026-12-07).

Each case: (name, dst type, source types, asm body).  The body uses %0 (result) and %1.. (sources);
``.reg`` temporaries are declared inside the block."""

F32_NANS = [0x7FC00000, 0xFFC00001, 0x7F812345, 0xFF800001, 0x7FFFFFFF, 0x7FC12345]
F32_NUMS = [0x3FC00000, 0xC0000000, 0x7F800000, 0x80000000]
F64_NANS = [0x7FF8000000000001, 0xFFF8DEAD0000BEEF, 0x7FF0000000000001, 0x7FF4000012345678,
            0xFFF0000100000000, 0x7FFFFFFFE0000000, 0x7FF8000000000000]
F64_NUMS = [0x3FF8000000000000, 0xC000000000000000, 0x7FF0000000000000, 0x8000000000000000]

CASES = [
    # folded neg/abs into a conversion (F2F -R / |R|)
    ("neg_f32_cvt_f64", "f64", ["f32"], ".reg .f32 t; neg.f32 t, %1; cvt.f64.f32 %0, t;"),
    ("abs_f32_cvt_f64", "f64", ["f32"], ".reg .f32 t; abs.f32 t, %1; cvt.f64.f32 %0, t;"),
    ("neg_f64_cvt_f32", "f32", ["f64"], ".reg .f64 t; neg.f64 t, %1; cvt.rn.f32.f64 %0, t;"),
    ("abs_f64_cvt_f32", "f32", ["f64"], ".reg .f64 t; abs.f64 t, %1; cvt.rn.f32.f64 %0, t;"),
    # stand-alone neg/abs (stored)
    ("neg_f32", "f32", ["f32"], "neg.f32 %0, %1;"),
    ("abs_f32", "f32", ["f32"], "abs.f32 %0, %1;"),
    ("neg_f64", "f64", ["f64"], "neg.f64 %0, %1;"),
    ("abs_f64", "f64", ["f64"], "abs.f64 %0, %1;"),
    # folded into f64 arithmetic / f32 arithmetic
    ("neg_f64_add", "f64", ["f64", "f64"], ".reg .f64 t; neg.f64 t, %1; add.f64 %0, t, %2;"),
    ("abs_f64_mul", "f64", ["f64", "f64"], ".reg .f64 t; abs.f64 t, %1; mul.f64 %0, t, %2;"),
    ("neg_f64_fma", "f64", ["f64", "f64", "f64"], ".reg .f64 t; neg.f64 t, %1; fma.rn.f64 %0, t, %2, %3;"),
    ("neg_f32_add", "f32", ["f32", "f32"], ".reg .f32 t; neg.f32 t, %1; add.f32 %0, t, %2;"),
    # min/max f64: both orders, and of a folded neg
    ("max_f64_ab", "f64", ["f64", "f64"], "max.f64 %0, %1, %2;"),
    ("max_f64_ba", "f64", ["f64", "f64"], "max.f64 %0, %2, %1;"),
    ("min_f64_ab", "f64", ["f64", "f64"], "min.f64 %0, %1, %2;"),
    ("min_f64_ba", "f64", ["f64", "f64"], "min.f64 %0, %2, %1;"),
    ("neg_f64_max", "f64", ["f64", "f64"], ".reg .f64 t; neg.f64 t, %1; max.f64 %0, t, %2;"),
    ("abs_f64_min", "f64", ["f64", "f64"], ".reg .f64 t; abs.f64 t, %1; min.f64 %0, %2, t;"),
    ("max_f32", "f32", ["f32", "f32"], "max.f32 %0, %1, %2;"),
    ("abs_f32_max", "f32", ["f32", "f32"], ".reg .f32 t; abs.f32 t, %1; max.f32 %0, t, %2;"),
    # abs/neg folded into DFMA's addend, and numba's float % of a NaN (libdevice-free: floor(x/y)*y)
    ("abs_f64_fma_c", "f64", ["f64", "f64", "f64"], ".reg .f64 t; abs.f64 t, %1; fma.rn.f64 %0, %2, %3, t;"),
    ("neg_f64_fma_c", "f64", ["f64", "f64", "f64"], ".reg .f64 t; neg.f64 t, %1; fma.rn.f64 %0, %2, %3, t;"),
    ("abs_f64_fma_imm", "f64", ["f64", "f64"], ".reg .f64 t; abs.f64 t, %1; fma.rn.f64 %0, %2, 0dC014000000000000, t;"),
    ("mod5_f64", "f64", ["f64"], ".reg .f64 t, q, f, m; abs.f64 t, %1; div.rn.f64 q, t, 0d4014000000000000; "
     "cvt.rmi.f64.f64 f, q; mul.f64 m, f, 0d4014000000000000; sub.f64 %0, t, m;"),
    ("div3_add", "f64", ["f64", "f64"], ".reg .f64 q; div.rn.f64 q, %1, 0d4008000000000000; add.f64 %0, q, %2;"),
    # f64 operand order (DADD/DMUL/DFMA), both PTX orders
    ("add_f64_ba", "f64", ["f64", "f64"], "add.f64 %0, %2, %1;"),
    ("sub_f64_ba", "f64", ["f64", "f64"], "sub.f64 %0, %2, %1;"),
    ("fma_f64_cab", "f64", ["f64", "f64", "f64"], "fma.rn.f64 %0, %3, %1, %2;"),
    # bit-op consumers of a neg/abs
    ("neg_f32_copysign_sign", "f32", ["f32", "f32"], ".reg .f32 t; neg.f32 t, %1; copysign.f32 %0, t, %2;"),
    ("neg_f32_copysign_mag", "f32", ["f32", "f32"], ".reg .f32 t; neg.f32 t, %1; copysign.f32 %0, %2, t;"),
    ("neg_f64_split", "f64", ["f64"], ".reg .f64 t; .reg .b32 lo, hi; neg.f64 t, %1; mov.b64 {lo, hi}, t; "
     "and.b32 hi, hi, 2147483647; mov.b64 %0, {lo, hi};"),
    ("neg_f64_selp", "f64", ["f64", "f64"], ".reg .f64 t; .reg .pred p; neg.f64 t, %1; setp.gt.f64 p, %2, 0d0000000000000000; "
     "selp.f64 %0, t, %2, p;"),
    ("abs_f32_selp", "f32", ["f32", "f32"], ".reg .f32 t; .reg .pred p; abs.f32 t, %1; setp.gt.f32 p, %2, 0f00000000; "
     "selp.f32 %0, t, %2, p;"),
    ("neg_f32_selp", "f32", ["f32", "f32"], ".reg .f32 t; .reg .pred p; neg.f32 t, %1; setp.gt.f32 p, %2, 0f00000000; "
     "selp.f32 %0, t, %2, p;"),
]

# An f64 operand merged from branches (a phi), for the "phi rule" of campaign c2 (sass_order.PHI_SECOND):
# t is %1 + 1 or %1 * 2 by the sign of %2 (both taken across the lanes), then t meets %2 in both
# PTX orders.  Added after the first run (2026-12-07): not in card_h100_20261207/.
PHI = ".reg .f64 t; .reg .pred p; setp.lt.f64 p, %2, 0d0000000000000000; @p bra $PHI1; " \
      "add.f64 t, %1, 0d3FF0000000000000; bra.uni $PHI2; $PHI1: mul.f64 t, %1, 0d4000000000000000; $PHI2: "
CASES += [
    ("phi_add_f64_tb", "f64", ["f64", "f64"], PHI + "add.f64 %0, t, %2;"),
    ("phi_add_f64_bt", "f64", ["f64", "f64"], PHI + "add.f64 %0, %2, t;"),
    ("phi_mul_f64_tb", "f64", ["f64", "f64"], PHI + "mul.f64 %0, t, %2;"),
    ("phi_max_f64_bt", "f64", ["f64", "f64"], PHI + "max.f64 %0, %2, t;"),
    ("phi_sub_f64_bt", "f64", ["f64", "f64"], PHI + "sub.f64 %0, %2, t;"),
    # campaign c2's k0772 / k0015: an f32 NaN (sqrt's, or loaded) widened by F2F, then meeting an
    # f64 NaN in a DADD; the card returned the other operand's NaN where the SASS puts F2F's second
    ("cvt_f32_add_f64", "f64", ["f32", "f64"], ".reg .f64 t; cvt.f64.f32 t, %1; add.f64 %0, %2, t;"),
    ("sqrt_f32_cvt_add", "f64", ["f32", "f64"], ".reg .f32 s; .reg .f64 t; sqrt.rn.f32 s, %1; cvt.f64.f32 t, s; "
     "add.f64 %0, %2, t;"),
    ("sqrt_f32", "f32", ["f32"], "sqrt.rn.f32 %0, %1;"),
]


def values(t):
    return (F32_NANS + F32_NUMS) if t == "f32" else (F64_NANS + F64_NUMS)


def inputs(case):
    """Every combination of the special values (for three sources: NaNs and 1.5 in the third)."""
    import itertools
    import numpy as np
    _, _, srcs, _ = case
    lists = [values(t) for t in srcs]
    if len(srcs) == 3:
        lists[2] = F64_NANS[:3] + F64_NUMS[:1]
    combos = list(itertools.product(*lists))
    return [np.array([c[k] for c in combos], np.uint64) for k in range(len(srcs))]
