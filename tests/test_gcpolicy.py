"""runtime/gcpolicy.py: a launch defers full garbage collections and puts the thresholds back."""
from __future__ import annotations

import gc

import numpy as np
import pytest

import simgpu
from simgpu.events import Observer
from simgpu.kernels import vadd
from simgpu.runtime.gcpolicy import FULL_EVERY, fewer_full_collections


def test_full_collections_deferred_inside_and_restored_after():
    old = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with fewer_full_collections():
            assert gc.get_threshold() == (700, 10, FULL_EVERY)
            with fewer_full_collections():          # nested: left as it is
                assert gc.get_threshold() == (700, 10, FULL_EVERY)
            assert gc.get_threshold() == (700, 10, FULL_EVERY)
        assert gc.get_threshold() == (700, 10, 10)
        with pytest.raises(ValueError):
            with fewer_full_collections():
                raise ValueError("the launch failed")
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(700, 10, 5000)              # a program's own higher threshold stays
        with fewer_full_collections():
            assert gc.get_threshold() == (700, 10, 5000)
        assert gc.get_threshold() == (700, 10, 5000)
    finally:
        gc.set_threshold(*old)


def test_a_launch_runs_with_it():
    seen = []

    class Watch(Observer):
        def launch_begin(self, info):
            seen.append(gc.get_threshold()[2])

    old = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        x = np.zeros(32, np.float32)
        simgpu.launch(vadd, (1,), (32,), (x, x, np.zeros(32, np.float32)), observers=[Watch()])
        assert seen == [FULL_EVERY]
        assert gc.get_threshold() == (700, 10, 10)
    finally:
        gc.set_threshold(*old)


@pytest.mark.parametrize("timing", [True, False])
def test_a_launch_keeps_no_array_alive_after_it_returns(timing):
    """The models' per-launch state holds reference cycles that only a full collection frees
    (simpy's environment, the trace recorder); the arrays must not wait for it: once the launch
    has returned and the caller drops them, they are gone with no collection at all."""
    import weakref
    n = 4096
    a, b, out = (np.arange(n, dtype=np.float32), np.ones(n, np.float32), np.zeros(n, np.float32))
    refs = [weakref.ref(x) for x in (a, b, out)]
    # the process's first launch imports numba.cuda, whose __init__ keeps an exception whose
    # traceback holds the importing frames (that launch's arguments among them): warm up first
    simgpu.launch(vadd, 1, 32, [np.zeros(32, np.float32)] * 3, timing=timing)
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        rep = simgpu.launch(vadd, (n + 255) // 256, 256, [a, b, out], timing=timing)
        assert out[5] == 6.0 and rep.metrics["smsp__inst_executed.sum"] > 0
        del a, b, out
        assert [r() is None for r in refs] == [True, True, True]
    finally:
        if was:
            gc.enable()
