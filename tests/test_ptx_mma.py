"""simgpu.ptx's tensor-core instructions (ops_mma.py: mma.sync, ldmatrix) on hand-written PTX
(validation/tensor_cores/kernels.py), against

* numpy references built from the PTX ISA's fragment layouts (integer-valued inputs, so the
  sums are exact whatever the accumulation does), and
* the bits an NVIDIA H200 returned for the same kernels and inputs
  (validation/data/h200_tensor_cores.npz, validation/tensor_cores/device_run.py).
"""
from __future__ import annotations

import importlib.util
import os

import numpy as np

from simgpu.events import Observer
import pytest

from simgpu.errors import KernelError
from simgpu.ptx import ops_mma
from simgpu.ptx.runner import run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# validation/tensor_cores/kernels.py under its own name: a module called `kernels` left in
# sys.modules would shadow validation/holdout/kernels.py for tests/test_sanitize_suite.py
_spec = importlib.util.spec_from_file_location(
    "simgpu_tensor_core_kernels", os.path.join(ROOT, "validation", "tensor_cores", "kernels.py"))
K = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(K)

NPZ = os.path.join(ROOT, "validation", "data", "h200_tensor_cores.npz")
STORED = np.load(NPZ) if os.path.exists(NPZ) else None
CASES = sorted({tuple(k.split("/")[:2]) for k in STORED.files if k.count("/") == 2}) if STORED else []


def run_mma(name, a, b, c):
    form = K.MMA_FORMS[name]
    nd = 2 if form[1] == "f16" else 4
    d = np.full((a.shape[0], nd), 0xDEADBEEF, np.uint32)
    run(K.mma_ptx(*form), "k", a.shape[0] // 32, 32, (a, b, c, d))
    return d


@pytest.mark.parametrize("name, family", CASES, ids=[f"{n}-{f}" for n, f in CASES])
def test_mma_bits_equal_the_h200(name, family):
    """Every stored output of every form and input family, bit for bit (the accumulation model
    of ops_mma's docstring; the fragment layouts)."""
    a, b, c, want = (STORED[f"{name}/{family}/{k}"] for k in "ABCD")
    got = run_mma(name, a, b, c)
    np.testing.assert_array_equal(got, want)


def _exact_inputs(name, W, rng):
    """Small integer-valued operands: every partial sum is exact in f16/f32, so D = A B + C
    exactly, whatever order or truncation the tensor core uses."""
    shape, d, ta, tb, tc, _ = K.MMA_FORMS[name]
    Kk = K.SHAPES[shape]
    A = rng.integers(-3, 4, (W, 16, Kk)).astype(np.float64)
    B = rng.integers(-3, 4, (W, Kk, 8)).astype(np.float64)
    C = rng.integers(-20, 21, (W, 16, 8)).astype(np.float64)
    if ta in ("s8", "u8"):
        A = rng.integers(0 if ta == "u8" else -128, 256 if ta == "u8" else 128, (W, 16, Kk))
        B = rng.integers(-128, 128, (W, Kk, 8))
        C = rng.integers(-1000, 1000, (W, 16, 8))
        bits = lambda v: (v & 0xFF).astype(np.uint32)  # noqa: E731
        return A, B, C, bits(A), bits(B), (C & 0xFFFFFFFF).astype(np.uint32)
    if ta in ("e4m3", "e5m2"):
        from simgpu.ptx.ops_fp8 import encode
        enc = lambda v: encode(ta + "x2", v).astype(np.uint32)  # noqa: E731
        return A, B, C, enc(A), enc(B), K._to_bits("f32", C)
    return A, B, C, K._to_bits(ta, A), K._to_bits(tb, B), K._to_bits(tc, C)


@pytest.mark.parametrize("name", sorted(K.MMA_FORMS))
def test_mma_fragment_layouts_against_numpy(name):
    """D = A B + C for A, B, C placed in the registers by the ISA's layouts (kernels.py):
    a wrong row, column or register order gives a different product."""
    rng = np.random.default_rng(sorted(K.MMA_FORMS).index(name))
    W = 3
    A, B, C, ab, bb, cb = _exact_inputs(name, W, rng)
    a, b, c = K.pack_case(name, ab, bb, cb)
    D = K.unpack_d(name, run_mma(name, a, b, c))
    ref = np.matmul(A, B) + C
    d = K.MMA_FORMS[name][1]
    if d == "s32":
        np.testing.assert_array_equal(D.view(np.int32), ref.astype(np.int32))
    else:
        np.testing.assert_array_equal(ops_mma.values(d, D), ref)


def test_tf32_ignores_the_low_13_bits():
    name = "tf32_f32_k8"
    rng = np.random.default_rng(5)
    A, B, C, ab, bb, cb = _exact_inputs(name, 1, rng)
    ab = ab | rng.integers(0, 1 << 13, ab.shape).astype(np.uint32)   # noise below tf32
    D = K.unpack_d(name, run_mma(name, *K.pack_case(name, ab, bb, cb)))
    np.testing.assert_array_equal(ops_mma.values("f32", D), np.matmul(A, B) + C)


def test_truncation_is_visible_where_an_exact_sum_is_not():
    """One dominant product 2^20 and 15 products of 2^-6: the tensor core truncates every term
    to a multiple of 2^(20 - 25) = 2^-5, so the small ones vanish and D = 2^20, while the
    correctly rounded sum is 2^20 + 2^-2 (the H200 does the same on the stored 'onebig' data)."""
    name = "f16_f32_k16"
    A, B, C = np.zeros((1, 16, 16)), np.zeros((1, 16, 8)), np.zeros((1, 16, 8))
    A[0, :, 0], B[0, 0, :] = 1024.0, 1024.0
    A[0, :, 1:], B[0, 1:, :] = 0.125, 0.125
    bits = K.pack_case(name, K._to_bits("f16", A), K._to_bits("f16", B), K._to_bits("f32", C))
    D = ops_mma.values("f32", K.unpack_d(name, run_mma(name, *bits)))
    assert float(np.float32(2.0 ** 20 + 15 * 2.0 ** -6)) == 2.0 ** 20 + 0.25
    assert (D == 2.0 ** 20).all()


def test_mma_by_part_of_a_warp_is_an_error():
    name = "f16_f32_k16"
    ptx = K.mma_ptx(*K.MMA_FORMS[name]).replace(
        " mma.sync", " setp.lt.u32 %p1, %r1, 16;\n @%p1 mma.sync").replace(
        " .reg .b32 %r<8>;", " .reg .b32 %r<8>;\n .reg .pred %p<2>;")
    a, b, c = (np.zeros((32, n), np.uint32) for n in (4, 2, 4))
    with pytest.raises(KernelError, match="part of a warp"):
        run(ptx, "k", 1, 32, (a, b, c, np.zeros((32, 4), np.uint32)))


# ---- ldmatrix ------------------------------------------------------------------------------
def _ldmatrix_ref(src, off):
    h = src.view(np.uint16).reshape(src.shape[0], -1)
    lane = np.arange(32)
    g, t = lane >> 2, lane & 3
    cols = []
    for num, trans in ((1, False), (2, False), (4, False), (1, True), (2, True), (4, True)):
        rows = off[:, :8 * num].reshape(-1, num, 8) // 2                # element offsets
        M = h[np.arange(len(h))[:, None, None, None], rows[..., None] + np.arange(8)]  # (blk, mat, row, col)
        lo, hi = (M[:, :, 2 * t, g], M[:, :, 2 * t + 1, g]) if trans else (M[:, :, g, 2 * t], M[:, :, g, 2 * t + 1])
        w = lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)         # (blk, mat, lane)
        cols.append(np.transpose(w, (0, 2, 1)).reshape(-1, num))
    return np.concatenate(cols, axis=1)


def test_ldmatrix_against_numpy_and_the_h200():
    rng = np.random.default_rng(1)
    src = rng.integers(0, 1 << 32, (4, 256), dtype=np.uint64).astype(np.uint32)
    off = (rng.integers(0, 64, (4, 32)) * 16).astype(np.uint32)
    out = np.zeros((128, 14), np.uint32)
    run(K.LDMATRIX_PTX, "k", 4, 32, (src, off, out))
    np.testing.assert_array_equal(out, _ldmatrix_ref(src, off))
    if STORED is None:
        pytest.skip("no stored H200 data")
    src, off, want = (STORED[f"ldmatrix/{k}"] for k in ("src", "off", "out"))
    np.testing.assert_array_equal(_ldmatrix_ref(src, off), want)     # the reference is the H200's
    out = np.zeros_like(want)
    run(K.LDMATRIX_PTX, "k", 4, 32, (src.copy(), off.copy(), out))
    np.testing.assert_array_equal(out, want)


def test_ldmatrix_misaligned_row_is_an_error():
    src = np.zeros((1, 256), np.uint32)
    off = np.full((1, 32), 8, np.uint32)
    with pytest.raises(KernelError, match="16-byte aligned"):
        run(K.LDMATRIX_PTX, "k", 1, 32, (src, off, np.zeros((32, 14), np.uint32)))


def test_the_stated_bound_of_one_instruction():
    """ops_mma's docstring: |D - (C + sum a_k b_k)| < (K + 1) 2^(emax - 25) + 2^-23 |D|, emax the
    largest alignment exponent; and the bound is nearly reached (the truncation is real)."""
    rng = np.random.default_rng(9)
    n, Kk = 20000, 16
    a = K._to_bits("f16", rng.standard_normal((n, Kk)) * np.exp2(rng.integers(-8, 8, (n, Kk))))
    b = K._to_bits("f16", rng.standard_normal((n, Kk)))
    A, B = ops_mma.values("f16", a), ops_mma.values("f16", b)
    C = rng.standard_normal(n).astype(np.float32).astype(np.float64)
    pexp = ops_mma.exponents("f16", A) + ops_mma.exponents("f16", B)
    D = ops_mma.fused_sum(C, A * B, pexp)
    emax = np.maximum(pexp.max(axis=1), ops_mma.exponents("f32", C))
    err = np.abs(D - (C + (A * B).sum(axis=1)))
    bound = (Kk + 1) * np.exp2(emax - 25.0) + 2.0 ** -23 * np.abs(D)
    assert (err < bound).all()
    assert (err / bound).max() > 0.25


def test_stmatrix_is_the_inverse_of_ldmatrix():
    """stmatrix of what ldmatrix loaded (same addresses, same variant) writes the same bytes
    back to a cleared buffer: each variant stores the rows it read."""
    for num, trans in ((1, False), (2, False), (4, False), (1, True), (2, True), (4, True)):
        regs = ", ".join(f"%o{j}" for j in range(num))
        v = f"m8n8.x{num}{'.trans' if trans else ''}.shared.b16"
        ptx = K.LDMATRIX_PTX
        a = ptx.index(" ldmatrix.sync.aligned.m8n8.x1.shared.b16")
        body = (f" ldmatrix.sync.aligned.{v} {{{regs}}}, [%r9];\n bar.sync 0;\n"
                " st.shared.v4.b32 [%r5], {%r0, %r0, %r0, %r0};\n"
                " st.shared.v4.b32 [%r5+16], {%r0, %r0, %r0, %r0};\n bar.sync 0;\n"
                f" stmatrix.sync.aligned.{v} [%r9], {{{regs}}};\n bar.sync 0;\n"
                + "".join(f" ld.shared.b32 %r{10 + j}, [%r5+{4 * j}];\n" for j in range(8))
                + " add.s64 %rd10, %rd3, %rd4;\n"
                + "".join(f" st.global.b32 [%rd10+{4 * j}], %r{10 + j};\n" for j in range(8))
                + " ret;\n}\n")
        ptx = (ptx[:a] + body).replace(" mov.u32 %r1, %tid.x;", " mov.b32 %r0, 0;\n mov.u32 %r1, %tid.x;")
        rng = np.random.default_rng(num + 10 * trans)
        src = rng.integers(0, 1 << 32, (1, 256), dtype=np.uint64).astype(np.uint32)
        off = (rng.permutation(64)[:32] * 16).astype(np.uint32)[None, :]   # distinct rows
        out = np.zeros((1, 256), np.uint32)
        run(ptx.replace(".target sm_80", ".target sm_90").replace(".version 7.0", ".version 7.8"),
            "k", 1, 32, (src, off, out))
        rows = off[0, :8 * num] // 16
        got, want = out.reshape(64, 4), src.reshape(64, 4)
        np.testing.assert_array_equal(got[rows], want[rows])
        others = np.setdiff1d(np.arange(64), rows)
        assert (got[others] == 0).all()


class _Mem(Observer):
    def __init__(self):
        self.ev = []

    def mem(self, ev):
        if ev.inst.attrs["opcode"] == "ldmatrix":
            self.ev.append((ev.space, ev.kind, ev.size, ev.mask.n_threads, int(ev.addr[ev.mask.arr].max())))


def test_ldmatrix_through_a_generic_address_and_its_events():
    """A generic address into shared memory (cvta.shared) loads the same and is reported as a
    shared access of 16 bytes per row-giving lane (8, 16, 32 lanes for .x1, .x2, .x4)."""
    ptx = K.LDMATRIX_PTX.replace(" add.u32 %r9, %r3, %r8;",
                                 " add.u32 %r9, %r3, %r8;\n cvt.u64.u32 %rd11, %r9;\n"
                                 " cvta.shared.u64 %rd12, %rd11;")
    ptx = ptx.replace(".shared.b16", ".b16").replace("[%r9]", "[%rd12]")
    rng = np.random.default_rng(4)
    src = rng.integers(0, 1 << 32, (1, 256), dtype=np.uint64).astype(np.uint32)
    off = (rng.integers(0, 64, (1, 32)) * 16).astype(np.uint32)
    out = np.zeros((32, 14), np.uint32)
    obs = _Mem()
    run(ptx, "k", 1, 32, (src, off, out), observers=[obs])
    np.testing.assert_array_equal(out, _ldmatrix_ref(src, off))
    assert [e[:4] for e in obs.ev] == [("shared", "ld", 16, n) for n in (8, 16, 32, 8, 16, 32)]
    assert all(e[4] < 1024 for e in obs.ev)          # shared-space addresses


@pytest.mark.parametrize("t, final", [("f16", "rz"), ("bf16", "rz"), ("tf32", "rz"), ("f16", "rn")])
def test_the_compiled_sum_equals_the_numpy_definition(t, final):
    """ops_mma.fused_mma (numba, what the executor runs) gives the bits of fused_sum + to_f32
    over the broadcast products (the definition), specials and overflow included."""
    rng = np.random.default_rng(len(t) + len(final))
    W, Kk = 64, 16 if t != "tf32" else 8
    lo, hi = (-14, 15) if t == "f16" else (-70, 70)
    A = rng.standard_normal((W, 16, Kk)) * np.exp2(rng.integers(lo, hi, (W, 16, Kk)))
    B = rng.standard_normal((W, Kk, 8)) * np.exp2(rng.integers(lo, hi, (W, Kk, 8)))
    C = rng.standard_normal((W, 16, 8)) * np.exp2(rng.integers(2 * lo, 2 * hi, (W, 16, 8)))
    A = ops_mma.values(t, K._to_bits(t, A))
    B = ops_mma.values(t, K._to_bits(t, B))
    C = C.astype(np.float32).astype(np.float64)
    A.reshape(-1)[rng.integers(0, A.size, 20)] = np.inf
    B.reshape(-1)[rng.integers(0, B.size, 20)] = -np.inf
    C.reshape(-1)[rng.integers(0, C.size, 20)] = np.nan
    A.reshape(-1)[rng.integers(0, A.size, 200)] = 0.0
    Bt = np.swapaxes(B, 1, 2)
    with np.errstate(all="ignore"):
        prod = A[:, :, None, :] * Bt[:, None, :, :]
    pexp = (ops_mma.exponents(t, A)[:, :, None, :].astype(np.int32)
            + ops_mma.exponents(t, Bt)[:, None, :, :])
    want = ops_mma.to_f32(ops_mma.fused_sum(C, prod, pexp, final=final), final)
    got = ops_mma.fused_mma(A, B, C, t, t, final=final)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same.all()
    assert np.isinf(got).any() and np.isnan(got).any()
