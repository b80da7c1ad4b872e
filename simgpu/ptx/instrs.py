"""Compiling PTX instructions into executable closures; arithmetic, mov/cvta and control flow.

:func:`simgpu.ptx.compile.compile_instr` turns each instruction of the linked program into a :class:`Compiled`
whose ``exec(ex, lanes, pc)`` runs it for the lanes (``None`` = every lane of the chunk, else
an index array).  Operands are pre-resolved into reader/writer closures.  Which handler
builds an instruction is decided by the ``HANDLERS`` table (opcode -> builder); every other
opcode is arithmetic whose semantics come from the one table, ``semantics.lookup``.  A form the
table does not know compiles to a handler that raises a ``SimGPUError`` naming the instruction
and the user's source line when it is executed (never a guess).
"""
from __future__ import annotations

import numpy as np

from simgpu.errors import SimGPUError
from simgpu.ptx import frames, semantics
from simgpu.ptx.frames import RECURSION_FRAMES
from simgpu.ptx.types import CC_REG, nbytes, np_dtype, signature
from simgpu.ptx.executor import EXITED, RUN
from simgpu.ptx.memory import CONST_WINDOW, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, classify_generic

lookup = semantics.lookup


class Compiled:
    __slots__ = ("ptx", "exec", "func")

    def __init__(self, ptx, fn, func):
        self.ptx, self.exec, self.func = ptx, fn, func


class Ctx:
    """What compiling needs: the kernel (runner.Kernel: symbols, layout) and the function name.
    The compiled code is shared by every launch of the kernel: what differs between launches
    it reads from the launch's Image at run time (``ex.im``), through :meth:`per_launch`."""

    def __init__(self, image, func, pc):
        self.im, self.func, self.pc = image, func, pc

    def per_launch(self, make):
        """Slot k of a value each launch computes once, ``make(image)`` when its Image is made;
        the compiled code reads it as ``ex.im.launch_values[k]``."""
        slots = self.im.launch_slots
        slots.append(make)
        return len(slots) - 1

    def symbol(self, name, convert):
        """(convert(address), None) for symbol ``name`` whose address the kernel fixes, or
        (None, k): a ``.global`` variable, placed in each launch's memory, its converted
        address in launch slot k."""
        func = self.func
        if self.im.launch_symbol(func, name):
            return None, self.per_launch(lambda im: convert(im.symbol_address(func, name)))
        return convert(self.im.symbol_address(func, name)), None

    def key(self, reg):
        k = (self.func, reg)
        if k not in self.im.reg_dtype:
            raise SimGPUError(f"undeclared register {reg} in {self.func}")
        return k


# ---- operands ----------------------------------------------------------------------------
def imm_value(op, t):
    """0-d array of type t for an immediate operand."""
    T = np_dtype(t)
    if op[0] == "imm":
        if T.kind == "f":
            return np.array(op[1], T)
        if T == np.bool_:
            return np.array(bool(op[1]))
        n = T.itemsize * 8
        return np.array(op[1] & ((1 << n) - 1), np.dtype(f"u{T.itemsize}")).view(T)
    _, val, bits, w = op
    if T.kind == "f":
        if w == T.itemsize * 8:
            return np.array(bits, np.dtype(f"u{T.itemsize}")).view(T)
        return np.array(val, T)
    return np.array(bits & ((1 << (T.itemsize * 8)) - 1), np.dtype(f"u{T.itemsize}")).view(T)


def special_reg(ex, name, comp, lanes):
    ch = ex.ch
    sel = (lambda a: a) if lanes is None else (lambda a: a[lanes])
    dims = {"x": 0, "y": 1, "z": 2}
    if name == "%tid":
        return sel(ch.tid[dims[comp]])
    if name == "%ntid":
        return np.array(ex.im.block[dims[comp]], np.uint32)
    if name == "%ctaid":
        return sel(ch.block_xyz[:, dims[comp]][ch.block_row].astype(np.uint32))
    if name == "%nctaid":
        return np.array(ex.im.grid[dims[comp]], np.uint32)
    if name == "%laneid":
        return sel(ch.laneid)
    if name == "%warpid":
        return sel(ch.warp_in_block)
    if name == "%nwarpid":
        return np.array(ch.wpb, np.uint32)
    if name in ("%smid", "%gridid", "%cluster_ctarank"):
        return np.array(0, np.uint32)
    if name in ("%nsmid", "%cluster_nctarank"):
        return np.array(1, np.uint32)
    if name.startswith("%lanemask_"):
        lane = sel(ch.laneid).astype(np.uint64)
        one = np.uint64(1)
        m = {"eq": one << lane, "lt": (one << lane) - one, "le": (one << (lane + one)) - one}
        m["gt"], m["ge"] = ~m["le"], ~m["lt"]
        return (m[name[10:]] & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    if name in ("%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo",
                "%globaltimer_hi"):
        v = ex.steps * (1000 if "timer" in name else 1)
        v = v >> 32 if name.endswith("_hi") else v
        return np.array(v, np.uint64 if name in ("%clock64", "%globaltimer") else np.uint32)
    if name in ("%dynamic_smem_size", "%total_smem_size", "%aggr_smem_size"):
        return np.array(ex.im.dyn_shared if name == "%dynamic_smem_size"
                        else ex.im.shared_size, np.uint32)
    raise SimGPUError(f"special register {name} is not supported")


def reader(ctx, op, t):
    """f(ex, lanes) -> value of operand ``op`` read as PTX type t."""
    kind = op[0]
    if kind == "reg":
        key = ctx.key(op[1])
        return lambda ex, lanes: ex.read_reg(key, t, lanes)
    if kind == "not":
        inner = reader(ctx, op[1], t)
        return lambda ex, lanes: ~inner(ex, lanes)
    if kind in ("imm", "fimm"):
        v = imm_value(op, t)
        return lambda ex, lanes: v
    if kind == "sreg":
        T = np_dtype(t)
        return lambda ex, lanes: convert_sreg(special_reg(ex, op[1], op[2], lanes), T)
    if kind == "sym" and op[1] == "WARP_SZ":          # PTX's predefined constant: 32
        v = imm_value(("imm", 32), t)
        return lambda ex, lanes: v
    if kind == "sym" and ctx.func in ctx.im.recursive and (ctx.func, op[1]) in ctx.im.local_off:
        off, stride = ctx.im.local_off[(ctx.func, op[1])], ctx.im.local_frame
        T = np_dtype(t)            # a recursive function's .local: one frame per call depth

        def local_at_depth(ex, lanes):
            d = ex.depth if lanes is None else ex.depth[lanes]
            return (d * stride + off).astype(T)
        return local_at_depth
    if kind == "sym":
        U, T, mask = np.dtype(f"u{nbytes(t)}"), np_dtype(t), (1 << (8 * nbytes(t))) - 1
        v, k = ctx.symbol(op[1], lambda addr: np.array(addr & mask, U).view(T))
        if k is not None:
            return lambda ex, lanes: ex.im.launch_values[k]
        return lambda ex, lanes: v
    raise SimGPUError(f"operand {op} cannot be read as .{t}")


def convert_sreg(v, T):
    return v.astype(T) if v.dtype.itemsize != T.itemsize else v.view(T)


def writer(ctx, op, t):
    """f(ex, value, lanes) storing into operand ``op`` (a register, or '_')."""
    if op[0] == "sink":
        return lambda ex, v, lanes: None
    if op[0] != "reg":
        raise SimGPUError(f"destination {op} is not a register")
    key = ctx.key(op[1])
    return lambda ex, v, lanes: ex.write_reg(key, v, t, lanes)


def guarded(ctx, ins):
    """f(ex, lanes) -> the lanes whose guard holds (index array), or ``lanes`` if none."""
    if ins.guard is None:
        return lambda ex, lanes: lanes
    key = ctx.key(ins.guard[0])
    neg = ins.guard[1]

    def sub(ex, lanes):
        p = ex.read_reg(key, "pred", lanes)
        p = ~p if neg else p
        if p.ndim == 0:                         # a uniform predicate
            return lanes if p else np.zeros(0, np.int64)
        return np.flatnonzero(p) if lanes is None else lanes[p]
    return sub


def unsupported(ctx, ins, why=""):
    where = ctx.im.module.source(ins.loc)

    def fail(ex, lanes, pc):
        raise SimGPUError(f"{where + ': ' if where else ''}unsupported PTX instruction "
                          f"'{ins.text}' (PTX line {ins.line}){': ' + why if why else ''}")
    return fail


# ---- arithmetic --------------------------------------------------------------------------
def build_arith(ctx, ins):
    fn = lookup(ins.opcode, ins.mods, ins.types)
    if fn is None:
        return unsupported(ctx, ins)
    dt, sts = signature(ins.opcode, ins.mods, ins.types)
    srcs = ins.operands[1:]
    sts = sts or [dt] * len(srcs)
    if len(sts) < len(srcs):
        return unsupported(ctx, ins, "unexpected operand count")
    reads = [reader(ctx, o, t) for o, t in zip(srcs, sts)]
    write = writer(ctx, ins.operands[0], dt)
    guard = guarded(ctx, ins)
    carry = semantics.carry_io(ins.opcode, ins.mods)
    if carry is not None:
        return carry_chain(ctx, fn, reads, write, guard, *carry)

    def run(ex, lanes, pc):
        sub = guard(ex, lanes)
        if sub is None or len(sub):
            write(ex, uniform_call(fn, [r(ex, sub) for r in reads]), sub)
        ex.advance(lanes)
    if ins.guard is None:           # blocks.py may fuse it into its basic block's function
        run.fusable = ("arith", fn, dt, tuple(sts[:len(srcs)]))
    return run


def carry_chain(ctx, fn, reads, write, guard, reads_cf, writes_cf):
    """An instruction of the carry chain: the carry flag CC.CF is the per-lane register CC_REG."""
    cc = ctx.key(CC_REG)
    zero = np.array(0, np.uint32)

    def run(ex, lanes, pc):
        sub = guard(ex, lanes)
        if sub is None or len(sub):
            cin = ex.read_reg(cc, "u32", sub) if reads_cf else zero
            d, cout = fn(*[r(ex, sub) for r in reads], cin)
            write(ex, d, sub)
            if writes_cf:
                ex.write_reg(cc, cout, "u32", sub)
        ex.advance(lanes)
    return run


def uniform_call(fn, vals):
    """fn(*vals); when every operand is uniform (0-d) it is computed once, on one element."""
    for v in vals:
        if np.ndim(v):
            return fn(*vals)
    return np.asarray(fn(*[np.reshape(v, 1) for v in vals])).reshape(())


def build_setp(ctx, ins):
    boolop = next((m for m in ins.mods if m in ("and", "or", "xor")), None)
    mods = tuple(m for m in ins.mods if m != boolop)
    cmp = lookup("setp", mods, ins.types)
    if cmp is None:
        return unsupported(ctx, ins)
    t = ins.types[0]
    dst = ins.operands[0]
    wp = writer(ctx, dst[1] if dst[0] == "pair" else dst, "pred")
    wq = writer(ctx, dst[2], "pred") if dst[0] == "pair" else None
    ra, rb = reader(ctx, ins.operands[1], t), reader(ctx, ins.operands[2], t)
    rc = reader(ctx, ins.operands[3], "pred") if boolop else None
    comb = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(boolop)
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = guard(ex, lanes)
        if sub is None or len(sub):
            r = np.asarray(uniform_call(cmp, [ra(ex, sub), rb(ex, sub)]), bool)
            if comb is not None:
                c = rc(ex, sub)
                p, q = comb(r, c), comb(~r, c)
            else:
                p, q = r, ~r
            wp(ex, p, sub)
            if wq is not None:
                wq(ex, q, sub)
        ex.advance(lanes)
    if ins.guard is None:
        run.fusable = ("setp", cmp, t, comb)
    return run


def build_mov(ctx, ins):
    t = ins.types[0]
    dst, src = ins.operands[0], ins.operands[1]
    guard = guarded(ctx, ins)
    if src[0] == "vec":                                   # pack {a, b} into one register
        et = f"b{8 * nbytes(t) // len(src[1])}"
        reads = [reader(ctx, o, et) for o in src[1]]
        write = writer(ctx, dst, t)
        U = np_dtype(f"u{8 * nbytes(t)}")

        def value(ex, lanes):
            out = np.zeros((), U)
            for k, r in enumerate(reads):
                out = out | (r(ex, lanes).astype(U) << U.type(k * 8 * nbytes(et)))
            return out
    elif dst[0] == "vec":                                 # unpack
        et = f"b{8 * nbytes(t) // len(dst[1])}"
        read = reader(ctx, src, f"b{8 * nbytes(t)}")
        writes = [writer(ctx, o, et) for o in dst[1]]
        U = np_dtype(f"b{8 * nbytes(t)}")

        def run(ex, lanes, pc):
            sub = guard(ex, lanes)
            v = read(ex, sub)
            for k, w in enumerate(writes):
                w(ex, (v >> U.type(k * 8 * nbytes(et))).astype(np_dtype(et)), sub)
            ex.advance(lanes)
        if ins.guard is None:       # blocks.py: runs it inside a run (jitseg.py: compiled)
            run.fusable = ("movvec", None, t, et)
        return run
    else:
        r = reader(ctx, src, t)
        write = writer(ctx, dst, t)

        def value(ex, lanes):
            return r(ex, lanes)

    def run(ex, lanes, pc):
        sub = guard(ex, lanes)
        if sub is None or len(sub):
            write(ex, value(ex, sub), sub)
        ex.advance(lanes)
    if ins.guard is None:
        run.fusable = ("movvec", None, t, et) if src[0] == "vec" else ("mov", None, t, (t,))
    return run


def build_cvta(ctx, ins):
    """cvta.space: space address -> generic; cvta.to.space: generic -> space address."""
    t = ins.types[0]
    space = next(m for m in ins.mods if m != "to")
    base = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW, "const": CONST_WINDOW,
            "global": 0, "param": PARAM_WINDOW}.get(space)
    if base is None:
        return unsupported(ctx, ins)
    to = "to" in ins.mods
    r, w = reader(ctx, ins.operands[1], "u64"), writer(ctx, ins.operands[0], t)
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = guard(ex, lanes)
        a = r(ex, sub)
        w(ex, (a - np.uint64(base)) if to else (a + np.uint64(base)), sub)
        ex.advance(lanes)
    return run


def build_nop(ctx, ins):
    return lambda ex, lanes, pc: ex.advance(lanes)


# ---- control flow ------------------------------------------------------------------------
def guard_mask(ctx, ins):
    if ins.guard is None:
        return lambda ex, lanes: None
    key, neg = ctx.key(ins.guard[0]), ins.guard[1]

    def mask(ex, lanes):
        p = ex.read_reg(key, "pred", lanes)
        p = ~p if neg else p
        return None if p.ndim == 0 and p else p     # uniform true: as if unguarded
    return mask


def build_bra(ctx, ins):
    target = ctx.im.linked.target[ctx.pc]
    mask = guard_mask(ctx, ins)
    return lambda ex, lanes, pc: ex.goto(lanes, mask(ex, lanes), target, pc + 1)


def build_exit(ctx, ins):
    mask = guard_mask(ctx, ins)
    is_ret = ins.opcode == "ret"

    def run(ex, lanes, pc):
        m = mask(ex, lanes)
        if m is not None and not m.any():
            return ex.advance(lanes)
        depth = ex.depth[0 if lanes is None else lanes[0]]
        if is_ret and depth > 0:
            return do_return(ex, lanes, m, pc)
        ex.leave(lanes, m, EXITED, pc + 1)
    return run


def build_call(ctx, ins):
    ops = ins.operands
    rets = ops[0][1] if ops[0][0] == "list" else []
    rest = ops[1:] if ops[0][0] == "list" else ops
    if rest and rest[0][0] == "reg":
        return build_indirect_call(ctx, ins, rets, rest)
    if not rest or rest[0][0] != "sym" or rest[0][1] not in ctx.im.linked.entry_pc:
        return unsupported(ctx, ins, "indirect call or call to a function without a body")
    callee = rest[0][1]
    args = rest[1][1] if len(rest) > 1 and rest[1][0] == "list" else []
    fn = ctx.im.module.functions[callee]
    if len(args) != len(fn.params) or (len(rets) != len(fn.rets) and fn.rets):
        return unsupported(ctx, ins, "argument count does not match the callee")
    # a call that expects a return value from a function that returns none (numba declares a
    # C-ABI `void` function so): the value is left as it was, as a GPU leaves the register
    pairs = [((ctx.func, a[1]), (callee, p.name), p.size) for a, p in zip(args, fn.params)]
    entry = ctx.im.linked.entry_pc[callee]
    guard = guard_mask(ctx, ins)
    ctx.im.call_rets[ctx.pc] = [((callee, p.name), (ctx.func, r[1]), p.size)
                                for r, p in zip(rets, fn.rets)]

    def run(ex, lanes, pc):
        if guard(ex, lanes) is not None and not guard(ex, lanes).all():
            ex.fault(ins, "predicated call with a divergent guard is not supported",
                     None if lanes is None else lanes[0])
        enter_call(ex, ins, lanes, pc, pairs, entry)
    return run


def enter_call(ex, ins, lanes, pc, pairs, entry):
    """The lanes call the function at `entry`: arguments copied into its .param space, the
    return pc and call site pushed."""
    idx = ex.all_lanes(lanes)
    for src, dst, size in pairs:
        s = ex.param_store(src, size)
        ex.param_store(dst, size)[idx, :size] = s[idx, :size]
    d = ex.depth[idx[0]]
    if d + 1 >= ex.ret_pc.shape[0]:
        ex.fault(ins, "call stack too deep", idx[0])
    if entry in ex.im.recursive_entries:
        if d + 1 >= RECURSION_FRAMES:
            ex.fault(ins, f"recursion deeper than {RECURSION_FRAMES} calls (simgpu gives a recursive "
                     "function that many local frames)", idx[0])
        frames.save_frame(ex, ex.im.linked.func_of[entry], idx, d)
    ex.ret_pc[d, idx] = pc + 1
    ex.call_site[d, idx] = pc
    ex.depth[idx] += 1
    ex.goto(lanes, None, entry, entry)


def build_trap(ctx, ins):
    """trap: the launch aborts (the GPU reports cudaErrorLaunchFailure): a KernelError naming
    the first thread that executed it."""
    mask = guard_mask(ctx, ins)

    def run(ex, lanes, pc):
        m = mask(ex, lanes)
        idx = ex.all_lanes(lanes)
        hit = idx if m is None else idx[np.asarray(m, bool)] if np.ndim(m) else (idx if m else idx[:0])
        if len(hit):
            ex.fault(ins, "trap: the kernel aborted (on the GPU the launch fails with an "
                     "unspecified launch failure)", hit[0])
        ex.advance(lanes)
    return run


def build_isspacep(ctx, ins):
    """isspacep.{global,shared,local,const,param} p, a: whether generic address a is in that
    state space's window (simgpu/ptx/memory.py's generic layout; param: never)."""
    space = next((m for m in ins.mods if m in ("global", "shared", "local", "const", "param")), None)
    if space is None:
        return unsupported(ctx, ins, "isspacep needs a state space")
    wp = writer(ctx, ins.operands[0], "pred")
    ra = reader(ctx, ins.operands[1], "u64")
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = guard(ex, lanes)
        if sub is None or len(sub):
            a = np.atleast_1d(np.asarray(ra(ex, sub), np.uint64))
            sh, lo, co = classify_generic(a)
            r = {"shared": sh, "local": lo, "const": co, "global": ~(sh | lo | co),
                 "param": np.zeros_like(sh)}[space]
            wp(ex, r if np.ndim(ra(ex, sub)) else r[0], sub)
        ex.advance(lanes)
    return run


def build_indirect_call(ctx, ins, rets, rest):
    """``call (ret), %reg, (args), prototype``: a call through a function pointer (numba's NRT
    calls a MemInfo's destructor so).  The register holds the address that ``mov r, func``
    gave (runner.Image.function_address); the lanes calling at one step must agree on it."""
    target = reader(ctx, rest[0], "u64")
    args = rest[1][1] if len(rest) > 1 and rest[1][0] == "list" else []
    guard = guard_mask(ctx, ins)
    site = ctx.pc

    def run(ex, lanes, pc):
        im = ex.im
        m = guard(ex, lanes)
        if m is not None and not m.all():
            ex.fault(ins, "predicated call with a divergent guard is not supported",
                     None if lanes is None else lanes[0])
        idx = ex.all_lanes(lanes)
        t = np.unique(np.broadcast_to(target(ex, lanes), (len(idx),)))
        if len(t) != 1:
            ex.fault(ins, "an indirect call whose lanes call different functions at once is not "
                     "supported", idx[0])
        callee = im.function_at(int(t[0]))
        if callee is None or callee not in im.linked.entry_pc:
            ex.fault(ins, f"indirect call to address {int(t[0]):#x}, which is no function of the "
                     "module", idx[0])
        fn = im.module.functions[callee]
        if len(args) != len(fn.params) or len(rets) != len(fn.rets):
            ex.fault(ins, f"indirect call to {callee} with {len(args)} argument(s), and it takes "
                     f"{len(fn.params)}", idx[0])
        pairs = [((ctx.func, a[1]), (callee, p.name), p.size) for a, p in zip(args, fn.params)]
        im.call_rets[site] = [((callee, p.name), (ctx.func, r[1]), p.size)
                              for r, p in zip(rets, fn.rets)]
        enter_call(ex, ins, lanes, pc, pairs, im.linked.entry_pc[callee])
    return run


def do_return(ex, lanes, m, pc):
    idx = ex.all_lanes(lanes)
    if m is not None and not m.all():
        ex.fault(ex.im.linked.code[pc], "predicated ret with a divergent guard is not "
                 "supported", idx[0])
    d = ex.depth[idx[0]] - 1
    sites = ex.call_site[d, idx]
    recursive = ex.__dict__.get("frames")
    rets = []
    for site in np.unique(sites):
        sel = idx[sites == site]
        for src, dst, size in ex.im.call_rets.get(int(site), []):
            rets.append((dst, size, sel, ex.param_store(src, size)[sel, :size].copy()))
    if recursive:                   # a recursive call's caller gets its frame back first
        frames.restore_frame(ex, idx, d)
    for dst, size, sel, v in rets:
        ex.param_store(dst, size)[sel, :size] = v
    back = ex.ret_pc[d, idx]
    ex.depth[idx] = d
    if ex.conv and (back == back[0]).all():
        ex.upc = int(back[0])
    else:
        ex.pc[idx] = back
        ex.conv = False


HANDLERS = {
    "setp": build_setp, "mov": build_mov, "cvta": build_cvta,
    "isspacep": build_isspacep, "trap": build_trap, "bra": build_bra, "brx": None, "exit": build_exit, "ret": build_exit, "call": build_call,
    "membar": build_nop, "fence": build_nop, "nanosleep": build_nop, "prefetch": build_nop,
    "prefetchu": build_nop, "pmevent": build_nop,
}


__all__ = ["lookup", "reader", "writer", "guarded", "RUN"]
