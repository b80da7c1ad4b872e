"""Vectorised SIMT execution of a linked PTX program over a chunk of whole thread blocks.

Lanes are the threads of ``nblocks`` blocks, each block padded to whole warps (padding lanes
start as exited).  Registers are numpy arrays over lanes holding the bits (uint16/32/64 by the
declared width, bool for predicates), viewed as each instruction's type.

Scheduling and divergence -- "smallest (depth, PC) first".  Each lane has a PC (an index into
the program that ``program.link`` laid out in loop-nested topological block order) and a
call depth.  Every step executes ONE instruction for ALL lanes, across all warps and blocks
of the chunk, whose key ``(-depth, pc)`` is the minimum over running lanes.  Why this is SIMT
reconvergence at immediate post-dominators: take a warp that diverges at block b, and let d
be ipdom(b).  Every block on a path from b to d (not through d) either precedes d in the
layout (forward edges are topologically ordered) or lies in a loop that contains b, and a
loop's blocks are contiguous and its exits come after it.  So while any lane of the warp is
still between b and d, that lane has a smaller PC than d, and the lanes that already reached
d wait there: the warp continues as one group from d, exactly where an IPDOM reconvergence
stack would pop.  Deeper call frames run first, so a call returns before its caller goes on.
Compared with a per-warp stack this needs no per-warp Python state: one ``min`` and one
``==`` over the lane arrays per divergent step, and none while the chunk is converged (the
common case: one scalar PC, the running lanes fixed).  Warps in the same state run in the
same step, so the cost per step is one numpy operation over all of them.  Differences from a
stack: when lanes of a warp are in *different iterations* of a loop containing b with d in
that loop (``continue`` shapes), the lanes that restart the loop run first and the warp
reconverges when they catch up; per-thread results are the same (independent thread
scheduling, as on Volta+).  Warp-collective ``.sync`` instructions check that every
non-exited lane named in the member mask is present and report a ``KernelError`` otherwise.

``bar.sync``: lanes wait; when no lane of the chunk can run, the waiting lanes are released
(all non-exited threads of their block have arrived -- exited threads do not block a barrier,
as on Volta+).  Memory, warp and control instructions are in ``ops_mem``/``ops_warp``/here;
arithmetic comes from the one table, ``semantics.lookup``.
"""
from __future__ import annotations

import sys

import numba
import numpy as np

from simgpu import settings
from simgpu.events import Chunk as EventChunk
from simgpu.errors import KernelError
from simgpu.ptx.types import np_dtype
from simgpu.ptx.memory import MemFault, RowMemory

RUN, WAIT, EXITED = 0, 1, 2
GRID_WAIT = 3               # at a grid-wide barrier (cooperative groups' grid.sync(): devrt.py)
WARP_WAIT = 4               # at bar.warp.sync, for lanes of its member mask (ops_warp.py)
DEPTH_W = 1 << 24           # key = pc + (MAX_DEPTH - depth) * DEPTH_W
MAX_DEPTH = 64
BIG = np.int64(1) << 62
LOOP_WORK = 1 << 26         # (lane, micro-operation) pairs a compiled loop call may run before it
                            # hands back (the budget's clock is read between calls)


class Chunk(EventChunk):
    """The record's chunk (simgpu.events.Chunk, what observers get) with the executor's own
    per-lane geometry: thread ids as uint32 rows, lane and warp ids, the real (unpadded) lanes.
    The per-lane arrays depend only on the chunk's shape and are shared by the chunks of that
    shape: read them, never write."""

    def __init__(self, first_block, nblocks, grid, block, index=0):
        super().__init__(first_block, nblocks, tuple(block), tuple(grid), index)
        self.first, self.nblocks = first_block, nblocks
        bx, by, bz = block
        self.nthreads = bx * by * bz
        self.wpb = (self.nthreads + 31) // 32
        self.pad = self.wpb * 32
        self.L = nblocks * self.pad
        lin = np.arange(first_block, first_block + nblocks, dtype=np.int64)
        gx, gy, _ = grid
        self.block_xyz = np.stack([lin % gx, (lin // gx) % gy, lin // (gx * gy)], 1)
        (self.block_row, self.tlin, self.tid, self.laneid, self.warp_in_block, self.real,
         self.all_idx, self._row_off) = _lane_geometry(nblocks, tuple(block))
        self.nwarps = nblocks * self.wpb
        self._warp_global = None

    @property
    def warp_global(self):
        """Global warp id per lane."""
        if self._warp_global is None:
            self._warp_global = (self.block_row + self.first) * self.wpb + self.tlin // 32
        return self._warp_global

    def row_offsets(self, size):
        """block_row * size per lane (int64), cached: a shared-memory row's first byte."""
        r = self._row_off.get(size)
        if r is None:
            r = self._row_off[size] = self.block_row * size
        return r

    def where(self, lane):
        """(block xyz, thread xyz) of a chunk lane."""
        return tuple(self.block_xyz[self.block_row[lane]]), tuple(self.tid[:, lane])


_GEOMETRY: dict[tuple, tuple] = {}


def _lane_geometry(nblocks, block):
    """(block_row, thread linear id, tid (3, L), laneid, warp in block, real, every lane,
    shared-row offsets cache) for a chunk of `nblocks` blocks of shape `block`."""
    key = (nblocks, block)
    g = _GEOMETRY.get(key)
    if g is None:
        bx, by, bz = block
        nthreads = bx * by * bz
        pad = (nthreads + 31) // 32 * 32
        tl = np.tile(np.arange(pad, dtype=np.int64), nblocks)
        g = (np.repeat(np.arange(nblocks, dtype=np.int64), pad), tl,
             np.stack([tl % bx, (tl // bx) % by, tl // (bx * by)]).astype(np.uint32),
             (tl % 32).astype(np.uint32), (tl // 32).astype(np.uint32), tl < nthreads,
             np.arange(nblocks * pad), {})
        if len(_GEOMETRY) > 8:
            _GEOMETRY.clear()
        _GEOMETRY[key] = g
    return g


class Executor:
    """Runs one chunk.  ``image`` is the prepared program (runner.Image); ``emitter`` (an
    emit.Emitter, or None: nobody watches) reports what runs as simgpu.events records."""

    def __init__(self, image, chunk, emitter=None):
        self.im, self.ch = image, chunk
        L = chunk.L
        self.regs = {}
        self.pc = np.zeros(L, np.int64)
        self.depth = np.zeros(L, np.int64)
        self.status = np.where(chunk.real, RUN, EXITED).astype(np.int8)
        self.n_running = int(chunk.real.sum())
        self._calls = None          # (return pc, call site) per call depth and lane
        poison = image.poison       # the byte shared/local memory start as
        self.shared = RowMemory("shared", chunk.nblocks, image.shared_size, poison)
        self.local = RowMemory("local", L, image.local_size, poison)
        self.params = {}
        self.steps = 0
        self.emit = emitter
        self.wants_inst = emitter is not None and emitter.wants_inst
        self.wants_mem = emitter is not None and emitter.wants_mem
        self.wants_branch = emitter is not None and emitter.wants_branch
        # whether a run's instructions may be notified before they run (blocks.Run.fast)
        self.order_free = emitter is None or emitter.order_free
        self.watch_global = emitter is not None and emitter.watch_global
        self.conv = True
        self.upc = image.entry_pc
        self.run_lanes = None if self.n_running == L else np.flatnonzero(chunk.real)
        self.reg_version = {}       # register -> writes so far (keys ops_mem's shared_idx)
        self.shared_idx = {}        # register -> its shared element indices (ops_mem)
        self._next = None           # (lanes, key) of lanes that advanced alone (see _pick)
        self._k = self._omin = None
        self.prints = []            # vprintf records (printf.py), written when the chunk ends
        self.epoch = 0              # barrier releases so far (orders a block's printed lines)
        self.grid_barriers = 0      # grid-wide barriers (grid.sync()) the chunk passed
        # straight-line runs compiled into one function each (blocks.py), or None: off
        self.runs = getattr(getattr(image, "kernel", None), "runs", None) \
            if settings.current().ptx_blocks else None
        # innermost loops compiled whole (jitloop.py), where the observers take them summed
        cfg = settings.current()
        self.loops = getattr(getattr(image, "kernel", None), "loops", None) \
            if cfg.ptx_blocks and cfg.ptx_jit and (emitter is None or emitter.loops_ok) else None
        self._loops_off = set()

    @property
    def ret_pc(self):
        return self._call_stack()[0]

    @property
    def call_site(self):
        return self._call_stack()[1]

    def _call_stack(self):
        if self._calls is None:     # allocated at the first call
            self._calls = (np.zeros((MAX_DEPTH, self.ch.L), np.int64),
                           np.zeros((MAX_DEPTH, self.ch.L), np.int64))
        return self._calls

    # -- registers -------------------------------------------------------------------------
    # A register is an array over the chunk's lanes, or a 0-d array while every lane holds the
    # same value (written for all lanes at once: kernel parameters, %ntid, constants and what
    # is computed from them only).  Reads of a uniform register give the 0-d value.
    def reg(self, key):
        """The register's per-lane storage (a uniform register is expanded first)."""
        a = self.regs.get(key)
        if a is None:
            a = self.regs[key] = np.zeros(self.ch.L, self.im.reg_dtype[key])
        elif a.ndim == 0:
            a = self.regs[key] = np.full(self.ch.L, a, a.dtype)
        return a

    def read_reg(self, key, t, lanes):
        a = self.regs.get(key)
        if a is None:
            a = self.regs[key] = np.zeros((), self.im.reg_dtype[key])
        if a.ndim and lanes is not None and lanes is not self.ch.all_idx:
            a = a[lanes]
        return convert_read(a, t)

    def write_reg(self, key, value, t, lanes):
        self.reg_version[key] = self.reg_version.get(key, 0) + 1
        value = np.asarray(value)
        if lanes is self.ch.all_idx:
            lanes = None
        if lanes is None:
            S = self.im.reg_dtype[key]
            if value.ndim == 0:                         # every lane: a uniform register
                self.regs[key] = np.array(convert_write(value, t, S))
            elif value.shape == (self.ch.L,) and unshared(value):
                # a new array nobody else holds: it becomes the register's storage (no copy)
                self.regs[key] = convert_write(value, t, S)
            else:
                a = self.regs[key] = np.empty(self.ch.L, S)
                a[...] = convert_write(value, t, S)
            return
        a = self.reg(key)
        a[lanes] = convert_write(value, t, a.dtype)

    def param_store(self, key, size):
        p = self.params.get(key)
        if p is None or p.shape[1] < size:
            new = np.zeros((self.ch.L, max(size, 8)), np.uint8)
            if p is not None:
                new[:, :p.shape[1]] = p
            p = self.params[key] = new
        return p

    # -- errors ----------------------------------------------------------------------------
    def fault(self, ins, msg, lane=None):
        blk = thr = None
        if lane is not None:
            blk, thr = self.ch.where(int(lane))
        src = self.im.module.source(ins.loc)
        raise KernelError(f"{msg} (PTX line {ins.line}: {ins.text})", loc=src,
                          kernel=self.im.display_name,
                          block=blk, thread=thr)

    # -- the loop --------------------------------------------------------------------------
    def run(self, max_steps=None):
        try:
            self._run(max_steps)
        finally:
            if self.prints:                 # print(): the chunk's lines, also after a fault
                self.im.flush_prints(self.prints)

    def _run(self, max_steps=None):
        code = self.im.compiled
        max_steps = max_steps or self.im.max_steps
        with np.errstate(all="ignore"):
            while True:
                if self.conv:
                    pc, lanes = self.upc, self.run_lanes
                    if pc is None:
                        if not self.release_barrier():
                            return
                        continue
                else:
                    sel = self._pick()
                    if sel is None:
                        if not self.release_barrier():
                            return
                        continue
                    pc, lanes = sel
                if self.loops and pc in self.loops and self.run_loop(pc, lanes, max_steps):
                    continue
                runs = self.runs
                if runs:
                    r = runs.get(pc)
                    if r is not None and self.run_fused(r, pc, lanes, max_steps):
                        continue
                self.steps += 1
                if self.steps > max_steps:
                    self.fault(self.im.linked.code[pc], f"more than {max_steps} steps "
                               "(a runaway loop?)", None if lanes is None else lanes[0])
                ins = code[pc]
                if self.wants_inst and ins.ptx.line:
                    self.emit.inst(self, pc, ins.ptx, lanes)
                try:
                    ins.exec(self, lanes, pc)
                except MemFault as e:               # e.pos: the chunk lane at fault
                    self.fault(ins.ptx, e.msg, e.pos)

    def run_fused(self, r, pc, lanes, max_steps):
        """Execute the compiled run ``r`` (blocks.py) that starts at ``pc`` for ``lanes`` if the
        interpreter would run all of its instructions for these lanes one after the other:
        converged, or diverged with these lanes' key below every other running lane's for the
        whole run (what _pick checks at each step); and within the step budget.  False: not
        run (the instruction runs alone)."""
        m = r.n
        if self.steps + m > max_steps or not r.ready():
            return False
        if not self.conv:
            if self._k + m - 1 >= self._omin:
                return False
        notify = self.notify_instr if self.wants_inst else None
        if notify is None:
            self.steps += m
        (r.fast if self.order_free else r.fn)(self, lanes, notify)
        if self.conv:
            self.upc = pc + m
        else:                       # as m calls of advance and _pick's fast path would leave it
            self._k += m - 1
            self._next = (lanes, self._k + 1)
        return True

    def run_loop(self, pc, lanes, max_steps):
        """Run the compiled loop whose head is ``pc`` (jitloop.py) for ``lanes`` if the
        interpreter would run it for them alone: converged, or every other running lane's key
        past the loop's end (then none runs before these have left it); within the step budget
        and the observers' budget.  False: not run (the head runs alone)."""
        lp = self.im.kernel.loop(pc)
        if lp is None or pc in self._loops_off:
            return False
        if not self.conv:
            if self._k + lp.npcs - 1 >= self._omin:
                return False
        em = self.emit
        if lp.p.loads and self.watch_global or em is not None and not em.loop_ok(lp.lines):
            return False
        n = self.ch.L if lanes is None else len(lanes)
        if n > lp.max_lanes:            # wider: numpy's per-instruction calls are spread over them
            return False
        cap = min(LOOP_WORK // (n * lp.work) + 1, (max_steps - self.steps) // lp.npcs)
        room = em.loop_room() if em is not None else None
        if room is not None:
            cap = min(cap, room // (min(n, self.ch.nwarps) * max(1, len(lp.lined))))
        if cap < 1:
            return False
        out = lp.run(self, lanes, cap, em.progress_window if em is not None else None)
        if out is None:                 # a load fault, or no progress: the interpreter reports it
            self._loops_off.add(pc)
            return False
        pcs, rec, steps = out
        self.steps += steps
        if rec is not None:
            em.inst_loop(rec)
        self._next = None
        if (pcs == pcs[0]).all():
            if self.conv:
                self.upc = int(pcs[0])
            else:
                self.pc[lanes] = pcs[0]
        else:
            self.pc[self.all_lanes(lanes)] = pcs
            self.conv = False
        return True

    def _pick(self):
        """Not converged: (pc, lanes) of the smallest key over the running lanes, or None when
        none runs.  Lanes that only advanced at the last step go on without a scan while their
        key stays below every other running lane's (the others have not moved meanwhile)."""
        g, self._next = self._next, None
        if g is not None:
            lanes, k = g
            if k < self._omin:
                self._k = k
                return k % DEPTH_W, lanes
            self.pc[lanes] = k % DEPTH_W        # the deferred advance
        k, lanes, self._omin = _scan_keys(self.status, self.pc, self.depth)
        if k == BIG:
            return None
        pc = k % DEPTH_W
        self._k = k
        if len(lanes) == self.n_running:
            self.conv, self.upc = True, pc
            lanes = self.run_lanes = None if len(lanes) == self.ch.L else lanes
        return pc, lanes

    def notify_instr(self, pc, ins, lanes):
        """Compiled instruction ``ins`` at ``pc`` is about to run for ``lanes`` (None: all)."""
        self.emit.inst(self, pc, ins.ptx, lanes)

    def notify_many(self, pcs, lanes):
        """Compiled instructions ``pcs`` (a run's segment) are about to run for ``lanes``, in
        order (observers that are order-free: Emitter.order_free); counted as steps."""
        self.steps += len(pcs)
        self.emit.inst_many(self, pcs, lanes)

    def advance(self, lanes):
        """Move the executing lanes to the next instruction."""
        if self.conv:
            self.upc += 1
        else:                       # written by _pick when these lanes stop running alone
            self._next = (lanes, self._k + 1)

    def all_lanes(self, lanes):
        return self.ch.all_idx if lanes is None else lanes

    def goto(self, lanes, taken, target, fall):
        """Lanes where ``taken`` go to ``target``, the others to ``fall``."""
        self._next = None
        if self.wants_branch and target != fall:        # a bra (fall: the next pc)
            self.emit.branch(fall - 1, self.all_lanes(lanes), taken)
        if taken is None or taken.all():
            dest = target
        elif not taken.any():
            dest = fall
        else:
            lanes = self.all_lanes(lanes)
            self.pc[lanes] = np.where(taken, target, fall)
            self.conv = False
            return
        if self.conv:
            self.upc = dest
        else:
            self.pc[lanes] = dest

    def leave(self, lanes, gone, new_status, resume_pc):
        """Lanes ``lanes[gone]`` stop running (exit or wait); the rest go to resume_pc."""
        self._next = None
        lanes = self.all_lanes(lanes)
        out = lanes if gone is None else lanes[gone]
        stay = None if gone is None else lanes[~gone]
        sel = slice(None) if out is self.ch.all_idx else out     # every lane: no index
        self.status[sel] = new_status
        self.pc[sel] = resume_pc
        self.n_running -= len(out)
        if self.conv:
            if stay is None or len(stay) == 0:
                self.upc = None
            else:
                self.run_lanes, self.upc = stay, resume_pc
        elif stay is not None and len(stay):
            self.pc[stay] = resume_pc

    def release_barrier(self):
        """Nothing can run: release the lanes waiting at a barrier; False when all exited."""
        self._next = None
        if release_warp_barriers(self):
            return True
        waiting = np.flatnonzero(self.status == WAIT)
        if len(waiting) == 0:
            return release_grid_barrier(self)
        self.status[waiting] = RUN
        self.n_running = len(waiting)
        self.epoch += 1
        self.conv = False
        finish_barrier_reductions(self)
        return True


@numba.njit(cache=True, nogil=True)
def _scan_keys(status, pc, depth):
    """_pick's scan: (the smallest key over the running lanes, those lanes in order, the
    smallest key of the other running lanes); BIG where there is none."""
    k1 = k2 = BIG
    n = 0
    for i in range(status.shape[0]):
        if status[i] == RUN:
            key = pc[i] + (MAX_DEPTH - depth[i]) * DEPTH_W
            if key < k1:
                k1, k2, n = key, k1, 1
            elif key == k1:
                n += 1
            elif key < k2:
                k2 = key
    lanes = np.empty(n, np.int64)
    j = 0
    for i in range(status.shape[0] if n else 0):
        if status[i] == RUN and pc[i] + (MAX_DEPTH - depth[i]) * DEPTH_W == k1:
            lanes[j] = i
            j += 1
    return k1, lanes, k2


def finish_barrier_reductions(ex):
    """bar.red (``cuda.syncthreads_and/or/count``): once the block barrier is released, each
    arrived thread gets its block's reduction (ops_warp.build_bar_red keeps the arrivals)."""
    pending = ex.__dict__.get("bar_red")
    if not pending:
        return
    for fn in pending.values():
        fn(ex)
    pending.clear()


def wake(ex, lanes):
    """Lanes waiting at a barrier (their pc already the one after it) run again."""
    if len(lanes) == 0:
        return
    if ex.conv:                     # the running lanes' pc lives in ex.upc: write it out
        if ex.upc is not None:
            ex.pc[ex.all_lanes(ex.run_lanes)] = ex.upc
        ex.conv = False
    ex._next = None
    ex.status[lanes] = RUN
    ex.n_running += len(lanes)


def release_warp_barriers(ex):
    """Nothing can run: lanes waiting at bar.warp.sync for members that went elsewhere (they
    exited, or wait at another barrier) are released -- first, so that a warp barrier never
    holds lanes back from a block barrier that their block waits at.  False if none waits."""
    waiting = np.flatnonzero(ex.status == WARP_WAIT)
    if len(waiting) == 0:
        return False
    wake(ex, waiting)
    return True


def release_grid_barrier(ex):
    """Nothing can run and no thread waits at a block barrier: if threads wait at a grid
    barrier, every thread of the grid that has not exited is there -- release them all; False
    when every thread has exited.  The whole grid must be in this chunk (a cooperative launch
    is at most one wave: runtime/ptx_path.py makes it one chunk), and a block whose threads all
    exited before the barrier is the deadlock the GPU would hang in."""
    waiting = np.flatnonzero(ex.status == GRID_WAIT)
    if len(waiting) == 0:
        return False
    ch = ex.ch
    ins = ex.im.linked.code[int(ex.pc[waiting[0]]) - 1]      # the call that waits
    total = int(np.prod(ex.im.grid))
    if ch.first != 0 or ch.nblocks != total:
        ex.fault(ins, f"grid-wide barrier (grid.sync()) with blocks {ch.first}..{ch.first + ch.nblocks - 1} "
                 f"of {total} executed together: every block of a cooperative launch must be "
                 "resident at once (launch at most max_cooperative_grid_blocks() blocks)",
                 int(waiting[0]))
    arrived = np.zeros(ch.nblocks, bool)
    arrived[ch.block_row[waiting]] = True
    if not arrived.all():
        b = int(np.flatnonzero(~arrived)[0])
        lane = int(np.flatnonzero(ch.block_row == b)[0])
        ex.fault(ins, "grid-wide barrier (grid.sync()): every thread of this block exited without "
                 "reaching it, so on the GPU the other blocks would wait for it forever (deadlock)",
                 lane)
    ex.status[waiting] = RUN
    ex.n_running = len(waiting)
    ex.epoch += 1
    ex.grid_barriers += 1
    ex.conv = False
    return True


def _base_refs(value):
    b = value.base
    return sys.getrefcount(b)


def _sole_refs():
    a = np.zeros(2)
    v = a.view(np.int64)
    del a
    return _base_refs(v)


_SOLE_REFS = _sole_refs()       # what _base_refs says for a view of an array only it holds


def unshared(value):
    """True for a new array (no base: the semantics made it) or a view of an array that only
    this view holds (``(a + b).view(T)``); False for views of registers, chunk geometry,
    memory.  Registers take such arrays as their storage without a copy."""
    b = value.base
    if b is None:
        return True
    if type(b) is not np.ndarray or b.base is not None:
        return False
    del b                       # (our own reference would count)
    return _base_refs(value) == _SOLE_REFS


def _uint(n):
    return np.dtype(f"u{n}")


def convert_read(a, t):
    """Register bits -> value of PTX type t (truncating or extending a mismatched width)."""
    T = np_dtype(t)
    if a.dtype == np.bool_ or T == np.bool_:
        return a.astype(T)
    if a.dtype.itemsize == T.itemsize:
        return a.view(T)
    if a.dtype.itemsize > T.itemsize:
        return a.astype(_uint(T.itemsize)).view(T)
    if t[0] == "s":
        return a.view(np.dtype(f"i{a.dtype.itemsize}")).astype(T)
    return a.astype(_uint(T.itemsize)).view(T)


def convert_write(v, t, S):
    """Value (any dtype the semantics returned) -> bits for a register of storage dtype S:
    sign-extended for signed types, zero-extended otherwise, truncated if wider."""
    if S == np.bool_ or v.dtype == np.bool_:
        return v.astype(S)
    if v.dtype.itemsize == S.itemsize:
        return v.view(S)
    if v.dtype.itemsize < S.itemsize and v.dtype.kind == "i":
        return v.astype(np.int64).astype(S)
    return v.view(_uint(v.dtype.itemsize)).astype(S)
