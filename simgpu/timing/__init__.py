"""Timing: a discrete-event (simpy) model of SMs, warps and the memory system that predicts
a launch's time and its bottleneck.  See docs/timing.md.

    simgpu.launch(...)            fills the Report's timing metrics and leads print(rep) with them
    simgpu.predict(...)           the same, with options (registers_per_thread, detail, sample)
"""
from .analysis import TimingResult
from .model import TimingModel
from .registers import estimate_registers

__all__ = ["TimingModel", "TimingResult", "estimate_registers"]
