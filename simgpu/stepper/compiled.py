"""`simgpu.step`: the warp stepper on the compiled code (executor="ptx") or on simgpu's IR.

    st = simgpu.step(kernel, grid, block, args, block_idx=(0, 0, 0), warp=0)   # executor="auto"
    st.next_line(); print(st.state)

On the compiled path the whole launch runs once on the PTX executor (the code numba-cuda
compiles) with the stepper's recorder (record.Recorder, with ptxrec.PtxView) that records, for the chosen warp only,
every executed PTX instruction: its text and PTX line, the user's line from the PTX
``.loc``, the 32-bit active mask, the SASS ptxas made from that PTX line, the warp's memory
request, the branch decision and where the lanes reconverge.

What it shows for values, and where they come from (`state.values_from` says it too):

* `state.registers`: the PTX registers the step wrote, per lane, read from the executor's
  register file -- the compiled code's own values, but under PTX names (%r5, %f2, %p1):
  PTX carries no variable names without debug information, and numba-cuda's PTX has none.
* `state.values`: the kernel's variables by name, from a side-by-side run of the same
  launch on simgpu's IR (on copies of the arguments) -- not read from the compiled code.
  A PTX step on source line L shows the IR warp's values after its matching visit to L (the
  k-th time the warp runs L on both paths); the compiler may reorder code, so mid-line
  values can differ from what the compiled code holds at that instant.  Where the IR path
  cannot run the kernel, `values` is empty and `values_from` says why.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ..runtime.executor import default_executor
from .api import Stepper, StepError, WarpState, check_target, run_recorded, step_ir
from .compare import compare
from .ptxrec import PtxView, real_path
from .record import Recorder

__all__ = ["step", "step_ptx", "PtxStepper", "PtxWarpState"]

IR_VALUES = ("from a side-by-side run on simgpu's IR: its values after the matching visit to this "
             "line, not read from the compiled code")
NO_NAMES = "PTX registers only: the compiled PTX has no variable names (no debug information)"


@dataclass
class PtxWarpState(WarpState):
    """A WarpState on the compiled code: `instruction` is the PTX executed."""
    ptx_line: int = 0                 # line in the compiled kernel's PTX
    pc: object = None
    sass: tuple = ()                  # SASS ptxas made from that PTX line
    registers: dict = field(default_factory=dict)   # PTX register -> (32,) written by this step
    reconverged: int = 0              # lanes that rejoined the warp at this step
    rejoin_of: tuple = ()             # lines of the divergent branches that closed here
    target: object = None             # branch target label
    guard: object = None              # lanes whose guard predicate held (None: no guard / unread)
    no_loc: bool = False              # the compiler gave no source line; shown under the previous
    values_from: str = ""             # where `values` come from (or why there are none)
    ir_step: object = None            # the IR stepper's position whose values are shown
    as_written: object = None         # SIMT efficiency so far of the same warp as written (IR run)
    executor: str = "ptx"


def _visits(steps, keep=None):
    """Maximal runs of steps on one source line: [((file, line), start, end)]; with `keep`,
    steps on other lines are passed over (they neither end a run nor start one)."""
    out = []
    for i, s in enumerate(steps):
        key = (real_path(s.file), s.line)
        if keep is not None and key not in keep:
            continue
        if out and out[-1][0] == key:
            out[-1][2] = i + 1
        else:
            out.append([key, i, i + 1])
    return out


def ir_positions(ptx_steps, ir_steps):
    """For each PTX step: the IR position (steps executed) whose values go with it -- the end
    of the IR warp's k-th visit to the line of the PTX step's k-th visit (its last visit if it
    has fewer; the previous position if it never runs that line).  IR lines the compiled code
    never names (an inlined device function's, which the PTX .loc gives the call's line) are
    passed over, so the call line's visit ends after the call returns."""
    ptx_visits = _visits(ptx_steps)
    ends = {}
    for key, _, b in _visits(ir_steps, {v[0] for v in ptx_visits}):
        ends.setdefault(key, []).append(b)
    out, seen, last = [], {}, 0
    for key, a, b in ptx_visits:
        k = seen[key] = seen.get(key, -1) + 1
        if key in ends:
            last = ends[key][min(k, len(ends[key]) - 1)]
        out.extend([last] * (b - a))
    return out


class PtxStepper(Stepper):
    """Steps through the record of one warp on the compiled code (see the module doc)."""

    executor = "ptx"
    State = PtxWarpState
    default_mode = "line"        # step() runs one visit of a source line (set_mode("inst"): one PTX instruction)

    def __init__(self, kernel_name, fn, rec, report, block_idx, warp, error=None, ir=None, ir_note="",
                 mode=None):
        self._take(kernel_name, fn, rec, report, block_idx, warp, error)
        self.registers_read = bool(rec.view.registers_read)
        self._arrays = ir._arrays if ir is not None else {}      # shared/local arrays: the IR run's
        self.ir, self.ir_note = ir, ir_note
        self._ir_pos = ir_positions(self.steps, ir.steps) if ir is not None else None
        self.values_from = IR_VALUES if ir is not None else f"{NO_NAMES}; {ir_note}"
        self.code_lines = {s.line for s in rec.view.source_locs if s.file == fn.loc.file} | \
            {s.line for s in self.steps if s.file == fn.loc.file}
        self.variables = list(ir.variables) if ir is not None else []
        self.registers = sorted(self._hist)
        self._count_weights()
        self.set_mode(mode)

    def ir_pos(self, n):
        """The IR stepper's position whose values go with the PTX state after `n` steps."""
        if self._ir_pos is None:
            return None
        if n >= len(self._ir_pos):         # the end: the IR warp has finished too
            return len(self.ir.steps)
        return 0 if n <= 0 else self._ir_pos[n - 1]

    # -- reading -----------------------------------------------------------------------------
    def value(self, name, pos=None):
        """Per-lane value after `pos` steps: a PTX register (`%r5`: the compiled code's own,
        written so far) or a kernel variable (from the side-by-side IR run)."""
        pos = self.pos if pos is None else pos
        if name.startswith("%"):
            h = self._hist.get(name)
            if h is None:
                raise StepError(f"register {name} is never written by warp {self.warp} of block "
                                f"{self.block_idx}" + (f" (registers: {', '.join(self.registers)})"
                                                       if self.registers else f" ({self._no_regs()})"))
            v = self._at(h, pos - 1)
            if v is None:
                raise StepError(f"{name} has no value yet at step {pos} (first written at step {h[0][0] + 1})")
            return v
        if self.ir is None:
            raise StepError(f"no variable {name!r}: {self.values_from}")
        return self.ir.value(name, self.ir_pos(pos))

    def _no_regs(self):
        return ("the executor's registers could not be read" if not self.registers_read
                else "this warp writes no registers")

    def has_variable(self, name):
        return name in self._hist or (self.ir is not None and self.ir.has_variable(name))

    def assigned(self, name, pos=None):
        pos = self.pos if pos is None else pos
        if name.startswith("%"):
            self.value(name, pos)
            return self._at(self._hist[name], pos - 1, 2)
        self.value(name, pos)
        return self.ir.assigned(name, self.ir_pos(pos))

    def _values_at(self, n, s):
        """The variables, their assigned lanes and arrays from the side-by-side IR run (at the
        matching position); the PTX step's own fields."""
        values, assigned, arrays, irp = {}, {}, {}, None
        if self.ir is not None:
            irp = self.ir_pos(n)
            st = self.ir.state_at(irp)
            values, assigned, arrays = st.values, st.assigned, st.arrays
        return values, assigned, arrays, dict(
            ptx_line=getattr(s, "ptx_line", 0), pc=getattr(s, "pc", None),
            sass=getattr(s, "sass", ()), registers=dict(getattr(s, "regs", {})),
            reconverged=getattr(s, "reconverged", 0), rejoin_of=getattr(s, "rejoin_of", ()),
            target=getattr(s, "target", None), no_loc=getattr(s, "no_loc", False),
            guard=getattr(s, "guard", None), values_from=self.values_from, ir_step=irp,
            as_written=st.simt_efficiency if self.ir is not None else None)

    def efficiency(self, pos=None):
        """SIMT efficiency of this warp after `pos` steps (default: the whole record), as Nsight
        Compute defines it (smsp__thread_inst_executed / (32 * smsp__inst_executed)), for each
        code: 'as compiled' over the SASS ptxas made from the PTX executed so far, 'as written'
        over simgpu's IR of the kernel (the side-by-side run, at the matching position)."""
        pos = len(self.steps) if pos is None else pos
        out = {"as compiled": self._efficiency(pos - 1)[1]}
        if self.ir is not None:
            out["as written"] = self.ir.efficiency(self.ir_pos(pos) if pos < len(self.steps) else None)["as written"]
        return out

    def compare(self):
        """The same warp as written (simgpu's IR) and as compiled (this PTX), line by line:
        a Comparison (print it), noting the lines the compiler if-converted."""
        if self.ir is None:
            raise StepError(f"no comparison: {self.ir_note}")
        return compare(self.ir, self)

    def __repr__(self):
        return (f"<simgpu.Stepper {self.kernel_name} (compiled PTX) block {self.block_idx} warp {self.warp}: "
                f"step {self.pos}/{len(self.steps)}>")


# -- running -----------------------------------------------------------------------------------
def _side_by_side(kernel, grid, block, args, block_idx, warp, gpu):
    """The IR stepper over the same warp on copies of the arguments, or (None, why not)."""
    try:
        ir = step_ir(kernel, grid, block, args, block_idx=block_idx, warp=warp, gpu=gpu)
    except Exception as e:             # the IR frontend/executor cannot run it: say why
        return None, f"no side-by-side IR run: the IR path cannot run this kernel ({type(e).__name__}: {e})"
    return ir, ""


def step_ptx(kernel, grid, block, args, block_idx=(0, 0, 0), warp=0, gpu=None, memory=False, timing=False,
             ir_values=True, mode=None, **launch_kw):
    """The stepper on the compiled code (executor="ptx"); see the module doc.  `ir_values`:
    also run the launch on simgpu's IR (on copies of the arguments) for the variables' values."""
    k, g, b, bi, warp = check_target(kernel, grid, block, block_idx, warp)
    ir_args, ir_note = None, ""
    if ir_values:
        try:
            ir_args = copy.deepcopy(args)
        except Exception as e:          # arguments that cannot be copied: no side-by-side run
            ir_note = f"no side-by-side IR run: the arguments cannot be copied ({type(e).__name__}: {e})"
    else:
        ir_note = "no side-by-side IR run (ir_values=False)"
    rec = Recorder(bi[0] + g[0] * (bi[1] + g[1] * bi[2]), warp, PtxView())
    report, error = run_recorded(rec, k, g, b, args, gpu, memory, timing, executor="ptx", **launch_kw)
    ir = None
    if ir_args is not None:
        ir, ir_note = _side_by_side(k, g, b, ir_args, bi, warp, gpu)
    return PtxStepper(k.name, rec.launch.fn, rec, report, bi, warp, error, ir, ir_note, mode)


def step(kernel, grid, block, args, block_idx=(0, 0, 0), warp=0, gpu=None, memory=False, timing=False,
         executor="auto", mode=None, **kw):
    """Run the launch and return a Stepper over warp `warp` of block `block_idx`.

    executor: "ptx" steps the compiled code (PTX instructions, their SASS, registers; the
    variables' values from a side-by-side IR run: see simgpu/stepper/compiled.py), "ir"
    steps simgpu's IR (IR instructions, variables by name), "auto" (default) is
    simgpu.runtime.executor.default_executor().  Arrays in `args` are updated as a launch
    updates them; `st.report` is the launch's Report; `memory`, `timing` and other keywords
    go to simgpu.launch (`ir_values=False`: no side-by-side IR run on the compiled path).

    mode: "line" steps one visit of a source line at a time (the compiled path's default:
    each step shows the lanes that run the line; `run`/breakpoints stop at a line's first
    instruction), "inst" one instruction at a time (the IR path's default); `st.set_mode()`
    switches later."""
    name = default_executor() if executor in (None, "auto") else executor
    if name == "ptx":
        return step_ptx(kernel, grid, block, args, block_idx, warp, gpu, memory, timing, mode=mode, **kw)
    if name != "ir":
        raise StepError(f"executor={executor!r}: the stepper runs on 'ptx' (the compiled code), "
                        "'ir' (simgpu's IR) or 'auto'")
    kw.pop("ir_values", None)          # the IR stepper has the variables itself
    return step_ir(kernel, grid, block, args, block_idx, warp, gpu, memory, timing, mode, **kw)
