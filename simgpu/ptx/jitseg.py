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

import numpy as np

from simgpu import settings

from simgpu.ptx.instrs import imm_value
from simgpu.ptx.sem_fp import F64_NAN_ORDER
from simgpu.ptx.types import np_dtype

from simgpu.ptx.jitexec import (  # noqa: F401  (the codes: part of the interface)
    CONV, CVT_F2I, CVT_F32F64, CVT_F64F32, CVT_I2F, F32ABSNEG, F32MINMAX, F32OP, F64ABSNEG,
    F64MINMAX, F64OP, FADD, FCMP, FDIV, FFMA, FMUL, FSQRT, FSUB, IABS, IADD, IAND, ICMP, IMAD,
    IMADWIDE, IMAX, IMIN, IMULLO, IMULWIDE, INEG, INOT, IOR, ISHL, ISHR, ISUB, IXOR, LDG, MOV,
    PAND, PNOT, POR, PXOR, ROW, SELP, CMP_CODE, _exec)

NAN_ORDER = {FADD: F64_NAN_ORDER["add"], FSUB: F64_NAN_ORDER["sub"], FMUL: F64_NAN_ORDER["mul"],
             FFMA: F64_NAN_ORDER["fma"], FDIV: F64_NAN_ORDER["div"], FSQRT: F64_NAN_ORDER["sqrt"]}


# settings.ptx_jit (SIMGPU_PTX_JIT=0: runs keep calling the numpy semantics per instruction) and
# settings.ptx_jit_lanes: the lanes up to which a segment runs compiled (default 1024, 32 warps); a
# wider step keeps the numpy semantics per instruction, whose per-call cost is spread over its
# lanes (a naive matmul, measured here with 1K-16K lanes a step: the compiled segments no faster
# there, up to 1.3x slower).

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
    if op in ("abs", "neg") and tuple(mods) in (("keepnan",), ("signbit",)) and t in ("f32", "f64"):
        # a neg/abs ptxas folded into operand modifiers (sass_order.py): a NaN passes through
        # (keepnan: FP units) or has its sign bit changed (signbit: FSEL)
        return (F32ABSNEG if t == "f32" else F64ABSNEG, int(op == "neg"), 1 if mods[0] == "keepnan" else 2, 0, 0)
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
        self.max_lanes = settings.current().ptx_jit_lanes
        self.reg_dtype = kernel.reg_dtype
        self.slots, self.inputs, self.writes = {}, [], {}
        self.consts = []                # (slot, bits)
        self.loads = []                 # the ld.global instructions
        self.launch_inputs = []         # (launch value slot, matrix slot, bits dtype): ld.param
        self.rows = []
        self.nslots = 0
        self.load_pcs = {}
        for pc in range(start, end):
            self._pc = pc
            self._add(kernel, kernel.compiled[pc])
        self.prog = np.array(self.rows, np.int64).reshape(-1, ROW)
        self.cslot = np.array([s for s, _ in self.consts], np.int64)
        self.cval = np.array([v for _, v in self.consts], np.uint64)
        self.outputs = [(key, self.slots[key], self.reg_dtype[key], nw)
                        for key, nw in self.writes.items()]
        self.out_counts = list(self.writes.items())
        groups = {}
        for key, s, S, nw in self.outputs:
            groups.setdefault(S, ([], []))
            groups[S][0].append(s)
            groups[S][1].append(key)
        self.out_groups = [(S, np.array(idx, np.int64), keys) for S, (idx, keys) in groups.items()]
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
        if o[0] != "reg" or key not in self.reg_dtype:
            raise _Unsupported
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
        if o[0] != "reg" or key not in self.reg_dtype:
            raise _Unsupported
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
        if kind == "ldparam":                   # a kernel parameter: the launch's value (uniform)
            key = ("@launch", fn)
            s = self.slots.get(key)
            if s is None:
                s = self.slots[key] = self._new()
                self.launch_inputs.append((fn, s, np.dtype(f"u{np_dtype(t).itemsize}")))
            self._write(func, ops[0], s, np_dtype(t))
            return
        if kind == "ldg":                       # ld.global [reg+off] of one value
            _, base, off = ops[1]
            a = self._read(func, base, "u64")
            d = self._new()
            w = np_dtype(t).itemsize
            off = off & 0xFFFFFFFFFFFFFFFF
            self._row(LDG, d, a, p1=w, p2=off - (1 << 64) if off >= 1 << 63 else off)
            self.loads.append(c)
            self.load_pcs[c] = self._pc
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
        if kind == "arith" and ins.opcode == "rcp" and t in ("f32", "f64") and tuple(ins.mods) == ("rn",):
            # rcp.rn: 1 / a with one rounding, as div.rn with the constant 1 (its NaN rules too)
            one = np.array(1.0, np_dtype(t)).view(f"u{np_dtype(t).itemsize}")
            a = [self._const(int(one)), self._read(func, ops[1], t)]
            d = self._new()
            if t == "f32":
                self._row(F32OP, d, a[0], a[1], 0, FDIV)
            else:
                order = NAN_ORDER[FDIV]
                self._row(F64OP, d, a[0], a[1], 0, FDIV, order[0] | order[1] << 2, len(order))
            self._write(func, ops[0], d, _probe_dtype(fn, extra))
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
        if (self.loads and ex.watch_global) or \
                (ex.ch.L if sub is None else len(sub)) > self.max_lanes:
            return None
        R = ex.regs
        vals = []
        uniform = sub is None
        for key, s in self.input_slots:
            a = R.get(key)
            if a is None:               # a register never written reads 0 (commit adds it to the
                a = _ZERO               # registers then, as Executor.read_reg does when it runs)
            elif a.ndim:
                uniform = False
            vals.append(a)
        n = 1 if uniform else (ex.ch.L if sub is None else len(sub))
        M = np.empty((self.nslots, n), np.uint64)
        self.load_inputs(ex, M, sub, vals)
        tb = memory_table(ex.im.memory) if self.loads else _NO_TABLE
        if _exec(self.prog, M, self.cslot, self.cval, *tb):
            return None
        CALLS[0] += 1
        return M, uniform

    def load_inputs(self, ex, M, sub, vals):
        """Rows of M: the input registers' values ``vals`` (0-d: every lane's) for the lanes
        ``sub`` (None: every column), the launch values of the ld.param's."""
        for (key, s), a in zip(self.input_slots, vals):
            if a.ndim and sub is not None:
                M[s] = a[sub]
            else:
                M[s] = a
        if self.launch_inputs:
            lv = ex.im.launch_values
            for k, s, U in self.launch_inputs:
                M[s] = np.asarray(lv[k]).view(U)

    def commit(self, ex, sub, state):
        """Write the registers the segment wrote (their last values), counted per write: every
        lane's as new storage (uint64 ones as rows of the scratch matrix, the others as rows of
        one converted copy per storage dtype), or the lanes' into the storage."""
        M, uniform = state
        R, rv = ex.regs, ex.reg_version
        for key, s in self.input_slots:
            if key not in R:
                R[key] = np.zeros((), self.reg_dtype[key])
        for key, nw in self.out_counts:
            rv[key] = rv.get(key, 0) + nw
        if sub is None:
            for S, idx, keys in self.out_groups:
                blk = M[idx].astype(S) if S != np.uint64 else M[idx] if uniform else None
                if blk is None:
                    for s, key in zip(idx, keys):
                        R[key] = M[s]
                elif uniform:
                    for i, key in enumerate(keys):
                        R[key] = blk[i].reshape(())
                else:
                    for i, key in enumerate(keys):
                        R[key] = blk[i]
        else:
            for key, s, S, nw in self.outputs:
                ex.reg(key)[sub] = M[s]
        if self.loads and ex.wants_mem:     # (the interpreter's memory record names the space)
            for c in self.loads:
                ex.emit.insts(self.load_pcs[c], "global")


_ZERO = np.zeros((), np.uint64)
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
