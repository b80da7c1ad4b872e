"""The warp stepper on simgpu's IR: one warp of one block, one instruction at a time.

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
import html
from dataclasses import dataclass

import numpy as np

from ..errors import KernelError
from ..exec.state import WARP
from ..ir import types as T
from ..ir.nodes import walk
from ..runtime.binding import dim3
from ..runtime.launch import launch
from ..runtime.program import as_program
from .html import render
from .plot import warp_lanes
from .text import format_state
from .lines import visit_index, visits
from .record import IrView, MemAccess, Recorder, StackEntry, Step, StepError, mask_bools, mask_int

__all__ = ["step_ir", "check_target", "Stepper", "WarpState", "StepError", "StackEntry", "MemAccess", "Step",
           "mask_int", "mask_bools"]


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
    assigned: dict            # user variable -> lanes (bit mask) that have assigned it so far;
                              #   the other lanes' entries in `values` mean nothing
    arrays: dict              # shared arrays (block's contents), local arrays (32, n)
    memory: object            # MemAccess of this step or None
    simt_efficiency: float    # active lanes / 32, weighted over instructions executed so far
    inst_executed: int        # warp instructions executed so far (SASS estimate, as the Report)
    valid_mask: int           # lanes that hold a thread of the block
    error: object = None      # a kernel fault that ended the launch after this warp's record
    mode: str = "inst"        # the stepper's mode: 'line' (one visit of a line a step) | 'inst'
    line_mask: object = None  # lanes that run this line on this visit (None at the start)
    line_steps: tuple = ()    # (first, last) step numbers of this visit of the line
    place: str = "body"       # 'entry' (prologue) | 'body' | 'exit' (ret and epilogue)

    @property
    def n_active(self):
        return bin(self.active_mask).count("1")

    @property
    def lanes(self):
        return mask_bools(self.active_mask)

    def __str__(self):
        return format_state(self)


# -- the stepper -----------------------------------------------------------------------------
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

    executor = "ir"              # what it steps: simgpu's IR (PtxStepper: the compiled code)
    State = WarpState            # what state_at gives (PtxStepper: PtxWarpState)
    default_mode = "inst"        # step() executes one IR instruction (PtxStepper: one line visit)

    def __init__(self, kernel_name, fn, rec, report, block_idx, warp, error=None, mode=None):
        self._take(kernel_name, fn, rec, report, block_idx, warp, error)
        self._arrays = {k: tuple(map(list, zip(*v))) for k, v in rec.arrays.items()}
        self.code_lines = {n.loc.line for n in walk(fn.body) if hasattr(n, "loc")}
        self.variables = sorted({n for n in fn.var_types if "%" not in n and not
                                 _is_array(fn.var_types[n])} | {k for k in self._hist if "%" not in k})
        self._count_weights()
        self.set_mode(mode)

    def _take(self, kernel_name, fn, rec, report, block_idx, warp, error):
        """What every stepper takes from a finished Recorder."""
        self.kernel_name, self.fn, self.report = kernel_name, fn, report
        self.block_idx, self.warp, self.error = block_idx, warp, error
        self.steps, self.valid, self._rejoin = rec.steps, rec.valid, rec.rejoin
        self._hist = {k: tuple(map(list, zip(*v))) for k, v in rec.history.items()}   # (steps, values, assigned)

    # -- modes: line stepping and instruction stepping ------------------------------------------
    MODES = ("line", "inst")

    def set_mode(self, mode=None):
        """'line': step()/back() move one visit of a source line, run() stops at a line's first
        instruction; 'inst': one instruction, run() stops after the line's last instruction.
        None: the stepper's default.  Returns the mode."""
        mode = self.default_mode if mode is None else mode
        if mode not in self.MODES:
            raise StepError(f"mode {mode!r}: the stepper steps by 'line' (one visit of a source line "
                            "a step) or 'inst' (one instruction a step)")
        self.mode = mode
        return mode

    @property
    def visits(self):
        """The warp's visits of source lines (simgpu.stepper.lines.Visit), in order."""
        if getattr(self, "_visit_list", None) is None:
            self._visit_list = visits(self.steps, self.fn.loc.file, self.fn.loc.line,
                                      compiled=self.executor == "ptx")
            self._visit_of = visit_index(self._visit_list, len(self.steps))
        return self._visit_list

    def visit_at(self, pos=None):
        """The visit the step just executed belongs to after `pos` steps (None at the start)."""
        pos = self.pos if pos is None else pos
        if pos <= 0 or not self.steps:
            return None
        vs = self.visits
        return vs[self._visit_of[min(pos, len(self.steps)) - 1]]

    def _line_stops(self):
        return [v.start for v in self.visits]

    def _next_stop(self):
        for a in self._line_stops():
            if a > self._i:
                return a
        return len(self.steps) - 1

    def step_instruction(self):
        """Execute one instruction, whatever the mode."""
        if self.done:
            raise StepError(self._end_message())
        self._i += 1
        return self.state

    def back_instruction(self):
        """Undo one instruction, whatever the mode."""
        if self._i < 0:
            raise StepError("already at the start: there is no step to go back to")
        self._i -= 1
        return self.state

    def efficiency(self, pos=None):
        """SIMT efficiency of this warp over the instructions executed after `pos` steps
        (default: the whole record), as Nsight Compute defines it: smsp__thread_inst_executed /
        (32 * smsp__inst_executed).  {'as written': ...} on simgpu's IR (the PtxStepper adds
        'as compiled')."""
        pos = len(self.steps) if pos is None else pos
        return {"as written": self._efficiency(pos - 1)[1]}

    def compare(self):
        raise StepError("compare() needs the compiled path: simgpu.step(..., executor='ptx') runs "
                        "both and compares them line by line")

    def _count_weights(self):
        """Running SASS-instruction and active-lane totals (SIMT efficiency so far)."""
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
        """Line mode: run to the first instruction of the next visit of a line (from the last
        visit: to the end).  Instruction mode: execute one warp-instruction."""
        if self.mode == "inst" or self.done:
            return self.step_instruction()
        self._i = self._next_stop()
        return self.state

    def back(self):
        """Undo one step: one instruction, or (line mode) back to the previous visit's first
        instruction (or the start)."""
        if self.mode == "inst" or self._i < 0:
            return self.back_instruction()
        prev = [a for a in self._line_stops() if a < self._i]
        self._i = prev[-1] if prev else -1
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
        """Line mode: as step().  Instruction mode: execute the rest of the current source line
        and the whole next one (all their consecutive instructions)."""
        if self.done:
            raise StepError(self._end_message())
        if self.mode == "line":
            return self.step()
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
        """Run until the warp next runs `until_line` (or a line in `breakpoints`), or to the end.
        Line mode: it stops at the first instruction of that visit to the line (the state shows
        the lanes that run the line).  Instruction mode: it stops after the last instruction of
        that visit, as `next_line` does.  `state.line` / `state.done` say which happened."""
        stops = set(breakpoints)
        if until_line is not None:
            stops.add(until_line)
        for ln in stops:
            self.check_line(ln)
        if self.mode == "line":
            for v in self.visits:
                if v.start > self._i and v.line in stops:
                    self._i = v.start
                    return self.state
            self._i = len(self.steps) - 1
            return self.state
        while not self.done:
            self._i += 1
            if self.steps[self._i].line in stops and self._where(self._i - 1) != self._where(self._i):
                here = self._where(self._i)
                while not self.done and self._where(self._i + 1) == here:
                    self._i += 1
                break
        return self.state

    def check_line(self, line):
        if not isinstance(line, (int, np.integer)) or isinstance(line, bool):
            raise StepError(f"a line is a line number, not {line!r}")
        if line not in self.code_lines:
            raise StepError(f"line {line} has no code in kernel {self.kernel_name!r} "
                            f"(lines with code: {_ranges(self.code_lines)})")
        return int(line)

    def peek(self):
        """The step that would run next (a Step record), or None at the end."""
        return None if self.done else self.steps[self._i + 1]

    def find_line(self, text):
        """The number of the first kernel source line containing `text`."""
        for ln, t in self.source():
            if text in t and ln in self.code_lines:
                return ln
        raise StepError(f"no line with code in kernel {self.kernel_name!r} contains {text!r}")

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
        """Per-lane value of variable `name` after `pos` steps (default: now).  For a shared
        array: the block's contents; a local array: (32, ...) one row per lane."""
        pos = self.pos if pos is None else pos
        h = self._hist.get(name) or self._arrays.get(name)
        if h is None:
            if name not in self.fn.var_types:
                known = ", ".join(self.variables + sorted(self._arrays))
                raise StepError(f"no variable {name!r} in kernel {self.kernel_name!r} (variables: {known})")
            what = "array" if _is_array(self.fn.var_types[name]) else "variable"
            raise StepError(f"{what} {name!r} is never assigned by warp {self.warp} of block "
                            f"{self.block_idx}" + (" (arrays are shown once the warp's block stores "
                                                    "into them)" if what == "array" else ""))
        v = self._at(h, pos - 1)
        if v is None:
            first = h[0][0]
            where = f" (it is first assigned on line {self.steps[first].line}, step {first + 1})" \
                if 0 <= first < len(self.steps) else ""
            raise StepError(f"{name!r} has no value yet at step {pos}{where}")
        return v

    def has_variable(self, name):
        """Whether the kernel has a variable (or compiler temporary) called `name`."""
        return name in self._hist or name in self._arrays or name in self.fn.var_types

    def assigned(self, name, pos=None):
        """Lanes (bit mask) that have assigned variable `name` after `pos` steps."""
        self.value(name, pos)
        h = self._hist.get(name)
        return self._at(h, (self.pos if pos is None else pos) - 1, 2) if h else None

    @staticmethod
    def _at(h, pos, part=1):
        k = bisect.bisect_right(h[0], pos) - 1
        return h[part][k] if k >= 0 else None

    def rejoin_line(self, node):
        return self._rejoin.get(node.id)

    @property
    def state(self):
        return self.state_at(self.pos)

    def _step_at(self, pos):
        """The step at index `pos`; before the first (pos < 0): a placeholder at the first line."""
        if pos >= 0:
            return self.steps[pos]
        s0 = self.steps[0] if self.steps else None
        f, ln = (s0.file, s0.line) if s0 else (self.fn.loc.file, self.fn.loc.line)
        return Step(-1, None, f, ln, self.valid, None, 0)

    def _efficiency(self, pos):
        """(warp instructions so far, SIMT efficiency so far) after the step at `pos`."""
        w = int(self._cum_w[pos]) if pos >= 0 else 0
        return w, (float(self._cum_t[pos]) / (32 * w) if w else 1.0)

    def state_at(self, n):
        """The state after `n` steps."""
        pos = n - 1
        s = self._step_at(pos)
        values, assigned, arrays, extra = self._values_at(n, s)
        stack = [StackEntry(k, node.loc.line, m, self._rejoin.get(node.id)) for k, node, m in s.stack]
        w, eff = self._efficiency(pos)
        last = pos >= len(self.steps) - 1
        return self.State(n, len(self.steps), last, s.file, s.line, self.fn.source_lines.get((s.file, s.line), ""),
                          s.text, s.kind, s.mask, s.taken, stack, values, assigned, arrays, s.memory,
                          eff, w, self.valid, self.error if last else None, **extra, **self._line_fields(n))

    def _values_at(self, n, s):
        """(values, assigned lanes, arrays, the State's own fields) after `n` steps (`s`: the step
        just executed): the variables' recorded history."""
        pos = n - 1
        values, assigned = {}, {}
        for name, h in self._hist.items():
            if "%" not in name:
                v = self._at(h, pos)
                if v is not None:
                    values[name] = v
                    assigned[name] = self._at(h, pos, 2)
        arrays = {k: a for k, h in self._arrays.items() if (a := self._at(h, pos)) is not None}
        return values, assigned, arrays, {}

    def _line_fields(self, n):
        """The mode and this visit of the line (its lanes, its steps) after `n` steps."""
        v = self.visit_at(n)
        if v is None:
            return {"mode": self.mode}
        return {"mode": self.mode, "line_mask": v.mask, "line_steps": (v.start + 1, v.end), "place": v.place}

    def states(self):
        """Every state from the start to the end (for tables and pictures)."""
        return [self.state_at(n) for n in range(len(self.steps) + 1)]

    # -- faces ---------------------------------------------------------------------------------
    def source(self):
        """(line, text) of the kernel's source, in order."""
        f = self.fn.loc.file
        return sorted((ln, t) for (ff, ln), t in self.fn.source_lines.items() if ff == f)

    def to_html(self, path=None, variables=None):
        page = render(self, variables)
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(page)
        return page

    def _repr_html_(self):
        return (f'<iframe srcdoc="{html.escape(self.to_html())}" '
                'style="width:100%;height:680px;border:1px solid #ddd"></iframe>')

    def plot(self, **kw):
        """Lanes x steps (simgpu.stepper.plot.warp_lanes): a column per visit of a line in
        line mode, per instruction in instruction mode (mode= overrides the stepper's)."""
        return warp_lanes(self, **kw)


def _is_array(t):
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


def check_target(kernel, grid, block, block_idx, warp):
    """(program, grid, block, block index (3), warp) after checking the warp is in the launch."""
    k = as_program(kernel)
    g, b = dim3(grid, "grid"), dim3(block, "block")
    bi = _block3(block_idx)
    if any(not 0 <= v < n for v, n in zip(bi, g)):
        raise StepError(f"block {bi} is not in the grid {g}: block indices run from (0, 0, 0) "
                        f"to {tuple(n - 1 for n in g)}")
    wpb = -(-(b[0] * b[1] * b[2]) // WARP)
    if not isinstance(warp, (int, np.integer)) or not 0 <= warp < wpb:
        raise StepError(f"warp {warp!r} is not in the block: a block of {b[0] * b[1] * b[2]} threads "
                        f"has {wpb} warp(s), numbered 0..{wpb - 1}")
    return k, g, b, bi, int(warp)


def step_ir(kernel, grid, block, args, block_idx=(0, 0, 0), warp=0, gpu=None, memory=False, timing=False,
            mode=None, **launch_kw):
    """The stepper on simgpu's IR (executor="ir"): run the launch and return a Stepper over
    warp `warp` of block `block_idx` (`simgpu.step` chooses between this and the compiled code).

    Arrays in `args` are updated as a launch updates them.  `st.report` is the launch's
    Report; `memory`, `timing` and `launch_kw` go to simgpu.launch (off by default: the
    stepper computes its warp's sectors and banks itself)."""
    k, g, b, bi, warp = check_target(kernel, grid, block, block_idx, warp)
    launch_kw["executor"] = "ir"
    rec = Recorder(bi[0] + g[0] * (bi[1] + g[1] * bi[2]), int(warp), IrView())
    report, error = run_recorded(rec, k, g, b, args, gpu, memory, timing, **launch_kw)
    return Stepper(k.name, rec.launch.fn, rec, report, bi, int(warp), error, mode)


def run_recorded(rec, k, g, b, args, gpu, memory, timing, **launch_kw):
    """Run the launch with the Recorder `rec`: (Report, None), or (None, the KernelError) when
    the launch faulted after the warp's first step (before it: the error is raised)."""
    error, report = None, None
    try:
        report = launch(k, g, b, args, gpu=gpu, observers=[rec], memory=memory, timing=timing, **launch_kw)
    except KernelError as e:
        if not rec.steps:
            raise
        error = e
    rec.finish()
    return report, error
