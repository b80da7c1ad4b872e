"""progress: a launch that will take long says so at once, with an estimate and a progress bar.

The estimate is measured, not modelled.  A launch runs its blocks in chunks (runtime/launch.py);
when the first chunk to run is done, its wall time per block -- the executor with every
observer attached: the memory model, the timing model's recording of its sampled blocks, the
sanitizer -- times the blocks of all the chunks to run is the launch's estimate (a sampled
launch, ``sample=True``, counts only the chunks holding sampled blocks).  After each later
chunk the estimate is made again: the first chunk as it ran, the later chunks' rate per block
times the blocks after the first (the first chunk pays one-off costs -- first writes into fresh
arrays, caches filling -- that extrapolated would overstate a short launch several times); that
is the bar's ETA.  After the first chunk alone only an estimate of at least ``SURE`` (3) times
the threshold is said; otherwise the line waits for the second chunk's rate.  What numba
compiles on first use while a chunk runs (simgpu's compiled memory model, the first time it
runs on a machine: numba's "numba:compile" events, :func:`compile_seconds`) is a one-time cost:
it is counted once, not extrapolated.  Not in it: the
timing model's final simulation of its sampled waves (after the last chunk; it simulates
one SM over a few waves, whatever the grid, so it does not grow with the launch), and
compiling (before the first chunk).

If the estimate exceeds ``settings.current().slow_launch_seconds`` (default 10 s;
``$SIMGPU_SLOW_LAUNCH_SECONDS``), one line on stderr names the kernel, the estimate and how to
make it faster, and then the progress shows: a bar with the ETA on a terminal, a plain line at
each quarter elsewhere (a log stays short).  ``progress=False`` silences both; ``progress=True``
shows the progress whatever the estimate.  The first chunk is the earliest moment a measured
estimate exists: a launch of one or two big chunks says so only after its first.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable

from .. import settings

clock: Callable[[], float] = time.perf_counter     # the wall clock (tests put a fake one here)
BAR_WIDTH = 30
PLAIN_STEPS = 4         # without a terminal: a line at each quarter
SURE = 3.0              # a first chunk's estimate this many times the threshold is said at once


_COMPILING = {"seconds": 0.0, "depth": 0, "since": 0.0, "listening": False}


def compile_seconds():
    """Seconds numba has spent compiling in this process since this was first asked, outermost
    compiles only (0 where numba is not loaded: nothing of it can compile then)."""
    if not _COMPILING["listening"] and "numba" in sys.modules:
        listen_to_numba()
    return _COMPILING["seconds"]


def listen_to_numba():
    """Register a listener of numba's "numba:compile" events (numba.core.event)."""
    try:
        from numba.core import event
    except ImportError:             # a numba without its event API: compiling counts as work
        _COMPILING["listening"] = True
        return

    class CompileListener(event.Listener):
        def on_start(self, ev):
            if _COMPILING["depth"] == 0:
                _COMPILING["since"] = time.perf_counter()
            _COMPILING["depth"] += 1

        def on_end(self, ev):
            _COMPILING["depth"] -= 1
            if _COMPILING["depth"] == 0:
                _COMPILING["seconds"] += time.perf_counter() - _COMPILING["since"]
    event.register("numba:compile", CompileListener())
    _COMPILING["listening"] = True


def seconds_text(s):
    """'8 s', '42 s', '3 min 5 s', '2 h 10 min'."""
    s = max(0.0, float(s))
    if s < 10:
        return f"{s:.1f} s"
    if s < 60:
        return f"{s:.0f} s"
    if s < 3600:
        m, r = divmod(int(round(s)), 60)
        return f"{m} min {r} s"
    h, r = divmod(int(round(s)), 3600)
    return f"{h} h {r // 60} min"


def advice(sampled):
    """How to make a slow launch faster (a sampled launch: only fewer blocks help)."""
    if sampled:
        return "to make it faster, launch fewer blocks (a smaller problem)"
    return ("to make it faster, pass sample=True (simgpu.predict(..., sample=True) runs only the waves the "
            "timing model samples, and scales the counts) or launch fewer blocks")


class LaunchProgress:
    """The estimate, the one line and the progress of one launch's chunks.

    option: the launch's ``progress`` (False: silent; True: progress shown; None: only when
    the estimate exceeds ``threshold``).  ``begin(sizes)`` before the first chunk runs (the
    number of blocks of each chunk to run), ``done(n_blocks)`` after each."""

    def __init__(self, kernel, option=None, threshold=None, sampled=False, launch_text="") -> None:
        self.kernel = kernel
        self.option = option
        self.threshold = settings.current().slow_launch_seconds if threshold is None else float(threshold)
        self.sampled = sampled
        self.launch_text = launch_text          # "4096 x 256 threads"
        self.stream = None
        self.tty = False
        self.sizes: list = []
        self.total_blocks = 0
        self.blocks_done = 0
        self.chunks_done = 0
        self.t0 = 0.0
        self.estimate: float | None = None      # seconds, once the first chunk is done
        self.first = (0.0, 0)                   # the first chunk's work seconds and blocks
        self.compiling = 0.0                    # of the time so far: numba compiling (once)
        self.c0 = 0.0
        self.said = False                       # the one line is out
        self.showing = False                    # the bar (or the plain lines) is on
        self.next_plain = 1

    # -- the executor's chunk loop ------------------------------------------------------------
    def begin(self, sizes):
        self.sizes = list(sizes)
        self.total_blocks = sum(self.sizes)
        self.stream = sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty()) if isatty is not None else False
        self.showing = self.option is True and len(self.sizes) > 0
        self.c0 = compile_seconds()
        self.t0 = clock()

    def done(self, n_blocks):
        if self.option is False or not self.total_blocks:
            return
        self.blocks_done += n_blocks
        self.chunks_done += 1
        elapsed = clock() - self.t0
        self.compiling = min(elapsed, max(0.0, compile_seconds() - self.c0))
        work = elapsed - self.compiling         # what grows with the blocks
        if self.chunks_done == 1:
            self.first = (work, self.blocks_done)
            self.estimate = self.compiling + work * self.total_blocks / max(1, self.blocks_done)
        else:
            # the first chunk pays one-off costs besides compiling (first writes into fresh
            # arrays, caches filling): it counts as it ran, the later chunks' rate is extrapolated
            # (the 16M-thread vector add: 19 s estimated from its first chunk alone, 2 s taken)
            w1, b1 = self.first
            later = max(0.0, work - w1) / max(1, self.blocks_done - b1)
            self.estimate = self.compiling + w1 + later * (self.total_blocks - b1)
        # after the first chunk only a clearly long launch speaks; the others wait for a
        # second chunk's rate (where there is one) before saying anything
        sure = self.chunks_done > 1 or len(self.sizes) <= 2 or self.estimate > SURE * self.threshold
        if not self.said and sure and self.estimate > self.threshold and self.chunks_done < len(self.sizes):
            self.say()
            self.showing = True
        if self.showing:
            self.show(elapsed)

    # -- what it writes -----------------------------------------------------------------------
    def message(self):
        """The one line: the kernel, the estimate, how to make it faster."""
        what = f" ({self.launch_text})" if self.launch_text else ""
        first = "its first chunk" if self.chunks_done == 1 else f"its first {self.chunks_done} chunks"
        once = (f", {seconds_text(self.compiling)} of it compiling simgpu's models (once)"
                if self.compiling >= 0.05 else "")
        return (f"simgpu: {self.kernel}{what} will take about {seconds_text(self.estimate or 0.0)} to simulate "
                f"(measured on {first} of {len(self.sizes)}{once}); {advice(self.sampled)}; progress=False "
                f"hides this")

    def say(self):
        self.said = True
        self._write(("\n" if self.tty and self.showing else "") + self.message() + "\n")

    def show(self, elapsed):
        n, total = self.chunks_done, len(self.sizes)
        left = max(0.0, (self.estimate or 0.0) - elapsed)
        if self.tty:
            k = int(BAR_WIDTH * self.blocks_done / self.total_blocks)
            eta = "done" if n == total else f"ETA {seconds_text(left)}"
            self._write(f"\r  simgpu {self.kernel}: [{'#' * k}{'.' * (BAR_WIDTH - k)}] {n}/{total} chunks, "
                        f"{seconds_text(elapsed)}, {eta}  " + ("\n" if n == total else ""))
            return
        if n == total or self.blocks_done * PLAIN_STEPS >= self.next_plain * self.total_blocks:
            while self.next_plain * self.total_blocks <= self.blocks_done * PLAIN_STEPS:
                self.next_plain += 1
            tail = "done" if n == total else f"about {seconds_text(left)} left"
            self._write(f"  simgpu {self.kernel}: {n}/{total} chunks, {seconds_text(elapsed)}, {tail}\n")

    def _write(self, text):
        s = self.stream if self.stream is not None else sys.stderr
        try:
            s.write(text)
            s.flush()
        except (OSError, ValueError):       # a closed stderr does not stop the launch
            pass
