"""Cooperative groups' grid-wide barrier (``cuda.cg.this_grid().sync()``) on the PTX executor:
every block runs to the barrier before any passes it (simgpu/ptx/devrt.py,
executor.release_grid_barrier), the launch is checked as a cooperative launch, and a block
that exits before the barrier is the deadlock it would be on the GPU.  Also bar.warp.sync with
diverged members (ops_warp.build_warp_sync)."""
import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu.errors import KernelError, LaunchError  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()


@pytest.fixture
def sim():
    with simgpu.installed(memory=False, sass=False) as s:
        yield s


@cuda.jit
def staggered(work, out):
    """Block b spends b * 7 iterations before writing its slot; after the grid barrier each
    thread reads the next block's slot; three barriers in a row.  (The executor's min-PC
    schedule alone would order this one; two_sides below needs the barrier itself.)"""
    g = cuda.cg.this_grid()
    b = cuda.blockIdx.x
    acc = 0
    for k in range(b * 7):
        acc += k % 3
    if cuda.threadIdx.x == 0:
        work[b] = acc + 1
    g.sync()
    i = cuda.grid(1)
    nb = cuda.gridDim.x
    out[i] = work[(b + 1) % nb]
    g.sync()                        # a second barrier: the grid passes it again, together
    if cuda.threadIdx.x == 0:
        work[b] = 0
    g.sync()
    out[i] += work[(b + 2) % nb]


def expected_staggered(nb, tpb):
    acc = np.array([sum(k % 3 for k in range(b * 7)) + 1 for b in range(nb)])
    return np.repeat(acc[(np.arange(nb) + 1) % nb], tpb)


def test_grid_sync_all_blocks_arrive_before_any_passes(sim):
    nb, tpb = 12, 64
    work = np.zeros(nb, np.int64)
    out = np.zeros(nb * tpb, np.int64)
    staggered[nb, tpb](work, out)
    np.testing.assert_array_equal(out, expected_staggered(nb, tpb))
    assert next(iter(staggered.overloads.values())).cooperative


@cuda.jit
def two_sides(a, out):
    """Block 0 and the others call g.sync() from different branches (legal: the barrier counts
    arrivals, not instructions).  The executor runs the first branch first: a barrier that did
    not hold block 0 would let it read a[1] before block 1 wrote it."""
    g = cuda.cg.this_grid()
    b = cuda.blockIdx.x
    i = cuda.grid(1)
    if b == 0:
        if cuda.threadIdx.x == 0:
            a[0] = 5
        g.sync()
        out[i] = a[1]
    else:
        if cuda.threadIdx.x == 0:
            a[b] = 7 * b
        g.sync()
        out[i] = a[0] + a[b]


def test_grid_sync_from_two_branches(sim):
    nb, tpb = 3, 32
    a = np.zeros(nb, np.int32)
    out = np.zeros(nb * tpb, np.int32)
    two_sides[nb, tpb](a, out)
    want = np.repeat(np.array([7] + [5 + 7 * b for b in range(1, nb)]), tpb)
    np.testing.assert_array_equal(out, want)


def test_grid_sync_with_ptxas_facts_counts_the_barrier():
    """ptxas assembles simgpu's device-runtime definitions with the kernel; the SASS of the
    barrier (block barriers, the arrival atomic) is counted at the user's g.sync() lines."""
    nb, tpb = 4, 32
    with simgpu.installed(memory=False, sass=True):
        work = np.zeros(nb, np.int64)
        out = np.zeros(nb * tpb, np.int64)
        staggered[nb, tpb](work, out)
        rep = next(iter(staggered.overloads.values())).last_report
    np.testing.assert_array_equal(out, expected_staggered(nb, tpb))
    facts = rep.extras["ptx"]["compiled"].facts
    ops = [i.opcode for ks in facts.kernels.values() for i in ks.instructions]
    ops += [s.opcode for ks in facts.kernels.values() for sub in ks.subroutines.values() for s in sub]
    assert any(o.startswith("BAR") for o in ops) and any(o.startswith(("ATOM", "RED")) for o in ops)
    assert rep.metrics["simgpu__grid_barriers.sum"] == 3     # three g.sync() in staggered
    assert rep.metrics["smsp__inst_executed.sum"] > 0


def test_cooperative_launch_too_large(sim):
    most = next(iter(staggered.overloads.values())).max_cooperative_grid_blocks(1024) \
        if staggered.overloads else None
    nb = 132 * 2 + 1 if most is None else most + 1
    with pytest.raises(LaunchError, match="COOPERATIVE_LAUNCH_TOO_LARGE"):
        staggered[nb, 1024](np.zeros(nb, np.int64), np.zeros(nb * 1024, np.int64))


@cuda.jit
def one_block_leaves(out):
    g = cuda.cg.this_grid()
    if cuda.blockIdx.x == 1:
        return
    g.sync()
    out[cuda.grid(1)] = 1


def test_block_exiting_before_grid_sync_is_a_deadlock(sim):
    with pytest.raises(KernelError, match="deadlock") as e:
        one_block_leaves[3, 32](np.zeros(96, np.int32))
    assert "block (1, 0, 0)" in str(e.value)


@cuda.jit
def partial_then_syncwarp(out):
    """numba's cuda.reduce shape: two lanes sync the warp inside an `if`, the others leave."""
    sm = cuda.shared.array(32, np.int32)
    t = cuda.threadIdx.x
    sm[t] = t + 1
    cuda.syncwarp()
    if t < 2:
        sm[t] += sm[t + 2]
        cuda.syncwarp()
    if t == 0:
        out[0] = sm[0] + sm[1]


def test_syncwarp_in_divergent_code_waits_for_the_others_to_leave(sim):
    out = np.zeros(1, np.int32)
    partial_then_syncwarp[1, 32](out)
    assert out[0] == (1 + 3) + (2 + 4)
