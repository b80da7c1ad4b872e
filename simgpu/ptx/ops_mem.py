"""Memory instructions: ld/ldu, st (scalar and .v2/.v4), atom and red, in every state space.

Addresses are computed per executing lane, mapped to (typed view, element index) groups by
the space (``memory.py``; generic addresses are split by window), checked, and then loaded or
stored with one fancy-indexing operation per group.  Each executed memory instruction
produces one memory record per concrete space it touched (``emit.Emitter.mem``).

Atomics are serialised in increasing lane order: the lanes are stably sorted by address; an
integer ``add`` is a wrapped prefix sum per address, other associative operations use
``ufunc.accumulate`` per address (few addresses) or rounds over the k-th lane of every
address (many addresses), ``exch``/``cas``/``inc``/``dec`` use rounds.  Each lane gets the
value its own update saw.
"""
from __future__ import annotations

import numpy as np

from simgpu.ptx.types import nbytes, np_dtype
from simgpu.ptx.instrs import guarded, reader, unsupported, writer
from simgpu.ptx.memory import (_SHIFT, CONST_WINDOW, LOCAL_WINDOW, SHARED_WINDOW, MemFault,
                               classify_generic, load, offsets_repeat, store)

SPACES = ("global", "shared", "local", "const", "param")
_WINDOWS = (("shared", SHARED_WINDOW), ("local", LOCAL_WINDOW), ("const", CONST_WINDOW))


def address_reader(ctx, op):
    """f(ex, lanes) -> uint64 addresses (array or 0-d)."""
    if op[0] != "addr":
        raise ValueError(f"expected an address, got {op}")
    _, base, off = op
    off = np.uint64(off & 0xFFFFFFFFFFFFFFFF)
    if base is None:
        return lambda ex, lanes: np.array(off)
    if base[0] == "sym":
        a, k = ctx.symbol(base[1], lambda addr: np.uint64(addr) + off)
        if k is not None:                       # a .global variable: the launch's address
            return lambda ex, lanes: np.array(ex.im.launch_values[k])
        return lambda ex, lanes: np.array(a)
    r = reader(ctx, base, "u64")
    return lambda ex, lanes: r(ex, lanes) + off     # a fresh array (events hand it out)


def resolve(ex, space, addrs, w, dtype, lanes, events):
    """Groups (view, element idx, positions in ``lanes``) for the lanes' addresses.  Appends
    (space, positions, addresses) to ``events``; a fault's pos is made a chunk lane."""
    try:
        if space == "generic":
            return _resolve_generic(ex, addrs, w, dtype, lanes, events)
        events.append((space, slice(None), addrs))
        if space == "global":
            mem = ex.im.memory
            groups = mem.resolve(addrs, w, dtype)
            if mem.overruns:                # past an end, inside the driver's rounding
                _pending_overruns(ex, mem, lanes)
            return groups
        if space == "shared":
            off = ex.ch.row_offsets(ex.shared.size)
            return ex.shared.resolve(addrs, w, dtype, row_off=off if lanes is ex.ch.all_idx
                                     else off[lanes])
        if space == "local":
            return ex.local.resolve(addrs, w, dtype, lanes)
        if space == "const":
            return ex.im.const_mem.resolve(addrs, w, dtype, np.zeros(len(lanes), np.int64))
    except MemFault as e:
        if not getattr(e, "mapped", False):
            e.pos, e.mapped = int(lanes[e.pos]), True
        raise
    raise MemFault(f"unsupported state space {space}", int(lanes[0]))


def _resolve_generic(ex, addrs, w, dtype, lanes, events):
    masks = classify_generic(addrs)
    rest = ~(masks[0] | masks[1] | masks[2])
    if rest.all():
        return resolve(ex, "global", addrs, w, dtype, lanes, events)
    out = []
    parts = [(name, m, base) for (name, base), m in zip(_WINDOWS, masks)]
    parts.append(("global", rest, 0))
    for name, m, base in parts:
        pos = np.flatnonzero(m)
        if len(pos) == 0:
            continue
        sub_ev = []
        groups = resolve(ex, name, addrs[pos] - np.uint64(base), w, dtype, lanes[pos], sub_ev)
        for sp, _, a in sub_ev:
            events.append((sp, pos, a))
        for view, idx, p in groups:
            out.append((view, idx, pos[p]))
    return out


def _pending_overruns(ex, mem, lanes):
    """Move the memory's new overrun records to the executor, as (chunk lanes, addresses,
    allocation index); _emit files them under the instruction."""
    pend = ex.__dict__.setdefault("overrun_pending", [])
    for pos, addrs, a in mem.overruns:
        pend.append((np.asarray(lanes)[pos], np.asarray(addrs, np.uint64), a))
    mem.overruns.clear()


def _file_overruns(ex, ins, kind):
    """Record the pending overruns under ``ins`` in the launch's ``Image.overruns``: one
    entry per (PTX line, allocation), the first lane's thread/block/address and a count
    (memcheck's report and the launch's warning)."""
    pend = ex.overrun_pending
    out = ex.im.overruns
    mem = ex.im.memory
    for lanes, addrs, a in pend:
        key = (ins.line, a)
        r = out.get(key)
        if r is None:
            blk, thr = ex.ch.where(int(lanes[0]))
            base, size = mem.bases[a], mem.bufs[a].size
            r = out[key] = {"ptx_line": ins.line, "text": ins.text, "kind": kind,
                            "loc": ex.im.module.source(ins.loc), "array": mem.names[a],
                            "size": size, "span": len(mem.pad(a)) + size,
                            "address": int(addrs[0]), "past_end": int(addrs[0]) - base - size,
                            "block": blk, "thread": thr, "count": 0, "max_past_end": 0}
        r["count"] += len(lanes)
        r["max_past_end"] = max(r["max_past_end"], int(addrs.max()) - mem.bases[a] - mem.bufs[a].size)
    pend.clear()


def _emit(ex, ins, pc, kind, w, lanes, events, rows_alike=None):
    if getattr(ex, "overrun_pending", None):
        _file_overruns(ex, ins, kind)
    if not ex.wants_mem:
        return
    for space, pos, addrs in events:
        ex.emit.mem(pc, space, kind, w, lanes[pos], addrs, rows_alike)


def _space(ins):
    return next((m for m in ins.mods if m in SPACES), "generic")


def _vec(ins):
    return next((int(m[1:]) for m in ins.mods if m in ("v2", "v4", "v8")), 1)


# ---- param space -------------------------------------------------------------------------
def _param_access(ctx, ins, addr_op, t):
    """(load(ex, lanes) -> values, store(ex, lanes, values)) for [sym+off] in param space."""
    _, base, off = addr_op
    if base is None or base[0] != "sym":
        raise ValueError("param access through a register address")
    name, w, T = base[1], nbytes(t), np_dtype(t)
    if ctx.func == ctx.im.kernel_name and name in ctx.im.kernel_param_names:
        # the launch's parameter value: decoded once per launch (a uniform scalar)
        k = ctx.per_launch(lambda im: np.frombuffer(
            im.kernel_params[name][off:off + w].ljust(w, b"\0"), T)[0])

        def launch_value(ex, lanes):
            return np.array(ex.im.launch_values[k])
        launch_value.launch_slot = k            # (blocks.py / jitseg.py read the slot directly)
        return launch_value, None
    key = (ctx.func, name)
    size = ctx.im.param_size.get(key, off + w)

    def ld(ex, lanes):
        return np.ascontiguousarray(ex.param_store(key, size)[lanes, off:off + w]).view(T)[:, 0]

    def st(ex, lanes, v):
        v = np.broadcast_to(np.asarray(v, T), (len(lanes),))
        ex.param_store(key, size)[lanes, off:off + w] = np.ascontiguousarray(v).view(
            np.uint8).reshape(len(lanes), w)
    return ld, st


# ---- ld / st -----------------------------------------------------------------------------
def build_ld(ctx, ins):
    t, space, n = ins.types[0], _space(ins), _vec(ins)
    dst = ins.operands[0]
    dsts = dst[1] if dst[0] == "vec" else [dst]
    writes = [writer(ctx, o, t) for o in dsts]
    guard = guarded(ctx, ins)
    if space == "param":
        ld, _ = _param_access(ctx, ins, ins.operands[1], t)

        def run_param(ex, lanes, pc):
            sub = ex.all_lanes(guard(ex, lanes))
            writes[0](ex, ld(ex, sub), sub)
            ex.advance(lanes)
        slot = getattr(ld, "launch_slot", None)
        if slot is not None and ins.guard is None and dst[0] == "reg" and n == 1:
            run_param.fusable = ("ldparam", slot, t, None)     # a kernel parameter: uniform
        return run_param
    addr = address_reader(ctx, ins.operands[1])
    w, T = nbytes(t), np_dtype(t)
    fast = _shared_reg(ctx, ins.operands[1], space, n, w)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            hit = fast and shared_fast(ex, fast, w, T, sub)
            if hit:
                writes[0](ex, load(hit[0], len(sub), T), sub)
                _emit(ex, ins, pc, "load", w, sub, [("shared", slice(None), hit[1])], hit[2])
                return ex.advance(lanes)
            a = np.broadcast_to(addr(ex, sub), (len(sub),))
            _check_vec_align(ex, a, w * n, sub)
            events = []
            for k, wr in enumerate(writes):
                ev = [] if k else events
                groups = resolve(ex, space, a + np.uint64(k * w) if k else a, w, T, sub, ev)
                wr(ex, load(groups, len(sub), T), sub)
            _emit(ex, ins, pc, "load", w * n, sub, events)
        ex.advance(lanes)
    base = ins.operands[1][1] if ins.operands[1][0] == "addr" else None
    if space == "global" and n == 1 and ins.guard is None and base is not None and \
            base[0] == "reg" and dst[0] == "reg" and set(ins.mods) <= _PLAIN_LD:
        run.fusable = ("ldg", None, t, None)     # blocks.py runs it in a run, jitseg.py compiles it
    return run


_PLAIN_LD = {"global", "nc", "ca", "cg", "cs", "lu", "cv"}      # (cache hints: the same load)


def _shared_reg(ctx, op, space, n, w):
    """(register key, offset) of a scalar ld/st.shared [reg+off] the cached path can take."""
    if space != "shared" or n != 1 or op[0] != "addr" or op[1] is None or op[1][0] != "reg":
        return None
    off = op[2]
    return (ctx.key(op[1][1]), off) if w in _SHIFT and 0 <= off < (1 << 32) and off % w == 0 \
        else None


def shared_fast(ex, fast, w, T, sub):
    """(groups, addresses, rows alike) of a shared access [reg+off] from the register's element
    indices, kept until the register is written; None where the general path must check
    (misaligned or out of bounds: it raises the fault).  Addresses only for memory observers,
    and with them, for an access by every lane, whether every block's row of addresses repeats
    block 0's (MemEvent.rows_alike; the register's, as the offset is the same for all), else
    None."""
    key, off = fast
    ver = ex.reg_version.get(key, 0)
    c = ex.shared_idx.get(key)
    if c is None or c[0] != ver or c[1] is not sub or c[2] != w:
        base = np.broadcast_to(ex.read_reg(key, "u64", sub), (len(sub),))
        if int(np.bitwise_or.reduce(base, axis=None)) & (w - 1):
            return None
        mx = int(base.max())
        if mx >= ex.shared.size:
            return None
        row = ex.ch.row_offsets(ex.shared.size)
        row = row if sub is ex.ch.all_idx else row[sub]
        alike = offsets_repeat(base, ex.ch.pad) if ex.wants_mem and sub is ex.ch.all_idx \
            and ex.ch.nblocks > 1 else None
        c = ex.shared_idx[key] = (ver, sub, w, base, mx, (row + base.view(np.int64)) >> _SHIFT[w], alike)
    _, _, _, base, mx, idx, alike = c
    if mx + off + w > ex.shared.size:
        return None
    a = base + np.uint64(off) if ex.wants_mem else None
    return [(ex.shared.typed(T)[off // w:], idx, slice(None))], a, alike


def _check_vec_align(ex, a, total, sub):
    if total > 8 and total & (total - 1) == 0:
        bad = (a & np.uint64(total - 1)) != 0
        if bad.any():
            p = int(np.argmax(bad))
            e = MemFault(f"misaligned {total}-byte vector access at {int(a[p]):#x}", sub[p])
            e.mapped = True
            raise e


def build_st(ctx, ins):
    t, space, n = ins.types[0], _space(ins), _vec(ins)
    src = ins.operands[1]
    srcs = src[1] if src[0] == "vec" else [src]
    reads = [reader(ctx, o, t) for o in srcs]
    guard = guarded(ctx, ins)
    if space == "param":
        _, st = _param_access(ctx, ins, ins.operands[0], t)
        if st is None:
            return unsupported(ctx, ins, "store to a kernel parameter")

        def run_param(ex, lanes, pc):
            sub = ex.all_lanes(guard(ex, lanes))
            st(ex, sub, reads[0](ex, sub))
            ex.advance(lanes)
        return run_param
    addr = address_reader(ctx, ins.operands[0])
    w, T = nbytes(t), np_dtype(t)
    fast = _shared_reg(ctx, ins.operands[0], space, n, w)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        hit = len(sub) and fast and shared_fast(ex, fast, w, T, sub)
        if hit:
            store(hit[0], np.broadcast_to(np.asarray(reads[0](ex, sub), T), (len(sub),)))
            _emit(ex, ins, pc, "store", w, sub, [("shared", slice(None), hit[1])], hit[2])
        elif len(sub):
            a = np.broadcast_to(addr(ex, sub), (len(sub),))
            _check_vec_align(ex, a, w * n, sub)
            events = []
            for k, r in enumerate(reads):
                ev = [] if k else events
                groups = resolve(ex, space, a + np.uint64(k * w) if k else a, w, T, sub, ev)
                v = np.broadcast_to(np.asarray(r(ex, sub), T), (len(sub),))
                store(groups, v)
            _emit(ex, ins, pc, "store", w * n, sub, events)
        ex.advance(lanes)
    return run


# ---- atomics -----------------------------------------------------------------------------
_UFUNC = {"add": np.add, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
          "min": np.minimum, "max": np.maximum}


def _step(op, T):
    one = T.type(1)
    if op == "exch":
        return lambda cur, b, c: b
    if op == "cas":
        return lambda cur, b, c: np.where(cur == b, c, cur).astype(T)
    if op == "inc":
        return lambda cur, b, c: np.where(cur >= b, T.type(0), cur + one).astype(T)
    if op == "dec":
        return lambda cur, b, c: np.where((cur == 0) | (cur > b), b, cur - one).astype(T)
    f = _UFUNC[op]
    if op in ("min", "max") and T.kind == "f":
        f = np.fmin if op == "min" else np.fmax
    return lambda cur, b, c: f(cur, b).astype(T)


def atomic_apply(view, idx, b, c, op, T):
    """Apply the lanes' atomic updates at view[idx] in lane order; returns old values."""
    n = len(idx)
    order = np.argsort(idx, kind="stable")
    si, sb = idx[order], np.asarray(b, T)[order]
    sc = None if c is None else np.asarray(c, T)[order]
    first = np.flatnonzero(np.r_[True, si[1:] != si[:-1]])
    seg = np.repeat(np.arange(len(first)), np.diff(np.r_[first, n]))
    rank = np.arange(n) - first[seg]
    counts = np.diff(np.r_[first, n])
    cur = view[si[first]].copy()
    old = np.empty(n, T)
    if op == "add" and T.kind in "iu":
        csum = np.cumsum(sb, dtype=T)
        excl = csum - sb
        old = (cur[seg] + (excl - excl[first][seg])).astype(T)
        cur = (cur + (csum[np.r_[first[1:], n] - 1] - excl[first])).astype(T)
    elif op in _UFUNC and len(first) < counts.max():
        f = _UFUNC[op] if not (op in ("min", "max") and T.kind == "f") else \
            (np.fmin if op == "min" else np.fmax)
        for s, (a, k) in enumerate(zip(first, counts)):
            acc = f.accumulate(np.r_[cur[s:s + 1], sb[a:a + k]].astype(T))
            old[a:a + k], cur[s] = acc[:-1], acc[-1]
    else:
        step = _step(op, T)
        by_rank = np.argsort(rank, kind="stable")
        bounds = np.r_[0, np.cumsum(np.bincount(rank))]
        for r in range(len(bounds) - 1):
            e = by_rank[bounds[r]:bounds[r + 1]]
            s = seg[e]
            old[e] = cur[s]
            cur[s] = step(cur[s], sb[e], None if sc is None else sc[e])
    view[si[first]] = cur
    out = np.empty(n, T)
    out[order] = old
    return out


def build_atom(ctx, ins):
    t, space = ins.types[0], _space(ins)
    op = next((m for m in ins.mods if m in ("add", "min", "max", "exch", "cas", "and", "or",
                                            "xor", "inc", "dec")), None)
    if op is None or t in ("f16", "bf16", "f16x2", "bf16x2") or _vec(ins) > 1:
        return unsupported(ctx, ins)
    is_red = ins.opcode == "red"
    ops = ins.operands if is_red else ins.operands[1:]
    addr = address_reader(ctx, ops[0])
    rb = reader(ctx, ops[1], t)
    rc = reader(ctx, ops[2], t) if op == "cas" else None
    write = None if is_red else writer(ctx, ins.operands[0], t)
    guard = guarded(ctx, ins)
    w, T = nbytes(t), np_dtype(t)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            a = np.broadcast_to(addr(ex, sub), (len(sub),))
            events = []
            groups = resolve(ex, space, a, w, T, sub, events)
            b = np.broadcast_to(rb(ex, sub), (len(sub),))
            c = None if rc is None else np.broadcast_to(rc(ex, sub), (len(sub),))
            old = np.empty(len(sub), T)
            for view, idx, pos in groups:
                old[pos] = atomic_apply(view, idx, b[pos], None if c is None else c[pos], op, T)
            if write is not None:
                write(ex, old, sub)
            _emit(ex, ins, pc, "atomic", w, sub, events)
        ex.advance(lanes)
    return run


HANDLERS = {"ld": build_ld, "ldu": build_ld, "st": build_st, "atom": build_atom,
            "red": build_atom}
