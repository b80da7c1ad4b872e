"""Pictures that looked unfinished (issue 23, item 10; issue 24, item 3): the mystery plot of a
step-1 sweep, cliffs labelled by cause; the stepper's lanes plot; the timeline's top panel."""
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgb
from numba import cuda

from simgpu.model import gemm
from simgpu.plot.model import CLIFF_CAUSES, cliff_cause, mystery, mystery_cliffs


def _markers(ax):
    return sum(len(line.get_xdata()) for line in ax.lines if line.get_marker() not in (None, "None", ""))


def test_step_1_mystery_sweep_draws_no_band_of_markers():
    sizes = list(range(1, 2049))
    fig = mystery(sizes)
    ax = fig.axes[0]
    cliffs = mystery_cliffs(sizes, [gemm(n, n, n) for n in sizes])
    assert sum(1 for _, c, _ in cliffs if c == "alignment") > 900      # every less-aligned N
    assert _markers(ax) < 150 and len(ax.texts) == 0                    # not a marker per size
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert any(lab.startswith("cliff: alignment") for lab in labels)
    assert sum("aligned (" in lab for lab in labels) >= 3              # one curve per alignment


def test_cliffs_are_labelled_by_cause():
    assert CLIFF_CAUSES == ("alignment", "kernel switch", "wave", "tile")
    assert cliff_cause(gemm(4096, 4096, 4096), gemm(4097, 4097, 4097)) == "alignment"
    # same alignment, split-K 8 -> none: another kernel, not a tile or wave effect
    assert cliff_cause(gemm(704, 704, 8192), gemm(768, 768, 8192)) == "kernel switch"
    sizes = list(range(64, 8193, 64))
    causes = {c for _, c, _ in mystery_cliffs(sizes, [gemm(n, n, n) for n in sizes])}
    assert causes and causes <= {"wave", "tile"}
    fig = mystery(sizes)
    FigureCanvasAgg(fig).draw()
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert texts <= {"W", "T", "A", "K"} and texts
    legend = fig.legends[0].get_window_extent()
    ax = fig.axes[0]
    for line in ax.lines:
        for x, y in line.get_xydata():
            px, py = ax.transData.transform((x, y))
            assert not (legend.x0 <= px <= legend.x1 and legend.y0 <= py <= legend.y1)


@pytest.mark.parametrize("lo, hi", [(4000, 4160), (6080, 6200)])
def test_step_1_dobench_sweep_is_one_curve_per_alignment_not_a_band(lo, hi):
    # 6080..6200 (issue 24's held-out step-1 sweep) has 60 alignment cliffs, fewer than
    # DENSE_MARKERS: it is still a sweep of every N, drawn without a marker at each odd N
    sizes = list(range(lo, hi + 1))
    est = [gemm(n, n, n, timing="dobench") for n in sizes]
    cliffs = mystery_cliffs(sizes, est)
    causes = {c for _, c, _ in cliffs}
    assert "alignment" in causes and causes <= set(CLIFF_CAUSES)
    fig = mystery(sizes, timing="dobench")
    ax = fig.axes[0]
    assert _markers(ax) < 40 and len(ax.texts) == 0
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert sum("aligned (" in lab for lab in labels) >= 3
    assert any(lab.startswith("cliff: alignment") for lab in labels)


def _inside_figure(fig, artist):
    FigureCanvasAgg(fig).draw()
    box, page = artist.get_window_extent(), fig.bbox
    return page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1 and page.y0 - 1 <= box.y0 and box.y1 <= page.y1 + 1


def a_kernel_whose_name_is_much_longer_than_the_lanes_plot_is_wide_in_any_layout(x, out):
    i = cuda.grid(1)
    if i % 2 == 0:
        out[i] = x[i]


def test_lanes_plot_title_is_not_clipped(monkeypatch):
    from simgpu.stepper import step
    from simgpu.stepper.plot import warp_lanes
    monkeypatch.setenv("SIMGPU_EXECUTOR", "ir")
    x = np.arange(32, dtype=np.float32)
    st = step(a_kernel_whose_name_is_much_longer_than_the_lanes_plot_is_wide_in_any_layout, 1, 32,
              (x, np.zeros_like(x)))
    fig = warp_lanes(st)
    assert _inside_figure(fig, fig.axes[0].title)
    assert "SIMT efficiency" in fig.axes[0].get_title()


def copy(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i]


def test_timeline_top_panel_has_whole_sm_ticks_and_full_bars():
    import simgpu
    from simgpu.plot import timeline
    n = (132 * 8 + 5) * 256
    a = np.ones(n, np.float32)
    rep = simgpu.launch(copy, n // 256, 256, (a, np.zeros_like(a)))
    plan = rep.extras["timing"].plan
    assert plan.full_waves >= 1 and plan.tail_blocks_total == 5
    top = timeline(rep).axes[0]
    labels = [t.get_text() for t in top.get_yticklabels()]
    assert labels and all(lab.isdigit() for lab in labels)             # SM 0, 1, 2 ... not 0.5, 1.5
    heights = {}
    for coll in top.collections:
        for path in coll.get_paths():
            ys = path.vertices[:, 1]
            heights.setdefault(tuple(coll.get_facecolor()[0][:3]), []).append(ys.max() - ys.min())
    red = tuple(to_rgb("tab:red"))
    full = [h for c, hs in heights.items() for h in hs if not np.allclose(c, red) and h > 0]
    assert any(np.allclose(c, red) for c in heights)                    # the partial wave
    assert full and min(full) >= 0.79                                  # a wave fills its SM's band
