"""Asynchronous copies global -> shared (PTX ISA, "Data Movement: cp.async"), sm_80+:

* ``cp.async.ca.shared{::cta}.global{.L2::cache_hint}{.L2::64B/128B/256B} [dst], [src],
  cp-size{, src-size | , ignore-src}{, cache-policy}`` with cp-size 4, 8 or 16 (``.cg``: 16);
  src-size (0 .. cp-size bytes) reads that many bytes and fills the rest of the cp-size bytes
  with zeros; a true ignore-src predicate reads nothing and writes cp-size zeros;
* ``cp.async.commit_group``: the thread's copies issued since its last commit become one group;
* ``cp.async.wait_group N``: the thread waits until all but its N most recent committed groups
  have completed; ``cp.async.wait_all`` = commit_group + wait_group 0.

Completion is modelled so that a missing wait is visible, never a silent correct result: the
source bytes are read when the cp.async executes (that is what the hardware may do), but the
destination bytes are overwritten with the poison byte (0xFF: every float width NaN, every
integer -1) and the data lands only when a wait of the same thread covers its group.  A read
of the destination before the wait sees the poison.  Copies still pending when the thread
exits are dropped (their destination stays poisoned).  Each wait applies the covered copies in
issue order, so a later copy to the same bytes wins.  The copies' memory events (the cp.async
instruction's, so every level's byte counts see the traffic): a global ``load`` of cp-size
bytes for each lane whose src-size is not 0 (a shorter read lies in the same 32-byte sector)
at the step the cp.async executes, and a shared ``store`` of cp-size bytes per lane at the
step its data lands (the covering wait): a sanitizer sees the destination written only then,
and never when no wait covers it.

Not modelled: ``cp.async.mbarrier.arrive`` (an error naming the instruction), the .L2 cache
hints and prefetch sizes (accepted, no effect on results).  ``cp.async.bulk*`` (TMA) is
ops_tma.py's.
"""
from __future__ import annotations

import numpy as np

from simgpu.ptx.instrs import guarded, reader, unsupported
from simgpu.ptx.memory import POISON, SHARED_WINDOW, MemFault, classify_generic
from simgpu.ptx.ops_mem import _emit, address_reader, resolve
from simgpu.ptx.ops_tma import build_cp_bulk

_U8 = np.dtype(np.uint8)


class _Pending:
    """The copies of one chunk not yet completed: per cp.async execution, the lanes, their
    group numbers, the destination byte positions, the data, which lanes landed, and
    (instruction, pc, cp-size, destination addresses) for the store's event."""

    def __init__(self, L):
        self.commits = np.zeros(L, np.int64)      # groups committed so far, per lane
        self.copies = []                          # [lanes, group, dest, data, done, event]


def _state(ex):
    st = ex.__dict__.get("_cp_async")
    if st is None:
        st = ex.__dict__["_cp_async"] = _Pending(ex.ch.L)
    return st


def build_cp(ctx, ins):
    mods = ins.mods
    if not mods or mods[0] != "async":
        return unsupported(ctx, ins, "only cp.async is modelled (simgpu/ptx/ops_async.py)")
    if "commit_group" in mods:
        return _build_commit(ctx, ins)
    if "wait_group" in mods or "wait_all" in mods:
        return _build_wait(ctx, ins)
    if "bulk" in mods:
        return build_cp_bulk(ctx, ins)
    if "mbarrier" in mods:
        return unsupported(ctx, ins, "cp.async.mbarrier.arrive is not modelled yet")
    return _build_copy(ctx, ins)


def _build_copy(ctx, ins):
    mods = set(ins.mods)
    if not ({"ca", "cg"} & mods) or "global" not in mods:
        return unsupported(ctx, ins, "cp.async needs .ca or .cg and .shared.global")
    ops = ins.operands
    size_op = ops[2]
    if size_op[0] != "imm" or size_op[1] not in (4, 8, 16):
        return unsupported(ctx, ins, "cp.async cp-size must be the constant 4, 8 or 16")
    n = int(size_op[1])
    if "cg" in mods and n != 16:
        return unsupported(ctx, ins, "cp.async.cg copies 16 bytes (PTX ISA)")
    dst = address_reader(ctx, ops[0])
    src = address_reader(ctx, ops[1])
    src_size = ignore = None
    if len(ops) > 3:
        op = ops[3]
        is_pred = op[0] == "reg" and ctx.im.reg_dtype[ctx.key(op[1])] == np.bool_
        if op[0] == "not" or is_pred:
            ignore = reader(ctx, op, "pred")
        elif len(ops) > 3 and not (len(ops) == 4 and "L2::cache_hint" in mods):
            src_size = reader(ctx, op, "u32")
    dspace = "shared" if "shared" in mods else "generic"
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            m = len(sub)
            d = np.broadcast_to(dst(ex, sub), (m,)).astype(np.uint64)
            s = np.broadcast_to(src(ex, sub), (m,)).astype(np.uint64)
            for a, what in ((d, "shared destination"), (s, "global source")):
                bad = (a & np.uint64(n - 1)) != 0
                if bad.any():
                    p = int(np.argmax(bad))
                    ex.fault(ins, f"cp.async {what} address {int(a[p]):#x} is not {n}-byte "
                             "aligned", sub[p])
            if src_size is not None:
                k = np.broadcast_to(np.asarray(src_size(ex, sub), np.int64), (m,))
                if (k > n).any():
                    p = int(np.argmax(k > n))
                    ex.fault(ins, f"cp.async src-size {int(k[p])} is larger than its cp-size {n}",
                             sub[p])
            elif ignore is not None:
                k = np.where(np.broadcast_to(ignore(ex, sub), (m,)), 0, n)
            else:
                k = np.full(m, n, np.int64)
            if ((k == n) | (k == 0)).all():
                _copy_whole(ex, ins, pc, sub, d, s, k == n, n, dspace)
                ex.advance(lanes)
                return
            byte = np.arange(n, dtype=np.uint64)
            live = byte[None, :] < k[:, None].astype(np.uint64)           # (m, n) bytes read
            data = np.zeros((m, n), np.uint8)
            ev_src = []
            if live.any():
                rows = np.flatnonzero(live.any(axis=1))
                sa = (s[rows, None] + byte[None, :]).reshape(-1)
                rl = np.repeat(sub[rows], n)
                try:
                    groups = resolve(ex, "global", sa[live[rows].reshape(-1)], 1, _U8,
                                     rl[live[rows].reshape(-1)], [])
                except MemFault as err:
                    ex.fault(ins, err.msg, err.pos)
                got = np.empty(int(live[rows].sum()), np.uint8)
                for view, idx, pos in groups:
                    got[pos] = view[idx]
                block = np.zeros((len(rows), n), np.uint8)
                block[live[rows]] = got
                data[rows] = block
                ev_src = [("global", rows, s[rows])]
            da = (d[:, None] + byte[None, :]).reshape(-1)
            try:
                dg = resolve(ex, dspace, da, 1, _U8, np.repeat(sub, n), [])
            except MemFault as err:
                ex.fault(ins, err.msg, err.pos)
            for view, idx, pos in dg:                 # not visible before the wait
                view[idx] = POISON
            st = _state(ex)
            st.copies.append([sub.copy(), st.commits[sub].copy(), dg, data.reshape(-1),
                              np.zeros(m, bool), (ins, pc, n, _shared_address(dspace, d))])
            if ev_src:
                _emit(ex, ins, pc, "load", n, sub, ev_src)
        ex.advance(lanes)
    return run


_WHOLE = {w: np.dtype((np.void, w)) for w in (4, 8, 16)}
_POISON_EL = {w: np.full(w, POISON, np.uint8).view(_WHOLE[w])[0] for w in (4, 8, 16)}


def _copy_whole(ex, ins, pc, sub, d, s, full, n, dspace):
    """The copies when each lane reads all of its n bytes or none (src-size n or 0, or
    ignore-src): the same as the byte path, one n-byte element a lane (the addresses are
    n-byte aligned, checked)."""
    m = len(sub)
    T = _WHOLE[n]
    data = np.zeros(m, T)
    ev_src = []
    rows = np.flatnonzero(full)
    if len(rows):
        src = s if len(rows) == m else s[rows]
        try:
            groups = resolve(ex, "global", src, n, T, sub if len(rows) == m else sub[rows], [])
        except MemFault as err:
            ex.fault(ins, err.msg, err.pos)
        got = np.empty(len(rows), T)
        for view, idx, pos in groups:
            got[pos] = view[idx]
        data[rows] = got
        ev_src = [("global", rows, src)]
    try:
        dg = resolve(ex, dspace, d, n, T, sub, [])
    except MemFault as err:
        ex.fault(ins, err.msg, err.pos)
    for view, idx, pos in dg:                     # not visible before the wait
        view[idx] = _POISON_EL[n]
    st = _state(ex)
    st.copies.append([sub.copy(), st.commits[sub].copy(), dg, data, np.zeros(m, bool),
                      (ins, pc, n, _shared_address(dspace, d))])
    if ev_src:
        _emit(ex, ins, pc, "load", n, sub, ev_src)


def _shared_address(space, d):
    """The destination's shared-space address (a generic address into shared memory: minus
    the window's base)."""
    if space != "generic":
        return d
    sh = classify_generic(d)[0]
    return np.where(sh, d - np.uint64(SHARED_WINDOW), d)


def _build_commit(ctx, ins):
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            _state(ex).commits[sub] += 1
        ex.advance(lanes)
    return run


def _build_wait(ctx, ins):
    wait_all = "wait_all" in ins.mods
    if not wait_all and (len(ins.operands) != 1 or ins.operands[0][0] != "imm"):
        return unsupported(ctx, ins, "cp.async.wait_group takes an integer constant")
    N = 0 if wait_all else int(ins.operands[0][1])
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            st = _state(ex)
            if wait_all:
                st.commits[sub] += 1
            complete(ex, st, sub, N)
        ex.advance(lanes)
    return run


def complete(ex, st, sub, N):
    """The copies of lanes `sub` in groups older than their N most recent: land their data."""
    waiting = np.zeros(ex.ch.L, bool)
    waiting[sub] = True
    limit = st.commits - N                        # groups < limit are complete, per lane
    keep = []
    for cp in st.copies:                          # in issue order: later copies win
        lanes, group, dg, data, done = cp[:5]
        now = waiting[lanes] & (group < limit[lanes]) & ~done
        if now.any():
            n = len(data) // len(lanes)
            sel = np.repeat(now, n)
            for view, idx, pos in dg:
                p = np.arange(len(data))[pos] if isinstance(pos, slice) else pos
                ok = sel[p]
                view[np.asarray(idx)[ok]] = data[p[ok]]
            done |= now
            ins, pc, w, d = cp[5]                 # the copy's shared store, as it lands
            _emit(ex, ins, pc, "store", w, lanes, [("shared", np.flatnonzero(now), d[now])])
        if not done.all():
            keep.append(cp)
    st.copies = keep


HANDLERS = {"cp": build_cp}
