"""The model's figures build headless and save as PNG."""
import numpy as np

from simgpu.hardware import H200
from simgpu.model.roofline import roofline_point
from simgpu.plot import model as plot_model


def test_every_figure_saves(tmp_path):
    figs = {
        "roofline": plot_model.roofline_plot([roofline_point(H200, "saxpy", 2, 12)], H200),
        "mystery": plot_model.mystery_plot(H200, np.arange(1000, 1100, 7)),
        "tpu": plot_model.tpu_vs_gpu_plot(H200, "v4", np.arange(8, 300, 8)),
        "attention": plot_model.attention_plot(H200, [512, 1024]),
        "tricks": plot_model.six_tricks_plot(H200),
    }
    for name, fig in figs.items():
        path = tmp_path / f"{name}.png"
        fig.savefig(path)
        assert path.stat().st_size > 10_000


def test_mystery_labels_cliffs_by_cause():
    from simgpu.model import gemm
    from simgpu.plot.model import cliff_cause, mystery
    sizes = [4088, 4096, 4097, 4104]
    fig = mystery(sizes, measured=[700, 720, 120, 700])
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert "A" in labels                                   # 4096 -> 4097: the align1 fallback
    assert cliff_cause(gemm(4096, 4096, 4096), gemm(4097, 4097, 4097)) == "alignment"
    before, after = gemm(128 * 12, 128 * 11, 4096), gemm(128 * 12, 128 * 11 + 64, 4096)
    assert cliff_cause(before, after) in ("wave", "tile")
