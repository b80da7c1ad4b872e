"""Timing: a discrete-event (simpy) model of SMs, warps and the memory system that predicts
a launch's time and its bottleneck.  See docs/timing.md.

    simgpu.launch(...)            fills the Report's timing metrics and leads print(rep) with them
    simgpu.timing.predict(...)    the same, with options (registers_per_thread, detail)
"""
from .model import TimingModel
from .analysis import TimingResult
from .registers import estimate_registers


def predict(kernel, grid, block, args, gpu=None, registers_per_thread=None, detail="auto", sample=False,
            **launch_options):
    """Run `kernel` like simgpu.launch and return its Report, timed with these options.

    sample=True runs only the waves the timing model simulates (the first and the partial
    last one): much faster for big grids, but the outputs are only partly computed and the
    memory counters cover the executed waves (see simgpu/timing/partial.py)."""
    from ..hardware import get_gpu
    if sample:
        from .partial import sampled_launch
        return sampled_launch(kernel, grid, block, args, gpu=gpu, registers_per_thread=registers_per_thread,
                              **launch_options)
    from ..kernel import launch
    g = get_gpu(gpu)
    tm = TimingModel(g, registers_per_thread=registers_per_thread, detail=detail)
    observers = tuple(launch_options.pop("observers", ())) + (tm,)
    rep = launch(kernel, grid, block, args, gpu=g, observers=observers, timing=False, **launch_options)
    tm.fill_report(rep)
    return rep


__all__ = ["TimingModel", "TimingResult", "predict", "estimate_registers"]
