"""mbarrier: the asynchronous split barrier in shared memory (PTX ISA, "Parallel Synchronization
and Communication Instructions: mbarrier"), as ``cuda::barrier<thread_scope_block>`` and
cooperative groups compile it for sm_80+.

Supported on ``.shared`` / ``.shared::cta`` (and generic addresses into shared memory):

* ``mbarrier.init.b64 [addr], count``: phase 0, pending = expected = count (1 .. 2^20-1);
* ``mbarrier.arrive{.noComplete}{.sem}{.scope}.b64 state, [addr]{, count}``: pending -= count
  (default 1); ``state`` is the object as it was before this arrive (its phase).  When pending
  reaches 0 the phase completes: phase + 1, pending = expected.  Arrivals of one instruction
  are applied in increasing lane order (each lane's state is what its own arrive saw), all
  lanes at once (a segmented prefix sum per barrier object);
* ``mbarrier.test_wait`` / ``mbarrier.try_wait`` ``{.parity}{.sem}{.scope}.b64 p, [addr], x
  {, suspendTimeHint}``: p = the phase named by the state ``x`` has completed (the object's phase
  differs from the state's); with ``.parity``, p = the current phase's parity differs from ``x``.
  try_wait returns the same answer at once (the ISA lets it return false after a
  system-dependent time; simgpu's time does not pass while a thread waits);
* ``mbarrier.inval.b64 [addr]``: the object is no longer a barrier (zeroed).

Transactions (sm_90, TMA: ops_tma.py): each object also has a tx-count (kept beside the
memory, starting at 0 at init).  ``mbarrier.expect_tx [addr], n`` adds n;
``mbarrier.arrive.expect_tx ... state, [addr], n`` adds n and then arrives (count 1);
``mbarrier.complete_tx [addr], n`` and the bytes of a ``cp.async.bulk.tensor`` that signals the
object subtract n.  A phase completes when both its pending arrivals and its tx-count are 0, so
a wait passes only once every expected byte has arrived.  The arrivals of an instruction on an
object with transactions are applied one lane at a time, in lane order.  Before a
test_wait/try_wait the TMA copies that signal the tested objects land (ops_tma.land).

Not yet: ``arrive_drop``, ``pending_count``, ``.shared::cluster``: each is a clear error naming
the instruction.  Undefined behaviour in the ISA is an error too: an arrive or wait on an object
that was never initialised (tracked beside shared memory, which starts as poison), an arrive whose count passes the pending count, ``.noComplete`` on the
arrive that would complete the phase.

The object's 64 bits are opaque in the ISA; simgpu's layout (a difference from the hardware's
undocumented one, visible only to code that reads the object as an integer): bits 0-19 the
pending count, 20-39 the expected count, 40-63 the phase number.
"""
from __future__ import annotations

import numpy as np

from simgpu.errors import SimGPUError
from simgpu.ptx.instrs import guarded, reader, unsupported, writer
from simgpu.ptx.ops_mem import _emit, address_reader, resolve

_MASK20 = np.uint64((1 << 20) - 1)
MAX_COUNT = (1 << 20) - 1
_U64 = np.dtype(np.uint64)


def unpack(v):
    """(pending, expected, phase) of mbarrier objects / states (uint64 arrays) as int64."""
    v = np.asarray(v, np.uint64)
    return ((v & _MASK20).astype(np.int64), ((v >> np.uint64(20)) & _MASK20).astype(np.int64),
            (v >> np.uint64(40)).astype(np.int64))


def pack(pending, expected, phase):
    return (np.asarray(pending, np.uint64) | (np.asarray(expected, np.uint64) << np.uint64(20))
            | ((np.asarray(phase, np.int64) & ((1 << 24) - 1)).astype(np.uint64) << np.uint64(40)))


def _space(ctx, ins):
    mods = set(ins.mods)
    if "shared::cluster" in mods:
        raise SimGPUError("mbarrier on .shared::cluster (another block's shared memory in a cluster) "
                          "is not modelled; simgpu runs .shared::cta barriers")
    return "shared" if "shared" in mods else "generic"


def _valid(ex, view):
    """Which 8-byte words of `view` hold an initialised mbarrier object (tracked beside the
    memory: shared memory starts as poison, so its bytes cannot say)."""
    table = ex.__dict__.setdefault("_mbarrier_valid", {})
    got = table.get(id(view))
    if got is None or got[0] is not view:
        got = table[id(view)] = (view, np.zeros(view.size, bool))
    return got[1]


def _tx(ex, view):
    """The tx-count of every 8-byte word of `view` (beside the memory, as _valid)."""
    table = ex.__dict__.setdefault("_mbarrier_tx", {})
    got = table.get(id(view))
    if got is None or got[0] is not view:
        got = table[id(view)] = (view, np.zeros(view.size, np.int64))
    return got[1]


def _check_valid(ex, ins, view, idx):
    if not _valid(ex, view)[idx].all():
        _fail(ex, ins, f"mbarrier.{ins.mods[0]} on an object that mbarrier.init has not initialised "
                       "(or that mbarrier.inval invalidated)")


def _fail(ex, ins, msg):
    where = ex.im.module.source(ins.loc)
    raise SimGPUError(f"{where + ': ' if where else ''}{msg} ('{ins.text}', PTX line {ins.line})")


def _objects(ex, ins, space, addr, sub):
    a = np.broadcast_to(addr(ex, sub), (len(sub),))
    events = []
    groups = resolve(ex, space, a, 8, _U64, sub, events)
    return groups, events


def build_mbarrier(ctx, ins):
    op = ins.mods[0] if ins.mods else ""
    space = _space(ctx, ins)
    if op == "init":
        return _build_init(ctx, ins, space)
    if op == "arrive":
        return _build_arrive(ctx, ins, space)
    if op in ("expect_tx", "complete_tx"):
        return _build_tx(ctx, ins, space)
    if op in ("test_wait", "try_wait"):
        return _build_wait(ctx, ins, space)
    if op == "inval":
        return _build_inval(ctx, ins, space)
    return unsupported(ctx, ins, "this mbarrier operation is not modelled yet (simgpu runs init, "
                                 "arrive{.expect_tx}, expect_tx, complete_tx, test_wait, try_wait "
                                 "and inval: simgpu/ptx/ops_mbarrier.py)")


def _build_init(ctx, ins, space):
    addr, count = address_reader(ctx, ins.operands[0]), reader(ctx, ins.operands[1], "u32")
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            c = np.broadcast_to(np.asarray(count(ex, sub), np.int64), (len(sub),))
            if (c < 1).any() or (c > MAX_COUNT).any():
                _fail(ex, ins, f"mbarrier.init with count {int(c[(c < 1) | (c > MAX_COUNT)][0])}: "
                      f"the count must be 1 to {MAX_COUNT}")
            groups, events = _objects(ex, ins, space, addr, sub)
            for view, idx, pos in groups:
                view[idx] = pack(c[pos], c[pos], 0)          # the last lane's init wins
                _valid(ex, view)[idx] = True
                _tx(ex, view)[idx] = 0
            _emit(ex, ins, pc, "store", 8, sub, events)
        ex.advance(lanes)
    return run


def _build_inval(ctx, ins, space):
    addr, guard = address_reader(ctx, ins.operands[0]), guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            groups, events = _objects(ex, ins, space, addr, sub)
            for view, idx, pos in groups:
                view[idx] = 0
                _valid(ex, view)[idx] = False
            _emit(ex, ins, pc, "store", 8, sub, events)
        ex.advance(lanes)
    return run


def _completions(s, pending, expected):
    """How many phases complete once `s` arrivals (counts) have been made on an object with
    `pending` arrivals left and `expected` per phase."""
    return np.where(s < pending, 0, 1 + (s - pending) // np.maximum(expected, 1))


def _build_arrive(ctx, ins, space):
    ops = ins.operands
    write = writer(ctx, ops[0], "b64")
    addr = address_reader(ctx, ops[1])
    expect = "expect_tx" in ins.mods
    if expect and len(ops) != 3:
        return unsupported(ctx, ins, "mbarrier.arrive.expect_tx takes state, [addr], txCount")
    count = reader(ctx, ops[2], "u32") if len(ops) > 2 else None
    no_complete = "noComplete" in ins.mods
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            n = len(sub)
            c = np.ones(n, np.int64) if count is None else \
                np.broadcast_to(np.asarray(count(ex, sub), np.int64), (n,)).copy()
            groups, events = _objects(ex, ins, space, addr, sub)
            state = np.empty(n, np.uint64)
            for view, idx, pos in groups:
                idx = np.broadcast_to(np.asarray(idx), (len(c[pos]),))
                if expect or _tx(ex, view)[idx].any():
                    tx = c[pos] if expect else np.zeros(len(idx), np.int64)
                    state[pos] = _arrive_tx(ex, ins, view, idx, np.ones(len(idx), np.int64) if expect
                                            else c[pos], tx, no_complete)
                else:
                    state[pos] = _arrive(ex, ins, view, idx, c[pos], no_complete)
            write(ex, state, sub)
            _emit(ex, ins, pc, "atomic", 8, sub, events)
        ex.advance(lanes)
    return run


def _arrive(ex, ins, view, idx, c, no_complete):
    """Apply the arrivals (counts c, in lane order) on the objects view[idx]; the state each
    lane's arrive returns (the object before it)."""
    idx = np.broadcast_to(idx, c.shape)
    order = np.argsort(idx, kind="stable")
    si, sc = idx[order], c[order]
    starts = np.r_[True, si[1:] != si[:-1]]
    seg = np.cumsum(starts) - 1
    incl = np.cumsum(sc)
    first = incl[starts] - sc[starts]                 # cumulative count before each object
    incl = incl - first[seg]                          # per-object running count (inclusive)
    excl = incl - sc
    objs = si[starts]
    _check_valid(ex, ins, view, objs)
    pend, expd, phase = unpack(view[objs])
    p, e, ph = pend[seg], expd[seg], phase[seg]
    before, after = _completions(excl, p, e), _completions(incl, p, e)
    inside = _completions(incl - 1, p, e) > before
    if inside.any():
        _fail(ex, ins, "mbarrier.arrive with a count larger than the arrivals pending in the "
                       "current phase (undefined in the PTX ISA)")
    if no_complete and (after > before).any():
        _fail(ex, ins, "mbarrier.arrive.noComplete would complete the current phase (undefined "
                       "in the PTX ISA)")
    left = np.where(before == 0, p - excl, e - (excl - p) % np.maximum(e, 1))
    st = pack(left, e, ph + before)
    last = np.r_[starts[1:], True]                    # each object's last arrival
    done = after[last]
    tot = incl[last]
    view[objs] = pack(np.where(done == 0, pend - tot, expd - (tot - pend) % np.maximum(expd, 1)),
                      expd, phase + done)
    out = np.empty_like(st)
    out[order] = st
    return out


def _arrive_tx(ex, ins, view, idx, c, tx, no_complete):
    """Arrivals (counts c, after adding tx to the tx-count) on objects with transactions, one
    lane at a time in lane order; the state each arrive returns (the object before it)."""
    txa = _tx(ex, view)
    _check_valid(ex, ins, view, np.unique(idx))
    out = np.empty(len(idx), np.uint64)
    for k in range(len(idx)):
        i = int(idx[k])
        out[k] = view[i]
        pend, expd, ph = (int(x[0]) for x in unpack(view[i:i + 1]))
        txa[i] += int(tx[k])
        if int(c[k]) > pend:
            _fail(ex, ins, "mbarrier.arrive with a count larger than the arrivals pending in the "
                           "current phase (undefined in the PTX ISA)")
        pend -= int(c[k])
        if pend == 0 and txa[i] == 0:
            if no_complete:
                _fail(ex, ins, "mbarrier.arrive.noComplete would complete the current phase "
                               "(undefined in the PTX ISA)")
            ph, pend = ph + 1, expd
        view[i] = pack(pend, expd, ph)
    return out


def _settle(view, txa, i):
    """Complete the phase of object i if its arrivals and transactions are all in."""
    pend, expd, ph = (int(x[0]) for x in unpack(view[i:i + 1]))
    if pend == 0 and txa[i] == 0:
        view[i] = pack(expd, expd, ph + 1)


def complete_tx(ex, ins, lane, addr, nbytes):
    """`nbytes` of transactions complete on the mbarrier at shared address `addr` (a TMA
    copy landing, ops_tma.land)."""
    groups = resolve(ex, "shared", np.array([addr], np.uint64), 8, _U64, np.array([lane]), [])
    for view, idx, pos in groups:
        i = int(np.asarray(idx).reshape(-1)[0])
        _check_valid(ex, ins, view, np.array([i]))
        txa = _tx(ex, view)
        txa[i] -= int(nbytes)
        _settle(view, txa, i)


def _build_tx(ctx, ins, space):
    """mbarrier.expect_tx / complete_tx{.sem}{.scope}{.space}.b64 [addr], txCount."""
    ops = ins.operands
    if len(ops) != 2:
        return unsupported(ctx, ins, f"mbarrier.{ins.mods[0]} takes [addr], txCount")
    addr, count = address_reader(ctx, ops[0]), reader(ctx, ops[1], "u32")
    sign = 1 if ins.mods[0] == "expect_tx" else -1
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            n = len(sub)
            c = np.broadcast_to(np.asarray(count(ex, sub), np.int64), (n,))
            groups, events = _objects(ex, ins, space, addr, sub)
            for view, idx, pos in groups:
                idx = np.broadcast_to(np.asarray(idx), (len(c[pos]),))
                _check_valid(ex, ins, view, np.unique(idx))
                txa = _tx(ex, view)
                for i, k in zip(idx.tolist(), c[pos].tolist()):
                    txa[i] += sign * k
                    _settle(view, txa, i)
            _emit(ex, ins, pc, "atomic", 8, sub, events)
        ex.advance(lanes)
    return run


def _build_wait(ctx, ins, space):
    ops = ins.operands
    write = writer(ctx, ops[0], "pred")
    addr = address_reader(ctx, ops[1])
    parity = "parity" in ins.mods
    x = reader(ctx, ops[2], "u32" if parity else "b64")
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            n = len(sub)
            xv = np.broadcast_to(np.asarray(x(ex, sub)), (n,))
            tma = ex.__dict__.get("_tma")
            if tma is not None:                         # TMA copies signalling these land first
                tma.land(ex, sub, np.broadcast_to(addr(ex, sub), (n,)))
            groups, events = _objects(ex, ins, space, addr, sub)
            done = np.empty(n, bool)
            for view, idx, pos in groups:
                _check_valid(ex, ins, view, idx)
                _, expd, phase = unpack(view[idx])
                xs = xv[pos]
                phase = np.broadcast_to(phase, xs.shape)
                if parity:
                    done[pos] = (phase & 1) != (xs.astype(np.int64) & 1)
                else:
                    done[pos] = phase != unpack(xs)[2]
            write(ex, done, sub)
            _emit(ex, ins, pc, "load", 8, sub, events)
        ex.advance(lanes)
    return run


HANDLERS = {"mbarrier": build_mbarrier}
