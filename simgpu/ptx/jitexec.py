"""The numba half of simgpu/ptx/jitseg.py: the micro-operation codes and :func:`_exec`, the one
compiled function that runs a segment's micro-program over its slot matrix (compiled once and
cached on disk by numba; kept apart from the translation so that editing that does not
invalidate the cache).  See jitseg.py for what the micro-operations mean and why they are
bit-identical to the numpy semantics."""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core.extending import intrinsic

# ---- micro-operation codes ------------------------------------------------------------------
(CONST, MOV, CONV, IADD, ISUB, IMULLO, IMULWIDE, IMAD, IMADWIDE, IAND, IOR, IXOR, INOT, ISHL,
 ISHR, INEG, IMIN, IMAX, SELP, ICMP, FCMP, PAND, POR, PXOR, PNOT, F32OP, F64OP, F32MINMAX,
 F64MINMAX, F32ABSNEG, F64ABSNEG, CVT_I2F, CVT_F2I, CVT_F32F64, CVT_F64F32, IABS, LDG) = range(37)

# float op kinds (row field 5)
FADD, FSUB, FMUL, FFMA, FDIV, FSQRT = range(6)
# comparisons (row field 5): eq ne lt le gt ge; float: + unordered forms, num, nan
CMP_CODE = {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5,
            "lo": 2, "ls": 3, "hi": 4, "hs": 5,
            "equ": 8, "neu": 9, "ltu": 10, "leu": 11, "gtu": 12, "geu": 13, "num": 14, "nan": 15}


ROW = 9                          # op, d, a, b, c, p1, p2, p3, p4


@intrinsic
def _fma(typingctx, a, b, c):
    """LLVM's llvm.fma: a * b + c with one rounding (IEEE fusedMultiplyAdd)."""
    sig = a(a, a, a)

    def codegen(context, builder, signature, args):
        ty = args[0].type
        fn = builder.module.declare_intrinsic("llvm.fma", [ty], ir.FunctionType(ty, [ty, ty, ty]))
        return builder.call(fn, args)
    return sig, codegen


def _make_load(bits):
    @intrinsic
    def load(typingctx, addr):
        """The ``bits``-wide unsigned integer at host address ``addr`` (uint64), zero-extended."""
        sig = numba.types.uint64(numba.types.uint64)

        def codegen(context, builder, signature, args):
            ty = ir.IntType(bits)
            ptr = builder.inttoptr(args[0], ty.as_pointer())
            v = builder.load(ptr, align=bits // 8)
            return builder.zext(v, ir.IntType(64)) if bits < 64 else v
        return sig, codegen
    return load


_LD8, _LD16, _LD32, _LD64 = (_make_load(b) for b in (8, 16, 32, 64))


@intrinsic
def _f32(typingctx, u):
    """The float32 whose bits are the low 32 bits of uint64 ``u``."""
    sig = numba.types.float32(numba.types.uint64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.trunc(args[0], ir.IntType(32)), ir.FloatType())
    return sig, codegen


@intrinsic
def _b32(typingctx, x):
    """The bits of float32 ``x``, zero-extended to uint64."""
    sig = numba.types.uint64(numba.types.float32)

    def codegen(context, builder, signature, args):
        return builder.zext(builder.bitcast(args[0], ir.IntType(32)), ir.IntType(64))
    return sig, codegen

U64 = np.uint64
ALL = U64(0xFFFFFFFFFFFFFFFF)
F64_QUIET = U64(0x0008000000000000)
F64_NAN = U64(0xFFF8000000000000)
F64_EXP = U64(0x7FF0000000000000)
F64_MAN = U64(0x000FFFFFFFFFFFFF)
F64_SIGN = U64(0x8000000000000000)
F32_NAN = U64(0x7FFFFFFF)


@numba.njit(inline="always")
def _mask(w):
    return ALL >> U64(64 - w)


@numba.njit(inline="always")
def _sext(x, w):
    if w >= 64:
        return x
    s = U64(1) << U64(w - 1)
    return ((x & _mask(w)) ^ s) - s


@numba.njit(inline="always")
def _isnan64(x):
    return (x & F64_EXP) == F64_EXP and (x & F64_MAN) != U64(0)


@numba.njit(inline="always")
def _f64_nan_pick(o0, o1, o2, nord):
    """The first NaN operand (bits) in the order o0, o1, o2 (nord of them), quieted; F64_NAN if none."""
    if _isnan64(o0):
        return o0 | F64_QUIET
    if nord > 1 and _isnan64(o1):
        return o1 | F64_QUIET
    if nord > 2 and _isnan64(o2):
        return o2 | F64_QUIET
    return F64_NAN


@numba.njit(inline="always")
def _cmp_ord(code, x, y):
    if code == 0:
        return x == y
    if code == 1:
        return x != y
    if code == 2:
        return x < y
    if code == 3:
        return x <= y
    if code == 4:
        return x > y
    return x >= y


@numba.njit(cache=True, error_model="numpy", nogil=True)
def _exec(prog, M, cslot, cval, tb_base, tb_end, tb_ptr):
    """Run the micro-program ``prog`` (rows of ROW int64) over the slot matrix M (uint64 bits,
    shape (slots, lanes)); constants cval go to rows cslot first.  Global loads read the
    allocations [tb_base, tb_end) (sorted) at host addresses tb_ptr; 1 (nothing else done
    that matters: M is scratch) when an access is not aligned or not inside one allocation,
    else 0."""
    n = M.shape[1]
    for k in range(cslot.shape[0]):
        for j in range(n):
            M[cslot[k], j] = cval[k]
    flat = M.reshape(-1)
    F = flat.view(np.float64).reshape(M.shape[0], n)
    for i in range(prog.shape[0]):
        op = prog[i, 0]
        d, a, b, c = prog[i, 1], prog[i, 2], prog[i, 3], prog[i, 4]
        p1, p2, p3, p4 = prog[i, 5], prog[i, 6], prog[i, 7], prog[i, 8]
        if op == MOV:
            for j in range(n):
                M[d, j] = M[a, j]
        elif op == LDG:                         # p1 width (bytes), p2 address offset
            w = U64(p1)
            for j in range(n):
                ad = M[a, j] + U64(p2)
                if ad % w != U64(0):
                    return 1
                lo, hi = 0, tb_base.shape[0]    # the allocation: last base <= ad
                while lo < hi:
                    mid = (lo + hi) // 2
                    if tb_base[mid] <= ad:
                        lo = mid + 1
                    else:
                        hi = mid
                k = lo - 1
                if k < 0 or ad + w > tb_end[k] or ad + w < ad:
                    return 1
                host = tb_ptr[k] + (ad - tb_base[k])
                if p1 == 4:
                    M[d, j] = _LD32(host)
                elif p1 == 8:
                    M[d, j] = _LD64(host)
                elif p1 == 2:
                    M[d, j] = _LD16(host)
                else:
                    M[d, j] = _LD8(host)
        elif op == CONV:                    # p1 from width, p2 to width, p3 signed
            m = _mask(p2)
            for j in range(n):
                x = M[a, j]
                if p2 > p1 and p3:
                    x = _sext(x, p1)
                M[d, j] = x & m
        elif op == IADD or op == ISUB or op == IMULLO or op == IMAD:
            m = _mask(p1)
            for j in range(n):
                x, y = M[a, j], M[b, j]
                if op == IADD:
                    r = x + y
                elif op == ISUB:
                    r = x - y
                elif op == IMULLO:
                    r = x * y
                else:
                    r = x * y + M[c, j]
                M[d, j] = r & m
        elif op == IMULWIDE or op == IMADWIDE:    # p1 source width, p2 signed
            m = _mask(2 * p1)
            for j in range(n):
                x, y = M[a, j], M[b, j]
                if p2:
                    x, y = _sext(x, p1), _sext(y, p1)
                r = x * y
                if op == IMADWIDE:
                    r = r + M[c, j]
                M[d, j] = r & m
        elif op == IAND or op == IOR or op == IXOR or op == PAND or op == POR or op == PXOR:
            for j in range(n):
                x, y = M[a, j], M[b, j]
                if op == IAND or op == PAND:
                    r = x & y
                elif op == IOR or op == POR:
                    r = x | y
                else:
                    r = x ^ y
                M[d, j] = r
        elif op == INOT:
            m = _mask(p1)
            for j in range(n):
                M[d, j] = ~M[a, j] & m
        elif op == PNOT:
            for j in range(n):
                M[d, j] = U64(1) - (M[a, j] & U64(1))
        elif op == ISHL or op == ISHR:          # p1 width, p2 signed (shr)
            m = _mask(p1)
            for j in range(n):
                x, s = M[a, j], M[b, j]
                if op == ISHL:
                    r = (x << s) & m if s < U64(p1) else U64(0)
                elif p2:
                    sx = np.int64(_sext(x, p1))
                    sh = s if s < U64(p1 - 1) else U64(p1 - 1)
                    r = U64(sx >> np.int64(sh)) & m
                else:
                    r = x >> s if s < U64(p1) else U64(0)
                M[d, j] = r
        elif op == INEG:
            m = _mask(p1)
            for j in range(n):
                M[d, j] = (U64(0) - M[a, j]) & m
        elif op == IABS:
            m = _mask(p1)
            for j in range(n):
                x = M[a, j]
                neg = np.int64(_sext(x, p1)) < 0
                M[d, j] = ((U64(0) - x) & m) if neg else x
        elif op == IMIN or op == IMAX:          # p1 width, p2 signed
            for j in range(n):
                x, y = M[a, j], M[b, j]
                if p2:
                    lt = np.int64(_sext(x, p1)) < np.int64(_sext(y, p1))
                else:
                    lt = x < y
                if op == IMIN:
                    M[d, j] = x if lt else y
                else:
                    M[d, j] = y if lt else x
        elif op == SELP:
            for j in range(n):
                M[d, j] = M[a, j] if M[c, j] != U64(0) else M[b, j]
        elif op == ICMP:                        # p1 code, p2 width, p3 signed
            for j in range(n):
                x, y = M[a, j], M[b, j]
                if p3:
                    rb = _cmp_ord(p1, np.int64(_sext(x, p2)), np.int64(_sext(y, p2)))
                else:
                    rb = _cmp_ord(p1, x, y)
                M[d, j] = U64(1) if rb else U64(0)
        elif op == FCMP:                        # p1 code, p2 width (32/64)
            for j in range(n):
                if p2 == 32:
                    fx, fy = np.float64(_f32(M[a, j])), np.float64(_f32(M[b, j]))
                else:
                    fx, fy = F[a, j], F[b, j]
                un = np.isnan(fx) or np.isnan(fy)
                if p1 == 14:
                    rb = not un
                elif p1 == 15:
                    rb = un
                elif p1 < 8:
                    rb = _cmp_ord(p1, fx, fy) and not un
                else:
                    rb = _cmp_ord(p1 - 8, fx, fy) or un
                M[d, j] = U64(1) if rb else U64(0)
        elif op == F32OP:                       # p1 kind
            for j in range(n):
                gx = _f32(M[a, j])
                if p1 == FSQRT:
                    gr = np.sqrt(gx)
                else:
                    gy = _f32(M[b, j])
                    if p1 == FADD:
                        gr = gx + gy
                    elif p1 == FSUB:
                        gr = gx - gy
                    elif p1 == FMUL:
                        gr = gx * gy
                    elif p1 == FDIV:
                        gr = gx / gy
                    else:
                        gr = _fma(gx, gy, _f32(M[c, j]))
                if np.isnan(gr):
                    M[d, j] = F32_NAN
                else:
                    M[d, j] = _b32(gr)
        elif op == F64OP:                       # p1 kind, p2..p4 NaN order (operand indices), p3 count
            for j in range(n):
                hx = F[a, j]
                if p1 == FSQRT:
                    hr = np.sqrt(hx)
                else:
                    hy = F[b, j]
                    if p1 == FADD:
                        hr = hx + hy
                    elif p1 == FSUB:
                        hr = hx - hy
                    elif p1 == FMUL:
                        hr = hx * hy
                    elif p1 == FDIV:
                        hr = hx / hy
                    else:
                        hr = _fma(hx, hy, F[c, j])
                if np.isnan(hr):
                    o = (M[a, j], M[b, j] if p1 != FSQRT else U64(0),
                         M[c, j] if p1 == FFMA else U64(0))
                    M[d, j] = _f64_nan_pick(o[p2 & 3], o[(p2 >> 2) & 3], o[(p2 >> 4) & 3], p3)
                else:
                    F[d, j] = hr
        elif op == F32MINMAX or op == F64MINMAX:    # p1: 1 max, 0 min
            for j in range(n):
                if op == F32MINMAX:
                    fx, fy = np.float64(_f32(M[a, j])), np.float64(_f32(M[b, j]))
                else:
                    fx, fy = F[a, j], F[b, j]
                nx, ny = np.isnan(fx), np.isnan(fy)
                both0 = fx == 0 and fy == 0
                if p1:
                    pick_a = fx > fy or (both0 and not np.signbit(fx))
                else:
                    pick_a = fx < fy or (both0 and np.signbit(fx))
                pick_a = (pick_a and not nx) or ny
                r = M[a, j] if pick_a else M[b, j]
                if nx and ny:
                    r = F32_NAN if op == F32MINMAX else M[b, j] | F64_QUIET
                M[d, j] = r
        elif op == F32ABSNEG:                   # p1: 1 neg, 0 abs; p2: 1 a NaN passes (.keepnan)
            for j in range(n):
                u = M[a, j]
                r = (u ^ U64(0x80000000)) if p1 else (u & U64(0x7FFFFFFF))
                if (r & U64(0x7F800000)) == U64(0x7F800000) and (r & U64(0x7FFFFF)) != U64(0):
                    r = u if p2 else F32_NAN
                M[d, j] = r
        elif op == F64ABSNEG:
            for j in range(n):
                u = M[a, j]
                if _isnan64(u):
                    M[d, j] = u if p2 else (u | F64_QUIET)
                else:
                    M[d, j] = (u ^ F64_SIGN) if p1 else (u & ~F64_SIGN)
        elif op == CVT_I2F:                     # p1 source width, p2 signed, p3 dest width
            for j in range(n):
                x = M[a, j]
                if p3 == 64:
                    if p2:
                        F[d, j] = np.float64(np.int64(_sext(x, p1)))
                    else:
                        F[d, j] = np.float64(x)
                else:
                    if p2:
                        M[d, j] = _b32(np.float32(np.int64(_sext(x, p1))))
                    else:
                        M[d, j] = _b32(np.float32(x))
        elif op == CVT_F2I:     # p1 source width (32/64), p2 rounding 0 rn 1 rz 2 rm 3 rp, p3 dest width, p4 signed
            if p4:
                lo, hi = -(2.0 ** (p3 - 1)), 2.0 ** (p3 - 1) - 1
            else:
                lo, hi = 0.0, 2.0 ** p3 - 1
            nanbits = (U64(1) << U64(p3 - 1)) if (p1 == 64 or p3 == 64) else U64(0)
            m = _mask(p3)
            for j in range(n):
                fx = np.float64(_f32(M[a, j])) if p1 == 32 else F[a, j]
                if p2 == 0:
                    rr = np.rint(fx)
                elif p2 == 1:
                    rr = np.trunc(fx)
                elif p2 == 2:
                    rr = np.floor(fx)
                else:
                    rr = np.ceil(fx)
                if np.isnan(rr):
                    M[d, j] = nanbits
                    continue
                if p3 == 64:
                    if rr >= hi + 1:
                        v = U64(0x7FFFFFFFFFFFFFFF) if p4 else ALL
                    elif rr < lo:
                        v = U64(0x8000000000000000) if p4 else U64(0)
                    elif p4:
                        v = U64(np.int64(rr))
                    else:
                        v = U64(rr)
                else:
                    if rr < lo:
                        rr = lo
                    elif rr > hi:
                        rr = hi
                    v = U64(np.int64(rr)) & m
                M[d, j] = v
        elif op == CVT_F32F64:
            for j in range(n):
                u = M[a, j] & U64(0xFFFFFFFF)
                if (u & U64(0x7F800000)) == U64(0x7F800000) and (u & U64(0x7FFFFF)) != U64(0):
                    s = F64_SIGN if (u & U64(0x80000000)) != U64(0) else U64(0)
                    mm = ((u & U64(0x7FFFFF)) | U64(0x400000)) << U64(29)
                    M[d, j] = s | F64_EXP | mm
                else:
                    F[d, j] = np.float64(_f32(M[a, j]))
        elif op == CVT_F64F32:
            for j in range(n):
                u = M[a, j]
                if _isnan64(u):
                    s = U64(0x80000000) if (u & F64_SIGN) != U64(0) else U64(0)
                    mm = ((u & F64_MAN) | U64(0x8000000000000)) >> U64(29)
                    M[d, j] = s | U64(0x7F800000) | mm
                else:
                    M[d, j] = _b32(np.float32(F[a, j]))
    return 0
