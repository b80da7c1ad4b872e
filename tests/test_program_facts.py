"""Launch.facts (simgpu.events.ProgramFacts): both executors fill it before the models are
built, and the memory model takes it in its constructor (nothing is written into the model
afterwards)."""
import numpy as np
import pytest

import simgpu
from simgpu import cuda
from simgpu.events import Observer, ProgramFacts
from simgpu.hardware import get_gpu
from simgpu.memory import MemoryModel


def local_and_atomic(x, out, total):
    i = cuda.grid(1)
    tmp = cuda.local.array(10, np.float32)
    for k in range(10):
        tmp[k] = x[i] + k
    s = 0.0
    for k in range(10):
        s += tmp[(i + k) % 10]
    out[i] = s
    cuda.atomic.add(total, 0, s)            # result unused: a reduction (RED)


class Facts(Observer):
    def launch_begin(self, launch):
        self.facts = launch.facts


@pytest.mark.parametrize("executor", ["ptx", "ir"])
def test_both_executors_fill_the_program_facts(executor):
    x = np.arange(64, dtype=np.float32)
    out, total = np.zeros_like(x), np.zeros(1, np.float32)
    obs = Facts()
    simgpu.launch(local_and_atomic, 1, 64, (x, out, total), observers=[obs], executor=executor,
                        timing=False)
    f = obs.facts
    assert isinstance(f, ProgramFacts)
    assert f.local_frame_bytes >= 16 and f.local_frame_bytes % 16 == 0
    assert len(f.reduction_ids) == 1
    assert np.allclose(total[0], out.sum(), rtol=1e-5)


def test_the_memory_model_takes_the_facts_in_its_constructor():
    class L:
        threads_per_block, warps_per_block, smem_bytes, fn = 128, 4, 0, None
        facts = ProgramFacts(local_frame_bytes=48, reduction_ids=frozenset({7}))
    mm = MemoryModel(get_gpu("H200"), L())
    assert mm.local_frame == 48 and mm.red_ids == {7}


@pytest.mark.parametrize("executor", ["ptx", "ir"])
def test_the_facts_carry_the_kernels_variable_types(executor):
    """ProgramFacts.var_types: the kernel's typed variables (the timing model reads loop bounds'
    types from the facts, not from the program object): the IR's on the IR path; the compiled
    path has none of its own (numba's typing is not kept), an empty dict, never a probe."""
    x = np.arange(64, dtype=np.float32)
    out, total = np.zeros_like(x), np.zeros(1, np.float32)
    obs = Facts()
    simgpu.launch(local_and_atomic, 1, 64, (x, out, total), observers=[obs], executor=executor,
                  timing=False)
    assert isinstance(obs.facts.var_types, dict)
    if executor == "ir":
        assert {"i", "s", "k"} <= set(obs.facts.var_types)
