"""Figures.  Every function returns a matplotlib Figure built without pyplot (headless, Agg);
matplotlib itself is imported only when a figure is made.

    simgpu.plot.roofline(reports, gpu)     simulated kernels placed on the roofline
    simgpu.plot.timeline(report)           what each SM (and warp) did over time
    simgpu.plot.sm_schedule(result)        blocks on SMs over time
    simgpu.plot.mystery_plot(gpu, sizes)   the lecture's matmul "mystery plot" (idealised kernel)
    simgpu.plot.mystery(sizes, measured)   the same from simgpu.model.gemm, cliffs labelled by cause
    simgpu.plot.roofline_plot(points, gpu) analytic roofline
    simgpu.plot.tpu_vs_gpu_plot(...), attention_plot(...), six_tricks_plot(...)

A stepped warp draws itself: ``st.plot()`` or ``simgpu.stepper.warp_lanes(st)``.
"""
from .model import attention_plot, mystery, mystery_plot, roofline_plot, six_tricks_plot, tpu_vs_gpu_plot
from .timing import roofline, sm_schedule, timeline

__all__ = ["roofline", "timeline", "sm_schedule", "mystery", "mystery_plot", "roofline_plot", "tpu_vs_gpu_plot",
           "attention_plot", "six_tricks_plot"]
