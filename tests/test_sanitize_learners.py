"""The sanitizer on learner kernels (GPU-Puzzles style), correct and buggy, on both paths.

Each buggy kernel marks the lines its finding must name with `# <- tag` comments; a correct
kernel must give no finding at all.  Outputs of the correct kernels are checked too (shared
memory starts poisoned now, so a kernel that leaned on zeros would fail here)."""
import inspect

import numpy as np
import pytest

from simgpu._compat import patch_numpy_for_numba

patch_numpy_for_numba()

from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu.errors import KernelError  # noqa: E402
from simgpu.sanitize import collecting  # noqa: E402
from simgpu.sass.toolchain import compiled_path_available  # noqa: E402

TPB = 8
EXECUTORS = ["ir", pytest.param("ptx", marks=pytest.mark.skipif(
    not compiled_path_available()[0], reason="needs numba-cuda and ptxas"))]


# -- correct kernels ----------------------------------------------------------------------
def map_guard(a, out, size):
    i = cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + 10


def zip_(a, b, out, size):
    i = cuda.threadIdx.x
    if i < size:
        out[i] = a[i] + b[i]


def broadcast(a, b, out, size):
    i = cuda.threadIdx.x
    j = cuda.threadIdx.y
    if i < size and j < size:
        out[i, j] = a[i, 0] + b[0, j]


def pool(a, out, size):
    shared = cuda.shared.array(TPB, np.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    t = cuda.threadIdx.x
    if i < size:
        shared[t] = a[i]
    cuda.syncthreads()
    if i < size:
        acc = shared[t]
        if t >= 1:
            acc += shared[t - 1]
        if t >= 2:
            acc += shared[t - 2]
        out[i] = acc


def dot(a, b, out, size):
    shared = cuda.shared.array(TPB, np.float32)
    i = cuda.threadIdx.x
    shared[i] = a[i] * b[i] if i < size else np.float32(0)
    cuda.syncthreads()
    if i == 0:
        acc = np.float32(0)
        for k in range(TPB):
            acc += shared[k]
        out[0] = acc


def prefix_sum(a, out, size):
    cache = cuda.shared.array(TPB, np.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    t = cuda.threadIdx.x
    cache[t] = a[i] if i < size else np.float32(0)
    cuda.syncthreads()
    s = 1
    while s < TPB:
        v = cache[t - s] if t >= s else np.float32(0)
        cuda.syncthreads()
        cache[t] += v
        cuda.syncthreads()
        s *= 2
    if t == TPB - 1:
        out[cuda.blockIdx.x] = cache[t]


def axis_sum(a, out, size):
    cache = cuda.shared.array(TPB, np.float32)
    t = cuda.threadIdx.x
    row = cuda.blockIdx.y
    cache[t] = a[row, t] if t < size else np.float32(0)
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if t < s:
            cache[t] += cache[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[row, 0] = cache[0]


def matmul(a, b, out, size):
    sa = cuda.shared.array((TPB, TPB), np.float32)
    sb = cuda.shared.array((TPB, TPB), np.float32)
    i = cuda.blockIdx.x * TPB + cuda.threadIdx.x
    j = cuda.blockIdx.y * TPB + cuda.threadIdx.y
    ti, tj = cuda.threadIdx.x, cuda.threadIdx.y
    acc = np.float32(0)
    for k0 in range(0, size, TPB):
        sa[ti, tj] = a[i, k0 + tj] if i < size and k0 + tj < size else np.float32(0)
        sb[ti, tj] = b[k0 + ti, j] if j < size and k0 + ti < size else np.float32(0)
        cuda.syncthreads()
        for k in range(TPB):
            acc += sa[ti, k] * sb[k, tj]
        cuda.syncthreads()
    if i < size and j < size:
        out[i, j] = acc


def falloff_barrier(a, out, size):
    """The refused-but-correct pattern: threads past the end fall off the `if`, not
    `return`; the barrier waits only for the threads that have not exited."""
    shared = cuda.shared.array(TPB, np.float32)
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    t = cuda.threadIdx.x
    if i < size:
        shared[t] = a[i]
        cuda.syncthreads()
        out[i] = shared[t] + (shared[t - 1] if t >= 1 else np.float32(0))


def warp_synced(a, out, size):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]
    cuda.syncwarp(0xFFFFFFFF)
    out[t] = sh[t ^ 1]


def atomic_total(a, out, size):
    i = cuda.grid(1)
    if i < size:
        cuda.atomic.add(out, 0, a[i])


# -- buggy kernels ------------------------------------------------------------------------
def dot_missing_barrier(a, b, out, size):
    shared = cuda.shared.array(TPB, np.float32)
    i = cuda.threadIdx.x
    shared[i] = a[i] * b[i]                   # <- W
    if i == 0:
        acc = np.float32(0)
        for k in range(TPB):
            acc += shared[k]                  # <- R
        out[0] = acc


def sum_uninit(a, out, size):
    cache = cuda.shared.array(TPB, np.float32)
    t = cuda.threadIdx.x
    if t < size:
        cache[t] = a[t]
    cuda.syncthreads()
    if t == 0:
        acc = np.float32(0)
        for k in range(TPB):
            acc += cache[k]                   # <- R
        out[0] = acc


def barrier_if_else(a, out, size):
    t = cuda.threadIdx.x
    if t % 2 == 0:
        out[t] = a[t]
        cuda.syncthreads()                    # <- A
    else:
        out[t] = -a[t]
        cuda.syncthreads()                    # <- B


def barrier_in_loop(a, out, size):
    t = cuda.threadIdx.x
    acc = np.float32(0)
    for k in range(t):
        acc += a[k]
        cuda.syncthreads()                    # <- A
    cuda.syncthreads()                        # <- B
    out[t] = acc


def off_by_one(a, out, size):
    i = cuda.threadIdx.x
    if i <= size:
        out[i] = a[i]                         # <- R


def warp_unsynced(a, out, size):
    sh = cuda.shared.array(32, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]                              # <- W
    out[t] = sh[t ^ 1]                        # <- R


def syncwarp_across_warps(a, out, size):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    sh[t] = a[t]                              # <- W
    cuda.syncwarp(0xFFFFFFFF)                 # orders a warp's lanes, not two warps
    out[t] = sh[(t + 32) % 64]                # <- R


def blocks_race(a, out, size):
    i = cuda.grid(1)
    if i < size and cuda.threadIdx.x == 0:
        out[0] = out[0] + a[i]                # <- R


def shfl_partial(a, out, size):
    t = cuda.threadIdx.x
    v = a[t]
    if t < 16:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, 1)    # <- R
    out[t] = v


def _f32(*shape, seed=0):
    return np.random.default_rng(seed).random(shape).astype(np.float32)


def _line(fn, tag):
    lines, first = inspect.getsourcelines(fn)
    for k, text in enumerate(lines):
        if text.rstrip().endswith(f"# <- {tag}"):
            return first + k
    raise AssertionError(f"no '# <- {tag}' in {fn.__name__}")


def _run(kernel, grid, block, args, executor):
    return simgpu.launch(kernel, grid, block, args, executor=executor, check=True, timing=False,
                         memory=False)


CORRECT = [
    ("map_guard", map_guard, 1, TPB, lambda: (_f32(6), np.zeros(6, np.float32), 6),
     lambda a, out, n: a + 10),
    ("zip", zip_, 1, TPB, lambda: (_f32(8), _f32(8, seed=1), np.zeros(8, np.float32), 8),
     lambda a, b, out, n: a + b),
    ("broadcast", broadcast, 1, (4, 4), lambda: (_f32(3, 1), _f32(1, 3, seed=1), np.zeros((3, 3), np.float32), 3),
     lambda a, b, out, n: a + b),
    ("pool", pool, 2, TPB, lambda: (_f32(13), np.zeros(13, np.float32), 13), None),
    ("dot", dot, 1, TPB, lambda: (_f32(6), _f32(6, seed=1), np.zeros(1, np.float32), 6),
     lambda a, b, out, n: np.array([np.dot(a, b)], np.float32)),
    ("prefix_sum", prefix_sum, 2, TPB, lambda: (_f32(15), np.zeros(2, np.float32), 15),
     lambda a, out, n: np.array([a[:8].sum(), a[8:].sum()], np.float32)),
    ("axis_sum", axis_sum, (1, 4), TPB, lambda: (_f32(4, 6), np.zeros((4, 1), np.float32), 6),
     lambda a, out, n: a.sum(axis=1, keepdims=True)),
    ("matmul", matmul, (2, 2), (TPB, TPB), lambda: (_f32(11, 11), _f32(11, 11, seed=1),
                                                    np.zeros((11, 11), np.float32), 11),
     lambda a, b, out, n: a @ b),
    ("falloff_barrier", falloff_barrier, 2, TPB, lambda: (_f32(13), np.zeros(13, np.float32), 13), None),
    ("warp_synced", warp_synced, 1, 32, lambda: (_f32(32), np.zeros(32, np.float32), 32),
     lambda a, out, n: a.reshape(16, 2)[:, ::-1].reshape(-1)),
    ("atomic_total", atomic_total, 4, TPB, lambda: (_f32(30), np.zeros(1, np.float32), 30),
     lambda a, out, n: np.array([a.sum()], np.float32)),
]


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("name,kernel,grid,block,make,ref", CORRECT, ids=[c[0] for c in CORRECT])
def test_correct_learner_kernels_have_no_findings_and_right_results(name, kernel, grid, block, make, ref, executor):
    args = make()
    rep = _run(kernel, grid, block, args, executor)
    assert len(rep.sanitizer) == 0, rep.sanitizer.summary()
    assert "ERROR SUMMARY: 0 errors" in str(rep)
    out = args[-2]
    if ref is not None:
        np.testing.assert_allclose(out, ref(*args), rtol=1e-5)
    else:
        assert np.isfinite(out).all()


def test_pool_and_falloff_results(executor="ir"):
    for ex in ("ir",) + (("ptx",) if compiled_path_available()[0] else ()):
        a = _f32(13)
        out = np.zeros(13, np.float32)
        _run(falloff_barrier, 2, TPB, (a, out, 13), ex)
        prev = np.where(np.arange(13) % TPB >= 1, np.roll(a, 1), 0)
        np.testing.assert_allclose(out, a + prev, rtol=1e-6)


BUGGY = [
    # name, kernel, grid, block, args, {(tool, kind): (loc tag, other-loc tag or None)}
    ("dot_missing_barrier", dot_missing_barrier, 1, TPB,
     lambda: (_f32(8), _f32(8, seed=1), np.zeros(1, np.float32), 8), {("racecheck", "RAW"): ("R", "W")}),
    ("sum_uninit", sum_uninit, 1, TPB, lambda: (_f32(8), np.zeros(1, np.float32), 5),
     {("initcheck", "uninitialized read"): ("R", None)}),
    ("barrier_if_else", barrier_if_else, 1, TPB, lambda: (_f32(8), np.zeros(8, np.float32), 8),
     {("synccheck", "divergent barrier"): ("AB", "AB")}),
    ("barrier_in_loop", barrier_in_loop, 1, TPB, lambda: (_f32(8), np.zeros(8, np.float32), 8),
     {("synccheck", "divergent barrier"): ("AB", "AB")}),
    ("warp_unsynced", warp_unsynced, 1, 32, lambda: (_f32(32), np.zeros(32, np.float32), 32),
     {("racecheck", "RAW"): ("R", "W")}),
    ("syncwarp_across_warps", syncwarp_across_warps, 1, 64, lambda: (_f32(64), np.zeros(64, np.float32), 64),
     {("racecheck", "RAW"): ("R", "W")}),
    ("blocks_race", blocks_race, 4, TPB, lambda: (_f32(32), np.zeros(1, np.float32), 32),
     {("racecheck", "WAW"): ("R", "R"), ("racecheck", "WAR"): ("R", "R")}),   # the blocks' reads all come first
]


def _tagged(kernel, tags):
    return {f"{kernel.__code__.co_filename}:{_line(kernel, t)}" for t in tags}


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("name,kernel,grid,block,make,expected", BUGGY, ids=[c[0] for c in BUGGY])
def test_buggy_learner_kernels_are_caught_at_their_lines(name, kernel, grid, block, make, expected, executor):
    rep = _run(kernel, grid, block, make(), executor)
    san = rep.sanitizer
    got = {(f.tool, f.kind) for f in san}
    assert got == set(expected), san.summary()
    for f in san:
        loc_tags, other_tags = expected[(f.tool, f.kind)]
        assert f.loc in _tagged(kernel, loc_tags), (f.loc, san.summary())
        if other_tags:
            assert f.other_loc in _tagged(kernel, other_tags), (f.other_loc, san.summary())
        assert f.block is not None and f.thread is not None
    assert f"ERROR SUMMARY: {len(san)} error" in str(rep)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_uninitialised_read_names_array_index_thread(executor):
    rep = _run(sum_uninit, 1, TPB, (_f32(8), np.zeros(1, np.float32), 5), executor)
    (f,) = rep.sanitizer.findings
    assert f.thread == (0, 0, 0) and f.block == (0, 0, 0)
    assert "'cache'[5]" in f.message and "__shared__" in f.message


@pytest.mark.parametrize("executor", EXECUTORS)
def test_racecheck_names_both_threads(executor):
    rep = _run(warp_unsynced, 1, 32, (_f32(32), np.zeros(32, np.float32), 32), executor)
    (f,) = rep.sanitizer.findings
    t, o = f.thread[0], f.other_thread[0]
    assert t ^ 1 == o and f.count == 32


@pytest.mark.parametrize("executor", EXECUTORS)
def test_off_by_one_is_a_memcheck_finding_and_stops_the_launch(executor):
    """check=True: the fault stops the launch and is a finding of the report returned (issue 23:
    it used to be raised)."""
    rep = _run(off_by_one, 1, TPB, (_f32(6), np.zeros(6, np.float32), 6), executor)
    text = str(rep)
    where = f"{off_by_one.__code__.co_filename}:{_line(off_by_one, 'R')}"
    if executor == "ir":        # the IR path checks the array's own bounds
        (f,) = rep.sanitizer.findings
        assert f.tool == "memcheck" and f.loc == where and f.thread == (6, 0, 0)
        assert "out of bounds" in rep.extras["fault"].replace("-", " ")
        assert "Stopped by a fault" in text and "ERROR SUMMARY: 1 error" in text
    else:   # the compiled path: a[6] and out[6] lie in cuMemAlloc's rounding and run, as on the GPU
        read, write = rep.sanitizer.findings
        assert {read.kind, write.kind} == {"invalid read", "invalid write"}
        assert {read.array, write.array} == {"a", "out"}
        for f in (read, write):
            assert f.tool == "memcheck" and f.loc == where and f.thread == (6, 0, 0)
            assert "inside cuMemAlloc's rounding to 512 bytes" in f.message
        assert "fault" not in rep.extras and "ERROR SUMMARY: 2 errors" in text


@pytest.mark.parametrize("executor", EXECUTORS)
def test_off_by_one_in_a_collecting_program_is_raised_as_the_gpu_fails_the_launch(executor):
    """Inside collecting() (simgpu run --check), check=None: the program's launch fails, with the
    summary as a note, as a launch under compute-sanitizer fails."""
    n = 6 if executor == "ir" else 128      # the compiled path runs a[n] inside cuMemAlloc's rounding
    with collecting() as col, pytest.raises(KernelError) as e:
        simgpu.launch(off_by_one, 1, 256 if n > TPB else TPB, (_f32(n), np.zeros(n, np.float32), n),
                      executor=executor, timing=False, memory=False)
    (f,) = e.value.sanitizer.findings
    assert f.tool == "memcheck" and col.report.errors == 1
    assert "ERROR SUMMARY: 1 error" in "".join(getattr(e.value, "__notes__", []))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_partial_warp_shuffle_with_full_mask_is_a_synccheck_finding(executor):
    args = (_f32(32), np.zeros(32, np.float32), 32)
    try:
        rep = _run(shfl_partial, 1, 32, args, executor)
        san = rep.sanitizer
    except KernelError as e:            # the compiled path stops at it (its own check)
        san = e.sanitizer
    (f,) = san.findings
    assert f.tool == "synccheck"
    assert f.loc == f"{shfl_partial.__code__.co_filename}:{_line(shfl_partial, 'R')}"


def test_tools_can_be_picked_and_check_is_off_by_default():
    args = (_f32(8), _f32(8, seed=1), np.zeros(1, np.float32), 8)
    assert simgpu.launch(dot_missing_barrier, 1, TPB, args, executor="ir", timing=False).sanitizer is None
    rep = simgpu.launch(dot_missing_barrier, 1, TPB, args, executor="ir", timing=False, check="initcheck")
    assert len(rep.sanitizer) == 0 and rep.sanitizer.tools == ("initcheck",)
    rep = simgpu.launch(dot_missing_barrier, 1, TPB, args, executor="ir", timing=False, check=["racecheck"])
    assert [f.tool for f in rep.sanitizer] == ["racecheck"]
    with pytest.raises(simgpu.errors.LaunchError):
        simgpu.launch(dot_missing_barrier, 1, TPB, args, executor="ir", check="racechek")


@pytest.mark.parametrize("executor", EXECUTORS)
def test_divergent_barrier_without_the_sanitizer(executor):
    """Without check=True the IR path refuses a truly divergent barrier naming both places;
    the compiled path runs it as the hardware's barrier counting would."""
    args = (_f32(8), np.zeros(8, np.float32), 8)
    if executor == "ir":
        with pytest.raises(KernelError, match="skipped the barrier at"):
            simgpu.launch(barrier_if_else, 1, TPB, args, executor=executor, timing=False)
    else:
        simgpu.launch(barrier_if_else, 1, TPB, args, executor=executor, timing=False)


def test_dedup_counts_per_line_pair():
    rep = _run(dot_missing_barrier, 4, TPB, (_f32(8), _f32(8, seed=1), np.zeros(1, np.float32), 8), "ir")
    kinds = sorted((f.tool, f.kind) for f in rep.sanitizer)
    # every block reads what its own threads wrote without a barrier; plus the blocks all
    # write out[0]: a write-after-write between blocks
    assert ("racecheck", "RAW") in kinds and ("racecheck", "WAW") in kinds
    raw = [f for f in rep.sanitizer if f.kind == "RAW" and f.space == "shared"]
    assert len(raw) == 1 and raw[0].count == 4 * (TPB - 1)
