"""The warp stepper: one warp of one block, one instruction at a time.

    st = simgpu.step(kernel, grid, block, args, block_idx=(0, 0, 0), warp=0)
    st.next_line(); print(st.state)          # line, active lanes, stack, values, memory

The whole launch runs once, with an observer that records what the chosen warp does (its
32 lanes only): each executed warp-instruction and branch decision, the active mask, the
reconvergence stack, the values written and the memory requests made.  Stepping forward
and back then replays that record, so going back is free and every state is exact (other
warps and blocks ran as the launch runs them, so barriers and shared memory are right).

A state describes the step *just executed*; at the start (`st.pos == 0`) it shows the
kernel's parameters and the line about to run.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np

from .errors import KernelError, SimGPUError
from .exec.state import WARP, ArrayHandle, Observer
from .ir.nodes import Call, If, Instr, Loop, walk
from .ir.opinfo import sass_count
from .ir.printer import _instr, _v

_BITS = np.left_shift(np.uint64(1), np.arange(WARP, dtype=np.uint64))


class StepError(SimGPUError, ValueError):
    """A request the stepper cannot honour: a block, warp, line or variable that is not there."""


def mask_int(a):
    """32 bools -> int with bit i set when lane i is active."""
    return int((np.asarray(a, dtype=np.uint64) * _BITS).sum())


def mask_bools(m):
    return [(m >> i) & 1 == 1 for i in range(WARP)]


# -- records ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class StackEntry:
    """One reconvergence-stack entry: lanes that entered an if/loop and rejoin after it."""
    kind: str                 # 'if' | 'loop'
    line: int                 # line of the if / loop statement
    mask: int                 # lanes that entered it (bit i = lane i) and rejoin after it
    rejoin_line: object       # first line run after it (None: the end of the kernel)

    def __str__(self):
        where = f"line {self.rejoin_line}" if self.rejoin_line is not None else "the end of the kernel"
        return (f"{self.kind:<4} at line {self.line:<4} mask {self.mask:#010x} "
                f"({bin(self.mask).count('1'):>2} lanes)  rejoin at {where}")


@dataclass
class MemAccess:
    """The memory request one warp-instruction made, seen from the chosen warp."""
    space: str                # global | shared | local | const
    kind: str                 # ld | st | atom
    array: str
    size: int                 # bytes per lane
    addresses: np.ndarray     # (32,) int64 byte address per lane; -1 for idle lanes
    n_lanes: int
    sectors: tuple = ()       # global/local/const: 32-byte sectors touched (sector numbers)
    ideal_sectors: int = 0    # sectors if the distinct bytes were perfectly packed
    lines: int = 0            # 128-byte lines touched
    banks: np.ndarray = None  # shared: bank per lane (-1 idle)
    wavefronts: int = 0       # shared: passes through the 32 banks
    conflicts: int = 0        # shared: wavefronts beyond the ideal

    @property
    def requests(self):
        return 1

    def __str__(self):
        head = f"{self.kind} {self.space} {self.array} ({self.size} B x {self.n_lanes} lanes)"
        act = self.addresses[self.addresses >= 0]
        if len(act):
            d = np.diff(act)
            stride = f", stride {int(d[0])} B" if len(d) and (d == d[0]).all() else ""
            head += f" addr {int(act[0]):#x}..{int(act[-1]):#x}{stride}"
        if self.space == "shared":
            return (f"{head}: 1 request, {self.wavefronts} wavefront(s), "
                    f"{self.conflicts} bank conflict(s)")
        return (f"{head}: 1 request, {len(self.sectors)} sector(s) of 32 B in {self.lines} line(s) "
                f"of 128 B (ideal {self.ideal_sectors})")


def _mem_access(ev, lo, name):
    m = np.asarray(ev.mask.arr[lo:lo + WARP])
    addr = np.where(m, np.asarray(ev.addr[lo:lo + WARP], dtype=np.int64), -1)
    a, size = addr[m], ev.size
    acc = MemAccess(ev.space, ev.kind, name, size, addr, int(m.sum()))
    if ev.space == "shared":
        words = np.unique(np.concatenate([a // 4 + k for k in range(max(1, size // 4))]))
        per_bank = np.bincount(words % 32, minlength=32)
        acc.banks = np.where(m, (addr // 4) % 32, -1)
        acc.wavefronts = int(per_bank.max()) if len(words) else 0
        acc.conflicts = acc.wavefronts - (-(-len(words) // 32))
        return acc
    if ev.space == "local":       # local memory is interleaved: word w of lane l sits at (w*32+l)*4
        lane = np.flatnonzero(m)
        a = (a // 4) * 4 * WARP + lane * 4 + a % 4
    sec = np.unique(np.concatenate([a // 32, (a + size - 1) // 32]))
    acc.sectors = tuple(int(s) for s in sec)
    acc.ideal_sectors = -(-len(np.unique(a)) * size // 32)
    acc.lines = len(np.unique(sec // 4))
    return acc


@dataclass
class Step:
    """One warp-instruction the chosen warp executed (an IR instruction or a branch)."""
    index: int
    kind: str                 # 'inst' | 'if' (branch decision) | 'loop' (loop test)
    file: str
    line: int
    mask: int                 # active lanes
    text: str                 # the instruction, as the IR printer writes it
    weight: int               # SASS instructions it stands for (as the Report counts)
    dst: object = None
    taken: object = None      # 'if': lanes that take the then-side
    memory: object = None
    stack: tuple = ()         # ((kind, node, mask), ...) outermost first


@dataclass
class WarpState:
    """What the warp looks like after `step` steps (0: before the first)."""
    step: int
    n_steps: int
    done: bool
    file: str
    line: int
    source: str
    instruction: object       # text of the executed instruction (None before the first)
    kind: object
    active_mask: int
    taken: object
    stack: list
    values: dict              # user variable -> (32,) array of its value in each lane
    arrays: dict              # shared arrays (block's contents), local arrays (32, n)
    memory: object            # MemAccess of this step or None
    simt_efficiency: float    # active lanes / 32, weighted over instructions executed so far
    inst_executed: int        # warp instructions executed so far (SASS estimate, as the Report)
    valid_mask: int           # lanes that hold a thread of the block
    error: object = None      # a kernel fault that ended the launch after this warp's record

    @property
    def n_active(self):
        return bin(self.active_mask).count("1")

    @property
    def lanes(self):
        return mask_bools(self.active_mask)

    def __str__(self):
        from .step_tui import format_state
        return format_state(self)


# -- recording -------------------------------------------------------------------------------
class _Recorder(Observer):
    """Executor observer that keeps what one warp of one block does."""

    def __init__(self, block_linear, warp):
        self.block, self.warp = block_linear, warp
        self.steps, self.history = [], {}          # history: name -> [(step, (32,) array)]
        self.arrays = {}                            # name -> [(step, array)]
        self.on = False
        self.pending = None
        self.dirty = None
        self.handle_names = {}

    def attach(self, interp):
        self.it = interp

    def chunk_begin(self, chunk):
        self.on = chunk.first_block <= self.block < chunk.first_block + chunk.n_blocks
        if not self.on:
            return
        self.local_block = self.block - chunk.first_block
        self.lo = self.local_block * chunk.lanes_per_block + self.warp * WARP
        self.valid = mask_int(chunk.valid[self.lo:self.lo + WARP])
        for name, v in self.it.env.items():
            if not isinstance(v, ArrayHandle) and "%" not in name:
                self._keep(name, v, -1)

    def chunk_end(self, chunk):
        self.on = False

    def _lanes(self, m):
        return m.arr[self.lo:self.lo + WARP]

    def _keep(self, name, v, idx):
        if isinstance(v, np.ndarray) and v.ndim == 1:
            v = v[self.lo:self.lo + WARP].copy()
        elif isinstance(v, ArrayHandle):
            return
        else:
            v = np.full(WARP, v)
        self.history.setdefault(name, []).append((idx, v))

    def _append(self, kind, node, m, text, weight, **kw):
        stack = tuple((k, n, mask_int(self._lanes(e))) for k, n, e in self.it.stack)
        s = Step(len(self.steps), kind, node.loc.file, node.loc.line, m, text, weight, stack=stack, **kw)
        self.steps.append(s)
        return s

    def mem(self, ev):
        if not self.on:
            return
        if self._lanes(ev.mask).any():
            self.pending = ev
        if ev.kind != "ld" and ev.space in ("shared", "local"):
            lanes = (self.it.chunk.lane_block == self.local_block) if ev.space == "shared" else None
            hit = ev.mask.arr[lanes].any() if lanes is not None else self._lanes(ev.mask).any()
            if hit:
                self.dirty = ev.array

    def inst(self, ins, m):
        if not self.on:
            return
        lanes = self._lanes(m)
        ran = lanes.any()
        if ran:
            ev, self.pending = self.pending, None
            mem = _mem_access(ev, self.lo, self._array_name(ev.array)) if ev is not None and ev.inst is ins else None
            s = self._append("inst", ins, mask_int(lanes), _instr(ins), sass_count(ins), dst=ins.dst, memory=mem)
            if ins.dst is not None and ins.dst in self.it.env:
                self._keep(ins.dst, self.it.env[ins.dst], s.index)
            self._keep_range_vars(s.index)
        if self.dirty is not None:
            self._snapshot(self.dirty, len(self.steps) - 1 if ran else len(self.steps))
            self.dirty = None

    def branch(self, node, m, taken, kind):
        if not self.on:
            return
        lanes = self._lanes(m)
        if not lanes.any():
            return
        if kind == "if":
            t = mask_int(self._lanes(taken)) if taken is not None else None
            self._append("if", node, mask_int(lanes), f"if {_v(node.cond)}  (branch)", 1, taken=t)
        else:
            cond = "range" if node.range_var else (_v(node.cond) if node.cond is not None else "True")
            self._append("loop", node, mask_int(lanes), f"loop test: {cond}  (branch)", 1)

    def _keep_range_vars(self, idx):
        for kind, node, _ in self.it.stack:
            rv = getattr(node, "range_var", None)
            if kind == "loop" and rv and rv in self.it.env:
                v = self.it.env[rv]
                v = v[self.lo:self.lo + WARP] if isinstance(v, np.ndarray) and v.ndim == 1 else np.full(WARP, v)
                h = self.history.get(rv)
                if not h or not np.array_equal(h[-1][1], v):
                    self.history.setdefault(rv, []).append((idx, v.copy()))

    def _array_name(self, handle):
        n = self.handle_names.get(id(handle))
        if n is None:
            names = [k for k, v in self.it.env.items() if v is handle and "%" not in k]
            n = names[0] if names else handle.name
            self.handle_names[id(handle)] = n
        return n

    def _snapshot(self, handle, idx):
        if handle.space == "shared":
            data = handle.data[self.local_block].reshape(handle.shape).copy()
        else:
            data = handle.data[self.lo:self.lo + WARP].reshape((WARP,) + tuple(handle.shape)).copy()
        self.arrays.setdefault(self._array_name(handle), []).append((idx, data))


# -- the stepper -----------------------------------------------------------------------------
def _rejoin_lines(fn):
    """node id -> the first line run after that if/loop (None: the kernel's end)."""
    parent = {}

    def visit(stmts, owner):
        for i, s in enumerate(stmts):
            parent[s.id if hasattr(s, "id") else id(s)] = (stmts, i, owner)
            if isinstance(s, If):
                visit(s.then, s)
                visit(s.orelse, s)
            elif isinstance(s, Loop):
                visit(s.cond_body, s)
                visit(s.body, s)
                visit(s.step_body, s)
            elif isinstance(s, Call):
                visit(s.body, s)
    visit(fn.body, None)

    def first_line(s):
        if isinstance(s, Call) and s.body:
            return first_line(s.body[0])
        return s.loc.line

    def succ(s):
        stmts, i, owner = parent[s.id if hasattr(s, "id") else id(s)]
        if i + 1 < len(stmts):
            return first_line(stmts[i + 1])
        if owner is None:
            return None
        if isinstance(owner, Loop):
            return owner.loc.line
        return succ(owner)
    return {s.id: succ(s) for s in walk(fn.body) if isinstance(s, (If, Loop))}


def _ranges(lines):
    out, lines = [], sorted(lines)
    for ln in lines:
        if out and ln == out[-1][1] + 1:
            out[-1][1] = ln
        else:
            out.append([ln, ln])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in out)


class Stepper:
    """Steps through the record of one warp.  `pos` is how many steps have been executed
    (0: the start, len(st): the end); `state` is the state there."""

    def __init__(self, kernel_name, fn, rec, report, block_idx, warp, error=None):
        self.kernel_name, self.fn, self.report = kernel_name, fn, report
        self.block_idx, self.warp, self.error = block_idx, warp, error
        self.steps = rec.steps
        self.valid = rec.valid
        self._hist = {k: ([i for i, _ in v], [a for _, a in v]) for k, v in rec.history.items()}
        self._arrays = {k: ([i for i, _ in v], [a for _, a in v]) for k, v in rec.arrays.items()}
        self._rejoin = _rejoin_lines(fn)
        self.code_lines = {n.loc.line for n in walk(fn.body) if hasattr(n, "loc")}
        self.variables = sorted({n for n in fn.var_types if "%" not in n and not
                                 _is_array(fn.var_types[n])} | {k for k in self._hist if "%" not in k})
        w = np.array([s.weight for s in self.steps], dtype=np.int64)
        act = np.array([bin(s.mask).count("1") for s in self.steps], dtype=np.int64)
        self._cum_w, self._cum_t = np.cumsum(w), np.cumsum(w * act)
        self._i = -1                 # index of the last executed step

    def __len__(self):
        return len(self.steps)

    def __repr__(self):
        return (f"<simgpu.Stepper {self.kernel_name} block {self.block_idx} warp {self.warp}: "
                f"step {self.pos}/{len(self.steps)}>")

    @property
    def pos(self):
        return self._i + 1

    @property
    def done(self):
        return self._i >= len(self.steps) - 1

    # -- moving ----------------------------------------------------------------------------
    def step(self):
        """Execute one warp-instruction."""
        if self.done:
            raise StepError(self._end_message())
        self._i += 1
        return self.state

    def back(self):
        """Undo one step."""
        if self._i < 0:
            raise StepError("already at the start: there is no step to go back to")
        self._i -= 1
        return self.state

    def goto(self, n):
        """Jump to the state after `n` steps (0: the start)."""
        if not isinstance(n, (int, np.integer)) or not 0 <= n <= len(self.steps):
            raise StepError(f"step {n!r} does not exist: this warp executes {len(self.steps)} "
                            f"steps, so go to 0 (the start) .. {len(self.steps)} (the end)")
        self._i = int(n) - 1
        return self.state

    def reset(self):
        return self.goto(0)

    def next_line(self):
        """Execute the rest of the next source line (all its consecutive instructions)."""
        if self.done:
            raise StepError(self._end_message())
        here = self._where(self._i)
        while not self.done and self._where(self._i + 1) == here:
            self._i += 1
        if not self.done:
            self._i += 1
            nxt = self._where(self._i)
            while not self.done and self._where(self._i + 1) == nxt:
                self._i += 1
        return self.state

    def run(self, until_line=None, breakpoints=()):
        """Run until the warp next enters `until_line` (or a line in `breakpoints`): stop on
        the first instruction of that line; or run to the end.  `state.line` / `state.done`
        say which happened."""
        stops = set(breakpoints)
        if until_line is not None:
            stops.add(until_line)
        for ln in stops:
            self.check_line(ln)
        while not self.done:
            self._i += 1
            if self.steps[self._i].line in stops and self._where(self._i - 1) != self._where(self._i):
                break
        return self.state

    def check_line(self, line):
        if not isinstance(line, (int, np.integer)) or isinstance(line, bool):
            raise StepError(f"a line is a line number, not {line!r}")
        if line not in self.code_lines:
            raise StepError(f"line {line} has no code in kernel {self.kernel_name!r} "
                            f"(lines with code: {_ranges(self.code_lines)})")
        return int(line)

    def reached(self, line):
        """Whether the chosen warp executes anything on `line`."""
        return any(s.line == line for s in self.steps)

    def _where(self, i):
        s = self.steps[i] if i >= 0 else None
        return None if s is None else (s.file, s.line)

    def _end_message(self):
        msg = f"the warp has finished: all {len(self.steps)} steps are done (go back with back())"
        return msg + (f"; the launch stopped with an error: {self.error}" if self.error else "")

    # -- reading -----------------------------------------------------------------------------
    def value(self, name, pos=None):
        """Per-lane value of variable `name` after `pos` steps (default: now)."""
        pos = self.pos if pos is None else pos
        i = pos - 1
        h = self._hist.get(name)
        if h is None:
            if name in self._arrays:
                return self._at(self._arrays[name], i)
            known = ", ".join(self.variables + sorted(self._arrays))
            if name in self.fn.var_types:
                raise StepError(f"variable {name!r} is an array the warp never wrote; "
                                f"the stepper shows shared and local arrays after a store")
            raise StepError(f"no variable {name!r} in kernel {self.kernel_name!r} (variables: {known})")
        v = self._at(h, i)
        if v is None:
            first = h[0][0]
            where = f" (it is first assigned on line {self.steps[first].line}, step {first + 1})" \
                if first < len(self.steps) else ""
            raise StepError(f"variable {name!r} has no value yet at step {pos}{where}")
        return v

    @staticmethod
    def _at(h, pos):
        idx, vals = h
        k = bisect.bisect_right(idx, pos) - 1
        return vals[k] if k >= 0 else None

    def rejoin_line(self, node):
        return self._rejoin.get(node.id)

    @property
    def state(self):
        return self.state_at(self.pos)

    def state_at(self, n):
        """The state after `n` steps."""
        pos = n - 1
        if pos < 0:
            s0 = self.steps[0] if self.steps else None
            f, ln = (s0.file, s0.line) if s0 else (self.fn.loc.file, self.fn.loc.line)
            s = Step(-1, None, f, ln, self.valid, None, 0)
        else:
            s = self.steps[pos]
        values = {}
        for name, h in self._hist.items():
            if "%" not in name:
                v = self._at(h, pos)
                if v is not None:
                    values[name] = v
        arrays = {k: a for k, h in self._arrays.items() if (a := self._at(h, pos)) is not None}
        stack = [StackEntry(k, n.loc.line, m, self._rejoin.get(n.id)) for k, n, m in s.stack]
        w = int(self._cum_w[pos]) if pos >= 0 else 0
        eff = float(self._cum_t[pos]) / (32 * w) if w else 1.0
        return WarpState(n, len(self.steps), pos >= len(self.steps) - 1,
                         s.file, s.line, self.fn.source_lines.get((s.file, s.line), ""),
                         s.text, s.kind, s.mask, s.taken, stack, values, arrays, s.memory, eff, w,
                         self.valid, self.error if pos >= len(self.steps) - 1 else None)

    def states(self):
        """Every state from the start to the end (for tables and pictures)."""
        return [self.state_at(n) for n in range(len(self.steps) + 1)]

    # -- faces ---------------------------------------------------------------------------------
    def source(self):
        """(line, text) of the kernel's source, in order."""
        f = self.fn.loc.file
        return sorted((ln, t) for (ff, ln), t in self.fn.source_lines.items() if ff == f)

    def to_html(self, path=None, variables=None):
        from .step_html import render
        page = render(self, variables)
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(page)
        return page

    def plot(self, **kw):
        from .plot_warp import warp_lanes
        return warp_lanes(self, **kw)


def _is_array(t):
    from .ir import types as T
    return isinstance(t, T.ArrayType)


def _block3(block_idx):
    if isinstance(block_idx, (int, np.integer)):
        block_idx = (int(block_idx),)
    try:
        b = tuple(int(v) for v in block_idx)
    except TypeError:
        raise StepError(f"block_idx must be an int or a tuple of up to 3 ints, not {block_idx!r}") from None
    if not 1 <= len(b) <= 3:
        raise StepError(f"block_idx must have 1 to 3 coordinates, not {len(b)}")
    return b + (0,) * (3 - len(b))


def step(kernel, grid, block, args, block_idx=(0, 0, 0), warp=0, gpu=None, memory=False, **launch_kw):
    """Run the launch and return a Stepper over warp `warp` of block `block_idx`.

    Arrays in `args` are updated as a launch updates them.  `memory`/`launch_kw` go to
    simgpu.launch (the stepper computes the warp's own sectors and banks itself)."""
    from .kernel import Kernel, _dim3, launch
    k = kernel if isinstance(kernel, Kernel) else Kernel(kernel)
    g, b = _dim3(grid, "grid"), _dim3(block, "block")
    bi = _block3(block_idx)
    if any(not 0 <= v < n for v, n in zip(bi, g)):
        raise StepError(f"block {bi} is not in the grid {g}: block indices run from (0, 0, 0) "
                        f"to {tuple(n - 1 for n in g)}")
    wpb = -(-(b[0] * b[1] * b[2]) // WARP)
    if not isinstance(warp, (int, np.integer)) or not 0 <= warp < wpb:
        raise StepError(f"warp {warp!r} is not in the block: a block of {b[0] * b[1] * b[2]} threads "
                        f"has {wpb} warp(s), numbered 0..{wpb - 1}")
    rec = _Recorder(bi[0] + g[0] * (bi[1] + g[1] * bi[2]), int(warp))
    error, report = None, None
    try:
        report = launch(k, g, b, args, gpu=gpu, observers=[rec], memory=memory, **launch_kw)
    except KernelError as e:
        if not rec.steps:
            raise
        error = e
    fn = rec.it.fn
    return Stepper(k.name, fn, rec, report, bi, int(warp), error)
