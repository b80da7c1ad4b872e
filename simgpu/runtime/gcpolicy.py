"""Python's cyclic garbage collector during a launch (issue 26).

A launch builds hundreds of thousands of long-lived objects (the timing model's trace, its
per-warp programs, the SM simulation's state) while it runs: with Python's default thresholds
each launch then triggers full (oldest-generation) collections that walk the whole heap, which
took 0.2-0.5 s of a 2.5 s 512x512 tiled-matmul launch here.  During a launch full collections
wait for `FULL_EVERY` collections of the middle generation instead of 10; the young generations
are collected as usual, so cycles that die young are freed as before.  Nothing the launch
computes depends on it."""
from __future__ import annotations

import gc
from contextlib import contextmanager

FULL_EVERY = 1000


@contextmanager
def fewer_full_collections():
    """Raise the oldest generation's threshold to FULL_EVERY for the block (nested blocks and
    a threshold already higher leave it as it is), then put it back."""
    old = gc.get_threshold()
    if len(old) < 3 or old[2] >= FULL_EVERY:
        yield
        return
    ours = (old[0], old[1], FULL_EVERY)
    gc.set_threshold(*ours)
    try:
        yield
    finally:
        if gc.get_threshold() == ours:          # not changed meanwhile by someone else
            gc.set_threshold(*old)


__all__ = ["fewer_full_collections", "FULL_EVERY"]
