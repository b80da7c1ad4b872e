"""The warp stepper, one room: a warp of one block stepped one instruction or line at a time.

    compiled.py  simgpu.step(...): on the compiled code (executor="ptx") or simgpu's IR ("ir")
    api.py     Stepper: step/next_line/run/back, WarpState; the IR stepper (step_ir)
    record.py  Recorder: the one observer that records what the chosen warp does; IrView (IR)
    ptxrec.py  PtxView, its view on the compiled code: PTX instructions, registers, SASS, reconvergence
    text.py    states as text          tui.py   `simgpu step FILE.py::kernel` in a terminal
    html.py    a self-contained replay page    plot.py  lanes x time (matplotlib)
    lines.py   line stepping: a record as visits of source lines (prologue, body, exit)
    compare.py st.compare(): one warp as written (IR) and as compiled (PTX), line by line
"""
from .api import MemAccess, StackEntry, Step, StepError, Stepper, WarpState, mask_bools, mask_int, step_ir
from .compiled import PtxStepper, PtxWarpState, step, step_ptx
from .plot import lane_matrix, warp_lanes
from .text import format_state

__all__ = ["step", "step_ir", "step_ptx", "Stepper", "PtxStepper", "WarpState", "PtxWarpState", "StepError",
           "StackEntry", "MemAccess", "Step", "mask_bools", "mask_int", "warp_lanes", "lane_matrix",
           "format_state"]
