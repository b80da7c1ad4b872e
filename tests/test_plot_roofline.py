"""simgpu.plot.roofline labels each kernel by the timing model's bottleneck (what print(rep) says),
not by the side of the ridge, and its legends never cover a point (issue 23, item 6)."""
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.legend import Legend

import simgpu
from simgpu import cuda
from simgpu.plot import roofline


def fma(x, out, iters):
    i = cuda.grid(1)
    a = x[i]
    for _ in range(iters):
        a = a * np.float32(0.999) + np.float32(0.001)
    out[i] = a


def test_labels_are_the_reports_bottleneck_and_no_legend_covers_a_point():
    x = np.ones(64, np.float32)
    reps = [simgpu.launch(fma, 1, 64, (x, np.zeros_like(x), np.int32(iters))) for iters in (64, 256)]
    fig = roofline(reps)
    ax = fig.axes[0]
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    for rep in reps:
        r = rep.extras["timing"]
        p = r.roofline_point()
        assert p.bound == "compute" and p.fraction_of_roof < 0.1        # right of the ridge, far below it
        assert rep.extras["bottleneck"].startswith("latency") and r.bound_label.startswith("latency-bound")
        assert any(r.bound_label in lab and rep.title in lab for lab in labels)
    assert not any("(compute)" in lab for lab in labels)
    FigureCanvasAgg(fig).draw()
    boxes = [leg.get_window_extent() for leg in fig.legends]
    boxes += [a.get_window_extent() for a in ax.get_children() if isinstance(a, Legend)]
    points = [ax.transData.transform(xy) for line in ax.lines if line.get_marker() == "o"
              for xy in line.get_xydata()]
    assert len(points) == 2
    for (px, py) in points:
        for b in boxes:
            assert not (b.x0 <= px <= b.x1 and b.y0 <= py <= b.y1), "a legend covers a point"
