"""Warp- and block-level instructions: shfl.sync, vote.sync, activemask, bar.warp.sync,
bar.sync / barrier.sync.

Per-warp masks are built with ``np.packbits`` over the (warps, 32) view of a lane mask, so a
collective costs a few array operations for all warps at once.  A ``.sync`` collective whose
member mask names a non-exited lane that is not executing the instruction with the others is
reported as a ``KernelError`` (the simulator does not guess what diverged code would see).
"""
from __future__ import annotations

import numpy as np

from simgpu.ptx.executor import EXITED, WAIT, WARP_WAIT, wake
from simgpu.ptx.instrs import guard_mask, guarded, reader, unsupported, writer


def warp_bits(ex, lane_mask):
    """uint32 per warp of the chunk: bit l set where lane l of the warp is in lane_mask."""
    m = lane_mask.reshape(ex.ch.nwarps, 32)
    return np.packbits(m, axis=1, bitorder="little").view("<u4")[:, 0]


def _exec_mask(ex, lanes):
    m = np.zeros(ex.ch.L, bool)
    m[ex.all_lanes(lanes)] = True
    return m


def check_members(ex, ins, lanes, member):
    """member: uint32 per executing lane.  Every named, non-exited lane must be executing."""
    idx = ex.all_lanes(lanes)
    execb = warp_bits(ex, _exec_mask(ex, lanes))
    live = warp_bits(ex, ex.status != EXITED)
    w = idx // 32
    missing = member & live[w] & ~execb[w]
    if missing.any():
        k = int(np.argmax(missing != 0))
        ex.fault(ins, f"{ins.opcode}.sync member mask {int(member[k]):#010x} names lanes "
                 f"{int(missing[k]):#010x} that are not converged at this instruction",
                 idx[k])
    return execb, w


def build_shfl(ctx, ins):
    mode = next((m for m in ins.mods if m in ("up", "down", "bfly", "idx")), None)
    if mode is None or "sync" not in ins.mods:
        return unsupported(ctx, ins, "only shfl.sync is supported")
    dst = ins.operands[0]
    wd = writer(ctx, dst[1] if dst[0] == "pair" else dst, "b32")
    wp = writer(ctx, dst[2], "pred") if dst[0] == "pair" else None
    ra = ctx.key(ins.operands[1][1]) if ins.operands[1][0] == "reg" else None
    ra_imm = reader(ctx, ins.operands[1], "b32")
    rb, rc = reader(ctx, ins.operands[2], "b32"), reader(ctx, ins.operands[3], "b32")
    rm = reader(ctx, ins.operands[4], "b32")
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        n = len(sub)
        member = np.broadcast_to(rm(ex, sub), (n,)).astype(np.uint32)
        check_members(ex, ins, sub, member)
        lane = ex.ch.laneid[sub].astype(np.int64)
        # the lane/offset operand counts modulo 32: the H200 shuffles by 33 as by 1 and by -1
        # as by 31 (validation/data/h200_generated.json, shuffle deltas outside 0..31)
        b = np.broadcast_to(rb(ex, sub), (n,)).astype(np.int64) & 0x1F
        c = np.broadcast_to(rc(ex, sub), (n,)).astype(np.int64)
        # PTX ISA: c = clamp (bits 4:0) and segment mask (bits 12:8)
        cval, seg = c & 0x1F, (c >> 8) & 0x1F
        max_lane = (lane & seg) | (cval & ~seg)
        min_lane = lane & seg
        if mode == "up":
            j = lane - b
            ok = j >= max_lane
        elif mode == "down":
            j = lane + b
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ b
            ok = j <= max_lane
        else:
            j = min_lane | (b & ~seg)
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        src = sub - lane + j
        if ra is not None:
            val = np.broadcast_to(ex.read_reg(ra, "b32", None), (ex.ch.L,))[src]
        else:
            val = np.broadcast_to(ra_imm(ex, sub), (n,))
        wd(ex, val, sub)
        if wp is not None:
            wp(ex, ok, sub)
        ex.advance(lanes)
    return run


def build_vote(ctx, ins):
    mode = next((m for m in ins.mods if m in ("all", "any", "uni", "ballot")), None)
    if mode is None or "sync" not in ins.mods:
        return unsupported(ctx, ins, "only vote.sync is supported")
    t = "b32" if mode == "ballot" else "pred"
    wd = writer(ctx, ins.operands[0], t)
    rp = reader(ctx, ins.operands[1], "pred")
    rm = reader(ctx, ins.operands[2], "b32")
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        n = len(sub)
        member = np.broadcast_to(rm(ex, sub), (n,)).astype(np.uint32)
        execb, w = check_members(ex, ins, sub, member)
        p = np.zeros(ex.ch.L, bool)
        p[sub] = np.broadcast_to(rp(ex, sub), (n,))
        true_bits = warp_bits(ex, p)[w] & member
        voters = execb[w] & member
        if mode == "ballot":
            out = true_bits
        elif mode == "all":
            out = true_bits == voters
        elif mode == "any":
            out = true_bits != 0
        else:
            out = (true_bits == voters) | (true_bits == 0)
        wd(ex, out, sub)
        ex.advance(lanes)
    return run


def build_activemask(ctx, ins):
    wd = writer(ctx, ins.operands[0], "b32")

    def run(ex, lanes, pc):
        idx = ex.all_lanes(lanes)
        wd(ex, warp_bits(ex, _exec_mask(ex, lanes))[idx // 32], idx)
        ex.advance(lanes)
    return run


def build_bar(ctx, ins):
    if "warp" in ins.mods:                    # bar.warp.sync membermask
        return build_warp_sync(ctx, ins)
    if "red" in ins.mods:
        return build_bar_red(ctx, ins)
    if not ({"sync", "aligned"} & set(ins.mods)) and ins.mods:
        return unsupported(ctx, ins, "only bar.sync / barrier.sync / bar.red are supported")
    mask = guard_mask(ctx, ins)

    def run(ex, lanes, pc):
        m = mask(ex, lanes)
        if m is not None and not m.any():
            return ex.advance(lanes)
        ex.leave(lanes, m, WAIT, pc + 1)
    return run


def build_bar_red(ctx, ins):
    """bar.red.{popc.u32, and.pred, or.pred} d, a{, b}, {!}c (``cuda.syncthreads_count/and/or``):
    a block barrier; when it is released every thread that arrived gets its block's count of
    true c / all of them true / any true (threads that exited take no part).  The arrivals are
    kept per instruction (``ex.bar_red``) and reduced by executor.finish_barrier_reductions."""
    op = next((m for m in ins.mods if m in ("popc", "and", "or")), None)
    if op is None or len(ins.operands) not in (3, 4):
        return unsupported(ctx, ins, "bar.red takes .popc.u32, .and.pred or .or.pred")
    wd = writer(ctx, ins.operands[0], "u32" if op == "popc" else "pred")
    rc = reader(ctx, ins.operands[-1], "pred")
    mask = guard_mask(ctx, ins)

    def run(ex, lanes, pc):
        m = mask(ex, lanes)
        if m is not None and not m.any():
            return ex.advance(lanes)
        idx = ex.all_lanes(lanes)
        if m is not None:
            idx = idx[m]
        pending = ex.__dict__.setdefault("bar_red", {})
        fn = pending.get(pc)
        if fn is None:
            arrived, value = np.zeros(ex.ch.L, bool), np.zeros(ex.ch.L, bool)

            def fn(ex, arrived=arrived, value=value):
                who = np.flatnonzero(arrived)
                rows = ex.ch.block_row[who]
                n = np.bincount(rows, minlength=ex.ch.nblocks)
                true = np.bincount(rows, weights=value[who], minlength=ex.ch.nblocks).astype(np.int64)
                res = {"popc": true.astype(np.uint32), "and": true == n, "or": true > 0}[op]
                wd(ex, res[rows], who)
            fn.arrived, fn.value = arrived, value
            pending[pc] = fn
        fn.arrived[idx] = True
        fn.value[idx] = np.broadcast_to(rc(ex, idx), (len(idx),))
        ex.leave(lanes, m, WAIT, pc + 1)
    return run


def build_warp_sync(ctx, ins):
    """bar.warp.sync membermask (``cuda.syncwarp()``): a lane goes on once every non-exited lane
    of its member mask has reached a bar.warp.sync (this one or another: the hardware does not
    tell them apart).  Lanes whose members are all here (the converged case) go on at once;
    the others wait (WARP_WAIT) and are released by the members' arrival, or -- when nothing
    can run, i.e. the members exited or wait at another barrier -- by
    executor.release_warp_barriers.  So ``if tid < 2: ...; cuda.syncwarp()`` in numba's
    cuda.reduce kernel waits for lanes 2..31 to leave, as on Volta and later."""
    rm = reader(ctx, ins.operands[0], "b32")
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        idx = ex.all_lanes(guard(ex, lanes))
        if len(idx) == 0:
            return ex.advance(lanes)
        member = np.broadcast_to(rm(ex, idx), (len(idx),)).astype(np.uint32)
        execb = warp_bits(ex, _exec_mask(ex, idx))
        live = warp_bits(ex, ex.status != EXITED)
        waitb = warp_bits(ex, ex.status == WARP_WAIT)
        w = idx // 32
        missing = member & live[w] & ~execb[w] & ~waitb[w]
        if not missing.any() and not waitb.any():
            return ex.advance(lanes)                     # converged: nothing waits
        done = missing == 0
        every = ex.all_lanes(lanes)
        if len(idx) != len(every):          # lanes a guard turned off pass (predicated off)
            gone = np.zeros(len(every), bool)
            gone[np.searchsorted(every, idx[~done])] = True
        else:
            gone = ~done
        ex.leave(lanes, gone, WARP_WAIT, pc + 1)      # the waiting leave, the others go on
        if done.any():                                # members complete: their waiters go too
            rel = np.zeros(ex.ch.nwarps, np.uint32)
            np.bitwise_or.at(rel, w[done], member[done])
            cand = np.flatnonzero(ex.status == WARP_WAIT)
            bits = (rel[cand // 32] >> (cand % 32).astype(np.uint32)) & 1
            wake(ex, cand[bits.astype(bool)])
    return run


def build_match(ctx, ins):
    """match.any.sync.b32/b64 d, a, membermask: d = the member lanes (executing with this lane)
    whose a equals this lane's; match.all.sync d{|p}, a, membermask: d = the member lanes present
    (exited ones drop out, as numba's test on a 10-thread block expects) if all their a are
    equal (p true), else 0 (p false)."""
    mode = next((m for m in ins.mods if m in ("any", "all")), None)
    t = ins.types[0] if ins.types else None
    if mode is None or "sync" not in ins.mods or t not in ("b32", "b64"):
        return unsupported(ctx, ins, "match.any.sync / match.all.sync .b32/.b64")
    dst = ins.operands[0]
    wd = writer(ctx, dst[1] if dst[0] == "pair" else dst, "b32")
    wp = writer(ctx, dst[2], "pred") if dst[0] == "pair" else None
    ra = reader(ctx, ins.operands[1], t)
    rm = reader(ctx, ins.operands[2], "b32")
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        n = len(sub)
        if n == 0:
            return ex.advance(lanes)
        member = np.broadcast_to(rm(ex, sub), (n,)).astype(np.uint32)
        execb, w = check_members(ex, ins, sub, member)
        vals = np.zeros(ex.ch.L, np.uint64)
        vals[sub] = np.broadcast_to(ra(ex, sub), (n,)).astype(np.uint64)
        uw = np.unique(w)                                  # the warps executing
        v = vals.reshape(ex.ch.nwarps, 32)[uw]             # (warps, 32)
        eq = v[:, :, None] == v[:, None, :]                # eq[w, i, j]: lane j's value == lane i's
        bits = np.packbits(eq, axis=2, bitorder="little").view("<u4")[:, :, 0]   # (warps, 32)
        row = np.searchsorted(uw, w)
        same = bits[row, ex.ch.laneid[sub].astype(np.int64)] & member & execb[w]
        if mode == "any":
            wd(ex, same, sub)
        else:
            present = member & execb[w]         # exited lanes of the mask take no part
            ok = same == present
            wd(ex, np.where(ok, present, np.uint32(0)), sub)
            if wp is not None:
                wp(ex, ok, sub)
        ex.advance(lanes)
    return run


HANDLERS = {"match": build_match, "shfl": build_shfl, "vote": build_vote, "activemask": build_activemask,
            "bar": build_bar, "barrier": build_bar}
