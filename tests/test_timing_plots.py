"""The timing figures build headless (Agg) from Reports, and say what they show."""
import numpy as np

import simgpu
from simgpu.plot.timing import roofline, sm_schedule, timeline

from test_timing_model import _f32, copy, fma_loop


def test_timeline_and_roofline_figures():
    n = 132 * 8 * 256 + 5 * 256
    rep = simgpu.launch(fma_loop, (n // 256,), (256,), (_f32(n), np.zeros(n, np.float32), np.int32(8)))
    fig = timeline(rep)
    top, bottom = fig.axes[:2]
    assert "blocks on SMs" in top.get_title() and "warp" in bottom.get_ylabel()
    rows = sm_schedule(rep.extras["timing"])
    assert sum(1 for r in rows if r[4]) == 5            # the 5 blocks of the partial wave
    m = 132 * 256
    rep2 = simgpu.launch(copy, (132,), (256,), (_f32(m), np.zeros(m, np.float32)))
    fig2 = roofline([rep, rep2])                        # the copy has no FLOPs: left out
    assert len(fig2.axes[0].lines) >= 3
    fig.savefig("/dev/null", format="png")
