"""Warp-level tensor-core instructions: ``mma.sync.aligned`` and ``ldmatrix.sync.aligned``.

mma.sync.aligned.{shape}.row.col{.satfinite}.{d}.{a}.{b}.{c} d, a, b, c  (PTX ISA 9.7.14):

* m16n8k16 and m16n8k8: f16 x f16 -> f32 or f16, bf16 x bf16 -> f32; m16n8k8 and m16n8k4:
  tf32 x tf32 -> f32; m16n8k32 and m16n8k16: s8/u8 x s8/u8 -> s32 (wrapping, or clamped with
  .satfinite); m16n8k32 (sm_89+): e4m3/e5m2 x e4m3/e5m2 -> f32.
* Fragment layouts exactly as the PTX ISA's "Matrix Fragments for mma.m16n8k*" (groupID
  g = lane >> 2, threadID_in_group t = lane % 4, e = elements per 32-bit register): A register
  j holds row g + 8(j & 1), columns (j >> 1)K/2 + te + [0, e); B register j column g, rows
  4ej + te + [0, e); f32/s32 C/D register j row g + 8(j >> 1), column 2t + (j & 1); f16 C/D
  register j row g + 8j, columns 2t, 2t + 1.  Lower element = lower bits.
* Every warp that executes the instruction at this step is done at once: the lanes' registers
  are gathered into (warps, 16, K) / (warps, K, 8) / (warps, 16, 8) arrays, multiplied in one
  call (integers: one ``np.matmul``; floats: ``fused_mma``, one numba loop nest over all warps'
  outputs, bit-equal to the numpy definition ``fused_sum``), and the results are scattered
  back.  All 32 lanes of a warp must execute it together (``.aligned``): otherwise a clear
  error.

Accumulation (floating point), measured on an NVIDIA H200 (sm_90, driver 580.159.04, ptxas
13.0, 2026-12-02; validation/tensor_cores/, 4096 outputs per form and input family, against
the exact sums) and implemented by :func:`fused_sum`:

* the products a_k b_k are exact; tf32 operands use the top 19 bits of each f32 register (the
  low 13 bits are ignored, not rounded);
* all K products of the instruction and the accumulator C are added in one fused step: each
  term is aligned to emax, the largest of the products' Ea + Eb (the sum of the operands'
  exponent fields, subnormals at the smallest normal exponent: the exponent of the unnormalised
  product) and C's exponent, and truncated toward zero (sign-magnitude) to a multiple of
  2^(emax - 25); the truncated terms are summed exactly, and the sum is truncated (RZ) to f32;
  a sum of magnitude >= 2^128 is +-inf;
* f16 results (.f16.f16.f16.f16): that f32 value rounded to nearest even to f16;
* NaN operands, and inf - inf among the products and C, give the canonical NaN 0x7fffffff
  (f16: 0x7fff); otherwise an infinite product or C gives that infinity.
This reproduces the H200's result bits for every stored output of m16n8k16 and m16n8k8 f16 ->
f32, f16 -> f16, bf16 -> f32 and tf32 m16n8k8 (7 input families: normal, wide exponent range,
near-total cancellation, one dominant product, dominant C, tiny C, specials with inf/NaN/
subnormals/overflow): 28672 of 28672 outputs per form.  Integer mma (s8/u8 -> s32, wrapping or
.satfinite) is exact and bit-equal.  Not measured: tf32 m16n8k4 and int8 m16n8k16 (the same
layout rules).  The bound this leaves against the exact sum, per instruction:
|D - (C + sum a_k b_k)| < (K + 1) 2^(emax - 25) + 2^-23 |D| (tests/test_ptx_mma.py checks it).

fp8 (e4m3/e5m2 m16n8k32): sm_90 has no fp8 mma.sync; ptxas 13.0 lowers it (seen in the SASS)
to F2FP.F16.E4M3/E5M2.UNPACK_B conversions (exact), an HMMA.16816.F32 from zero over the
bytes 0-1 of each register (k % 4 < 2), a second one accumulating bytes 2-3 (k % 4 >= 2), and
an FADD (f32, round to nearest) of C.  simgpu does the same with the fused sum above (f16
exponents); bit-equal on all 24576 stored fp8 outputs (finite inputs only: NaN and e5m2
infinities were not in the measured inputs).

ldmatrix.sync.aligned.m8n8{.x1,.x2,.x4}{.trans}{.shared}.b16 d, [a] (and its inverse,
stmatrix, sm_90, unmeasured): lanes 8i..8i+7 give
the row addresses (16 bytes each, 16-byte aligned) of matrix i; register i of lane l holds
row g, columns 2t, 2t+1 of matrix i (``.trans``: rows 2t, 2t+1 of column g).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from simgpu.errors import SimGPUError
from simgpu.ptx import sem_fp as fp
from simgpu.ptx.instrs import guarded, reader, unsupported, writer
from simgpu.ptx.memory import SHARED_WINDOW, MemFault, classify_generic
from simgpu.ptx.ops_fp8 import decode as fp8_decode
from simgpu.ptx.ops_mem import _emit, address_reader, resolve

K_OF = {"m16n8k4": 4, "m16n8k8": 8, "m16n8k16": 16, "m16n8k32": 32}
ELEM_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8}
# (A type, K) pairs the ISA defines for m16n8kK (D/C types checked separately)
VALID = {("f16", 8), ("f16", 16), ("bf16", 8), ("bf16", 16), ("tf32", 4), ("tf32", 8),
         ("s8", 16), ("s8", 32), ("u8", 16), ("u8", 32), ("e4m3", 32), ("e5m2", 32)}

# The accumulation model (measured on the H200: validation/tensor_cores/README.md): per A type,
# (fraction bits kept below the alignment exponent, rounding of the sum to f32), "fp8" (the
# sm_90 lowering: two f16 fused sums and an f32 add) or "exact" (one rounding, unmeasured).
FRACTION_BITS = 25
MODEL = {"f16": (25, fp.RZ), "bf16": (25, fp.RZ), "tf32": (25, fp.RZ),
         "e4m3": "fp8", "e5m2": "fp8"}
# |simgpu - H200| / (|C| + sum |a_k b_k|), measured maximum: 0 (bit-equal) for every form
BOUND = {t: 0.0 for t in MODEL}
EMIN = {"f16": -14, "bf16": -126, "tf32": -126, "f32": -126, "e4m3": -6, "e5m2": -14}

_LANE = np.arange(32)
_G, _T = _LANE >> 2, _LANE & 3


def _a_index(K, e):
    j = np.arange(16 * K // (32 * e))[None, :, None]
    x = np.arange(e)[None, None, :]
    g, t = _G[:, None, None], _T[:, None, None]
    rows = np.broadcast_to(g + 8 * (j & 1) + 0 * x, (32, j.shape[1], e))
    cols = np.broadcast_to((j >> 1) * (K // 2) + t * e + x, rows.shape)
    return rows, cols


def _b_index(K, e):
    j = np.arange(8 * K // (32 * e))[None, :, None]
    x = np.arange(e)[None, None, :]
    g, t = _G[:, None, None], _T[:, None, None]
    rows = np.broadcast_to(j * 4 * e + t * e + x, (32, j.shape[1], e))
    cols = np.broadcast_to(g + 0 * j + 0 * x, rows.shape)
    return rows, cols


def _c_index(f16):
    g, t = _G[:, None, None], _T[:, None, None]
    if f16:
        j, x = np.arange(2)[None, :, None], np.arange(2)[None, None, :]
        return (np.broadcast_to(g + 8 * j + 0 * x, (32, 2, 2)),
                np.broadcast_to(2 * t + x + 0 * j, (32, 2, 2)))
    j = np.arange(4)[None, :, None]
    return (np.broadcast_to(g + 8 * (j >> 1), (32, 4, 1)),
            np.broadcast_to(2 * t + (j & 1), (32, 4, 1)))


def gather(words, idx, e, shape):
    """(warps*32, regs) uint32 fragment words -> (warps, R, C) element bits (uint32)."""
    w = 32 // e
    W = words.shape[0] // 32
    if e == 1:                                # one element a register: the words themselves
        return np.take(words.reshape(W, -1), _source(idx, shape), axis=1).reshape((W,) + shape)
    sh = np.arange(e, dtype=np.uint32) * np.uint32(w)
    el = (words.reshape(W, 32, -1)[..., None] >> sh) & np.uint32((1 << w) - 1 if w < 32 else 0xFFFFFFFF)
    return el.reshape(W, -1)[:, _source(idx, shape)].reshape((W,) + shape)


_SOURCES: dict = {}


def _source(idx, shape):
    """For each element of an R x C fragment matrix (row-major), its position in the flattened
    (lane, register, slot) order of ``idx`` (which covers every element once)."""
    key = (id(idx[0]), shape)
    got = _SOURCES.get(key)
    if got is None or got[0] is not idx:
        rows, cols = idx
        src = np.empty(shape[0] * shape[1], np.int64)
        src[(rows * shape[1] + cols).reshape(-1)] = np.arange(rows.size)
        got = _SOURCES[key] = (idx, src)
    return got[1]


_FLAT: dict = {}


def _flat(idx, C):
    """rows * C + cols of ``idx`` (cached per index arrays and C)."""
    key = (id(idx[0]), C)
    got = _FLAT.get(key)
    if got is None or got[0] is not idx:
        rows, cols = idx
        got = _FLAT[key] = (idx, (rows * C + cols).astype(np.intp))
    return got[1]


def scatter(mat, idx, e):
    """(warps, R, C) element bits -> (warps*32, regs) uint32 words."""
    W, _, C = mat.shape
    flat = _flat(idx, C)                      # (32, regs, e)
    el = np.take(mat.reshape(W, -1), flat, axis=1)
    if e == 1:
        return el.reshape(W * 32, flat.shape[1]).astype(np.uint32, copy=False)
    el = el.astype(np.uint32)
    w = 32 // e
    words = np.zeros(el.shape[:3], np.uint32)
    for x in range(e):                        # e <= 4 element slots of a register
        words |= el[..., x] << np.uint32(w * x)
    return words.reshape(-1, words.shape[2])


def values(t, bits):
    """Element bits of type t -> float64 values (tf32: the top 19 bits of the f32)."""
    if t == "f16":
        return bits.astype(np.uint16).view(np.float16).astype(np.float64)
    if t == "bf16":
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if t == "tf32":
        return (bits & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if t == "f32":
        return bits.view(np.float32).astype(np.float64)
    if t in ("e4m3", "e5m2"):
        return fp8_decode(t + "x2", bits)
    raise SimGPUError(f"mma: no values for .{t}")


def exponents(t, v):
    """floor(log2 |v|) of element values of type t (int16), subnormals at the format's smallest
    normal exponent (the exponent field as the hardware sees it); zeros (and inf/NaN, whose
    results do not depend on it) get -10000."""
    _, e = np.frexp(v)
    return np.where((v != 0) & np.isfinite(v), np.maximum(e - 1, EMIN[t]), -10000).astype(np.int16)


def fused_sum(c, prod, pexp, frac=FRACTION_BITS, final=fp.RZ):
    """The tensor core's sum of one instruction: ``c`` (...) the accumulator values (float64
    of f32), ``prod`` (..., K) the exact products, ``pexp`` (..., K) their alignment exponents
    (Ea + Eb).  Every term is truncated toward zero to a multiple of 2^(emax - frac), emax the
    largest of the products' Ea + Eb and the accumulator's exponent; the truncated terms are
    summed exactly and the sum rounded to f32 (``final``; a sum of magnitude >= 2^128 is
    +-inf).  An infinite or NaN term passes through the sum as numpy adds it: inf, or NaN
    for a NaN or inf - inf.  Returns float64 values."""
    with np.errstate(all="ignore"):
        emax = np.maximum(pexp.max(axis=-1), exponents("f32", c)).clip(-900, None)
        iq = np.ldexp(1.0, (frac - emax).astype(np.int32))  # 1 / quantum, a power of two
        x = prod * iq[..., None]                            # exact: scaling by 2^n
        np.trunc(x, out=x)
        s = (x.sum(axis=-1) + np.trunc(c * iq)) / iq        # integers < 2^(frac + 7): exact
    return to_f32(s, final)


def to_f32(s, final=fp.RZ):
    """The exact sum rounded to f32 (``final``), +-inf from 2^128 on, inf/NaN kept."""
    with np.errstate(all="ignore"):
        r = fp.to_f64(fp.FMT["f32"], fp.round_f64(fp.FMT["f32"], s, final))
        return np.where(np.abs(s) >= 2.0 ** 128, s * np.inf, r)


@njit(cache=True, inline="always")
def _exp_bits(b, emin):
    """exponents() of one float64 from its bits b (int64): floor(log2 |v|), at least ``emin``
    (the format's smallest normal exponent); zeros, infinities and NaNs -10000 (a select, no
    branch: the loops over a row vectorise)."""
    x = (b >> 52) & 0x7FF
    v = max(x - 1023, emin)
    return -10000 if (x == 0x7FF) | ((b & 0x7FFFFFFFFFFFFFFF) == 0) else v


@njit(cache=True)
def _fused_mma(A, B, C, emin_a, emin_b, frac, rz, out):
    """fused_sum + to_f32 of every output of a batch of mma instructions at once, without the
    (warps, 16, 8, K) intermediates: A (W, M, K), B (W, K, N), C (W, M, N) float64 values;
    out (W, M, N) gets the f32 results (as float64).

    Each output's products are summed in k order, as fused_sum does (the truncated terms are
    integers below 2^(frac + 7): every partial sum is exact, in any order); the loops run over
    a row's N outputs at once, with no branch and no dependence between their iterations."""
    W, M, K = A.shape
    N = B.shape[2]
    em = np.empty(N, np.int64)
    ea = np.empty(K, np.int64)
    eb = np.empty((K, N), np.int64)
    qb = np.empty(N, np.int64)
    iq = qb.view(np.float64)                # 2^(frac - em), built from its bits
    pb = np.empty(N, np.int64)
    q = pb.view(np.float64)                 # 2^(em - frac): the quantum
    t = np.empty(N)
    r32 = np.empty(N, np.float32)
    rb = r32.view(np.int32)
    Ab, Bb, Cb = A.view(np.int64), B.view(np.int64), C.view(np.int64)
    for w in range(W):
        Bw = B[w]
        for k in range(K):
            for j in range(N):
                eb[k, j] = _exp_bits(Bb[w, k, j], emin_b)
        for i in range(M):
            Ai, Ci, oi, Cbi = A[w, i], C[w, i], out[w, i], Cb[w, i]
            for k in range(K):
                ea[k] = _exp_bits(Ab[w, i, k], emin_a)
            for j in range(N):
                em[j] = _exp_bits(Cbi[j], -126)
            for k in range(K):
                e0 = ea[k]
                ebk = eb[k]
                for j in range(N):
                    em[j] = max(em[j], e0 + ebk[j])
            for j in range(N):              # em in [-900, 254]: normal float64 powers of two
                e = max(em[j], -900)
                qb[j] = (frac - e + 1023) << 52
                pb[j] = (e - frac + 1023) << 52
            for j in range(N):
                t[j] = np.trunc(Ci[j] * iq[j])
            for k in range(K):
                a = Ai[k]
                bk = Bw[k]
                for j in range(N):
                    t[j] += np.trunc(a * bk[j] * iq[j])
            for j in range(N):
                t[j] = t[j] * q[j]                          # exact
                r32[j] = t[j]                               # round to nearest (2^128 on: inf)
            if rz:                                          # one ulp toward zero where RN went
                for j in range(N):                          # away (not for |s| >= 2^128: inf)
                    s = abs(t[j])
                    rb[j] -= np.int32((abs(np.float64(r32[j])) > s) & (s < 3.402823669209385e+38))
            for j in range(N):
                oi[j] = r32[j]


def fused_mma(A, B, C, ta, tb, frac=FRACTION_BITS, final=fp.RZ):
    """fused_sum + to_f32 for whole instructions (A (W,16,K), B (W,K,8), C (W,16,8) values),
    compiled: the same bits as ``to_f32(fused_sum(...))`` over the broadcast products
    (tests/test_ptx_mma.py).  ``final``: RZ or RN."""
    W, M, K = np.shape(A)
    if np.shape(B) != (W, K, np.shape(C)[2]) or np.shape(C)[:2] != (W, M):
        # the compiled loop does not check bounds: a mismatch would write outside `out`
        raise ValueError(f"fused_mma: shapes A {np.shape(A)}, B {np.shape(B)}, C {np.shape(C)} do not agree")
    A, B, C = (np.ascontiguousarray(x, np.float64) for x in (A, B, C))
    out = np.empty(C.shape)
    _fused_mma(A, B, C, EMIN[ta], EMIN[tb], frac, final == fp.RZ, out)
    return out


def _parse_mma(ins):
    """(shape, d, a, b, c, satfinite) from the instruction's written name."""
    head = ins.text.split()
    name = next(w for w in head if w.startswith("mma."))
    parts = name.split(".")
    if parts[1:3] != ["sync", "aligned"] or len(parts) < 9:
        raise SimGPUError("mma: only mma.sync.aligned.<shape>.row.col forms are modelled")
    shape, la, lb = parts[3], parts[4], parts[5]
    rest = parts[6:]
    sat = "satfinite" in rest
    rest = [r for r in rest if r != "satfinite"]
    if (la, lb) != ("row", "col") or len(rest) != 4 or shape not in K_OF:
        raise SimGPUError(f"mma form {name} is not modelled (simgpu runs m16n8k{{4,8,16,32}}.row.col)")
    d, a, b, c = rest
    K = K_OF[shape]
    if (a, K) not in VALID or ELEM_BITS.get(b) != ELEM_BITS[a] or (a in ("s8", "u8")) != (b in ("s8", "u8")):
        raise SimGPUError(f"mma form {name} is not modelled")
    if a in ("s8", "u8"):
        ok = d == c == "s32"
    elif a in ("f16",):
        ok = d in ("f32", "f16") and c in ("f32", "f16") and b == "f16"
    else:
        ok = d == c == "f32" and (b == a or a in ("e4m3", "e5m2"))
    if not ok:
        raise SimGPUError(f"mma form {name} is not modelled (type combination)")
    return shape, d, a, b, c, sat


def _warps(ex, ins, sub):
    """The executing lanes must be whole warps: (warps, 32) chunk lanes."""
    n = len(sub)
    if n % 32 == 0:
        w = sub.reshape(-1, 32)
        if ((w[:, 0] % 32) == 0).all() and (np.diff(w, axis=1) == 1).all():
            return w
    bad = sub[0]
    ex.fault(ins, f"{ins.opcode}.sync.aligned executed by part of a warp (every lane of the warp "
             "must execute it together; simgpu does not guess what the hardware does)", bad)


def build_mma(ctx, ins):
    try:
        shape, d, a, b, c, sat = _parse_mma(ins)
    except SimGPUError as err:
        return unsupported(ctx, ins, str(err))
    K = K_OF[shape]
    e = 32 // ELEM_BITS[a]
    ops = ins.operands
    if len(ops) != 4 or any(o[0] != "vec" for o in ops):
        return unsupported(ctx, ins, "mma needs four register vectors {d}, {a}, {b}, {c}")
    ia, ib = _a_index(K, e), _b_index(K, e)
    ic, id_ = _c_index(c == "f16"), _c_index(d == "f16")
    want = (2 if d == "f16" else 4, ia[0].shape[1], ib[0].shape[1], 2 if c == "f16" else 4)
    if tuple(len(o[1]) for o in ops) != want:
        return unsupported(ctx, ins, f"mma.{shape} with .{a} takes {want[1]} A, {want[2]} B and "
                                     f"{want[3]} C registers and writes {want[0]}")
    rd = [[reader(ctx, r, "b32") for r in o[1]] for o in ops[1:]]
    wd = [writer(ctx, r, "b32") for r in ops[0][1]]
    guard = guarded(ctx, ins)
    compute = _int_mma(sat, a, b) if a in ("s8", "u8") else _float_mma(a, b, c, d)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            _warps(ex, ins, sub)
            n = len(sub)
            A, B, C = (np.stack([np.broadcast_to(np.asarray(r(ex, sub), np.uint32), (n,))
                                 for r in rs], axis=1) for rs in rd)
            Am = gather(A, ia, e, (16, K))
            Bm = gather(B, ib, e, (K, 8))
            Cm = gather(C, ic, 2 if c == "f16" else 1, (16, 8))
            D = scatter(compute(Am, Bm, Cm), id_, 2 if d == "f16" else 1)
            for j, w in enumerate(wd):
                w(ex, D[:, j], sub)
        ex.advance(lanes)
    return run


def _int_mma(sat, a, b):
    def signed(t, bits):
        v = bits.astype(np.int64)
        return np.where(v >= 128, v - 256, v) if t == "s8" else v

    def compute(Am, Bm, Cm):
        s = np.matmul(signed(a, Am), signed(b, Bm)) + Cm.view(np.int32).astype(np.int64)
        if sat:
            s = np.clip(s, -(1 << 31), (1 << 31) - 1)
        return (s & 0xFFFFFFFF).astype(np.uint32)
    return compute


def _float_mma(a, b, c, d):
    model = MODEL[a]
    f32 = fp.FMT["f32"]

    def compute(Am, Bm, Cm):
        A, B = values(a, Am), values(b, Bm)
        C = values("f16", Cm) if c == "f16" else values("f32", Cm)
        with np.errstate(all="ignore"):
            if model == "exact":
                r = fp.to_f64(f32, fp.round_f64(f32, np.matmul(A, B) + C, fp.RN))
            elif model == "fp8":                  # two f16 HMMAs from 0, then + C (FADD.RN)
                lo = (np.arange(A.shape[-1]) & 3) < 2
                r = fused_mma(A[..., lo], B[:, lo], np.zeros(C.shape), "f16", "f16")
                r = fused_mma(A[..., ~lo], B[:, ~lo], r, "f16", "f16")
                r = fp.to_f64(f32, fp.round_f64(f32, r + C, fp.RN))     # inf - inf: NaN
            else:
                r = fused_mma(A, B, C, a, b, *model)
        if d == "f16":
            h = fp.round_f64(fp.FMT["f16"], r, fp.RN)
            bits = fp.bits_of(fp.FMT["f16"], h).astype(np.uint32)
            return np.where(np.isnan(r), np.uint32(fp.F16_NAN), bits)
        bits = fp.bits_of(f32, r.astype(np.float32)).astype(np.uint32)
        return np.where(np.isnan(r), np.uint32(fp.F32_NAN), bits)
    return compute


# ---- ldmatrix -----------------------------------------------------------------------------
def _row_events(space, ra):
    """(space, positions, addresses) of the row addresses: a generic address is reported in the
    space it falls in (shared, as the ISA requires), with that space's address."""
    if space != "generic":
        return [(space, slice(None), ra)]
    sh = classify_generic(ra)[0]
    out = []
    if sh.any():
        out.append(("shared", np.flatnonzero(sh), ra[sh] - np.uint64(SHARED_WINDOW)))
    if (~sh).any():
        out.append(("global", np.flatnonzero(~sh), ra[~sh]))
    return out


def build_ldmatrix(ctx, ins):
    mods = set(ins.mods)
    if not {"sync", "aligned", "m8n8"} <= mods or ins.types != ("b16",):
        return unsupported(ctx, ins, "only ldmatrix.sync.aligned.m8n8{.x1,.x2,.x4}{.trans}.b16 "
                                     "is modelled")
    num = next((int(m[1:]) for m in ins.mods if m in ("x1", "x2", "x4")), 1)
    trans = "trans" in mods
    space = "shared" if "shared" in mods else "generic"
    dst = ins.operands[0]
    regs = dst[1] if dst[0] == "vec" else [dst]
    if len(regs) != num:
        return unsupported(ctx, ins, f"ldmatrix .x{num} writes {num} registers")
    wr = [writer(ctx, r, "b32") for r in regs]
    addr = address_reader(ctx, ins.operands[1])
    guard = guarded(ctx, ins)
    g, t = _G, _T

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            warps = _warps(ex, ins, sub)
            nw = len(warps)
            a = np.broadcast_to(addr(ex, sub), (len(sub),)).astype(np.uint64)
            rows_lanes = warps[:, :8 * num].reshape(-1)            # the lanes giving rows
            ra = a.reshape(nw, 32)[:, :8 * num].reshape(-1)
            bad = (ra & np.uint64(15)) != 0
            if bad.any():
                p = int(np.argmax(bad))
                ex.fault(ins, f"ldmatrix row address {int(ra[p]):#x} is not 16-byte aligned",
                         rows_lanes[p])
            el = (ra[:, None] + np.arange(0, 16, 2, dtype=np.uint64)[None, :]).reshape(-1)
            try:
                groups = resolve(ex, space, el, 2, np.dtype(np.uint16), np.repeat(rows_lanes, 8), [])
            except MemFault as err:
                ex.fault(ins, err.msg, err.pos)
            vals = np.empty(len(el), np.uint16)
            for view, idx, pos in groups:
                vals[pos] = view[idx]
            M = vals.reshape(nw, num, 8, 8).astype(np.uint32)          # (warp, matrix, row, col)
            if trans:
                lo, hi = M[:, :, 2 * t, g], M[:, :, 2 * t + 1, g]
            else:
                lo, hi = M[:, :, g, 2 * t], M[:, :, g, 2 * t + 1]
            words = lo | (hi << np.uint32(16))                          # (warp, matrix, lane)
            for i, w in enumerate(wr):
                w(ex, words[:, i, :].reshape(-1), sub)
            _emit(ex, ins, pc, "load", 16, rows_lanes, _row_events(space, ra))
        ex.advance(lanes)
    return run


def build_stmatrix(ctx, ins):
    """stmatrix.sync.aligned.m8n8{.x1,.x2,.x4}{.trans}.shared{::cta}.b16 [a], {r...} (sm_90):
    ldmatrix's inverse.  Not measured on the H200: the layout is the ISA's (ldmatrix's)."""
    mods = set(ins.mods)
    if not {"sync", "aligned", "m8n8"} <= mods or ins.types != ("b16",):
        return unsupported(ctx, ins, "only stmatrix.sync.aligned.m8n8{.x1,.x2,.x4}{.trans}.b16 "
                                     "is modelled")
    num = next((int(m[1:]) for m in ins.mods if m in ("x1", "x2", "x4")), 1)
    trans = "trans" in mods
    space = "shared" if "shared" in mods else "generic"
    src = ins.operands[1]
    regs = src[1] if src[0] == "vec" else [src]
    if len(regs) != num:
        return unsupported(ctx, ins, f"stmatrix .x{num} stores {num} registers")
    rd = [reader(ctx, r, "b32") for r in regs]
    addr = address_reader(ctx, ins.operands[0])
    guard = guarded(ctx, ins)
    g, t = _G, _T

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            warps = _warps(ex, ins, sub)
            nw, n = len(warps), len(sub)
            a = np.broadcast_to(addr(ex, sub), (n,)).astype(np.uint64)
            rows_lanes = warps[:, :8 * num].reshape(-1)
            ra = a.reshape(nw, 32)[:, :8 * num].reshape(-1)
            bad = (ra & np.uint64(15)) != 0
            if bad.any():
                p = int(np.argmax(bad))
                ex.fault(ins, f"stmatrix row address {int(ra[p]):#x} is not 16-byte aligned",
                         rows_lanes[p])
            words = np.stack([np.broadcast_to(np.asarray(r(ex, sub), np.uint32), (n,))
                              for r in rd]).reshape(num, nw, 32).transpose(1, 0, 2)
            M = np.zeros((nw, num, 8, 8), np.uint16)
            lo, hi = (words & 0xFFFF).astype(np.uint16), (words >> 16).astype(np.uint16)
            if trans:
                M[:, :, 2 * t, g], M[:, :, 2 * t + 1, g] = lo, hi
            else:
                M[:, :, g, 2 * t], M[:, :, g, 2 * t + 1] = lo, hi
            el = (ra[:, None] + np.arange(0, 16, 2, dtype=np.uint64)[None, :]).reshape(-1)
            try:
                groups = resolve(ex, space, el, 2, np.dtype(np.uint16), np.repeat(rows_lanes, 8), [])
            except MemFault as err:
                ex.fault(ins, err.msg, err.pos)
            vals = M.reshape(-1)
            for view, idx, pos in groups:           # rows in lane order: later lanes win
                view[idx] = vals[pos]
            _emit(ex, ins, pc, "store", 16, rows_lanes, _row_events(space, ra))
        ex.advance(lanes)
    return run


HANDLERS = {"mma": build_mma, "ldmatrix": build_ldmatrix, "stmatrix": build_stmatrix}
