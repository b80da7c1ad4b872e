"""The first `simgpu demo` on a machine (issue 26): the memory model's numba code is compiled
for one array type (read-only addresses and masks, whatever the executor hands it), and it can
be compiled ahead, in a process of its own (simgpu.memory.warm), while the kernels compile."""
import numpy as np

import simgpu
from simgpu.kernels import vadd
from simgpu.kernels.demo import compile_kernels, demo_launches, finish_engine_compile
from simgpu.memory import model
from simgpu.memory.warm import compile_engine, engine_cached


def test_the_engine_sees_read_only_arrays(monkeypatch):
    seen = []
    real = model.global_event

    def spy(addr, mask, mask8, *rest):
        seen.append((addr.flags.writeable, mask.flags.writeable, mask8.flags.writeable))
        return real(addr, mask, mask8, *rest)
    monkeypatch.setattr(model, "global_event", spy)
    a = np.arange(256, dtype=np.float32)
    out = np.zeros_like(a)
    simgpu.launch(vadd, 2, 128, (a, a, out), timing=False)
    assert seen and set(seen) == {(False, False, False)}
    assert np.array_equal(out, 2 * a)


def test_read_only_keeps_the_values():
    a = np.arange(5)
    r = model.read_only(a)
    assert not r.flags.writeable and a.flags.writeable and np.array_equal(r, a)
    assert model.read_only(r) is r


def test_the_engine_compiles_ahead():
    compile_engine()                # compiled, or loaded from numba's cache
    assert engine_cached() in (True, False)     # False where numba cannot cache (or changed)
    assert finish_engine_compile(None) is False


def test_the_demo_kernels_compile_ahead():
    launches = demo_launches()
    assert compile_kernels(launches) in (0, len(launches))     # 0: the IR path is the default
