"""Runaway loops: a launch's budget, and loops that make no progress.

Two guards, on both execution paths (the IR interpreter here, the compiled path in
runtime/ptx_path.py):

* **No progress.**  A loop whose *deciding state* is the same after an iteration as before it
  runs forever, and is stopped at once.  The deciding state is every value that the loop's
  control flow depends on (its condition, every branch inside it) closed over the values they
  are computed from inside the loop.  Values defined before the loop do not change in it.  If
  that state reads memory, it is only trusted when the loop writes no memory; otherwise the
  whole state the loop defines (and the block's shared and the thread's local memory) must
  repeat: then every store repeats the previous iteration's, so memory repeats too.  Checked at
  iterations 1, 2, 3, 5, 9, 17, ... (after a snapshot at each power of two), so a loop stuck
  from the start is stopped at its second iteration and the check costs O(log n) copies.
  A state that *cycles* (``x = 1 - x``: period 2, up to CYCLE_MAX) repeats too, only later:
  from the snapshot at iteration CYCLE_FROM on, the state is compared with the last snapshot
  for CYCLE_MAX iterations after it (17..24, 33..40, ...), so a cycle of up to 8 states is
  stopped by iteration 24 plus the iterations before it began (at most twice those), and a
  correct loop pays 8 more comparisons per power of two.  The state determines what follows
  it (values from before the loop do not change in it), so one repeat means forever.  A full
  state (memory read and written) is compared one iteration after the snapshot only: a
  cycle's stores need not repeat the previous period's.
  Launches run blocks in lock-step here, so a spin-wait on a value another thread would
  write later is, in this simulator, a loop without progress too: the message says so.
* **Budget.**  A per-launch wall-clock and instruction budget (``simgpu.Budget``), shown in
  the error and raised with ``simgpu.launch(..., budget=simgpu.Budget(seconds=..,
  instructions=..))``.  Loops that change their state forever (``i += 2`` past ``n``) end here.
  After ``NOTICE_S`` seconds a launch says on stderr that it is still running, and where.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass

import numpy as np

from ..errors import KernelError
from ..frontend.loops import loop_at
from ..ir.nodes import Break, Call, Continue, If, Instr, Loop, Return, own_returns
from .state import ArrayHandle, Observer

NOTICE_S = 30.0
CYCLE_MAX = 8           # the longest cycle of deciding states detected
CYCLE_FROM = 16         # from the snapshot at this iteration on (shorter loops: period 1 only)


def progress_check(n, snap_n, full):
    """(compare, snapshot) after iteration n of a loop whose last snapshot was taken after
    iteration snap_n (-1: none): compare the deciding state with that snapshot when n is
    within its window (1 iteration; CYCLE_MAX from CYCLE_FROM on, unless the state is full);
    take a snapshot at every power of two.  Shared by both paths."""
    d = n - snap_n
    window = 1 if (full or snap_n < CYCLE_FROM) else CYCLE_MAX
    return snap_n > 0 and 1 <= d <= window, n & (n - 1) == 0


@dataclass(frozen=True)
class Budget:
    """What one launch may spend before simgpu stops it as a runaway.

    seconds: wall-clock seconds of simulation (None: no limit).
    instructions: warp-level instructions executed (one instruction by one warp; the compiled
        path counts PTX instructions, the IR path IR operations; None: no limit)."""
    seconds: float | None = 3600.0
    instructions: int | None = 10 ** 11

    def __post_init__(self):
        for name in ("seconds", "instructions"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, (int, float)) or v <= 0):
                raise ValueError(f"Budget({name}={v!r}): a positive number, or None for no limit")

    def __str__(self):
        s = "no time limit" if self.seconds is None else f"{self.seconds:g} s"
        i = "no instruction limit" if self.instructions is None else f"{self.instructions:,} warp instructions"
        return f"{s}, {i}"


DEFAULT_BUDGET = Budget()
UNLIMITED = Budget(None, None)


def as_budget(budget):
    """launch(budget=...): a Budget, None (the default budget), False (no limit), a number
    (seconds) or a dict of Budget's fields."""
    if budget is None:
        return DEFAULT_BUDGET
    if budget is False:
        return UNLIMITED
    if isinstance(budget, Budget):
        return budget
    if isinstance(budget, dict):
        return Budget(**budget)
    if isinstance(budget, (int, float)) and not isinstance(budget, bool):
        return Budget(seconds=budget)
    raise ValueError(f"budget={budget!r}: use simgpu.Budget(seconds=..., instructions=...)")


class RunawayLoopError(KernelError):
    """A loop whose deciding state repeats: it would never end."""


class BudgetExceededError(KernelError):
    """The launch spent its wall-clock or instruction budget."""


def _src(loc):
    """(file, line) of a Loc, a 'file:line' string or None."""
    if loc is None:
        return None, 0
    if isinstance(loc, str):
        f, _, ln = loc.rpartition(":")
        return (f, int(ln)) if ln.isdigit() else (loc, 0)
    return loc.file, loc.line


def loop_words(loc):
    """'the loop at f.py:12 (`while step < n:`)' and its LoopSource (or None)."""
    f, ln = _src(loc)
    ls = loop_at(f, ln)
    if ls is None:
        return (f"the loop at {f}:{ln}" if f else "a loop"), None
    return f"the loop at {ls.file}:{ls.line} (`{ls.header}`)", ls


class LaunchWatch(Observer):
    """One launch's budget: wall clock and instructions, checked at every loop iteration.
    On the IR path it is an observer that counts the warps of each executed instruction; the
    compiled path's loop watch (PtxLoopWatch, below) adds its counts to ``instructions`` itself."""

    def __init__(self, budget, kernel, stream=None):
        self.budget = as_budget(budget)
        self.kernel = kernel
        self.t0 = time.monotonic()
        self.instructions = 0
        self.next_notice = self.t0 + min(NOTICE_S, self.budget.seconds or NOTICE_S)
        self.stream = stream

    def inst(self, ev):
        self.instructions += ev.mask.n_warps

    def tick(self, loc, iterations, where=None):
        """At a loop's back edge: stop the launch if it spent its budget."""
        b = self.budget
        if b.instructions is not None and self.instructions > b.instructions:
            self.exceeded(f"{self.instructions:,} warp instructions (its budget: {b.instructions:,})",
                          loc, iterations, where)
        now = time.monotonic()
        if now >= self.next_notice:
            if b.seconds is not None and now - self.t0 > b.seconds:
                self.exceeded(f"{now - self.t0:.0f} s (its budget: {b.seconds:g} s)", loc, iterations, where)
            self.notice(now, loc, iterations)
            self.next_notice = now + (NOTICE_S if b.seconds is None else min(NOTICE_S, max(
                0.5, self.t0 + b.seconds - now)))

    def notice(self, now, loc, iterations):
        words, _ = loop_words(loc)
        (self.stream or sys.stderr).write(
            f"simgpu: kernel {self.kernel!r} still running after {now - self.t0:.0f} s: {words} has run "
            f"{iterations:,} iterations ({self.instructions:,} warp instructions so far; budget "
            f"{self.budget}; Ctrl-C stops it)\n")

    def exceeded(self, spent, loc, iterations, where):
        words, _ = loop_words(loc)
        where = where() if where is not None else (None, None)
        raise BudgetExceededError(
            f"stopped: the launch ran {spent}, last in {words} after {iterations:,} iterations of it. "
            "If the loop is meant to run this long, raise the launch's budget: "
            "simgpu.launch(..., budget=simgpu.Budget(seconds=..., instructions=...)) (budget=False: "
            "no limit); if not, check that the loop's condition can become false",
            loc=f"{_src(loc)[0]}:{_src(loc)[1]}" if _src(loc)[0] else None, kernel=self.kernel,
            block=where[0], thread=where[1])


def no_progress_message(loc, names, values=None, memory=False, period=1):
    """The words of a RunawayLoopError: the loop, the variables that did not change (or,
    period > 1, that cycle through `period` states)."""
    words, ls = loop_words(loc)
    if ls is not None and ls.cond_names:
        shown = list(ls.cond_names)
    else:
        shown = list(names)
    if values:
        shown = [f"{n} = {values[n]}" if n in values else n for n in shown]
    var = ", ".join(shown) if shown else "its variables"
    if period > 1:
        msg = (f"{words} makes no progress: the values that decide whether it goes on ({var}) go "
               f"round in a cycle: every {period} iterations they are back where they were, so it would "
               "run forever. Stopped")
        changing = [n for n in (ls.cond_names if ls is not None else ()) if n in ls.assigned]
        if changing:
            msg += (f"; the loop changes {', '.join(changing)}, but back to earlier values (as `x = 1 - x` "
                    "flips between two): check that its update moves towards the end")
    else:
        msg = (f"{words} makes no progress: after an iteration, the values that decide whether it goes on "
               f"({var}) are the same as before it, so it would run forever. Stopped at once")
    if period == 1 and ls is not None and ls.kind == "while":
        cand = [n for n in ls.cond_names if n not in ls.assigned and n in ls.local_names]
        if cand:
            msg += (f"; the loop never assigns {', '.join(cand)}: did you forget to update "
                    f"{'it' if len(cand) == 1 else 'one of them'} (e.g. `{cand[0]} += 1` or "
                    f"`{cand[0]} *= 2`) in the loop body?")
    if memory:
        msg += ("; it waits on memory that nothing changes while it runs (simgpu runs a block's "
                "threads in lock-step: a spin-wait on another thread or block never ends here)")
    return msg


# -- the IR path ------------------------------------------------------------------------------
def _names_in(v, out):
    if isinstance(v, str):
        out.add(v)
    elif isinstance(v, (tuple, list)):
        for x in v:
            _names_in(x, out)


class IRLoopFacts:
    """What the no-progress check needs of one IR Loop: the names it defines, its deciding
    state, and whether that state reads memory / the loop writes memory."""

    def __init__(self, loop):
        defs, instrs, conds = set(), [], set()
        _names_in(loop.cond, conds)
        self._walk(loop.cond_body + loop.body, defs, instrs, conds)
        self.defined = defs
        deps = {}                                   # name -> names its definitions read
        self.reads_memory_defs = set()
        self.writes_memory = False
        for ins, extra in instrs:
            if ins.op in ("st", "atomic"):
                self.writes_memory = True
            if ins.dst is not None:
                d = deps.setdefault(ins.dst, set())
                _names_in(ins.args, d)
                d |= extra
                if ins.op in ("ld", "atomic"):
                    self.reads_memory_defs.add(ins.dst)
        state, todo = set(), [n for n in conds]
        while todo:
            n = todo.pop()
            if n in state:
                continue
            state.add(n)
            todo.extend(deps.get(n, ()))
        self.state = sorted(n for n in state if n in defs)
        self.reads_memory = bool(state & self.reads_memory_defs)
        self.all_defined = sorted(defs)

    def _walk(self, stmts, defs, instrs, conds, ctrl=frozenset()):
        for s in stmts:
            if isinstance(s, Instr):
                if s.dst is not None:
                    defs.add(s.dst)
                instrs.append((s, ctrl))
            elif isinstance(s, If):
                c = set()
                _names_in(s.cond, c)
                conds |= c
                self._walk(s.then, defs, instrs, conds, ctrl | c)
                self._walk(s.orelse, defs, instrs, conds, ctrl | c)
            elif isinstance(s, Loop):
                c = set()
                _names_in(s.cond, c)
                _names_in(s.range_args, c)
                conds |= c
                if s.range_var is not None:
                    defs.add(s.range_var)
                    instrs.append((Instr("copy", s.range_var, tuple(s.range_args), s.loc), ctrl))
                self._walk(s.cond_body, defs, instrs, conds, ctrl)
                self._walk(s.body, defs, instrs, conds, ctrl | c)
            elif isinstance(s, Call):
                inner = []
                self._walk(s.body, defs, inner, conds, ctrl)
                instrs.extend(inner)
                if s.ret is not None:
                    defs.add(s.ret)
                    rets = set()
                    for st in own_returns(s.body):
                        _names_in(st.value, rets)
                    instrs.append((Instr("copy", s.ret, tuple(rets), s.loc), ctrl))
            elif isinstance(s, (Break, Continue, Return)):
                conds |= set(ctrl)
                if isinstance(s, Return):
                    _names_in(s.value, set())


def _snap(v):
    return v.copy() if isinstance(v, np.ndarray) else v


def _same(a, b):
    if a is None or b is None:
        return a is b
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


class IRLoopProgress:
    """The no-progress check of one execution of an IR while-loop (exec/interp.py)."""

    _facts = {}

    def __init__(self, loop):
        f = self._facts.get(loop.id)
        if f is None:
            f = self._facts[loop.id] = IRLoopFacts(loop)
        self.facts = f
        self.loc = loop.loc
        self.full = f.reads_memory and f.writes_memory
        self.names = f.all_defined if self.full else f.state
        self.snap = None

    def state(self, interp, mask):
        env = interp.env
        s = [mask.arr.copy()] + [_snap(env.get(n)) for n in self.names]
        if self.full:
            s += [_snap(h.data) for h in interp.shared.values()]
            s += [_snap(h.data) for h in interp.local.values()]
        return s

    def after(self, n, interp, mask):
        """After iteration n (1, 2, ...) of the loop, `mask` the lanes that go on: raise a
        RunawayLoopError if its deciding state equals the last snapshot's, taken one iteration
        ago; take snapshots at powers of two."""
        check, snap = progress_check(n, self.snap[0] if self.snap is not None else -1, self.full)
        if not (check or snap):
            return
        st = self.state(interp, mask)
        if check and all(_same(a, b) for a, b in zip(st, self.snap[1])):
            self.stuck(interp, mask, n - self.snap[0])
        if snap:
            self.snap = (n, st)

    def stuck(self, interp, mask, period=1):
        lane = mask.first_lane()
        users = [n for n in self.facts.state if not n.startswith("%")]
        _, ls = loop_words(self.loc)
        want = set(ls.cond_names if ls is not None else ()) | {n.split(".")[-1] for n in users}
        values = {}
        for n, v in interp.env.items():
            short = n.split(".")[-1] if isinstance(n, str) else None
            if short in want and short not in values and not isinstance(v, ArrayHandle):
                v = v[lane] if isinstance(v, np.ndarray) and v.ndim else v
                values[short] = v.item() if hasattr(v, "item") else v
        loc, c = self.loc, interp.chunk
        raise RunawayLoopError(no_progress_message(loc, [n.split(".")[-1] for n in users], values,
                                                   memory=self.facts.reads_memory, period=period),
                               loc=f"{loc.file}:{loc.line}", kernel=interp.kernel_name,
                               block=c.block_of(lane), thread=c.thread_of(lane))


# -- the compiled code's loops (the PTX executor's records) ------------------------------
def _same_reg(a, b):
    if a is None or b is None:
        return a is b
    if a.shape != b.shape:
        if a.ndim and b.ndim:
            return False
        a, b = np.broadcast_arrays(a, b)
    return a.dtype == b.dtype and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


class _LoopRun:
    __slots__ = ("loop", "n", "snap_n", "snap")

    def __init__(self, loop):
        self.loop, self.n, self.snap_n, self.snap = loop, 0, -1, None


class PtxLoopWatch(Observer):
    """Per chunk, an observer of every executed instruction's record: which loops the running lanes
    are in (a stack: loops nest as contiguous pc ranges), their visits of the loop head, the
    no-progress check at visits 2, 3, 5, 9, ... (cycles: 17..24, 33..40, ...; exec.budget.progress_check) and the launch's budget (exec.budget)."""

    # reads the executor's registers only at a loop head's record, which is the first of a
    # straight-line run (runs split at branch targets): ptx/blocks.py may send a run's records first
    inst_order_free = True

    def __init__(self, loops, watch):
        self.loops, self.watch = loops, watch     # loops: head pc -> PtxLoop (lazily built)
        self.stack = []

    def inst(self, ev):
        self.step(ev, ev.warps)

    def inst_tail(self, recs, pcs, lanes, warps):
        """Records of ``pcs`` (the rest of a straight-line run's segment, each run by ``lanes``
        filling ``warps`` warps) in one call: True when none of them is a loop head or leaves the
        loop under way (what ``step`` would do then is only counting); False: send them one by
        one."""
        st, loops = self.stack, self.loops
        for pc in pcs:
            if pc in loops.heads:
                return False
            if st:
                top = st[-1].loop
                if not (top.head <= pc <= top.end or loops.func_of[pc] != top.fn):
                    return False
        self.watch.instructions += warps * len(pcs)
        return True

    progress_window = (CYCLE_FROM, CYCLE_MAX)     # (a compiled loop makes the check itself)

    def inst_loop_ok(self, lines):
        return True

    def inst_loop_room(self):
        """Warp instructions a compiled loop may still run before the budget's (None: no limit)."""
        b = self.watch.budget.instructions
        return None if b is None else b - self.watch.instructions

    def inst_loop(self, r):
        """A compiled loop's records, summed (ptx/jitloop.LoopRecord): what ``step`` does for
        them, its no-progress checks made by the loop's call itself, the budget checked once."""
        w = self.watch
        w.instructions += sum(r.warps)
        if not r.pcs:
            return
        pc, st = r.pcs[0], self.stack
        while st:
            top = st[-1].loop
            if top.head <= pc <= top.end or self.loops.func_of[pc] != top.fn:
                break
            st.pop()
        if pc != r.head or pc not in self.loops.heads:
            return
        if not st or st[-1].loop.head != pc:
            st.append(_LoopRun(self.loops.get(pc)))
        run = st[-1]
        run.n += r.visits
        if run.n > 1:
            w.tick(run.loop.loc, run.n - 1, r.where)

    def step(self, ev, warps):
        w = self.watch
        w.instructions += warps
        pc, st = ev.pc, self.stack
        while st:
            top = st[-1].loop
            if top.head <= pc <= top.end or self.loops.func_of[pc] != top.fn:
                break
            st.pop()
        if pc not in self.loops.heads:
            return
        if not st or st[-1].loop.head != pc:
            st.append(_LoopRun(self.loops.get(pc)))
        run = st[-1]
        run.n += 1
        n = run.n
        if n > 1:
            w.tick(run.loop.loc, n - 1, lambda: _where(ev))
        check, snap = progress_check(n, run.snap_n, run.loop.full)     # exec/budget.py
        if check or snap:
            state = self.state(run.loop, ev)
            if check and len(state) == len(run.snap) and all(_same_reg(a, b) for a, b in zip(state, run.snap)):
                self.stuck(run.loop, ev, n - run.snap_n)
            if snap:
                run.snap_n, run.snap = n, state

    def state(self, loop, ev):
        ex = ev.state
        lanes = np.asarray(ev.lanes)
        s = [lanes.copy()]
        keys = sorted(ex.regs, key=str) if loop.full else loop.deciding
        for k in keys:
            a = ex.regs.get(k)
            s.append(None if a is None else np.array(a, copy=True))
        if loop.full:
            s.append(str(keys))
            pcs = ex.pc.copy()
            pcs[lanes] = ev.pc
            s += [pcs, ex.status.copy(), ex.depth.copy(), ex.shared.buf.copy(), ex.local.buf.copy()]
        return [x if isinstance(x, np.ndarray) or x is None else np.frombuffer(x.encode(), np.uint8)
                for x in s]

    def stuck(self, loop, ev, period=1):
        regs = [r for _, r in loop.deciding]
        names = f"registers {', '.join(regs[:8])}{' ...' if len(regs) > 8 else ''}" if regs else \
            "none of its registers change"
        msg = no_progress_message(loop.loc, [], memory=loop.reads_memory, period=period)
        blk, thr = _where(ev)
        _, ls = loop_words(loop.loc)
        raise RunawayLoopError(f"{msg} (compiled path: {names})",
                               loc=f"{ls.file}:{ls.line}" if ls is not None else loop.loc,
                               kernel=self.watch.kernel, block=blk, thread=thr)


def _where(ev):
    lanes = ev.lanes
    return ev.state.ch.where(int(lanes[0])) if len(lanes) else (None, None)
