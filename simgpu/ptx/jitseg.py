"""Segments of a compiled straight-line run executed in one numba-compiled call (issue 26).

A run of blocks.py still calls, per instruction, the numpy semantics of the one PTX table, which
costs dozens of numpy calls for an f64 instruction (the exact ``fma.rn.f64`` is an error-free
transformation chain) and a register read and write through the executor's rules.  Here the
instructions of a run whose form is in a supported subset (integer add/sub/mul/mad/shift/logic/
min/max, ``.rn`` f32/f64 add/sub/mul/fma/div/sqrt, f32/f64 min/max/abs/neg, setp on integers
and f32/f64, selp, mov and the common cvt forms) are translated into a small program of
micro-operations over a slot matrix (one uint64 row of bits per register or constant, one column
per lane) that one numba function (:func:`_exec`, compiled once and cached on disk) runs for the
lanes.  Register values enter and leave through the executor's own rules, written out as
micro-operations: ``convert_read`` (truncate, sign- or zero-extend the storage bits to the read
type) and ``convert_write`` (the semantics' result dtype, probed once per instruction, extended
or truncated to the storage dtype).  Results are bit-identical to the numpy semantics: the same
IEEE operations (numba lowers float32/float64 arithmetic to the IEEE instructions, and ``fma`` to
LLVM's fused ``llvm.fma``, correctly rounded), the same NaN rules (canonical f32 NaN; f64: the
first NaN operand in ``sem_fp.F64_NAN_ORDER``, quieted, else ``F64_NAN``), the same saturation
of float->int conversions.  tests/test_ptx_blocks.py checks each micro-operation against the
semantics function on random and special bit patterns, and whole kernels both ways.

A segment writes every register it writes (its final value), counted in ``reg_version`` once
per write as the interpreter does; a register that is uniform (0-d) is read as one value for
every lane; when every input is uniform and every lane runs, the segment runs on one lane and
its results stay uniform (as ``instrs.uniform_call`` keeps them).
"""
from __future__ import annotations

import os

import numba
import numpy as np
from llvmlite import ir
from numba.core.extending import intrinsic

from simgpu.ptx.instrs import imm_value
from simgpu.ptx.sem_fp import F64_NAN_ORDER
from simgpu.ptx.types import np_dtype

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
NAN_ORDER = {FADD: F64_NAN_ORDER["add"], FSUB: F64_NAN_ORDER["sub"], FMUL: F64_NAN_ORDER["mul"],
             FFMA: F64_NAN_ORDER["fma"], FDIV: F64_NAN_ORDER["div"], FSQRT: F64_NAN_ORDER["sqrt"]}

# SIMGPU_PTX_JIT=0: runs keep calling the numpy semantics per instruction (blocks.py as before)
ENABLED = os.environ.get("SIMGPU_PTX_JIT", "1") != "0"

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
    F = flat.view(np.float64)
    G = flat.view(np.float32)           # G[2 * i]: the low word of flat[i] (little-endian)
    for i in range(prog.shape[0]):
        op = prog[i, 0]
        d, a, b, c = prog[i, 1], prog[i, 2], prog[i, 3], prog[i, 4]
        p1, p2, p3, p4 = prog[i, 5], prog[i, 6], prog[i, 7], prog[i, 8]
        da, aa, ba, ca = d * n, a * n, b * n, c * n
        if op == MOV:
            for j in range(n):
                flat[da + j] = flat[aa + j]
        elif op == LDG:                         # p1 width (bytes), p2 address offset
            w = U64(p1)
            for j in range(n):
                ad = flat[aa + j] + U64(p2)
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
                    flat[da + j] = _LD32(host)
                elif p1 == 8:
                    flat[da + j] = _LD64(host)
                elif p1 == 2:
                    flat[da + j] = _LD16(host)
                else:
                    flat[da + j] = _LD8(host)
        elif op == CONV:                    # p1 from width, p2 to width, p3 signed
            m = _mask(p2)
            for j in range(n):
                x = flat[aa + j]
                if p2 > p1 and p3:
                    x = _sext(x, p1)
                flat[da + j] = x & m
        elif op == IADD or op == ISUB or op == IMULLO or op == IMAD:
            m = _mask(p1)
            for j in range(n):
                x, y = flat[aa + j], flat[ba + j]
                if op == IADD:
                    r = x + y
                elif op == ISUB:
                    r = x - y
                elif op == IMULLO:
                    r = x * y
                else:
                    r = x * y + flat[ca + j]
                flat[da + j] = r & m
        elif op == IMULWIDE or op == IMADWIDE:    # p1 source width, p2 signed
            m = _mask(2 * p1)
            for j in range(n):
                x, y = flat[aa + j], flat[ba + j]
                if p2:
                    x, y = _sext(x, p1), _sext(y, p1)
                r = x * y
                if op == IMADWIDE:
                    r = r + flat[ca + j]
                flat[da + j] = r & m
        elif op == IAND or op == IOR or op == IXOR or op == PAND or op == POR or op == PXOR:
            for j in range(n):
                x, y = flat[aa + j], flat[ba + j]
                if op == IAND or op == PAND:
                    r = x & y
                elif op == IOR or op == POR:
                    r = x | y
                else:
                    r = x ^ y
                flat[da + j] = r
        elif op == INOT:
            m = _mask(p1)
            for j in range(n):
                flat[da + j] = ~flat[aa + j] & m
        elif op == PNOT:
            for j in range(n):
                flat[da + j] = U64(1) - (flat[aa + j] & U64(1))
        elif op == ISHL or op == ISHR:          # p1 width, p2 signed (shr)
            m = _mask(p1)
            for j in range(n):
                x, s = flat[aa + j], flat[ba + j]
                if op == ISHL:
                    r = (x << s) & m if s < U64(p1) else U64(0)
                elif p2:
                    sx = np.int64(_sext(x, p1))
                    sh = s if s < U64(p1 - 1) else U64(p1 - 1)
                    r = U64(sx >> np.int64(sh)) & m
                else:
                    r = x >> s if s < U64(p1) else U64(0)
                flat[da + j] = r
        elif op == INEG:
            m = _mask(p1)
            for j in range(n):
                flat[da + j] = (U64(0) - flat[aa + j]) & m
        elif op == IABS:
            m = _mask(p1)
            for j in range(n):
                x = flat[aa + j]
                neg = np.int64(_sext(x, p1)) < 0
                flat[da + j] = ((U64(0) - x) & m) if neg else x
        elif op == IMIN or op == IMAX:          # p1 width, p2 signed
            for j in range(n):
                x, y = flat[aa + j], flat[ba + j]
                if p2:
                    lt = np.int64(_sext(x, p1)) < np.int64(_sext(y, p1))
                else:
                    lt = x < y
                if op == IMIN:
                    flat[da + j] = x if lt else y
                else:
                    flat[da + j] = y if lt else x
        elif op == SELP:
            for j in range(n):
                flat[da + j] = flat[aa + j] if flat[ca + j] != U64(0) else flat[ba + j]
        elif op == ICMP:                        # p1 code, p2 width, p3 signed
            for j in range(n):
                x, y = flat[aa + j], flat[ba + j]
                if p3:
                    rb = _cmp_ord(p1, np.int64(_sext(x, p2)), np.int64(_sext(y, p2)))
                else:
                    rb = _cmp_ord(p1, x, y)
                flat[da + j] = U64(1) if rb else U64(0)
        elif op == FCMP:                        # p1 code, p2 width (32/64)
            for j in range(n):
                if p2 == 32:
                    fx, fy = np.float64(G[2 * (aa + j)]), np.float64(G[2 * (ba + j)])
                else:
                    fx, fy = F[aa + j], F[ba + j]
                un = np.isnan(fx) or np.isnan(fy)
                if p1 == 14:
                    rb = not un
                elif p1 == 15:
                    rb = un
                elif p1 < 8:
                    rb = _cmp_ord(p1, fx, fy) and not un
                else:
                    rb = _cmp_ord(p1 - 8, fx, fy) or un
                flat[da + j] = U64(1) if rb else U64(0)
        elif op == F32OP:                       # p1 kind
            for j in range(n):
                gx = G[2 * (aa + j)]
                if p1 == FSQRT:
                    gr = np.sqrt(gx)
                else:
                    gy = G[2 * (ba + j)]
                    if p1 == FADD:
                        gr = gx + gy
                    elif p1 == FSUB:
                        gr = gx - gy
                    elif p1 == FMUL:
                        gr = gx * gy
                    elif p1 == FDIV:
                        gr = gx / gy
                    else:
                        gr = _fma(gx, gy, G[2 * (ca + j)])
                if np.isnan(gr):
                    flat[da + j] = F32_NAN
                else:
                    flat[da + j] = U64(0)
                    G[2 * (da + j)] = gr
        elif op == F64OP:                       # p1 kind, p2..p4 NaN order (operand indices), p3 count
            for j in range(n):
                hx = F[aa + j]
                if p1 == FSQRT:
                    hr = np.sqrt(hx)
                else:
                    hy = F[ba + j]
                    if p1 == FADD:
                        hr = hx + hy
                    elif p1 == FSUB:
                        hr = hx - hy
                    elif p1 == FMUL:
                        hr = hx * hy
                    elif p1 == FDIV:
                        hr = hx / hy
                    else:
                        hr = _fma(hx, hy, F[ca + j])
                if np.isnan(hr):
                    o = (flat[aa + j], flat[ba + j] if p1 != FSQRT else U64(0),
                         flat[ca + j] if p1 == FFMA else U64(0))
                    flat[da + j] = _f64_nan_pick(o[p2 & 3], o[(p2 >> 2) & 3], o[(p2 >> 4) & 3], p3)
                else:
                    F[da + j] = hr
        elif op == F32MINMAX or op == F64MINMAX:    # p1: 1 max, 0 min
            for j in range(n):
                if op == F32MINMAX:
                    fx, fy = np.float64(G[2 * (aa + j)]), np.float64(G[2 * (ba + j)])
                else:
                    fx, fy = F[aa + j], F[ba + j]
                nx, ny = np.isnan(fx), np.isnan(fy)
                both0 = fx == 0 and fy == 0
                if p1:
                    pick_a = fx > fy or (both0 and not np.signbit(fx))
                else:
                    pick_a = fx < fy or (both0 and np.signbit(fx))
                pick_a = (pick_a and not nx) or ny
                r = flat[aa + j] if pick_a else flat[ba + j]
                if nx and ny:
                    r = F32_NAN if op == F32MINMAX else flat[ba + j] | F64_QUIET
                flat[da + j] = r
        elif op == F32ABSNEG:                   # p1: 1 neg, 0 abs
            for j in range(n):
                u = flat[aa + j]
                r = (u ^ U64(0x80000000)) if p1 else (u & U64(0x7FFFFFFF))
                if (r & U64(0x7F800000)) == U64(0x7F800000) and (r & U64(0x7FFFFF)) != U64(0):
                    r = F32_NAN
                flat[da + j] = r
        elif op == F64ABSNEG:
            for j in range(n):
                u = flat[aa + j]
                if _isnan64(u):
                    flat[da + j] = u | F64_QUIET
                else:
                    flat[da + j] = (u ^ F64_SIGN) if p1 else (u & ~F64_SIGN)
        elif op == CVT_I2F:                     # p1 source width, p2 signed, p3 dest width
            for j in range(n):
                x = flat[aa + j]
                if p3 == 64:
                    if p2:
                        F[da + j] = np.float64(np.int64(_sext(x, p1)))
                    else:
                        F[da + j] = np.float64(x)
                else:
                    flat[da + j] = U64(0)
                    if p2:
                        G[2 * (da + j)] = np.float32(np.int64(_sext(x, p1)))
                    else:
                        G[2 * (da + j)] = np.float32(x)
        elif op == CVT_F2I:     # p1 source width (32/64), p2 rounding 0 rn 1 rz 2 rm 3 rp, p3 dest width, p4 signed
            if p4:
                lo, hi = -(2.0 ** (p3 - 1)), 2.0 ** (p3 - 1) - 1
            else:
                lo, hi = 0.0, 2.0 ** p3 - 1
            nanbits = (U64(1) << U64(p3 - 1)) if (p1 == 64 or p3 == 64) else U64(0)
            m = _mask(p3)
            for j in range(n):
                fx = np.float64(G[2 * (aa + j)]) if p1 == 32 else F[aa + j]
                if p2 == 0:
                    rr = np.rint(fx)
                elif p2 == 1:
                    rr = np.trunc(fx)
                elif p2 == 2:
                    rr = np.floor(fx)
                else:
                    rr = np.ceil(fx)
                if np.isnan(rr):
                    flat[da + j] = nanbits
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
                flat[da + j] = v
        elif op == CVT_F32F64:
            for j in range(n):
                u = flat[aa + j] & U64(0xFFFFFFFF)
                if (u & U64(0x7F800000)) == U64(0x7F800000) and (u & U64(0x7FFFFF)) != U64(0):
                    s = F64_SIGN if (u & U64(0x80000000)) != U64(0) else U64(0)
                    mm = ((u & U64(0x7FFFFF)) | U64(0x400000)) << U64(29)
                    flat[da + j] = s | F64_EXP | mm
                else:
                    F[da + j] = np.float64(G[2 * (aa + j)])
        elif op == CVT_F64F32:
            for j in range(n):
                u = flat[aa + j]
                if _isnan64(u):
                    s = U64(0x80000000) if (u & F64_SIGN) != U64(0) else U64(0)
                    mm = ((u & F64_MAN) | U64(0x8000000000000)) >> U64(29)
                    flat[da + j] = s | U64(0x7F800000) | mm
                else:
                    flat[da + j] = U64(0)
                    G[2 * (da + j)] = np.float32(F[aa + j])
    return 0


_NO_TABLE = (np.zeros(0, np.uint64),) * 3


def memory_table(mem):
    """(bases, ends, host pointers) of a DeviceMemory's allocations for _exec's loads, kept
    on it while its buffers stay the same objects; buffers that are not contiguous get no
    range (their loads take the interpreter's path)."""
    if mem is None:
        return _NO_TABLE
    key = tuple(map(id, mem.bufs))
    t = getattr(mem, "_jit_table", None)
    if t is None or t[0] != key:
        ok = [b.flags.c_contiguous for b in mem.bufs]
        bases = np.array(mem.bases, np.uint64)
        ends = np.array([base + (b.size if good else 0) for base, b, good in
                         zip(mem.bases, mem.bufs, ok)], np.uint64)
        ptrs = np.array([b.ctypes.data for b in mem.bufs], np.uint64)
        t = (key, (bases, ends, ptrs), list(mem.bufs))      # (the buffers kept alive with it)
        mem._jit_table = t
    return t[1]


# ---- translation of instructions ------------------------------------------------------------
_INT_W = {"u16": 16, "s16": 16, "b16": 16, "u32": 32, "s32": 32, "b32": 32,
          "u64": 64, "s64": 64, "b64": 64}
_FRND = {"rn"}
_IRND = {"rni": 0, "rzi": 1, "rmi": 2, "rpi": 3}
_FOPS = {"add": FADD, "sub": FSUB, "mul": FMUL, "fma": FFMA, "div": FDIV, "sqrt": FSQRT}


def _width(dt):
    dt = np.dtype(dt)
    return 1 if dt == np.bool_ else 8 * dt.itemsize


def _signed(t):
    return t[0] == "s"


def micro(ins, srcs_t):
    """[(op, p1, p2, p3, p4), argument order] for instruction ``ins`` (a parser Instr whose
    fusable spec is arith/setp/mov), or None when its form is outside the subset."""
    op, mods, types = ins.opcode, tuple(ins.mods), tuple(ins.types)
    t = types[0] if types else None
    if op == "mov":
        return (MOV, 0, 0, 0, 0) if len(types) == 1 else None
    if op == "setp":
        return None                     # (setp is translated by the caller)
    if op in ("add", "sub") and t in _INT_W and not mods:
        return (IADD if op == "add" else ISUB, _INT_W[t], 0, 0, 0)
    if op in ("mul", "mad") and t in _INT_W and len(mods) == 1:
        w = _INT_W[t]
        if mods[0] == "lo":
            return (IMULLO if op == "mul" else IMAD, w, 0, 0, 0)
        if mods[0] == "wide" and w <= 32:
            return (IMULWIDE if op == "mul" else IMADWIDE, w, int(_signed(t)), 0, 0)
        return None
    if op in ("and", "or", "xor", "not") and not mods and t in ("pred", "b16", "b32", "b64"):
        if t == "pred":
            return ({"and": PAND, "or": POR, "xor": PXOR, "not": PNOT}[op], 0, 0, 0, 0)
        return ({"and": IAND, "or": IOR, "xor": IXOR, "not": INOT}[op], _INT_W[t], 0, 0, 0)
    if op in ("shl", "shr") and not mods and t in _INT_W:
        if op == "shl" and t[0] != "b":
            return None
        return (ISHL if op == "shl" else ISHR, _INT_W[t], int(_signed(t)), 0, 0)
    if op in ("min", "max") and t in _INT_W and not mods:
        return (IMIN if op == "min" else IMAX, _INT_W[t], int(_signed(t)), 0, 0)
    if op in ("min", "max") and t in ("f32", "f64") and not mods:
        return (F32MINMAX if t == "f32" else F64MINMAX, int(op == "max"), 0, 0, 0)
    if op in ("abs", "neg") and not mods:
        if t in ("s16", "s32", "s64"):
            return (IABS if op == "abs" else INEG, _INT_W[t], 0, 0, 0)
        if t in ("f32", "f64"):
            return (F32ABSNEG if t == "f32" else F64ABSNEG, int(op == "neg"), 0, 0, 0)
        return None
    if op == "selp" and not mods and len(types) == 1:
        return (SELP, 0, 0, 0, 0)
    if op in _FOPS and t in ("f32", "f64") and set(mods) <= _FRND:
        if op in ("add", "sub", "mul", "fma", "div", "sqrt") and (op != "fma" or mods):
            kind = _FOPS[op]
            if t == "f32":
                return (F32OP, kind, 0, 0, 0)
            order = NAN_ORDER[kind]
            code = 0
            for k, o in enumerate(order):
                code |= o << (2 * k)
            return (F64OP, kind, code, len(order), 0)
        return None
    if op == "mad" and t in ("f32", "f64") and set(mods) == {"rn"}:
        return micro(_Fake("fma", mods, types), srcs_t)
    if op == "cvt" and len(types) == 2:
        dt, st = types
        rnd = [m for m in mods if m in _FRND or m in _IRND]
        if set(mods) - set(rnd) or len(rnd) > 1:
            return None
        if dt in _INT_W and st in _INT_W and not rnd:
            return (CONV, _INT_W[st], _INT_W[dt], int(_signed(st)), 0)
        if dt in ("f32", "f64") and st in _INT_W and _INT_W[st] >= 32 and rnd in ([], ["rn"]):
            return (CVT_I2F, _INT_W[st], int(_signed(st)), int(dt[1:]), 0)
        if st in ("f32", "f64") and dt in _INT_W and _INT_W[dt] >= 32 and rnd and rnd[0] in _IRND:
            return (CVT_F2I, int(st[1:]), _IRND[rnd[0]], _INT_W[dt], int(_signed(dt)))
        if st == "f32" and dt == "f64" and not rnd:
            return (CVT_F32F64, 0, 0, 0, 0)
        if st == "f64" and dt == "f32" and rnd == ["rn"]:
            return (CVT_F64F32, 0, 0, 0, 0)
    return None


class _Fake:
    def __init__(self, opcode, mods, types):
        self.opcode, self.mods, self.types = opcode, mods, types


def setp_micro(ins):
    """(op, p1, p2, p3) of a setp's comparison (boolop and ftz excluded), or None."""
    cmp = [m for m in ins.mods if m in CMP_CODE]
    rest = set(ins.mods) - set(cmp) - {"and", "or", "xor"}
    t = ins.types[0] if len(ins.types) == 1 else None
    if len(cmp) != 1 or rest:
        return None
    c = cmp[0]
    if t in ("f32", "f64"):
        if c in ("lo", "ls", "hi", "hs"):
            return None
        return (FCMP, CMP_CODE[c], int(t[1:]), 0)
    if t in _INT_W and CMP_CODE[c] < 8:
        signed = t[0] == "s" and c not in ("lo", "ls", "hi", "hs")
        return (ICMP, CMP_CODE[c], _INT_W[t], int(signed))
    return None


def _probe_dtype(fn, sts):
    """The dtype the semantics function returns for operands of types ``sts``."""
    with np.errstate(all="ignore"):
        r = fn(*[np.zeros(2, np_dtype(st)) for st in sts])
    return np.asarray(r).dtype


class Segment:
    """Instructions ``start .. end - 1`` of a run as one micro-program (see the module doc)."""

    def __init__(self, kernel, start, end):
        self.start, self.end = start, end
        self.reg_dtype = kernel.reg_dtype
        self.slots, self.inputs, self.writes = {}, [], {}
        self.consts = []                # (slot, bits)
        self.loads = []                 # the ld.global instructions
        self.rows = []
        self.nslots = 0
        for pc in range(start, end):
            self._add(kernel, kernel.compiled[pc])
        self.prog = np.array(self.rows, np.int64).reshape(-1, ROW)
        self.cslot = np.array([s for s, _ in self.consts], np.int64)
        self.cval = np.array([v for _, v in self.consts], np.uint64)
        self.outputs = [(key, self.slots[key], self.reg_dtype[key], nw)
                        for key, nw in self.writes.items()]
        self.input_slots = [(key, s) for key, s in self.inputs]

    # -- slots -------------------------------------------------------------------------------
    def _new(self):
        self.nslots += 1
        return self.nslots - 1

    def _row(self, op, d, a=0, b=0, c=0, p1=0, p2=0, p3=0, p4=0):
        self.rows.append((op, d, a, b, c, p1, p2, p3, p4))

    def _const(self, bits):
        s = self._new()
        self.consts.append((s, bits))
        return s

    def _read(self, func, o, t):
        """Slot holding operand ``o`` read as PTX type t (Executor.read_reg / convert_read)."""
        T = np_dtype(t)
        if o[0] in ("imm", "fimm"):
            v = imm_value(o, t)
            bits = int(v) if T == np.bool_ else int(v.view(np.dtype(f"u{T.itemsize}")))
            s = self._new()
            self.consts.append((s, bits))
            return s
        key = (func, o[1])
        S = self.reg_dtype[key]
        s = self.slots.get(key)
        if s is None:
            s = self.slots[key] = self._new()
            self.inputs.append((key, s))
        if S == np.bool_ or T == np.bool_:
            if S != T:
                raise _Unsupported
            return s
        ws, wt = 8 * S.itemsize, 8 * T.itemsize
        if ws == wt:
            return s
        tmp = self._new()
        self._row(CONV, tmp, s, p1=ws, p2=wt, p3=int(t[0] == "s"))
        return tmp

    def _write(self, func, o, src, V):
        """Register ``o`` := the value in slot src, of dtype V (Executor.write_reg / convert_write)."""
        if o[0] == "sink":
            return
        key = (func, o[1])
        S = self.reg_dtype[key]
        if (S == np.bool_) != (V == np.bool_):
            raise _Unsupported
        d = self.slots.get(key)
        if d is None:
            d = self.slots[key] = self._new()
        wv, ws = _width(V), _width(S)
        if wv == ws or S == np.bool_:
            self._row(MOV, d, src)
        else:
            self._row(CONV, d, src, p1=wv, p2=ws, p3=int(V.kind == "i"))
        self.writes[key] = self.writes.get(key, 0) + 1

    def _add(self, kernel, c):
        ins, func = c.ptx, c.func
        kind, fn, t, extra = c.exec.fusable
        ops = ins.operands
        if kind == "ldg":                       # ld.global [reg+off] of one value
            _, base, off = ops[1]
            a = self._read(func, base, "u64")
            d = self._new()
            w = np_dtype(t).itemsize
            off = off & 0xFFFFFFFFFFFFFFFF
            self._row(LDG, d, a, p1=w, p2=off - (1 << 64) if off >= 1 << 63 else off)
            self.loads.append(c)
            self._write(func, ops[0], d, np.dtype(f"u{w}") if np_dtype(t).kind != "i"
                        else np_dtype(t))
            return
        if kind == "movvec":                    # pack {a, b} into one register / unpack it
            W, w = 8 * np_dtype(t).itemsize, 8 * np_dtype(extra).itemsize
            if ops[1][0] == "vec":
                acc = self._const(0)
                for k, o in enumerate(ops[1][1]):
                    sh, nxt = self._new(), self._new()
                    self._row(ISHL, sh, self._read(func, o, extra), self._const(k * w), p1=W)
                    self._row(IOR, nxt, acc, sh)
                    acc = nxt
                self._write(func, ops[0], acc, np.dtype(f"u{W // 8}"))
            else:
                v = self._read(func, ops[1], f"b{W}")
                for k, o in enumerate(ops[0][1]):
                    sh, part = self._new(), self._new()
                    self._row(ISHR, sh, v, self._const(k * w), p1=W, p2=0)
                    self._row(CONV, part, sh, p1=W, p2=w, p3=0)
                    self._write(func, o, part, np.dtype(f"u{w // 8}"))
            return
        if kind == "mov":
            if micro(ins, extra) is None:
                raise _Unsupported
            s = self._read(func, ops[1], t)
            self._write(func, ops[0], s, np_dtype(t))
            return
        if kind == "arith":
            m = micro(ins, extra)
            if m is None:
                raise _Unsupported
            V = _probe_dtype(fn, extra)
            args = [self._read(func, o, st) for o, st in zip(ops[1:], extra)]
            op, p1, p2, p3, p4 = m
            d = self._new()
            if op == SELP:
                self._row(SELP, d, args[0], args[1], args[2])
            else:
                args = args + [0] * (3 - len(args))
                self._row(op, d, args[0], args[1], args[2], p1, p2, p3, p4)
            self._write(func, ops[0], d, V)
            return
        # setp
        m = setp_micro(ins)
        if m is None:
            raise _Unsupported
        comb = extra
        a, b = self._read(func, ops[1], t), self._read(func, ops[2], t)
        r = self._new()
        self._row(m[0], r, a, b, 0, m[1], m[2], m[3])
        dst = ops[0]
        wq = dst[2] if dst[0] == "pair" else None
        p = r
        if comb is not None:
            cs = self._read(func, ops[3], "pred")
            cop = {np.logical_and: PAND, np.logical_or: POR, np.logical_xor: PXOR}.get(comb)
            if cop is None:
                raise _Unsupported
            p = self._new()
            self._row(cop, p, r, cs)
            if wq is not None:
                nr = self._new()
                self._row(PNOT, nr, r)
                q = self._new()
                self._row(cop, q, nr, cs)
        elif wq is not None:
            q = self._new()
            self._row(PNOT, q, r)
        self._write(func, dst[1] if dst[0] == "pair" else dst, p, np.dtype(bool))
        if wq is not None:
            self._write(func, wq, q, np.dtype(bool))

    # -- running -----------------------------------------------------------------------------
    def compute(self, ex, sub):
        """Run the segment for the lanes ``sub`` (None: every lane of the chunk) into a scratch
        state, changing nothing (``commit`` writes its registers); None when it cannot: a
        global load that is not aligned or not inside one allocation, or an observer that
        watches global memory (the interpreter's path then runs it, faults and all)."""
        if self.loads and ex.watch_global:
            return None
        R = ex.regs
        vals = []
        uniform = sub is None
        for key, s in self.input_slots:
            a = R.get(key)
            if a is None:               # (as Executor.read_reg: a register never written is 0)
                a = R[key] = np.zeros((), self.reg_dtype[key])
            elif a.ndim:
                uniform = False
            vals.append(a)
        n = 1 if uniform else (ex.ch.L if sub is None else len(sub))
        M = np.empty((self.nslots, n), np.uint64)
        for (key, s), a in zip(self.input_slots, vals):
            if a.ndim and sub is not None:
                M[s] = a[sub]
            else:
                M[s] = a
        tb = memory_table(ex.im.memory) if self.loads else _NO_TABLE
        if _exec(self.prog, M, self.cslot, self.cval, *tb):
            return None
        CALLS[0] += 1
        return M, uniform

    def commit(self, ex, sub, state):
        """Write the registers the segment wrote (their last values), counted per write."""
        M, uniform = state
        R, rv = ex.regs, ex.reg_version
        for key, s, S, nw in self.outputs:
            rv[key] = rv.get(key, 0) + nw
            if uniform:
                R[key] = M[s, :1].astype(S).reshape(())
            elif sub is None:
                R[key] = M[s].astype(S)
            else:
                ex.reg(key)[sub] = M[s]


CALLS = [0]                     # segments executed (tests check that the compiled path ran)


class _Unsupported(Exception):
    pass


def supported(kernel, pc):
    """Whether instruction ``pc`` (fusable) translates into micro-operations."""
    try:
        Segment(kernel, pc, pc + 1)
        return True
    except _Unsupported:
        return False


def build(kernel, start, end):
    """A Segment of ``start .. end - 1``, or None if an instruction is outside the subset."""
    try:
        return Segment(kernel, start, end)
    except _Unsupported:
        return None
