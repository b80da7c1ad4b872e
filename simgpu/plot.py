"""Figures.  Every function returns a matplotlib Figure (matplotlib is imported lazily).

    simgpu.plot.roofline(reports, gpu)     kernels placed on the roofline
    simgpu.plot.timeline(report)           what each SM (and warp) did over time
    simgpu.plot.warp_lanes(stepper)        lanes x time of one warp, idle lanes visible
    simgpu.plot.mystery_plot(gpu, sizes)   the lecture's matmul "mystery plot"
    simgpu.plot.roofline_plot(points, gpu) analytic roofline
    simgpu.plot.tpu_vs_gpu_plot(...), attention_plot(...), six_tricks_plot(...)
"""
from __future__ import annotations

_WHERE = {
    "roofline": "plot_timing", "timeline": "plot_timing",
    "warp_lanes": "plot_warp",
    "mystery_plot": "plot_model", "roofline_plot": "plot_model", "tpu_vs_gpu_plot": "plot_model",
    "attention_plot": "plot_model", "six_tricks_plot": "plot_model",
}


def __getattr__(name):
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"simgpu.plot has no {name!r}; available: {', '.join(sorted(_WHERE))}")
    import importlib
    return getattr(importlib.import_module(f"simgpu.{mod}"), name)


def __dir__():
    return sorted(_WHERE)
