"""The perfect-memory experiment (memory=PerfectMemory): traffic is counted as it happens,
the timing model sees every access hit the L1, so memory-bound kernels get faster and
compute-bound ones do not."""
import os
import sys

import numpy as np

import simgpu
from simgpu.kernels import copy_gridstride, fp32_fma
from simgpu.memory import PerfectMemory

T = "gpu__time_duration.sum"


def _both(kernel, grid, block, make):
    real = simgpu.launch(kernel, grid, block, make(), sample=True)
    ideal = simgpu.launch(kernel, grid, block, make(), sample=True, memory=PerfectMemory)
    return real, ideal


def test_a_bandwidth_bound_copy_loses_its_memory_time():
    """A copy bound by L2/DRAM bandwidth is much faster with perfect memory; it moves the same sectors."""
    x = np.random.default_rng(0).random(1 << 22, dtype=np.float32)
    real, ideal = _both(copy_gridstride, 132 * 2, 512, lambda: (x, np.empty_like(x)))
    assert "bandwidth" in real.extras["timing"].bottleneck
    assert ideal.metrics[T] < 0.8 * real.metrics[T]
    sect = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    assert ideal.metrics[sect] == real.metrics[sect]
    assert ideal.extras["timing"].dram_bytes == 0


def test_an_arithmetic_chain_barely_changes():
    """A chain of dependent FMAs is within 10 % of its time with perfect memory."""
    x = np.random.default_rng(0).random(264 * 256, dtype=np.float32)
    real, ideal = _both(fp32_fma, 264, 256, lambda: (x, np.empty_like(x), 256))
    assert ideal.metrics[T] <= real.metrics[T]
    assert ideal.metrics[T] > 0.9 * real.metrics[T]


def test_the_lesson_runs():
    """examples/lesson_perfect_memory.py measures its three kernels."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
    import lesson_perfect_memory as lesson
    rows = lesson.measure()
    assert [r[0] for r in rows] == ["copy 64 MiB", "fp32 FMA chain", "tiled matmul 256"]
    assert all(ideal <= real * 1.0001 for _, real, ideal, _ in rows)
