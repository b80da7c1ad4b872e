"""Loops whose deciding state goes round in a cycle (`x = 1 - x`: period 2, up to 8) are
stopped as runaways on both paths, soon (by the error's type under a small instruction
budget that a missed detection would spend: never a timer); correct loops with periodic
parts are not stopped (issue 12, part 3; exec/budget.py's progress_check)."""
import numpy as np
import pytest
from numba import cuda

import simgpu
from simgpu.exec.budget import CYCLE_FROM, CYCLE_MAX, RunawayLoopError, progress_check
from simgpu.sass.toolchain import compiled_path_available

PATHS = ["ir", pytest.param("ptx", marks=pytest.mark.skipif(not compiled_path_available()[0],
                                                            reason="no numba-cuda/ptxas"))]
SMALL = simgpu.Budget(instructions=200_000)      # a missed detection ends in BudgetExceededError


def flip(x, n):
    i = cuda.threadIdx.x
    k = 0
    while k < n:
        k = 1 - k                   # 0, 1, 0, 1, ...: never reaches n = 5
    x[i] = k


def period3(x, n):
    i = cuda.threadIdx.x
    k = i % 3
    acc = 0
    while k < n:
        k = (k + 1) % 3             # 3 states; acc grows but decides nothing
        acc += 1
    x[i] = k + acc


def collatz(x, n):
    i = cuda.threadIdx.x
    v = n + i
    steps = 0
    while v > 0:                    # meant `v > 1`: 4, 2, 1, 4, 2, 1, ... after a transient
        if v % 2 == 0:
            v = v // 2
        else:
            v = 3 * v + 1
        steps += 1
    x[i] = steps


def period8(x, n):
    i = cuda.threadIdx.x
    k = 0
    while k < n:
        k = (k + 3) % 8             # 8 states
    x[i] = k


def flip_and_count(x, n):           # correct: k ends it, f flips along
    i = cuda.threadIdx.x
    k = 0
    f = 0
    s = 0
    while k < n:
        f = 1 - f
        if f == 1:
            s += 1
        k += 1
    x[i] = s


def ping_pong(x, n):                # correct: the flag alternates but the count goes down
    i = cuda.threadIdx.x
    left = n
    side = 0
    while left > 0:
        side = 1 - side
        left -= side
    x[i] = side + 10 * left


@pytest.mark.parametrize("executor", PATHS)
@pytest.mark.parametrize("kernel,n,period", [(flip, 5, 2), (period3, 5, 3), (collatz, 7, 3), (period8, 8, 8)])
def test_a_cycle_is_stopped(executor, kernel, n, period):
    with pytest.raises(RunawayLoopError) as e:
        simgpu.launch(kernel, 1, 4, (np.zeros(4, np.int64), np.int64(n)), executor=executor, timing=False,
                      budget=SMALL)
    msg = str(e.value)
    assert "makes no progress" in msg and "go round in a cycle" in msg
    assert f"in kernel '{kernel.__name__}'" in msg
    if executor == "ir":            # the compiled loop may be unrolled: its period a divisor's multiple
        assert f"every {period} iterations they are back where they were" in msg
    if kernel is flip:
        assert "`while k < n:`" in msg and "the loop changes k, but back to earlier values" in msg


@pytest.mark.parametrize("executor", PATHS)
def test_correct_loops_with_periodic_parts_complete(executor):
    x = np.zeros(4, np.int64)
    simgpu.launch(flip_and_count, 1, 4, (x, np.int64(301)), executor=executor, timing=False)
    assert list(x) == [151] * 4
    y = np.zeros(4, np.int64)
    simgpu.launch(ping_pong, 1, 4, (y, np.int64(100)), executor=executor, timing=False)
    assert list(y) == [1] * 4


def test_progress_check_windows():
    snaps = [n for n in range(1, 200) if progress_check(n, -1, False)[1]]
    assert snaps == [1, 2, 4, 8, 16, 32, 64, 128]
    # before CYCLE_FROM: only the iteration after a snapshot; from it on, CYCLE_MAX of them
    assert [n for n in range(2, 16) if progress_check(n, 1 << (n - 1).bit_length() - 1, False)[0]] == \
        [2, 3, 5, 9]
    assert [n for n in range(17, 32) if progress_check(n, CYCLE_FROM, False)[0]] == \
        list(range(17, 17 + CYCLE_MAX))
    assert [n for n in range(17, 32) if progress_check(n, CYCLE_FROM, True)[0]] == [17]   # full state
