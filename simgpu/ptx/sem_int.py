"""Integer and bit-manipulation core of :mod:`simgpu.ptx.semantics` (all ops wrap in their width)."""
from __future__ import annotations

import numpy as np

from .types import INT_T, bits, is_signed

UNSIGNED = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
SIGNED = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def as_u(x, w):
    """Reinterpret (same width) as unsigned (a view when x is an integer of width w)."""
    x = np.asarray(x)
    if x.dtype.kind in "iu" and x.dtype.itemsize * 8 == w:
        return x.view(UNSIGNED[w])
    return x.astype(SIGNED[w] if x.dtype.kind == "i" else UNSIGNED[w]).view(UNSIGNED[w])


def limits(t):
    w = bits(t)
    if is_signed(t):
        return -(1 << (w - 1)), (1 << (w - 1)) - 1
    return 0, (1 << w) - 1


# ----------------------------------------------------------------- multiply
def _mul_hi_u64(a, b):
    """High 64 bits of the 128-bit product of uint64 arrays (32-bit limbs)."""
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a0, a1, b0, b1 = a & m32, a >> s32, b & m32, b >> s32
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> s32) + (p01 & m32) + (p10 & m32)
    return p11 + (p01 >> s32) + (p10 >> s32) + (mid >> s32)


def mul_hi(t, a, b):
    w = bits(t)
    if w < 64:
        wide = np.int64 if is_signed(t) else np.uint64
        p = np.asarray(a).astype(wide) * np.asarray(b).astype(wide)
        return (p >> wide(w)).astype(INT_T[t])
    ua, ub = as_u(a, 64), as_u(b, 64)
    hi = _mul_hi_u64(ua, ub)
    if is_signed(t):
        hi = hi - np.where(np.asarray(a) < 0, ub, np.uint64(0)) - np.where(np.asarray(b) < 0, ua, np.uint64(0))
    return np.asarray(hi).view(INT_T[t])


def mul_lo(t, a, b):
    w = bits(t)
    return (as_u(a, w) * as_u(b, w)).view(INT_T[t])


def mul_wide(t, a, b):
    w = bits(t)
    dt = (SIGNED if is_signed(t) else UNSIGNED)[2 * w]
    return np.asarray(a).astype(dt) * np.asarray(b).astype(dt)


def mul24(t, hi, a, b):
    """mul24.lo/hi: 24-bit operands (sign-extended for .s32), 48-bit product; lo = bits 31..0, hi = 47..16."""
    a = np.asarray(a).astype(np.int64)
    b = np.asarray(b).astype(np.int64)
    if is_signed(t):
        a = ((a & 0xFFFFFF) ^ 0x800000) - 0x800000
        b = ((b & 0xFFFFFF) ^ 0x800000) - 0x800000
    else:
        a, b = a & 0xFFFFFF, b & 0xFFFFFF
    p = a * b
    r = (p >> 16) if hi else p
    return (r & 0xFFFFFFFF).astype(np.uint32).view(INT_T[t])


# ----------------------------------------------------------------- add / sub / saturate
def add(t, a, b, sat=False, sub=False):
    w = bits(t)
    if sat:
        lo, hi = limits(t)
        x = np.asarray(a).astype(np.int64)
        y = np.asarray(b).astype(np.int64)
        r = x - y if sub else x + y               # s32 only: fits in int64
        return np.clip(r, lo, hi).astype(INT_T[t])
    ua, ub = as_u(a, w), as_u(b, w)
    return (ua - ub if sub else ua + ub).view(INT_T[t])


def add_carry(t, a, b, cin, sub=False):
    """The carry chain (add.cc/addc, sub.cc/subc): ``(d, cout)`` with d = a + b + cin, or
    d = a - (b + cin) (PTX ISA: "subtract with borrow-in"), wrapped in the width of t; cout is the
    carry out of the unsigned addition (1 when the exact sum needs bit w) or, for subtraction, the
    borrow (1 when the exact difference is negative).  Signed types add their bit patterns, as
    the hardware does.  cin, cout: u32 0 or 1, per lane."""
    w = bits(t)
    ua, ub = as_u(a, w), as_u(b, w)
    ci = np.asarray(cin).astype(UNSIGNED[w]) & UNSIGNED[w](1)
    if sub:
        t1 = ua - ub
        d = t1 - ci
        out = (ua < ub) | (t1 < ci)
    else:
        t1 = ua + ub
        d = t1 + ci
        out = (t1 < ua) | (d < t1)
    return np.asarray(d).view(INT_T[t]), np.asarray(out).astype(np.uint32)


def sat_s32_add(x64, c):
    return np.clip(np.asarray(x64, np.int64) + np.asarray(c).astype(np.int64), -(1 << 31), (1 << 31) - 1).astype(np.int32)


# ----------------------------------------------------------------- division (see module docstring)
def div_rem(t, a, b, rem):
    """Truncating division / remainder.  b == 0: all ones (measured on the H200, 16/32/64-bit);
    MIN/-1 wraps."""
    w = bits(t)
    a, b = np.broadcast_arrays(np.asarray(a, INT_T[t]), np.asarray(b, INT_T[t]))
    zero = b == 0
    if is_signed(t):
        mn = np.iinfo(INT_T[t]).min
        ovf = (a == mn) & (b == -1)
        bs = np.where(zero | ovf, 1, b).astype(INT_T[t])
        r = np.fmod(a, bs)
        q = ((a - r) // bs).astype(INT_T[t])
        if rem:
            out = np.where(ovf, 0, r)
        else:
            out = np.where(ovf, mn, q)
        return np.where(zero, INT_T[t](-1), out).astype(INT_T[t])
    bs = np.where(zero, 1, b).astype(INT_T[t])
    out = a % bs if rem else a // bs
    return np.where(zero, UNSIGNED[w](np.iinfo(UNSIGNED[w]).max), out).astype(INT_T[t])


# ----------------------------------------------------------------- shifts
def shl(t, a, n):
    w = bits(t)
    ua = as_u(a, w)
    n = np.asarray(n).astype(np.uint64)
    if n.ndim == 0:                         # one amount for every lane (an immediate)
        return (ua << UNSIGNED[w](n) if n < w else np.zeros_like(ua)).view(INT_T[t])
    big = n >= w
    r = ua << np.minimum(n, w - 1).astype(UNSIGNED[w])
    return np.where(big, UNSIGNED[w](0), r).astype(UNSIGNED[w]).view(INT_T[t])


def shr(t, a, n):
    """shr.u/.b: zero fill; shr.s: sign fill; amounts >= width clamp to width."""
    w = bits(t)
    n = np.minimum(np.asarray(n).astype(np.uint64), w)
    if n.ndim == 0:                         # one amount for every lane (an immediate)
        if is_signed(t):
            return np.asarray(np.asarray(a, INT_T[t]) >> INT_T[t](min(int(n), w - 1)))
        return np.asarray(as_u(a, w) >> UNSIGNED[w](n) if n < w else
                          np.zeros_like(as_u(a, w))).view(INT_T[t])
    if is_signed(t):
        x = np.asarray(a, INT_T[t])
        return (x >> np.minimum(n, w - 1).astype(INT_T[t])).astype(INT_T[t])
    ua = as_u(a, w)
    r = ua >> np.minimum(n, w - 1).astype(UNSIGNED[w])
    return np.where(n >= w, UNSIGNED[w](0), r).astype(UNSIGNED[w]).view(INT_T[t])


def shf(left, clamp, a, b, c):
    """Funnel shift of {b:a} (b high); amount c & 31 (wrap) or min(c, 32) (clamp)."""
    v = (as_u(b, 32).astype(np.uint64) << np.uint64(32)) | as_u(a, 32).astype(np.uint64)
    c = as_u(c, 32).astype(np.uint64)
    n = np.minimum(c, np.uint64(32)) if clamp else (c & np.uint64(31))
    if left:
        r = (v << n) >> np.uint64(32)
    else:
        r = v >> n
    return (r & np.uint64(0xFFFFFFFF)).astype(np.uint32)


# ----------------------------------------------------------------- bit counting
def msb(u, w):
    """Index of the highest set bit of unsigned array u, -1 for zero (binary search)."""
    u = np.asarray(u, UNSIGNED[w]).astype(np.uint64)
    pos = np.zeros(u.shape, np.int64)
    step = w // 2
    while step:
        hi = u >> np.uint64(step)
        has = hi != 0
        u = np.where(has, hi, u)
        pos = pos + np.where(has, step, 0)
        step //= 2
    return np.where(u == 0, -1, pos)


def clz(t, a):
    w = bits(t)
    return (w - 1 - msb(as_u(a, w), w)).astype(np.uint32)


def popc(t, a):
    return np.bitwise_count(as_u(a, bits(t))).astype(np.uint32)


def bfind(t, a, shiftamt):
    w = bits(t)
    x = as_u(a, w)
    if is_signed(t):
        x = np.where(np.asarray(a) < 0, ~x, x)
    p = msb(x, w)
    r = np.where(p < 0, 0xFFFFFFFF, (w - 1 - p) if shiftamt else p)
    return r.astype(np.int64).astype(np.uint32)


def brev(t, a):
    w = bits(t)
    x = as_u(a, w).astype(np.uint64)
    masks = [(1, 0x5555555555555555), (2, 0x3333333333333333), (4, 0x0F0F0F0F0F0F0F0F),
             (8, 0x00FF00FF00FF00FF), (16, 0x0000FFFF0000FFFF), (32, 0x00000000FFFFFFFF)]
    for s, m in masks:
        s_, m_ = np.uint64(s), np.uint64(m)
        x = ((x >> s_) & m_) | ((x & m_) << s_)
    if w == 32:
        x = x >> np.uint64(32)
    return x.astype(UNSIGNED[w]).view(INT_T[t])


def _pos_len(w, b, c):
    """bfe/bfi position and length: & 0xff for the 32-bit forms (PTX ISA); the 64-bit forms use the
    full u32 operands (measured on the H200: validation/data/h200_ptx_semantics.json, bfe/bfi .64)."""
    pos, ln = as_u(b, 32).astype(np.int64), as_u(c, 32).astype(np.int64)
    if w < 64:
        pos, ln = pos & 0xFF, ln & 0xFF
    return pos, ln


def bfe(t, a, b, c):
    w = bits(t)
    x = as_u(a, w).astype(np.uint64)
    pos, ln = _pos_len(w, b, c)
    if is_signed(t):
        sidx = np.minimum(pos + ln - 1, w - 1)
        sbit = np.where(ln == 0, 0, (x >> np.clip(sidx, 0, w - 1).astype(np.uint64)) & np.uint64(1))
    else:
        sbit = np.zeros(np.broadcast(x, pos, ln).shape, np.uint64)
    avail = np.clip(np.minimum(ln, w - pos), 0, w)      # bits copied from a
    shifted = x >> np.clip(pos, 0, w - 1).astype(np.uint64)
    shifted = np.where(pos >= w, np.uint64(0), shifted)
    full = np.uint64((1 << w) - 1) if w < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    keep = np.where(avail >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                    (np.uint64(1) << np.minimum(avail, 63).astype(np.uint64)) - np.uint64(1))
    r = shifted & keep
    fill = np.where(sbit.astype(bool), full & ~keep, np.uint64(0))
    return ((r | fill) & full).astype(UNSIGNED[w]).view(INT_T[t])


def bfi(t, a, b, c, d):
    """Insert the low bits of a into b at pos c, length d (& 0xff for b32; full u32 for b64)."""
    w = bits(t)
    x, y = as_u(a, w).astype(np.uint64), as_u(b, w).astype(np.uint64)
    pos, ln = _pos_len(w, c, d)
    n = np.clip(np.minimum(ln, w - pos), 0, w)
    m = np.where(n >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                 (np.uint64(1) << np.minimum(n, 63).astype(np.uint64)) - np.uint64(1))
    sh = np.clip(pos, 0, w - 1).astype(np.uint64)
    m = np.where(n == 0, np.uint64(0), m << sh)
    r = (y & ~m) | ((x << sh) & m)
    return r.astype(UNSIGNED[w]).view(INT_T[t])


_PRMT_MODES = {
    "f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
    "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
    "rc8": [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
    "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
    "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
    "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
}   # per selector c[1:0]: source byte for d.b0, d.b1, d.b2, d.b3


def prmt(mode, a, b, c):
    """Byte permute of {b, a} (bytes 7..4 from b, 3..0 from a)."""
    v = (as_u(b, 32).astype(np.uint64) << np.uint64(32)) | as_u(a, 32).astype(np.uint64)
    c = as_u(c, 32).astype(np.uint64)
    out = np.zeros(np.broadcast(v, c).shape, np.uint64)
    for k in range(4):
        if mode is None:
            nib = (c >> np.uint64(4 * k)) & np.uint64(0xF)
            sel = nib & np.uint64(7)
            byte = (v >> (sel * np.uint64(8))) & np.uint64(0xFF)
            sign = (nib & np.uint64(8)) != 0
            byte = np.where(sign, np.where(byte & np.uint64(0x80), np.uint64(0xFF), np.uint64(0)), byte)
        else:
            table = np.array([row[k] for row in _PRMT_MODES[mode]], np.uint64)
            sel = table[(c & np.uint64(3)).astype(np.intp)]
            byte = (v >> (sel * np.uint64(8))) & np.uint64(0xFF)
        out = out | (byte << np.uint64(8 * k))
    return out.astype(np.uint32)


def lop3(a, b, c, lut):
    a, b, c = as_u(a, 32), as_u(b, 32), as_u(c, 32)
    lut = as_u(lut, 32)
    out = np.zeros(np.broadcast(a, b, c, lut).shape, np.uint32)
    for i in range(8):
        term = (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
        out = out | np.where((lut >> np.uint32(i)) & np.uint32(1), term, np.uint32(0))
    return out.astype(np.uint32)
