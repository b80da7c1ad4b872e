"""Hand-written PTX test kernels for the sm_80 tensor-core instructions, and the PTX ISA's
fragment layouts as numpy packing functions (numpy only: imported by device_run.py on the H200
and by tests/test_ptx_mma.py here).

* ``mma_ptx(shape, dtype_d, dtype_a, dtype_b, dtype_c)``: a kernel ``k(A, B, C, D)`` in which
  thread ``gid`` loads its fragment registers (``A[gid, :]`` ... as 32-bit words), runs one
  ``mma.sync.aligned.<shape>.row.col`` and stores D's registers to ``D[gid, :]``;
* ``LDMATRIX_PTX``: ``k(src, off, out)``: one warp per block copies 1024 bytes into shared
  memory, each lane adds its row offset ``off[block, lane]`` and runs ldmatrix .x1/.x2/.x4, plain
  and .trans (14 result words per lane);
* ``CP_ASYNC_PTX``: ``k(src, out)``: cp.async .cg 16 / .ca 4 / .ca 8 with src-size (zero
  fill) into poisoned shared memory, two commit groups, wait_group 0, then the 1536 shared bytes
  out.

Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k*"; groupID g = lane >> 2,
threadID_in_group t = lane % 4, e = elements per 32-bit register = 32 / element bits):

* A (16 x K, row): register j holds row g + 8 (j & 1), columns (j >> 1) K/2 + t e + [0, e);
* B (K x 8, col): register j holds column g, rows j 4e + t e + [0, e);
* C/D f32/s32 (16 x 8): register j holds row g + 8 (j >> 1), column 2t + (j & 1);
* C/D f16 (16 x 8): register j (f16x2) holds row g + 8 j, columns 2t, 2t + 1.
Lower element index = lower bits of the register.
"""
from __future__ import annotations

import numpy as np

SHAPES = {"m16n8k16": 16, "m16n8k8": 8, "m16n8k32": 32, "m16n8k4": 4}
ELEM_BITS = {"f16": 16, "bf16": 16, "tf32": 32, "s8": 8, "u8": 8, "e4m3": 8, "e5m2": 8,
             "f32": 32, "s32": 32}


def nregs(shape, dt):
    """(A, B, C/D f32-like, C/D f16) register counts."""
    K = SHAPES[shape]
    e = 32 // ELEM_BITS[dt]
    return 16 * K // (32 * e), K * 8 // (32 * e)


def a_index(K, e):
    """(rows, cols) of shape (32, regs, e): the A element each lane's register part holds."""
    lane = np.arange(32)[:, None, None]
    g, t = lane >> 2, lane & 3
    nr = 16 * K // (32 * e)
    j = np.arange(nr)[None, :, None]
    x = np.arange(e)[None, None, :]
    rows = g + 8 * (j & 1) + 0 * x
    cols = (j >> 1) * (K // 2) + t * e + x
    return np.broadcast_to(rows, (32, nr, e)), np.broadcast_to(cols, (32, nr, e))


def b_index(K, e):
    lane = np.arange(32)[:, None, None]
    g, t = lane >> 2, lane & 3
    nr = K * 8 // (32 * e)
    j = np.arange(nr)[None, :, None]
    x = np.arange(e)[None, None, :]
    rows = j * 4 * e + t * e + x
    cols = g + 0 * j + 0 * x
    return np.broadcast_to(rows, (32, nr, e)), np.broadcast_to(cols, (32, nr, e))


def c_index(f16):
    """(rows, cols) of shape (32, regs, e) for C/D (f16: 2 regs x 2, else 4 regs x 1)."""
    lane = np.arange(32)[:, None, None]
    g, t = lane >> 2, lane & 3
    if f16:
        j = np.arange(2)[None, :, None]
        x = np.arange(2)[None, None, :]
        return np.broadcast_to(g + 8 * j + 0 * x, (32, 2, 2)), np.broadcast_to(2 * t + x + 0 * j, (32, 2, 2))
    j = np.arange(4)[None, :, None]
    return np.broadcast_to(g + 8 * (j >> 1), (32, 4, 1)), np.broadcast_to(2 * t + (j & 1), (32, 4, 1))


def pack(mat_bits, idx, e):
    """(W, R, C) element bits (unsigned ints of 32/e bits) -> (W*32, regs) uint32 words."""
    rows, cols = idx
    el = mat_bits[:, rows, cols].astype(np.uint64)       # (W, 32, regs, e)
    w = 32 // e
    sh = (np.arange(e, dtype=np.uint64) * np.uint64(w))
    words = (el << sh).sum(axis=-1).astype(np.uint32)
    return words.reshape(-1, words.shape[2])


def unpack(words, idx, e, R, C):
    """(W*32, regs) uint32 -> (W, R, C) element bits (uint32)."""
    rows, cols = idx
    W = words.shape[0] // 32
    w32 = words.reshape(W, 32, -1).astype(np.uint64)
    w = 32 // e
    sh = np.arange(e, dtype=np.uint64) * np.uint64(w)
    el = (w32[..., None] >> sh) & np.uint64((1 << w) - 1)  # (W, 32, regs, e)
    out = np.zeros((W, R, C), np.uint32)
    out[:, rows, cols] = el
    return out


# ---- PTX ----------------------------------------------------------------------------------
HEAD = """.version {ver}
.target {target}
.address_size 64
"""


def mma_ptx(shape, d, a, b, c, extra=""):
    """The fragment round-trip kernel for mma.sync.aligned.<shape>.row.col<extra>.d.a.b.c."""
    na, nb = nregs(shape, a)[0], nregs(shape, b)[1]
    nc = 2 if c == "f16" else 4
    nd = 2 if d == "f16" else 4
    fp8 = a in ("e4m3", "e5m2")
    creg = {"f32": ".f32", "s32": ".s32", "f16": ".b32"}
    lines = [HEAD.format(ver="8.4" if fp8 else "7.0", target="sm_89" if fp8 else "sm_80")]
    lines.append(".visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd)\n{")
    lines.append(f" .reg .b32 %a<{na}>;\n .reg .b32 %b<{nb}>;\n .reg {creg[c]} %c<{nc}>;\n"
                 f" .reg {creg[d]} %d<{nd}>;\n .reg .b32 %r<8>;\n .reg .b64 %rd<20>;")
    lines.append(" ld.param.u64 %rd1, [pa];\n ld.param.u64 %rd2, [pb];\n ld.param.u64 %rd3, [pc];\n"
                 " ld.param.u64 %rd4, [pd];\n cvta.to.global.u64 %rd1, %rd1;\n cvta.to.global.u64 %rd2, %rd2;\n"
                 " cvta.to.global.u64 %rd3, %rd3;\n cvta.to.global.u64 %rd4, %rd4;\n"
                 " mov.u32 %r1, %tid.x;\n mov.u32 %r2, %ctaid.x;\n mov.u32 %r3, %ntid.x;\n"
                 " mad.lo.u32 %r4, %r2, %r3, %r1;")
    for base, n, name, t in (("%rd1", na, "%a", ".b32"), ("%rd2", nb, "%b", ".b32"),
                             ("%rd3", nc, "%c", creg[c])):
        k = {"%a": 5, "%b": 6, "%c": 7}[name]
        lines.append(f" mul.wide.u32 %rd{k + 5}, %r4, {4 * n};\n add.s64 %rd{k + 10}, {base}, %rd{k + 5};")
        for j in range(n):
            lines.append(f" ld.global{t} {name}{j}, [%rd{k + 10}+{4 * j}];")
    regs = lambda p, n: "{" + ", ".join(f"{p}{j}" for j in range(n)) + "}"  # noqa: E731
    lines.append(f" mma.sync.aligned.{shape}.row.col{extra}.{d}.{a}.{b}.{c} {regs('%d', nd)}, "
                 f"{regs('%a', na)}, {regs('%b', nb)}, {regs('%c', nc)};")
    lines.append(f" mul.wide.u32 %rd18, %r4, {4 * nd};\n add.s64 %rd19, %rd4, %rd18;")
    for j in range(nd):
        lines.append(f" st.global{creg[d]} [%rd19+{4 * j}], %d{j};")
    lines.append(" ret;\n}\n")
    return "\n".join(lines)


def _ldm_body():
    out = []
    for j in range(8):
        out.append(f" ld.global.b32 %r{10 + j}, [%rd6+{4 * j}];\n st.shared.b32 [%r5+{4 * j}], %r{10 + j};")
    return "\n".join(out)


LDMATRIX_PTX = HEAD.format(ver="7.0", target="sm_80") + \
    ".visible .entry k(.param .u64 psrc, .param .u64 poff, .param .u64 pout)" + """
{
 .reg .b32 %r<40>;
 .reg .b32 %o<14>;
 .reg .b64 %rd<20>;
 .shared .align 16 .b8 smem[1024];
 ld.param.u64 %rd1, [psrc];
 ld.param.u64 %rd2, [poff];
 ld.param.u64 %rd3, [pout];
 cvta.to.global.u64 %rd1, %rd1;
 cvta.to.global.u64 %rd2, %rd2;
 cvta.to.global.u64 %rd3, %rd3;
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, %ctaid.x;
 mov.u32 %r3, smem;
 mul.lo.u32 %r4, %r1, 32;
 add.u32 %r5, %r3, %r4;
 mad.lo.u32 %r6, %r2, 1024, %r4;
 cvt.u64.u32 %rd4, %r6;
 add.s64 %rd6, %rd1, %rd4;
""" + _ldm_body() + """
 bar.sync 0;
 mad.lo.u32 %r7, %r2, 32, %r1;
 mul.wide.u32 %rd7, %r7, 4;
 add.s64 %rd8, %rd2, %rd7;
 ld.global.u32 %r8, [%rd8];
 add.u32 %r9, %r3, %r8;
 ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%o0}, [%r9];
 ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%o1, %o2}, [%r9];
 ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%o3, %o4, %o5, %o6}, [%r9];
 ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%o7}, [%r9];
 ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%o8, %o9}, [%r9];
 ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%o10, %o11, %o12, %o13}, [%r9];
 mul.wide.u32 %rd9, %r7, 56;
 add.s64 %rd10, %rd3, %rd9;
""" + "\n".join(f" st.global.b32 [%rd10+{4 * j}], %o{j};" for j in range(14)) + """
 ret;
}
"""


def _cpa_out():
    out = []
    for j in range(12):
        out.append(f" ld.shared.b32 %r{20 + j}, [%r35+{128 * j}];\n st.global.b32 [%rd8+{128 * j}], %r{20 + j};")
    return "\n".join(out)


CP_ASYNC_PTX = HEAD.format(ver="7.0", target="sm_80") + """.visible .entry k(.param .u64 psrc, .param .u64 pout)
{
 .reg .b32 %r<40>;
 .reg .b64 %rd<20>;
 .shared .align 16 .b8 sm[1536];
 ld.param.u64 %rd1, [psrc];
 ld.param.u64 %rd2, [pout];
 cvta.to.global.u64 %rd1, %rd1;
 cvta.to.global.u64 %rd2, %rd2;
 mov.u32 %r1, %tid.x;
 mov.u32 %r2, sm;
 mov.b32 %r3, -1515870811;
 mul.lo.u32 %r4, %r1, 16;
 add.u32 %r5, %r2, %r4;
 st.shared.v4.b32 [%r5], {%r3, %r3, %r3, %r3};
 st.shared.v4.b32 [%r5+512], {%r3, %r3, %r3, %r3};
 st.shared.v4.b32 [%r5+1024], {%r3, %r3, %r3, %r3};
 bar.sync 0;
 cvt.u64.u32 %rd3, %r4;
 add.s64 %rd4, %rd1, %rd3;
 rem.u32 %r6, %r1, 17;
 cp.async.cg.shared.global [%r5], [%rd4], 16, %r6;
 mul.lo.u32 %r7, %r1, 4;
 add.u32 %r8, %r2, %r7;
 cvt.u64.u32 %rd5, %r7;
 add.s64 %rd6, %rd1, %rd5;
 rem.u32 %r9, %r1, 5;
 cp.async.ca.shared.global [%r8+512], [%rd6+512], 4, %r9;
 mul.lo.u32 %r10, %r1, 8;
 add.u32 %r11, %r2, %r10;
 cvt.u64.u32 %rd7, %r10;
 add.s64 %rd9, %rd1, %rd7;
 rem.u32 %r12, %r1, 9;
 cp.async.ca.shared.global [%r11+1024], [%rd9+1024], 8, %r12;
 cp.async.commit_group;
 cp.async.ca.shared.global [%r8+640], [%rd6+768], 4;
 cp.async.commit_group;
 cp.async.wait_group 0;
 bar.sync 0;
 mul.lo.u32 %r13, %r1, 4;
 add.u32 %r35, %r2, %r13;
 cvt.u64.u32 %rd10, %r13;
 add.s64 %rd8, %rd2, %rd10;
""" + _cpa_out() + """
 ret;
}
"""

# The mma forms measured: name -> (shape, d, a, b, c, extra)
MMA_FORMS = {
    "f16_f32_k16": ("m16n8k16", "f32", "f16", "f16", "f32", ""),
    "bf16_f32_k16": ("m16n8k16", "f32", "bf16", "bf16", "f32", ""),
    "f16_f16_k16": ("m16n8k16", "f16", "f16", "f16", "f16", ""),
    "f16_f32_k8": ("m16n8k8", "f32", "f16", "f16", "f32", ""),
    "bf16_f32_k8": ("m16n8k8", "f32", "bf16", "bf16", "f32", ""),
    "tf32_f32_k8": ("m16n8k8", "f32", "tf32", "tf32", "f32", ""),
    "s8_s32_k32": ("m16n8k32", "s32", "s8", "s8", "s32", ""),
    "u8s8_s32_k32": ("m16n8k32", "s32", "u8", "s8", "s32", ""),
    "s8_s32_k32_sat": ("m16n8k32", "s32", "s8", "s8", "s32", ".satfinite"),
    "e4m3_f32_k32": ("m16n8k32", "f32", "e4m3", "e4m3", "f32", ""),
    "e5m2_f32_k32": ("m16n8k32", "f32", "e5m2", "e5m2", "f32", ""),
    # added after the 2026-12-02 measurement (not in the stored data): the same layout rules
    "tf32_f32_k4": ("m16n8k4", "f32", "tf32", "tf32", "f32", ""),
    "s8_s32_k16": ("m16n8k16", "s32", "s8", "s8", "s32", ""),
}


def form_geometry(name):
    """(K, e_a, e_c f16?) of a form."""
    shape, d, a, b, c, _ = MMA_FORMS[name]
    return SHAPES[shape], 32 // ELEM_BITS[a], c == "f16"


def pack_case(name, A, B, C):
    """Logical element bits A (W,16,K), B (W,K,8), C (W,16,8) -> fragment words (A, B, C)."""
    K, e, c16 = form_geometry(name)
    return (pack(A, a_index(K, e), e), pack(B, b_index(K, e), e),
            pack(C, c_index(c16), 2 if c16 else 1))


def unpack_d(name, D):
    shape, d, *_ = MMA_FORMS[name]
    f16 = d == "f16"
    return unpack(D, c_index(f16), 2 if f16 else 1, 16, 8)


# ---- inputs -------------------------------------------------------------------------------
FAMILIES = ("normal", "wide", "cancel", "onebig", "cbig", "ctiny", "special")
INT_FAMILIES = ("bytes", "extreme")
FP8_FAMILIES = ("bytes", "cancel", "onebig")


def _f32_bits(v):
    return np.asarray(v, np.float64).astype(np.float32).view(np.uint32)


def _to_bits(t, v):
    """float64 values -> element bits of type t (rounded to nearest; tf32: the f32 bits)."""
    v = np.asarray(v, np.float64)
    if t == "f16":
        return v.astype(np.float16).view(np.uint16).astype(np.uint32)
    b = _f32_bits(v).astype(np.uint64)
    if t == "bf16":
        return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint32) & 0xFFFF
    return b.astype(np.uint32)                       # f32, tf32


_EMAX = {"f16": 15, "bf16": 100, "tf32": 100, "f32": 100}
_EMIN = {"f16": -14, "bf16": -100, "tf32": -100, "f32": -100}


def _signed(rng, shape, lo, hi):
    """+-[1, 2) * 2^e, e uniform in [lo, hi]."""
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(1, 2, shape) * \
        np.exp2(rng.integers(lo, hi + 1, shape))


def float_inputs(name, family, W, seed):
    """Element bits (A, B, C) for a float form and input family."""
    shape, d, ta, tb, tc, _ = MMA_FORMS[name]
    K = SHAPES[shape]
    rng = np.random.default_rng(seed)
    sa, sb, sc = (W, 16, K), (W, K, 8), (W, 16, 8)
    if ta in ("e4m3", "e5m2"):
        return _fp8_inputs(ta, family, sa, sb, sc, rng)
    c_t = tc
    if family == "normal":
        A, B, C = rng.standard_normal(sa), rng.standard_normal(sb), rng.standard_normal(sc)
    elif family == "wide":
        lo, hi = _EMIN[ta], _EMAX[ta]
        A, B = _signed(rng, sa, lo, hi), _signed(rng, sb, lo, hi)
        C = _signed(rng, sc, 2 * lo, 2 * hi) if c_t != "f16" else _signed(rng, sc, -14, 15)
    elif family == "cancel":
        A, B = _signed(rng, sa, -4, 10 if ta == "f16" else 30), _signed(rng, sb, -4, 4)
        A[:, :, 1::2] = -A[:, :, 0::2]
        B[:, 1::2, :] = B[:, 0::2, :]
        A[:, :, -1] = _signed(rng, (W, 16), -14, -6)
        C = _signed(rng, sc, -12, -2)
    elif family == "onebig":
        A = _signed(rng, sa, -14, 0)
        big = rng.integers(0, K, (W, 16))
        A[np.arange(W)[:, None], np.arange(16)[None, :], big] = _signed(rng, (W, 16), 14, 15)
        B = _signed(rng, sb, -1, 0)
        C = np.where(rng.random(sc) < 0.5, 0.0, _signed(rng, sc, -10, 0))
        if c_t == "f16":
            A *= 2.0 ** -6
    elif family == "cbig":
        A, B = rng.standard_normal(sa), rng.standard_normal(sb)
        C = _signed(rng, sc, 20, 28) if c_t != "f16" else _signed(rng, sc, 8, 14)
    elif family == "ctiny":
        A, B = rng.standard_normal(sa), rng.standard_normal(sb)
        C = _signed(rng, sc, -30, -20) if c_t != "f16" else _signed(rng, sc, -20, -12)
    elif family == "special":
        A, B, C = rng.standard_normal(sa), rng.standard_normal(sb), rng.standard_normal(sc)
        ab = _to_bits(ta, A), _to_bits(tb, B), _to_bits(c_t, C)
        w = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32}
        specials = {16: {"f16": [0x7C00, 0xFC00, 0x7E00, 0x0001, 0x83FF, 0x8000, 0x7BFF, 0x0400],
                         "bf16": [0x7F80, 0xFF80, 0x7FC0, 0x0001, 0x807F, 0x8000, 0x7F7F, 0x0080]},
                    32: [0x7F800000, 0xFF800000, 0x7FC00000, 0x00000001, 0x807FFFFF, 0x80000000,
                         0x7F7FFFFF, 0x00800000]}
        out = []
        for bits, t in zip(ab, (ta, tb, c_t)):
            sp = specials[w[t]][t] if w[t] == 16 else specials[32]
            m = rng.random(bits.shape) < 1 / 48
            bits = np.where(m, rng.choice(np.array(sp, np.uint32), bits.shape), bits)
            out.append(bits.astype(np.uint32))
        return tuple(out)
    else:
        raise ValueError(family)
    return _to_bits(ta, A), _to_bits(tb, B), _to_bits(c_t, C)


def _fp8_nan(t, b):
    return ((b & 0x7F) == 0x7F) if t == "e4m3" else ((b & 0x7C) == 0x7C)


def _fp8_inputs(t, family, sa, sb, sc, rng):
    def finite(shape):
        b = rng.integers(0, 256, shape).astype(np.uint32)
        return np.where(_fp8_nan(t, b), b & 0x3F, b).astype(np.uint32)
    A, B = finite(sa), finite(sb)
    C = _f32_bits(rng.standard_normal(sc))
    if family == "cancel":
        A[:, :, 1::2] = A[:, :, 0::2] ^ 0x80
        B[:, 1::2, :] = B[:, 0::2, :]
        A[:, :, -1] = rng.integers(0, 8, sa[:2])
    elif family == "onebig":
        A = A & 0xA7                                     # small exponents
        big = rng.integers(0, sa[2], sa[:2])
        W = sa[0]
        A[np.arange(W)[:, None], np.arange(16)[None, :], big] = 0x76 if t == "e4m3" else 0x7A
        C = np.where(rng.random(sc) < 0.5, 0, C).astype(np.uint32)
    return A, B, C


def int_inputs(name, family, W, seed):
    shape, d, ta, tb, tc, _ = MMA_FORMS[name]
    K = SHAPES[shape]
    rng = np.random.default_rng(seed)
    sa, sb, sc = (W, 16, K), (W, K, 8), (W, 16, 8)
    A = rng.integers(0, 256, sa).astype(np.uint32)
    B = rng.integers(0, 256, sb).astype(np.uint32)
    C = rng.integers(-(1 << 31), 1 << 31, sc).astype(np.int64).astype(np.uint32)
    if family == "extreme":
        A = rng.choice(np.array([0x80, 0x7F, 0xFF], np.uint32), sa)
        B = rng.choice(np.array([0x80, 0x7F, 0xFF], np.uint32), sb)
        C = rng.choice(np.array([0x7FFFFFFF, 0x80000000, 0x7FFF0000, 0x80010000], np.uint32), sc)
    return A, B, C


def families(name):
    a = MMA_FORMS[name][2]
    if a in ("s8", "u8"):
        return INT_FAMILIES
    if a in ("e4m3", "e5m2"):
        return FP8_FAMILIES
    return FAMILIES


def inputs(name, family, W=32):
    seed = (hash_name(name) * 31 + FAMILIES.index(family) if family in FAMILIES else 7) % (1 << 32)
    if MMA_FORMS[name][2] in ("s8", "u8"):
        return int_inputs(name, family, W, seed + INT_FAMILIES.index(family))
    return float_inputs(name, family, W, seed)


def hash_name(s):
    return sum((i + 1) * ord(c) for i, c in enumerate(s))
