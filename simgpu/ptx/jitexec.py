"""The numba half of simgpu/ptx/jitseg.py: the micro-operation codes and :func:`_exec`, the one
compiled function that runs a segment's micro-program over its slot matrix (compiled once and
cached on disk by numba; kept apart from the translation so that editing that does not
invalidate the cache).  See jitseg.py for what the micro-operations mean and why they are
bit-identical to the numpy semantics."""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core.extending import intrinsic, overload

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


@numba.njit(cache=True)
def fma_f64_lanes(a, b, c, n):
    """(llvm.fma per lane of n, whether every operand was finite): sem_fp.f64_arith's fma.rn
    over a step's lanes (a, b, c: n elements, or one for a uniform operand).  It stops at the
    first non-finite operand (the step then takes the numpy path, which also handles NaN
    payloads and infinities)."""
    sa, sb, sc = int(a.shape[0] > 1), int(b.shape[0] > 1), int(c.shape[0] > 1)
    r = np.empty(n, np.float64)
    for i in range(n):
        x, y, z = a[i * sa], b[i * sb], c[i * sc]
        if not (np.isfinite(x) and np.isfinite(y) and np.isfinite(z)):
            return r, False
        r[i] = _fma(x, y, z)
    return r, True


@numba.njit(cache=True)
def fma_f32_lanes(a, b, c, n):
    """(float32 result, which lanes need the exact path, whether any does) of a * b + c per
    lane as sem_fp.f32_rn computes them (operands as fma_f64_lanes'): the float64 product is
    exact (24 + 24 bits, no overflow or underflow), so the float64 sum is one rounding whether or
    not LLVM fuses it.  Its float32 rounding is the correctly rounded fma unless the sum was
    inexact and landed on a float32 rounding midpoint (every such sum has its 28 low mantissa
    bits zero): a lane needs the exact path when its sum has those bits zero and was inexact
    (TwoSum's error term non-zero) or is not finite (NaN: the error term is NaN)."""
    sa, sb, sc = int(a.shape[0] > 1), int(b.shape[0] > 1), int(c.shape[0] > 1)
    s = np.empty(n, np.float64)
    r = np.empty(n, np.float32)
    for i in range(n):
        x = np.float64(a[i * sa]) * np.float64(b[i * sb]) + np.float64(c[i * sc])
        s[i] = x
        r[i] = np.float32(x)
    bits = s.view(np.uint64)
    low = np.uint64(0x0FFFFFFF)
    zero = np.uint64(0)
    sus = np.zeros(n, np.bool_)
    found = False
    for i in range(n):
        if bits[i] & low == zero:
            p = np.float64(a[i * sa]) * np.float64(b[i * sb])
            z = np.float64(c[i * sc])
            x = s[i]
            bb = x - p                                  # TwoSum (Knuth): x + err == p + z exactly
            err = (p - (x - bb)) + (z - bb)
            if err != 0.0 or not np.isfinite(x):
                sus[i] = True
                found = True
    return r, sus, found


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
    return _ops(prog, 0, prog.shape[0], M, F, None, n, tb_base, tb_end, tb_ptr)


def _col(cols, j):
    """Column of the j-th lane an operation runs for: j (cols None: every column), cols[j]."""


@overload(_col, inline="always")
def _col_impl(cols, j):
    if isinstance(cols, numba.types.NoneType):
        return lambda cols, j: j
    return lambda cols, j: cols[j]


@numba.njit(cache=True, error_model="numpy", nogil=True)
def _ops(prog, r0, r1, M, F, cols, n, tb_base, tb_end, tb_ptr):
    """Rows ``r0 .. r1 - 1`` of ``prog`` for the columns ``cols[:n]`` of M (None: columns
    0 .. n - 1); F is M's float64 view.  1 when a load is not aligned or not inside one
    allocation (see _exec), else 0."""
    for i in range(r0, r1):
        op = prog[i, 0]
        d, a, b, c = prog[i, 1], prog[i, 2], prog[i, 3], prog[i, 4]
        p1, p2, p3, p4 = prog[i, 5], prog[i, 6], prog[i, 7], prog[i, 8]
        if op == MOV:
            for j in range(n):
                q = _col(cols, j)
                M[d, q] = M[a, q]
        elif op == LDG:                         # p1 width (bytes), p2 address offset
            w = U64(p1)
            for j in range(n):
                q = _col(cols, j)
                ad = M[a, q] + U64(p2)
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
                    M[d, q] = _LD32(host)
                elif p1 == 8:
                    M[d, q] = _LD64(host)
                elif p1 == 2:
                    M[d, q] = _LD16(host)
                else:
                    M[d, q] = _LD8(host)
        elif op == CONV:                    # p1 from width, p2 to width, p3 signed
            m = _mask(p2)
            for j in range(n):
                q = _col(cols, j)
                x = M[a, q]
                if p2 > p1 and p3:
                    x = _sext(x, p1)
                M[d, q] = x & m
        elif op == IADD or op == ISUB or op == IMULLO or op == IMAD:
            m = _mask(p1)
            for j in range(n):
                q = _col(cols, j)
                x, y = M[a, q], M[b, q]
                if op == IADD:
                    r = x + y
                elif op == ISUB:
                    r = x - y
                elif op == IMULLO:
                    r = x * y
                else:
                    r = x * y + M[c, q]
                M[d, q] = r & m
        elif op == IMULWIDE or op == IMADWIDE:    # p1 source width, p2 signed
            m = _mask(2 * p1)
            for j in range(n):
                q = _col(cols, j)
                x, y = M[a, q], M[b, q]
                if p2:
                    x, y = _sext(x, p1), _sext(y, p1)
                r = x * y
                if op == IMADWIDE:
                    r = r + M[c, q]
                M[d, q] = r & m
        elif op == IAND or op == IOR or op == IXOR or op == PAND or op == POR or op == PXOR:
            for j in range(n):
                q = _col(cols, j)
                x, y = M[a, q], M[b, q]
                if op == IAND or op == PAND:
                    r = x & y
                elif op == IOR or op == POR:
                    r = x | y
                else:
                    r = x ^ y
                M[d, q] = r
        elif op == INOT:
            m = _mask(p1)
            for j in range(n):
                q = _col(cols, j)
                M[d, q] = ~M[a, q] & m
        elif op == PNOT:
            for j in range(n):
                q = _col(cols, j)
                M[d, q] = U64(1) - (M[a, q] & U64(1))
        elif op == ISHL or op == ISHR:          # p1 width, p2 signed (shr)
            m = _mask(p1)
            for j in range(n):
                q = _col(cols, j)
                x, s = M[a, q], M[b, q]
                if op == ISHL:
                    r = (x << s) & m if s < U64(p1) else U64(0)
                elif p2:
                    sx = np.int64(_sext(x, p1))
                    sh = s if s < U64(p1 - 1) else U64(p1 - 1)
                    r = U64(sx >> np.int64(sh)) & m
                else:
                    r = x >> s if s < U64(p1) else U64(0)
                M[d, q] = r
        elif op == INEG:
            m = _mask(p1)
            for j in range(n):
                q = _col(cols, j)
                M[d, q] = (U64(0) - M[a, q]) & m
        elif op == IABS:
            m = _mask(p1)
            for j in range(n):
                q = _col(cols, j)
                x = M[a, q]
                neg = np.int64(_sext(x, p1)) < 0
                M[d, q] = ((U64(0) - x) & m) if neg else x
        elif op == IMIN or op == IMAX:          # p1 width, p2 signed
            for j in range(n):
                q = _col(cols, j)
                x, y = M[a, q], M[b, q]
                if p2:
                    lt = np.int64(_sext(x, p1)) < np.int64(_sext(y, p1))
                else:
                    lt = x < y
                if op == IMIN:
                    M[d, q] = x if lt else y
                else:
                    M[d, q] = y if lt else x
        elif op == SELP:
            for j in range(n):
                q = _col(cols, j)
                M[d, q] = M[a, q] if M[c, q] != U64(0) else M[b, q]
        elif op == ICMP:                        # p1 code, p2 width, p3 signed
            for j in range(n):
                q = _col(cols, j)
                x, y = M[a, q], M[b, q]
                if p3:
                    rb = _cmp_ord(p1, np.int64(_sext(x, p2)), np.int64(_sext(y, p2)))
                else:
                    rb = _cmp_ord(p1, x, y)
                M[d, q] = U64(1) if rb else U64(0)
        elif op == FCMP:                        # p1 code, p2 width (32/64)
            for j in range(n):
                q = _col(cols, j)
                if p2 == 32:
                    fx, fy = np.float64(_f32(M[a, q])), np.float64(_f32(M[b, q]))
                else:
                    fx, fy = F[a, q], F[b, q]
                un = np.isnan(fx) or np.isnan(fy)
                if p1 == 14:
                    rb = not un
                elif p1 == 15:
                    rb = un
                elif p1 < 8:
                    rb = _cmp_ord(p1, fx, fy) and not un
                else:
                    rb = _cmp_ord(p1 - 8, fx, fy) or un
                M[d, q] = U64(1) if rb else U64(0)
        elif op == F32OP:                       # p1 kind
            for j in range(n):
                q = _col(cols, j)
                gx = _f32(M[a, q])
                if p1 == FSQRT:
                    gr = np.sqrt(gx)
                else:
                    gy = _f32(M[b, q])
                    if p1 == FADD:
                        gr = gx + gy
                    elif p1 == FSUB:
                        gr = gx - gy
                    elif p1 == FMUL:
                        gr = gx * gy
                    elif p1 == FDIV:
                        gr = gx / gy
                    else:
                        gr = _fma(gx, gy, _f32(M[c, q]))
                if np.isnan(gr):
                    M[d, q] = F32_NAN
                else:
                    M[d, q] = _b32(gr)
        elif op == F64OP:                       # p1 kind, p2..p4 NaN order (operand indices), p3 count
            for j in range(n):
                q = _col(cols, j)
                hx = F[a, q]
                if p1 == FSQRT:
                    hr = np.sqrt(hx)
                else:
                    hy = F[b, q]
                    if p1 == FADD:
                        hr = hx + hy
                    elif p1 == FSUB:
                        hr = hx - hy
                    elif p1 == FMUL:
                        hr = hx * hy
                    elif p1 == FDIV:
                        hr = hx / hy
                    else:
                        hr = _fma(hx, hy, F[c, q])
                if np.isnan(hr):
                    o = (M[a, q], M[b, q] if p1 != FSQRT else U64(0),
                         M[c, q] if p1 == FFMA else U64(0))
                    M[d, q] = _f64_nan_pick(o[p2 & 3], o[(p2 >> 2) & 3], o[(p2 >> 4) & 3], p3)
                else:
                    F[d, q] = hr
        elif op == F32MINMAX or op == F64MINMAX:    # p1: 1 max, 0 min
            for j in range(n):
                q = _col(cols, j)
                if op == F32MINMAX:
                    fx, fy = np.float64(_f32(M[a, q])), np.float64(_f32(M[b, q]))
                else:
                    fx, fy = F[a, q], F[b, q]
                nx, ny = np.isnan(fx), np.isnan(fy)
                both0 = fx == 0 and fy == 0
                if p1:
                    pick_a = fx > fy or (both0 and not np.signbit(fx))
                else:
                    pick_a = fx < fy or (both0 and np.signbit(fx))
                pick_a = (pick_a and not nx) or ny
                r = M[a, q] if pick_a else M[b, q]
                if nx and ny:
                    r = F32_NAN if op == F32MINMAX else M[b, q] | F64_QUIET
                M[d, q] = r
        elif op == F32ABSNEG:                   # p1: 1 neg, 0 abs; p2: 1 a NaN passes (.keepnan), 2 .signbit
            for j in range(n):
                q = _col(cols, j)
                u = M[a, q]
                r = (u ^ U64(0x80000000)) if p1 else (u & U64(0x7FFFFFFF))
                if p2 != 2 and (r & U64(0x7F800000)) == U64(0x7F800000) and (r & U64(0x7FFFFF)) != U64(0):
                    r = u if p2 else F32_NAN
                M[d, q] = r
        elif op == F64ABSNEG:
            for j in range(n):
                q = _col(cols, j)
                u = M[a, q]
                if _isnan64(u) and p2 != 2:
                    M[d, q] = u if p2 else (u | F64_QUIET)
                else:
                    M[d, q] = (u ^ F64_SIGN) if p1 else (u & ~F64_SIGN)
        elif op == CVT_I2F:                     # p1 source width, p2 signed, p3 dest width
            for j in range(n):
                q = _col(cols, j)
                x = M[a, q]
                if p3 == 64:
                    if p2:
                        F[d, q] = np.float64(np.int64(_sext(x, p1)))
                    else:
                        F[d, q] = np.float64(x)
                else:
                    if p2:
                        M[d, q] = _b32(np.float32(np.int64(_sext(x, p1))))
                    else:
                        M[d, q] = _b32(np.float32(x))
        elif op == CVT_F2I:     # p1 source width (32/64), p2 rounding 0 rn 1 rz 2 rm 3 rp, p3 dest width, p4 signed
            if p4:
                lo, hi = -(2.0 ** (p3 - 1)), 2.0 ** (p3 - 1) - 1
            else:
                lo, hi = 0.0, 2.0 ** p3 - 1
            nanbits = (U64(1) << U64(p3 - 1)) if (p1 == 64 or p3 == 64) else U64(0)
            m = _mask(p3)
            for j in range(n):
                q = _col(cols, j)
                fx = np.float64(_f32(M[a, q])) if p1 == 32 else F[a, q]
                if p2 == 0:
                    rr = np.rint(fx)
                elif p2 == 1:
                    rr = np.trunc(fx)
                elif p2 == 2:
                    rr = np.floor(fx)
                else:
                    rr = np.ceil(fx)
                if np.isnan(rr):
                    M[d, q] = nanbits
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
                M[d, q] = v
        elif op == CVT_F32F64:
            for j in range(n):
                q = _col(cols, j)
                u = M[a, q] & U64(0xFFFFFFFF)
                if (u & U64(0x7F800000)) == U64(0x7F800000) and (u & U64(0x7FFFFF)) != U64(0):
                    s = F64_SIGN if (u & U64(0x80000000)) != U64(0) else U64(0)
                    mm = ((u & U64(0x7FFFFF)) | U64(0x400000)) << U64(29)
                    M[d, q] = s | F64_EXP | mm
                else:
                    F[d, q] = np.float64(_f32(M[a, q]))
        elif op == CVT_F64F32:
            for j in range(n):
                q = _col(cols, j)
                u = M[a, q]
                if _isnan64(u):
                    s = U64(0x80000000) if (u & F64_SIGN) != U64(0) else U64(0)
                    mm = ((u & F64_MAN) | U64(0x8000000000000)) >> U64(29)
                    M[d, q] = s | U64(0x7F800000) | mm
                else:
                    M[d, q] = _b32(np.float32(F[a, q]))
    return 0


@numba.njit(cache=True, error_model="numpy", nogil=True)
def _loop(prog, blk, term, M, lane, cap, watch, cycle_from, cycle_max, visits, threads, warps, div,
          wvis, at, tb_base, tb_end, tb_ptr):
    """Run a loop (jitloop.py) for the columns of M until every one has left it, as the
    interpreter's scheduler does: iteration after iteration, the lanes still in the loop run
    its blocks in pc order, each block once per iteration for the lanes that reach it.

    ``blk``: rows [blk[b, 0], blk[b, 1]) of ``prog`` per block; ``term``: per block (kind: 0 falls
    into block b + 1, 1 a bra; predicate slot, -1 none; negated; taken destination; fall
    destination), a destination being a later block, -1 the loop's head (the next iteration) or
    -2 - k exit k.  ``lane``: the chunk lane of each column (ascending; warp = lane >> 5).
    Counts per block: ``visits`` (iterations it ran in), ``threads``, ``warps`` (distinct warps
    per visit, summed), ``div`` (warps whose lanes split at its bra), ``wvis[b, w - warp0]``
    (visits per warp).  ``at[col]``: the exit each column took, -1 still at the head.
    ``watch``: the slots of the registers that decide the loop, compared with a snapshot as
    exec/budget.progress_check does (snapshots at powers of two; cycle_max 0: no check).
    Returns (status, iterations): 0 every lane left, 1 a load outside the allocations (nothing
    of M means anything), 2 ``cap`` iterations ran (the columns with at == -1 are at the head),
    3 the state repeated (the loop makes no progress: the interpreter's watch must report it)."""
    n = M.shape[1]
    nb = blk.shape[0]
    F = M.reshape(-1).view(np.float64).reshape(M.shape[0], n)
    act = np.arange(n)
    nact = n
    cols = np.empty(n, np.int64)
    where = np.zeros(n, np.int64)
    w0 = lane[0] >> 5
    nws = watch.shape[0]
    snap = np.empty((nws, n), np.uint64)
    snap_act = np.empty(n, np.int64)
    snap_nact = -1
    snap_it = -1
    for j in range(n):
        at[j] = -1
    it = 0
    while nact > 0:
        if it >= cap:
            return 2, it
        it += 1
        if snap_it > 0 and cycle_max > 0:       # (exec/budget.progress_check)
            dd = it - snap_it
            window = 1 if snap_it < cycle_from else cycle_max
            if 1 <= dd <= window and nact == snap_nact:
                same = True
                for q in range(nact):
                    if act[q] != snap_act[q]:
                        same = False
                        break
                if same:
                    for s in range(nws):
                        for q in range(nact):
                            if M[watch[s], act[q]] != snap[s, q]:
                                same = False
                                break
                        if not same:
                            break
                if same:
                    return 3, it
        if it & (it - 1) == 0:
            snap_it, snap_nact = it, nact
            for q in range(nact):
                snap_act[q] = act[q]
            for s in range(nws):
                for q in range(nact):
                    snap[s, q] = M[watch[s], act[q]]
        for q in range(nact):
            where[act[q]] = 0
        for b in range(nb):
            k = 0
            for q in range(nact):
                j = act[q]
                if where[j] == b:
                    cols[k] = j
                    k += 1
            if k == 0:
                continue
            visits[b] += 1
            threads[b] += k
            prev = -1
            nw = 0
            for q in range(k):
                w = (lane[cols[q]] >> 5) - w0
                if w != prev:
                    nw += 1
                    prev = w
                    wvis[b, w] += 1
            warps[b] += nw
            if k == n:                  # every column: the dense form (contiguous, vectorised)
                if _ops(prog, blk[b, 0], blk[b, 1], M, F, None, n, tb_base, tb_end, tb_ptr):
                    return 1, it
            elif _ops(prog, blk[b, 0], blk[b, 1], M, F, cols, k, tb_base, tb_end, tb_ptr):
                return 1, it
            ps, neg, dt, df = term[b, 1], term[b, 2], term[b, 3], term[b, 4]
            if term[b, 0] == 0:
                for q in range(k):
                    where[cols[q]] = b + 1
                continue
            mixed = 0
            prev = -1
            flags = 0
            for q in range(k):
                j = cols[q]
                t = True if ps < 0 else ((M[ps, j] != U64(0)) != (neg != 0))
                where[j] = dt if t else df
                w = lane[j] >> 5
                if w != prev:
                    if flags == 3:
                        mixed += 1
                    flags = 0
                    prev = w
                flags |= 1 if t else 2
            if flags == 3:
                mixed += 1
            div[b] += mixed
        m = 0
        for q in range(nact):
            j = act[q]
            dst = where[j]
            if dst == -1:
                act[m] = j
                m += 1
            else:
                at[j] = -2 - dst
        nact = m
    return 0, it
