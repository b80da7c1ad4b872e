"""simgpu.model.tricks: the closed-form TIMES of tricks 1, 4, 5, 6 (no timing, no device)."""
from pathlib import Path

import pytest

from simgpu.hardware import H200
from simgpu.model import tricks


def test_divergence_doubles_issue_time():
    u = tricks.divergence_time(H200, 4224 * 256, 256, divergent=False)
    d = tricks.divergence_time(H200, 4224 * 256, 256, divergent=True)
    assert 1.9 < d / u < 2.0
    # issue-bound: twice the iterations, about twice the time
    assert tricks.divergence_time(H200, 4224 * 256, 512, divergent=False) == pytest.approx(2 * u, rel=0.02)
    # a warp with all lanes on one side runs one side
    one_side = tricks.divergence_time(H200, 4224 * 256, 256, divergent=True, lanes_if=32)
    assert one_side == pytest.approx(u)


def test_recomputation_moves_fewer_bytes():
    t = tricks.recomputation_times(H200, 1 << 25)
    store = t["store"]["fwd"] + t["store"]["bwd"]
    rec = t["recompute"]["fwd"] + t["recompute"]["bwd"]
    assert rec / store == pytest.approx(5 / 9, rel=0.02)
    assert t["store"]["fwd"] > t["recompute"]["fwd"]


def test_coalescing_granules():
    base = tricks.coalescing_time(H200, 1 << 25, 1)
    # a fixed array: strides up to 16 fp32 (64 B) touch every 64-byte granule, so cost the same
    for s in (2, 4, 8, 16):
        assert tricks.coalescing_time(H200, (1 << 25) // s, s) == pytest.approx(base, rel=1e-3)
    # stride 32 touches every other granule: about half
    assert 0.45 < tricks.coalescing_time(H200, (1 << 25) // 32, 32) / base < 0.55


def test_tiling_time_falls_with_tile():
    naive = tricks.tiling_time(H200, 512, 1)
    assert tricks.tiling_time(H200, 512, 16) < naive / 4
    # past the shared-memory bound a larger tile saves nothing more
    assert tricks.tiling_time(H200, 512, 64) == pytest.approx(tricks.tiling_time(H200, 512, 32))
    with pytest.raises(ValueError):
        tricks.divergence_time(H200, 256, 1, divergent=True, lanes_if=40)


def test_lecture_tricks_example_quick(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "examples"))
    import lecture_tricks
    assert lecture_tricks.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for key in ("closed form", "divergent / uniform", "naive / tiled", "recompute / store", "stride 32"):
        assert key in out


def test_mystery_plot_draws_repeat_band():
    from simgpu.plot.model import mystery
    sizes = [1024, 1088, 1152, 1216]
    fig = mystery(sizes, [500, 520, 400, 520], spread=([480, 500, 380, 500], [520, 540, 420, 540]),
                  reproducible=[1088])
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert "measured: repeat range" in labels and "reproducible measured cliff" in labels
