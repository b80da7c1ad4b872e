"""The warp stepper, one room: a warp of one block stepped one instruction or line at a time.

    api.py     simgpu.step(...) -> Stepper: step/next_line/run/back, WarpState
    record.py  the observer that records what the chosen warp does
    text.py    states as text          tui.py   `simgpu step FILE.py::kernel` in a terminal
    html.py    a self-contained replay page    plot.py  lanes x time (matplotlib)
"""
from .api import MemAccess, StackEntry, Step, StepError, Stepper, WarpState, mask_bools, mask_int, step
from .plot import lane_matrix, warp_lanes
from .text import format_state

__all__ = ["step", "Stepper", "WarpState", "StepError", "StackEntry", "MemAccess", "Step", "mask_bools",
           "mask_int", "warp_lanes", "lane_matrix", "format_state"]
