"""Progress and honesty (issue 26): a launch estimated to take longer than the threshold
(simgpu.settings' slow_launch_seconds, 10 s) says so on stderr at once, with the estimate and how
to make it faster, then shows its progress; progress=False silences it.  No test times anything:
a fake clock (runtime/progress.py's `clock`) makes every chunk take what the test says."""
import io
import itertools
import sys

import numpy as np
import pytest

import simgpu
from simgpu import settings
from simgpu.kernels import vadd
from simgpu.runtime import progress as progress_mod
from simgpu.runtime.progress import LaunchProgress, seconds_text

N = 64 * 16          # 16 blocks of 64 threads; chunk_lanes=128: 2 blocks a chunk, 8 chunks


@pytest.fixture(autouse=True)
def no_compiling(monkeypatch):
    """numba compiling the memory model (a cold cache) is real time, not the fake clock's."""
    monkeypatch.setattr(progress_mod, "compile_seconds", lambda: 0.0)


def fake_clock(seconds_per_call):
    ticks = itertools.count()
    return lambda: next(ticks) * seconds_per_call


def _launch(**kw):
    a = np.arange(N, dtype=np.float32)
    out = np.zeros_like(a)
    rep = simgpu.launch(vadd, N // 64, 64, (a, a, out), timing=False, memory=False, chunk_lanes=128, **kw)
    assert np.array_equal(out, 2 * a)
    return rep


def test_a_slow_launch_says_so_at_once(monkeypatch, capsys):
    monkeypatch.setattr(progress_mod, "clock", fake_clock(5.0))     # 5 s a chunk: 8 chunks, 40 s
    _launch()
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert "vadd" in lines[0] and "will take about 40 s" in lines[0], err
    assert "measured on its first chunk of 8" in lines[0]
    assert "sample=True" in lines[0] and "fewer blocks" in lines[0] and "progress=False" in lines[0]
    assert err.count("will take about") == 1                      # said once
    # not a terminal: a plain line at each quarter, the last one "done"
    plain = [ln for ln in lines[1:] if ln.startswith("  simgpu vadd:")]
    assert plain[-1].startswith("  simgpu vadd: 8/8 chunks") and plain[-1].endswith("done")
    assert 2 <= len(plain) <= 4


def test_a_quick_launch_says_nothing(monkeypatch, capsys):
    monkeypatch.setattr(progress_mod, "clock", fake_clock(1.0))     # 8 s in all: under 10 s
    _launch()
    assert capsys.readouterr().err == ""


def test_the_threshold_is_a_setting(monkeypatch, capsys):
    monkeypatch.setattr(progress_mod, "clock", fake_clock(1.0))
    with settings.override(slow_launch_seconds=5):
        _launch()
    assert "will take about 8.0 s" in capsys.readouterr().err
    with settings.override(slow_launch_seconds="inf"):
        monkeypatch.setattr(progress_mod, "clock", fake_clock(1000.0))
        _launch()
    assert capsys.readouterr().err == ""
    with pytest.raises(simgpu.SimGPUError, match="slow_launch_seconds"):
        with settings.override(slow_launch_seconds=-1):
            pass


def test_progress_false_silences_it(monkeypatch, capsys):
    monkeypatch.setattr(progress_mod, "clock", fake_clock(100.0))
    _launch(progress=False)
    assert capsys.readouterr().err == ""


def test_progress_true_shows_the_progress_of_a_quick_launch(monkeypatch, capsys):
    monkeypatch.setattr(progress_mod, "clock", fake_clock(0.01))
    _launch(progress=True)
    err = capsys.readouterr().err
    assert "will take" not in err and "8/8 chunks" in err


def test_a_sampled_launch_counts_only_its_chunks_and_advises_fewer_blocks(monkeypatch, capsys):
    monkeypatch.setattr(progress_mod, "clock", fake_clock(20.0))
    a = np.arange(1 << 16, dtype=np.float32)
    out = np.zeros_like(a)
    rep = simgpu.launch(vadd, a.size // 32, 32, (a, a, out), memory=False, sample=True, chunk_lanes=1024)
    executed = rep.extras["sampled_execution"]["executed_blocks"]
    assert executed < a.size // 32
    err = capsys.readouterr().err
    line = err.splitlines()[0]
    assert "to make it faster, launch fewer blocks" in line and "sample=True" not in line
    ran = int(line.split(" of ")[1].split(")")[0])         # "measured on its first chunk of K"
    assert ran < (a.size // 32) // 32                      # fewer than the launch's chunks


def test_the_bar_on_a_terminal(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True
    tty = Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    monkeypatch.setattr(progress_mod, "clock", fake_clock(4.0))
    p = LaunchProgress("k", None, threshold=10.0, launch_text="8 blocks x 32 threads")
    p.begin([1] * 4)
    for _ in range(4):
        p.done(1)
    text = tty.getvalue()
    assert "k (8 blocks x 32 threads) will take about 16 s" in text
    assert "\r  simgpu k: [" in text and "ETA" in text and text.endswith("done  \n")


def test_compiling_is_counted_once_not_extrapolated(monkeypatch, capsys):
    compiled = iter([0.0, 30.0] + [30.0] * 10)          # the first chunk compiles for 30 s
    monkeypatch.setattr(progress_mod, "compile_seconds", lambda: next(compiled))
    monkeypatch.setattr(progress_mod, "clock", fake_clock(32.0))     # first chunk: 30 s + 2 s of work
    p = LaunchProgress("k", None, threshold=100.0)
    p.begin([1] * 10)
    p.done(1)
    assert p.estimate == pytest.approx(30.0 + 2.0 * 10)      # not 32 x 10
    assert capsys.readouterr().err == ""


def test_a_slow_first_chunk_is_not_extrapolated(monkeypatch, capsys):
    """A first chunk that pays one-off costs (8 s) before chunks of 0.5 s: the estimate is the
    first chunk plus the later chunks' rate (8 + 9 x 0.5), and it is not said after the first
    chunk (80 s extrapolated) but after the second, where it is under the threshold."""
    times = iter([0.0, 8.0] + [8.0 + 0.5 * k for k in range(1, 10)])
    monkeypatch.setattr(progress_mod, "clock", lambda: next(times))
    p = LaunchProgress("k", None, threshold=30.0)
    p.begin([1] * 10)
    p.done(1)
    assert p.estimate == pytest.approx(80.0)        # under 3 x 30 s: not said yet
    p.done(1)
    assert p.estimate == pytest.approx(8.0 + 0.5 * 9)
    for _ in range(8):
        p.done(1)
    assert capsys.readouterr().err == ""


def test_seconds_text():
    assert seconds_text(3.21) == "3.2 s" and seconds_text(42) == "42 s"
    assert seconds_text(185) == "3 min 5 s" and seconds_text(7800) == "2 h 10 min"
