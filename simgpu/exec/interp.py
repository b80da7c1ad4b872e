"""The vectorised SIMT interpreter.

All lanes of a chunk of blocks execute each IR instruction together as one numpy
operation; a bool mask says which lanes are active.  `If` runs its sides one after the
other under `mask & cond` and `mask & ~cond` and the lanes rejoin after it, as the
hardware's reconvergence stack does; loops run while any lane is active.  Because each
instruction is executed for every warp of every block of the chunk before the next one,
block-wide barriers hold by construction and are only *checked* (every live thread of a
block must reach them together).
"""
from __future__ import annotations

import builtins

import numpy as np

from ..errors import DSLError, KernelError
from ..ir import types as T
from ..ir.nodes import Break, Call, Const, Continue, If, Instr, Loop, Return
from . import atomics
from .budget import IRLoopProgress
from .ops import conv, evaluate, fused_mul_add
from ..events import BarrierEvent, BranchEvent, InstrEvent, overrides
from .state import POISON, WARP, ArrayHandle, Mask, MemEvent, poisoned


class _LoopCtx:
    __slots__ = ("broken", "continued")

    def __init__(self, n):
        self.broken = np.zeros(n, dtype=bool)
        self.continued = np.zeros(n, dtype=bool)


class _Frame:
    __slots__ = ("returned", "ret")

    def __init__(self, returned, ret):
        self.returned = returned
        self.ret = ret


def _current_global(py, name):
    """(found, value) of free name `name` of Python function `py` now."""
    code = py.__code__
    if py.__closure__ and name in code.co_freevars:
        try:
            return True, py.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:
            return False, None
    if name in py.__globals__:
        return True, py.__globals__[name]
    return hasattr(builtins, name), getattr(builtins, name, None)


def _unchanged(old, now):
    if isinstance(old, np.ndarray):
        return now is old                # the same array (its contents are read at run time)
    return now is old or (type(now) is type(old) and bool(np.all(now == old)))


def check_globals(fn):
    """numba.cuda freezes the numbers, tuples and arrays a kernel reads from its globals when it
    compiles it, and the compiled path recompiles when one changes; the typed IR here is kept
    per argument signature, so a global changed since it was lowered is refused, not ignored."""
    for py, name, old, loc in fn.globals_read.values():
        found, now = _current_global(py, name)
        if not (found and _unchanged(old, now)):
            shown = "is no longer defined" if not found else \
                f"changed from {_short(old)} to {_short(now)}"
            raise DSLError(f"global {name!r} {shown} since this kernel was compiled for these "
                           "argument types; numba.cuda would keep the compiled value, simgpu's "
                           "compiled path (executor='ptx') recompiles", loc,
                           "pass the value as a kernel argument, or make a new kernel "
                           "(simgpu.jit(f)) after changing it")


def _short(v):
    return f"an array {v.shape}" if isinstance(v, np.ndarray) else repr(v)[:40]


class Interpreter:
    def __init__(self, fn, kernel_name, observers=(), max_loop_iterations=None, watch=None, poison=POISON):
        check_globals(fn)
        self.fn = fn
        self.kernel_name = kernel_name
        self.observers = list(observers)
        self.mem_observers = [o for o in self.observers if overrides(o, "mem")]
        self.inst_observers = [o for o in self.observers if overrides(o, "inst")]
        self.branch_observers = [o for o in self.observers if overrides(o, "branch")]
        self.barrier_observers = [o for o in self.observers if overrides(o, "barrier")]
        self.sync_observers = [o for o in self.observers if overrides(o, "barrier_divergence")]
        self.poison = poison             # the byte shared and local memory start as
        self.max_loop_iterations = max_loop_iterations     # deprecated per-loop cap (None: off)
        self.watch = watch          # exec.budget.LaunchWatch: the launch's budget (None: none)
        self.types = fn.var_types
        self._consts = {}
        self.stack = []          # reconvergence stack: (kind, node, entry Mask); the records' state
        self.after = []          # (hook, observers, record) an instruction's handler made: emitted
        #                          after its inst (events.py's order)
        for o in self.observers:
            o.attach(self)

    # -- entry ----------------------------------------------------------------
    def run_chunk(self, chunk, bindings, smem_layout):
        """Run one chunk.  bindings: param name -> ArrayHandle or numpy scalar."""
        self.chunk = chunk
        self.env = dict(bindings)
        self.after = []
        for key, arr in self.fn.consts.items():
            self.env[key] = bindings[key]
        self.shared = {}
        self._addr_cache = {}
        for key, (shape, dtype) in self.fn.shared.items():
            dt = T.np_dtype(dtype)
            size = int(np.prod(shape))
            self.shared[key] = ArrayHandle(key, "shared", tuple(shape), dt,
                                           poisoned((chunk.n_blocks, size), dt, self.poison),
                                           base_addr=smem_layout[key])
            self.shared[key].lane_base = chunk.lane_block * size
        self.local = {}
        off = 0
        for key, (shape, dtype) in self.fn.local.items():
            dt = T.np_dtype(dtype)
            size = int(np.prod(shape))
            self.local[key] = ArrayHandle(key, "local", tuple(shape), dt,
                                          poisoned((chunk.n_lanes, size), dt, self.poison), base_addr=off)
            self.local[key].lane_base = np.arange(chunk.n_lanes, dtype=np.int64) * size
            off += size * dt.itemsize
        self.exited = np.zeros(chunk.n_lanes, dtype=bool)
        self.skipped = np.zeros(chunk.n_lanes, dtype=bool)   # live, did not reach a barrier
        self.skipped_any, self.skipped_loc = False, {}         # block -> that barrier's loc
        self._addr_cache = {}
        self.loops = []
        self.frames = [_Frame(self.exited, None)]
        self.empty = Mask(np.zeros(chunk.n_lanes, dtype=bool), chunk, full=False, n_threads=0, n_warps=0)
        for o in self.observers:
            o.chunk_begin(chunk)
        with np.errstate(all="ignore"):
            self.run_stmts(self.fn.body, Mask.all_valid(chunk))
        for o in self.observers:
            o.chunk_end(chunk)

    # -- errors -----------------------------------------------------------------
    def fault(self, msg, loc, lane):
        c = self.chunk
        raise KernelError(msg, loc=loc, kernel=self.kernel_name, block=c.block_of(lane),
                          thread=c.thread_of(lane))

    # -- values -------------------------------------------------------------------
    def value(self, v):
        if isinstance(v, Const):
            c = self._consts.get(id(v))
            if c is None:
                c = conv(v.value, v.ty if v.ty is not None else T.typeof_value(v.value))
                self._consts[id(v)] = c
            return c
        try:
            return self.env[v]
        except KeyError:
            raise KernelError(f"variable {v.split('.')[-1]!r} is read before any value was assigned "
                              "to it on this path", kernel=self.kernel_name) from None

    def setvar(self, name, val, m):
        t = self.types.get(name)
        if isinstance(t, T.ArrayType) or isinstance(val, ArrayHandle):
            self.env[name] = val
            return
        if t is not None:
            val = conv(val, t)
        if m.full or name not in self.env:
            self.env[name] = val
        else:
            self.env[name] = np.where(m.arr, val, self.env[name])

    # -- control flow ---------------------------------------------------------------
    def run_stmts(self, stmts, m):
        for st in stmts:
            if not m.any():
                return m
            k = type(st)
            if k is Instr:
                self.instr(st, m)
            elif k is If:
                m = self.exec_if(st, m)
            elif k is Loop:
                m = self.exec_loop(st, m)
            elif k is Break:
                self._branch(st, m, None, "break")
                self.loops[-1].broken |= m.arr
                return self.empty
            elif k is Continue:
                self._branch(st, m, None, "continue")
                self.loops[-1].continued |= m.arr
                return self.empty
            elif k is Return:
                self._branch(st, m, None, "return")
                f = self.frames[-1]
                if st.value is not None and f.ret is not None:
                    self.setvar(f.ret, self.value(st.value), m)
                f.returned |= m.arr
                if st.exit:
                    self.exited |= m.arr
                return self.empty
            elif k is Call:
                m = self.exec_call(st, m)
        return m

    def exec_call(self, st, m):
        """An inlined device function; lanes that left the thread inside it (a failed assert)
        do not come back."""
        self.frames.append(_Frame(np.zeros(self.chunk.n_lanes, dtype=bool), st.ret))
        self.run_stmts(st.body, m)
        self.frames.pop()
        left = self.exited & m.arr
        return m.minus(left) if left.any() else m

    def _branch(self, node, m, taken, kind):
        if self.branch_observers:
            ev = BranchEvent(node, m, taken, kind, state=self)
            for o in self.branch_observers:
                o.branch(ev)

    def exec_if(self, st, m):
        c = self.value(st.cond)
        if not isinstance(c, np.ndarray):            # uniform condition: one side only
            self._branch(st, m, m if c else self.empty, "if")
            return self.run_stmts(st.then if c else st.orelse, m)
        mt = m.sub(c)
        me = m.minus(c)
        self._branch(st, m, mt, "if")
        self.stack.append(("if", st, m))
        out_t = self.run_stmts(st.then, mt) if mt.any() else mt
        out_e = self.run_stmts(st.orelse, me) if me.any() else me
        self.stack.pop()
        if out_t is mt and out_e is me:
            return m
        return Mask(out_t.arr | out_e.arr, self.chunk)

    def _iterate(self, st, m, lc, cur):
        """Bookkeeping after one body execution: lanes that go on iterating."""
        if lc.continued.any():
            nxt = Mask(cur.arr | lc.continued, self.chunk)
            lc.continued[:] = False
            return nxt
        return cur

    def exec_loop(self, st, m):
        lc = _LoopCtx(self.chunk.n_lanes)
        self.loops.append(lc)
        self.stack.append(("loop", st, m))
        try:
            if st.range_var is not None:
                return self._range_loop(st, m, lc)
            return self._while_loop(st, m, lc)
        finally:
            self.loops.pop()
            self.stack.pop()

    def _check_budget(self, n, st, m):
        """At a loop's back edge: the deprecated per-loop cap, then the launch's budget."""
        if self.max_loop_iterations is not None and n > self.max_loop_iterations:
            self.fault(f"loop ran more than {self.max_loop_iterations} iterations "
                       "(max_loop_iterations, deprecated: use budget=simgpu.Budget(...))", st.loc,
                       m.first_lane())
        if self.watch is not None:
            self.watch.tick(st.loc, n, lambda: self._where(m))

    def _where(self, m):
        lane, c = m.first_lane(), self.chunk
        return (c.block_of(lane), c.thread_of(lane)) if lane is not None else (None, None)

    def _range_loop(self, st, m, lc):
        lt = self.types[st.range_var]
        start, stop, step = (conv(self.value(a), lt) for a in st.range_args)
        if not any(isinstance(v, np.ndarray) for v in (start, stop, step)):
            if step == 0:
                self.fault("range() step is zero", st.loc, m.first_lane())
            cur = m
            n = 0
            for i in range(int(start), int(stop), int(step)):
                self._branch(st, cur, None, "loop")
                self.setvar(st.range_var, conv(i, lt), cur)
                out = self.run_stmts(st.body, cur)
                out = self._iterate(st, m, lc, out)
                if out is not cur:
                    cur = out
                    if not cur.any():
                        break
                n += 1
                self._check_budget(n, st, cur)
            if cur is m and not lc.broken.any():
                return m
            return Mask(cur.arr | lc.broken, self.chunk)
        # per-lane bounds
        i = np.broadcast_to(start, (self.chunk.n_lanes,)).copy()
        stop_a, step_a = stop, step
        if np.any(np.asarray(step_a) == 0):
            self.fault("range() step is zero", st.loc, m.first_lane())
        cur = m
        done = np.zeros(self.chunk.n_lanes, dtype=bool)
        n = 0
        while True:
            cond = np.where(step_a > 0, i < stop_a, i > stop_a) if isinstance(step_a, np.ndarray) or step_a < 0 \
                else i < stop_a
            self._branch(st, cur, None, "loop")
            done |= cur.arr & ~cond
            active = cur.sub(cond)
            if not active.any():
                break
            self.setvar(st.range_var, i, active)
            out = self.run_stmts(st.body, active)
            cur = self._iterate(st, m, lc, out)
            i = (i + step_a).astype(i.dtype)
            n += 1
            self._check_budget(n, st, cur)
        return Mask(done | lc.broken, self.chunk)

    def _while_loop(self, st, m, lc):
        cur = m
        done = np.zeros(self.chunk.n_lanes, dtype=bool)
        n = 0
        progress = IRLoopProgress(st)       # a loop whose deciding state repeats: stopped
        while True:
            self.run_stmts(st.cond_body, cur)
            self._branch(st, cur, None, "loop")
            if st.cond is None:
                active = cur
            else:
                c = self.value(st.cond)
                if isinstance(c, np.ndarray):
                    done |= cur.arr & ~c
                    active = cur.sub(c)
                elif c:
                    active = cur
                else:
                    done |= cur.arr
                    break
            if not active.any():
                break
            out = self.run_stmts(st.body, active)
            cur = self._iterate(st, m, lc, out)
            if not cur.any():
                break
            n += 1
            progress.after(n, self, cur)
            self._check_budget(n, st, cur)
        return Mask(done | lc.broken, self.chunk)

    # -- instructions -------------------------------------------------------------------
    def instr(self, ins, m):
        h = HANDLERS.get(ins.op)
        if h is not None:
            r = h(self, ins, m)
        else:
            vals = [conv(self.value(a), t) for a, t in zip(ins.args, ins.arg_tys)] if ins.arg_tys \
                else [self.value(a) for a in ins.args]
            attrs = ins.attrs
            if "fma_mul" in attrs:
                r = self.fused(ins, vals, attrs["fma_mul"])
            else:
                r = evaluate(ins, vals)
                if "fma_operands" in attrs:             # kept for the add it is fused into
                    self.setvar(ins.dst + "#a", vals[0], m)
                    self.setvar(ins.dst + "#b", vals[1], m)
        if ins.dst is not None and r is not None:
            self.setvar(ins.dst, r, m)
        if self.inst_observers:
            ev = InstrEvent(ins, self.chunk, _mask=m, state=self)
            for o in self.inst_observers:
                o.inst(ev)
        if self.after:
            recs, self.after = self.after, []
            for hook, observers, rec in recs:
                for o in observers:
                    getattr(o, hook)(rec)

    def fused(self, ins, vals, k):
        """An add/sub NVVM contracts with the multiply producing operand k (ir/passes.py
        contract): a*b+c, a*b-c, c-a*b with one rounding (fma.rn), as the GPU computes them."""
        k, name = k
        t = T.FLOAT32 if "fma_float32" in ins.attrs else ins.arg_tys[k]   # ir/passes.py _narrowed
        a, b = conv(self.env[name + "#a"], t), conv(self.env[name + "#b"], t)
        c = conv(vals[1 - k], t)
        if ins.op == "sub":
            if k == 0:
                c = -c
            else:
                a = -a
        r = fused_mul_add(a, b, c)
        return r[()] if isinstance(r, np.ndarray) and r.ndim == 0 else r

    # memory ------------------------------------------------------------------------------
    def array(self, v):
        a = self.value(v)
        if isinstance(a, ArrayHandle):
            return a
        raise KernelError(f"{v!r} is not an array", kernel=self.kernel_name)

    def flat_index(self, arr, idx, m, ins):
        """(flat element index per lane, index into arr.data per lane), bounds-checked over the
        active lanes with numba's wraparound for negative indices.

        The part of the index that comes from per-lane arrays is cached per instruction while
        those arrays are unchanged (e.g. `sA[ty, k]` in a `for k` loop recomputes only `+ k`)."""
        arrays = tuple(v for v in idx if isinstance(v, np.ndarray))
        if arrays and self._check_arrays_cached(arr, idx, arrays, m, ins):
            idx = [np.where(v < 0, v.astype(np.int64) + n, v) if isinstance(v, np.ndarray) else v
                   for v, n in zip(idx, arr.shape)]
            arrays = tuple(v for v in idx if isinstance(v, np.ndarray))
            self._addr_cache.pop((ins.id, arr.name), None)
        key = (ins.id, arr.name)
        hit = self._addr_cache.get(key)
        if hit is not None and len(hit[0]) == len(arrays) and all(a is b for a, b in zip(hit[0], arrays)) \
                and (hit[3] or m.full is False):
            _, pf, pl, checked_full = hit
        else:
            pf = None
            for v, s in zip(idx, arr.elem_strides):
                if isinstance(v, np.ndarray):
                    term = v.astype(np.int64) * s if s != 1 else v.astype(np.int64)
                    pf = term if pf is None else pf + term
            if pf is None:
                pf = np.int64(0)
            pl = pf + arr.lane_base if arr.space in ("shared", "local") else pf
            self._addr_cache[key] = (arrays, pf, pl, m.full)
        sc = 0
        for k, (v, n, s) in enumerate(zip(idx, arr.shape, arr.elem_strides)):
            if not isinstance(v, np.ndarray):
                v = int(v)
                if v < 0:
                    v += n
                if not 0 <= v < n:
                    self._oob(arr, idx, m.first_lane(), ins)
                sc += v * s
        if sc:
            return pf + sc, pl + sc
        return pf, pl

    def _check_arrays_cached(self, arr, idx, arrays, m, ins):
        hit = self._addr_cache.get((ins.id, arr.name))
        if hit is not None and hit[3] and len(hit[0]) == len(arrays) and \
                all(a is b for a, b in zip(hit[0], arrays)):
            return False                  # these very arrays were checked for every lane
        return self._check_arrays(arr, idx, m, ins)

    def _check_arrays(self, arr, idx, m, ins):
        """Bounds-check the per-lane index arrays; True when some need numba's wraparound."""
        wrapped = False
        for v, n in zip(idx, arr.shape):
            if isinstance(v, np.ndarray):
                act = v if m.full else v[m.arr]
                if act.size and (act.min() < 0 or act.max() >= n):
                    vv = v.astype(np.int64)
                    vv = np.where(vv < 0, vv + n, vv)           # numba wraps negative indices
                    bad = ((vv >= n) | (vv < 0)) & m.arr
                    if bad.any():
                        self._oob(arr, idx, int(np.argmax(bad)), ins)
                    wrapped = True
        return wrapped

    def _oob(self, arr, idx, lane, ins):
        shown = tuple(int(v[lane]) if isinstance(v, np.ndarray) else int(v) for v in idx)
        shown = shown[0] if len(shown) == 1 else shown
        self.fault(f"index {shown} is out of bounds for {arr.space} array {arr.name!r} "
                   f"(shape {arr.shape})", ins.loc, lane)

    def emit_mem(self, ins, arr, flat, m, kind):
        if not self.mem_observers:
            return
        if arr.space == "local":
            addr = arr.base_addr + np.broadcast_to(np.asarray(flat, dtype=np.int64) * arr.itemsize,
                                                  (self.chunk.n_lanes,))
        else:
            addr = np.broadcast_to(arr.base_addr + np.asarray(flat, dtype=np.int64) * arr.itemsize,
                                   (self.chunk.n_lanes,))
        self.after.append(("mem", self.mem_observers,
                           MemEvent(ins, arr.space, kind, addr, m, arr.itemsize, arr, self.chunk)))

    def do_ld(self, ins, m):
        arr = self.array(ins.args[0])
        idx = [self.value(a) for a in ins.args[1:]]
        flat, li = self.flat_index(arr, idx, m, ins)
        self.emit_mem(ins, arr, flat, m, "ld")
        data = arr.data.reshape(-1)
        if isinstance(li, np.ndarray):
            return np.take(data, li, mode="clip")      # inactive lanes may hold any index
        return data[li]

    def do_st(self, ins, m):
        arr = self.array(ins.args[0])
        val = conv(self.value(ins.args[1]), T.from_numpy(arr.dtype))
        idx = [self.value(a) for a in ins.args[2:]]
        flat, li = self.flat_index(arr, idx, m, ins)
        self.emit_mem(ins, arr, flat, m, "st")
        li = np.broadcast_to(li, (self.chunk.n_lanes,))
        data = arr.data.reshape(-1)
        if m.full and self.chunk.all_valid:
            data[li] = val
        else:
            data[li[m.arr]] = val[m.arr] if isinstance(val, np.ndarray) else val
        return None

    def do_atomic(self, ins, m):
        arr = self.array(ins.args[0])
        nidx = ins.attrs["nidx"]
        fn = ins.attrs["fn"]
        vals = [self.value(a) for a in ins.args[1:len(ins.args) - nidx]]
        idx = [self.value(a) for a in ins.args[len(ins.args) - nidx:]]
        flat, li = self.flat_index(arr, idx, m, ins)
        self.emit_mem(ins, arr, flat, m, "atom")
        n = self.chunk.n_lanes
        li = np.broadcast_to(li, (n,))[m.arr]
        dt = T.from_numpy(arr.dtype)
        vals = [np.broadcast_to(conv(v, dt), (n,))[m.arr] for v in vals]
        data = arr.data.reshape(-1)
        if fn == "cas":
            old = atomics.apply(data, li, vals[1], "cas", cmp=vals[0])
        else:
            old = atomics.apply(data, li, vals[0], fn)
        out = np.zeros(n, dtype=arr.dtype)
        out[m.arr] = old
        return out

    def do_alloc(self, ins, m):
        key = ins.attrs["key"]
        return self.shared[key] if ins.op == "shared_array" else self.local[key]

    def do_const(self, ins, m):
        return self.env[ins.attrs["key"]]

    # sync -----------------------------------------------------------------------------
    def do_syncthreads(self, ins, m):
        c = self.chunk
        if not (m.full and not self.skipped_any and not self.exited.any()):
            self._barrier_arrivals(ins, m)
        if self.barrier_observers:
            self.after.append(("barrier", self.barrier_observers, BarrierEvent(ins, m, "block")))
        red = ins.attrs.get("reduce")
        if red is None:
            return None
        p = conv(self.value(ins.args[0]), T.BOOL)
        p = np.broadcast_to(p, (c.n_lanes,)) & m.arr
        cnt = np.bincount(c.lane_block[p], minlength=c.n_blocks)
        nact = np.bincount(c.lane_block[m.arr], minlength=c.n_blocks)
        if red == "count":
            r = cnt
        elif red == "and":
            r = (cnt == nact)
        else:
            r = cnt > 0
        return r.astype(np.int32)[c.lane_block]

    def _barrier_arrivals(self, ins, m):
        """A barrier waits for the block's threads that have not exited (Volta and later):
        threads of the block that do not arrive (they fell off the end of an `if`, or left a
        loop) must exit before they reach any barrier.  One that reaches another barrier
        instead is a barrier in divergent code: a KernelError naming both barriers, or a
        finding for an observer with ``barrier_divergence`` (the sanitizer's synccheck)."""
        c = self.chunk
        late = self.skipped & m.arr if self.skipped_any else None
        if late is not None and late.any():
            lane = int(np.argmax(late))
            b = int(c.lane_block[lane])
            other = self.skipped_loc.get(b)
            if not any([o.barrier_divergence(ins, lane, other) for o in self.sync_observers]):
                self.fault(f"cuda.syncthreads() reached by a thread that skipped the barrier at {other}, "
                           "where other threads of its block wait (a barrier inside divergent code; "
                           "threads that skip a barrier must exit the kernel without reaching another)",
                           ins.loc, lane)
            blocks = np.zeros(c.n_blocks, dtype=bool)
            blocks[c.lane_block[late]] = True
            self.skipped &= ~blocks[c.lane_block]            # reported once: start afresh
            for k in np.flatnonzero(blocks):
                self.skipped_loc.pop(int(k), None)
            return
        live = c.valid & ~self.exited
        at = np.zeros(c.n_blocks, dtype=bool)
        at[c.lane_block[m.arr]] = True
        missing = live & ~m.arr & at[c.lane_block]
        if self.skipped_any:
            missing &= ~self.skipped
        if missing.any():
            self.skipped |= missing
            self.skipped_any = True
            where = f"{ins.loc.file}:{ins.loc.line}" if ins.loc is not None else "?"
            for k in np.unique(c.lane_block[missing]):
                self.skipped_loc.setdefault(int(k), where)

    def do_nop(self, ins, m):
        return None

    # warp-level ------------------------------------------------------------------------
    def _warp_view(self, v, dtype=None):
        v = np.broadcast_to(v, (self.chunk.n_lanes,))
        return v.reshape(-1, WARP)

    def do_shfl(self, ins, m):
        val = conv(self.value(ins.args[1]), ins.arg_tys[1])
        src = np.broadcast_to(np.asarray(self.value(ins.args[2]), dtype=np.int64), (self.chunk.n_lanes,))
        lane = np.arange(self.chunk.n_lanes, dtype=np.int64) % WARP
        mode = ins.attrs["mode"]
        src = src & (WARP - 1)          # the hardware reads the low 5 bits of the lane/delta
        if mode == "idx":
            s = src
        elif mode == "up":
            s = lane - src
            s = np.where(s < 0, lane, s)
        elif mode == "down":
            s = lane + src
            s = np.where(s >= WARP, lane, s)
        else:
            s = lane ^ src
        V = self._warp_view(val)
        out = np.take_along_axis(V, s.reshape(-1, WARP), axis=1).reshape(-1)
        return out

    def _lane_bits(self, bits_bool):
        w = np.left_shift(np.uint64(1), np.arange(WARP, dtype=np.uint64))
        return (bits_bool.reshape(-1, WARP).astype(np.uint64) * w).sum(axis=1)

    def do_vote(self, ins, m):
        member = np.uint64(int(conv(self.value(ins.args[0]), T.UINT32)) if not isinstance(self.value(ins.args[0]), np.ndarray) else 0xFFFFFFFF)
        pred = np.broadcast_to(conv(self.value(ins.args[1]), T.BOOL), (self.chunk.n_lanes,))
        lane = np.arange(WARP, dtype=np.uint64)
        in_mask = ((member >> lane) & np.uint64(1)).astype(bool)
        part = m.arr.reshape(-1, WARP) & in_mask[None, :]
        P = pred.reshape(-1, WARP)
        mode = ins.attrs["mode"]
        if mode == "ballot":
            bits = self._lane_bits((P & part).reshape(-1))
            r = bits.astype(np.uint32).view(np.int32)
        elif mode == "all":
            r = ~np.any(part & ~P, axis=1)
        elif mode == "any":
            r = np.any(part & P, axis=1)
        else:
            r = ~np.any(part & P, axis=1) | ~np.any(part & ~P, axis=1)
        return np.repeat(r, WARP)

    def do_activemask(self, ins, m):
        bits = self._lane_bits(m.arr).astype(np.uint32)
        return np.repeat(bits, WARP)

    def do_lanemask_lt(self, ins, m):
        lane = np.arange(self.chunk.n_lanes, dtype=np.uint64) % WARP
        return ((np.uint64(1) << lane) - np.uint64(1)).astype(np.uint32)

    def do_syncwarp(self, ins, m):
        if self.barrier_observers:
            self.after.append(("barrier", self.barrier_observers, BarrierEvent(ins, m, "warp")))
        return None

    # indices -----------------------------------------------------------------------------
    def do_sreg(self, ins, m):
        return self.chunk.sreg(ins.attrs["name"])

    def do_grid(self, ins, m):
        c = "xyz"[ins.attrs["dim"]]
        ctaid = self.chunk.sreg(f"ctaid.{c}").astype(np.int64)
        return ctaid * np.int64(self.chunk.sreg(f"ntid.{c}")) + self.chunk.sreg(f"tid.{c}")

    def do_gridsize(self, ins, m):
        c = "xyz"[ins.attrs["dim"]]
        return np.int64(self.chunk.sreg(f"ntid.{c}")) * np.int64(self.chunk.sreg(f"nctaid.{c}"))

    def do_dim(self, ins, m):
        arr = self.array(ins.args[0])
        k = int(ins.args[1].value)
        if not 0 <= k < len(arr.shape):
            raise KernelError(f"{ins.loc}: shape[{k}] of a {len(arr.shape)}-d array", kernel=self.kernel_name)
        return np.int64(arr.shape[k])

    def do_size(self, ins, m):
        return np.int64(self.array(ins.args[0]).size)

    def do_ndim(self, ins, m):
        return np.int64(len(self.array(ins.args[0]).shape))

    def do_copy(self, ins, m):
        return self.value(ins.args[0])


HANDLERS = {
    "ld": Interpreter.do_ld, "st": Interpreter.do_st, "atomic": Interpreter.do_atomic,
    "shared_array": Interpreter.do_alloc, "local_array": Interpreter.do_alloc,
    "const_array": Interpreter.do_const, "syncthreads": Interpreter.do_syncthreads,
    "syncwarp": Interpreter.do_syncwarp, "fence": Interpreter.do_nop, "shfl": Interpreter.do_shfl,
    "vote": Interpreter.do_vote, "activemask": Interpreter.do_activemask,
    "lanemask_lt": Interpreter.do_lanemask_lt, "sreg": Interpreter.do_sreg, "grid": Interpreter.do_grid,
    "gridsize": Interpreter.do_gridsize, "dim": Interpreter.do_dim, "size": Interpreter.do_size,
    "ndim": Interpreter.do_ndim, "copy": Interpreter.do_copy,
}
