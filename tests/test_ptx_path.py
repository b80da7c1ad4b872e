"""executor="ptx": simgpu.launch runs the code numba-cuda compiles (runtime/ptx_path.py).

Outputs must equal the IR interpreter's; the memory model sees the addresses the compiled
code issues; instruction counts come from ptxas' SASS per PTX line.  Needs numba-cuda (NVVM)
and the ptxas/nvdisasm wheels; skipped cleanly without them.
"""
import math

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu import settings  # noqa: E402
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda, float32, int32  # noqa: E402

import simgpu  # noqa: E402
from simgpu.runtime.executor import default_executor  # noqa: E402
from simgpu.errors import KernelError, LaunchError  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()

from simgpu.sass import compile_kernel  # noqa: E402

TILE = 16
TB = 128          # threads per block of the reductions


@pytest.fixture(autouse=True, scope="module")
def _private_cache(tmp_path_factory):
    with settings.override(cache_dir=str(tmp_path_factory.getbasetemp() / "ptx-path-cache")):
        yield


# -- kernels ---------------------------------------------------------------------------------
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def matmul_tiled(A, B, C, n):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for t in range((n + TILE - 1) // TILE):
        k = t * TILE
        if row < n and k + tx < n:
            sA[ty, tx] = A[row, k + tx]
        else:
            sA[ty, tx] = float32(0.0)
        if col < n and k + ty < n:
            sB[ty, tx] = B[k + ty, col]
        else:
            sB[ty, tx] = float32(0.0)
        cuda.syncthreads()
        for j in range(TILE):
            acc += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = acc


def tree_reduce(x, partial):
    s = cuda.shared.array(TB, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * TB + t
    s[t] = x[i] if i < x.size else float32(0.0)
    cuda.syncthreads()
    stride = TB // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        partial[cuda.blockIdx.x] = s[0]


def histogram(data, hist):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(hist, data[i] % hist.size, 1)


def warp_sum(x, out):
    i = cuda.grid(1)
    v = x[i] if i < x.size else 0
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


def divergent(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if i % 3 == 0:
            v = v * 2 + 1
        elif i % 3 == 1:
            for k in range(i % 7):
                v += k
        else:
            v = -v
        out[i] = v


def transpose_tiled(inp, out):
    tile = cuda.shared.array((32, 33), float32)
    x = cuda.blockIdx.x * 32 + cuda.threadIdx.x
    y = cuda.blockIdx.y * 32 + cuda.threadIdx.y
    if x < inp.shape[1] and y < inp.shape[0]:
        tile[cuda.threadIdx.y, cuda.threadIdx.x] = inp[y, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * 32 + cuda.threadIdx.x
    y = cuda.blockIdx.x * 32 + cuda.threadIdx.y
    if x < out.shape[1] and y < out.shape[0]:
        out[y, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y]


def local_acc(x, out):
    i = cuda.grid(1)
    acc = cuda.local.array(8, float32)
    for j in range(8):
        acc[j] = x[i] * j
    s = float32(0.0)
    for j in range(8):
        s += acc[j]
    out[i] = s


def local_select(x, idx, out):
    i = cuda.grid(1)
    acc = cuda.local.array(64, float32)
    for j in range(64):
        acc[j] = x[i] * j
    out[i] = acc[idx[i] % 64]


def local_scatter(idx, out):
    i = cuda.grid(1)
    acc = cuda.local.array(32, int32)
    for j in range(32):
        acc[j] = 0
    for j in range(8):
        acc[idx[i * 8 + j] % 32] += j + 1
    s = 0
    for j in range(32):
        s += acc[j] * j
    out[i] = s


def unguarded(x, out):
    i = cuda.grid(1)
    out[i] = x[i] * 2


# -- helpers ---------------------------------------------------------------------------------
def both(kernel, grid, block, make_args, **kw):
    """Run `kernel` on fresh copies of the arguments with both executors: (reports, args)."""
    out = {}
    for ex in ("ir", "ptx"):
        args = make_args()
        rep = simgpu.launch(kernel, grid, block, args, executor=ex, timing=False, **kw)
        out[ex] = (rep, args)
    return out


def metric(rep, name):
    return rep.metrics[name]


# -- outputs ---------------------------------------------------------------------------------
def test_saxpy_outputs_equal():
    """saxpy: the compiled code fuses a*x+y into one fma.rn.f32, so the PTX path equals the
    correctly rounded a*x+y exactly; so does the IR path, which fuses the multiply-adds NVPTX
    contracts (it did not: found by this test; tests/test_ir_vs_ptx_bugs.py)."""
    rng = np.random.default_rng(0)
    x, y = rng.random(1000, np.float32), rng.random(1000, np.float32)
    r = both(saxpy, 4, 256, lambda: (np.float32(2.5), x.copy(), y.copy(), np.zeros(1000, np.float32)))
    fused = (2.5 * x.astype(np.float64) + y).astype(np.float32)
    assert np.array_equal(r["ptx"][1][3], fused)
    assert np.array_equal(r["ir"][1][3], r["ptx"][1][3])


def test_tiled_matmul_outputs_equal_on_ragged_size():
    """Tiled matmul with n = 50 (not a multiple of the 16-wide tile): the same sequential
    k order on both paths, so the results agree to float32 rounding of the FMA chain."""
    n = 50
    rng = np.random.default_rng(1)
    A, B = rng.random((n, n), np.float32), rng.random((n, n), np.float32)
    g = (-(-n // TILE), -(-n // TILE))
    r = both(matmul_tiled, g, (TILE, TILE), lambda: (A.copy(), B.copy(), np.zeros((n, n), np.float32), n))
    ci, cp = r["ir"][1][2], r["ptx"][1][2]
    assert np.allclose(cp, A.astype(np.float64) @ B, rtol=1e-5)
    assert np.allclose(ci, cp, rtol=1e-6, atol=0)


def test_shared_tree_reduction_outputs_equal():
    """A shared-memory tree reduction: the same pairing order on both paths -> exact."""
    rng = np.random.default_rng(2)
    x = rng.random(1000, np.float32)
    nb = -(-1000 // TB)
    r = both(tree_reduce, nb, TB, lambda: (x.copy(), np.zeros(nb, np.float32)))
    assert np.array_equal(r["ir"][1][1], r["ptx"][1][1])
    assert np.isclose(r["ptx"][1][1].sum(), x.sum(), rtol=1e-5)


def test_histogram_atomics_outputs_equal():
    """Histogram with global atomics (integers): exact on both paths."""
    rng = np.random.default_rng(3)
    data = rng.integers(0, 1000, 5000).astype(np.int32)
    r = both(histogram, 20, 256, lambda: (data.copy(), np.zeros(37, np.int32)))
    expect = np.bincount(data % 37, minlength=37)
    assert np.array_equal(r["ir"][1][1], expect)
    assert np.array_equal(r["ptx"][1][1], expect)


def test_warp_shuffle_reduction_outputs_equal():
    """shfl_down_sync reduction of int32 per warp: exact on both paths."""
    x = np.arange(1000, dtype=np.int32)
    r = both(warp_sum, 4, 256, lambda: (x.copy(), np.zeros(32, np.int32)))
    expect = np.array([x[w * 32:(w + 1) * 32].sum() for w in range(32)], np.int32)
    assert np.array_equal(r["ir"][1][1], expect)
    assert np.array_equal(r["ptx"][1][1], expect)


def test_divergent_kernel_outputs_equal():
    """Three-way divergence with a data-dependent loop: exact (integers) on both paths, and
    both see divergent branches."""
    x = np.arange(777, dtype=np.int32)
    r = both(divergent, 4, 256, lambda: (x.copy(), np.zeros(777, np.int32)))
    assert np.array_equal(r["ir"][1][1], r["ptx"][1][1])
    i = np.arange(777)
    expect = np.where(i % 3 == 0, 2 * x + 1, np.where(i % 3 == 1, x + (i % 7) * (i % 7 - 1) // 2, -x))
    assert np.array_equal(r["ptx"][1][1], expect)
    assert metric(r["ptx"][0], "simgpu__divergent_branch_warp_executions.sum") > 0


class FakeDeviceArray:
    """What binding.bind_args takes for a numba DeviceNDArray: copy_to_host / copy_from_host."""

    def __init__(self, host):
        self.data = host.copy()

    def copy_to_host(self):
        return self.data.copy()

    def copy_from_host(self, host):
        self.data[...] = host


def test_jit_with_executor_option_device_and_strided_arrays():
    """simgpu.jit(f, executor="ptx")[g, b](...) works; results reach device arrays and
    non-contiguous arrays through binding.copy_back, as on the IR path."""
    k = simgpu.jit(saxpy, executor="ptx", timing=False)
    x, y = np.ones(300, np.float32), np.arange(300, dtype=np.float32)
    out = FakeDeviceArray(np.zeros(300, np.float32))
    k[2, 256](np.float32(3), x, y, out)
    assert np.array_equal(out.data, 3 * x + y)
    big = np.zeros(600, np.float32)
    k[2, 256](np.float32(2), FakeDeviceArray(x), y, big[::2])
    assert np.array_equal(big[::2], 2 * x + y) and not big[1::2].any()


# -- memory: the addresses the compiled code issues ------------------------------------------
GLOBAL = ["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
          "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
          "dram__bytes_read.sum"]
LOCAL = ["l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
         "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"]


def test_saxpy_global_requests_and_sectors_equal():
    """Coalesced saxpy: the compiled loads/stores give the memory model the same requests,
    sectors and DRAM bytes as the IR path (arrays at the same device addresses)."""
    n = 1000
    r = both(saxpy, 4, 256, lambda: (np.float32(2), np.ones(n, np.float32), np.ones(n, np.float32),
                                     np.zeros(n, np.float32)))
    for k in GLOBAL:
        assert metric(r["ir"][0], k) == metric(r["ptx"][0], k), k
    assert metric(r["ptx"][0], "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") == 64
    assert metric(r["ptx"][0], "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") == 250


def test_transpose_global_and_shared_counts_equal():
    """Tiled transpose through padded shared memory (ragged 200 x 300): global requests and
    sectors, DRAM bytes and shared-memory instructions equal between the two paths; shared
    addresses are block-relative offsets on both."""
    A = np.random.default_rng(4).random((200, 300), np.float32)
    r = both(transpose_tiled, (10, 7), (32, 32), lambda: (A.copy(), np.zeros((300, 200), np.float32)))
    assert np.array_equal(r["ptx"][1][1], A.T) and np.array_equal(r["ir"][1][1], A.T)
    for k in GLOBAL + ["smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum"]:
        assert metric(r["ir"][0], k) == metric(r["ptx"][0], k), k


def test_promoted_local_array_has_no_local_traffic_on_the_ptx_path():
    """A fully unrolled cuda.local.array accumulator: LLVM promotes it to registers, so the
    compiled code issues no local-memory access (and loads x[i] once), while the IR path
    interprets the array in local memory."""
    args = lambda: (np.ones(1024, np.float32), np.zeros(1024, np.float32))  # noqa: E731
    r = both(local_acc, 4, 256, args)
    assert r["ir"][1][1][0] == r["ptx"][1][1][0] == 28.0
    assert all(metric(r["ptx"][0], k) == 0 for k in LOCAL)
    assert metric(r["ir"][0], "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum") > 0
    ck = compile_kernel(local_acc, args(), gpu="H200")
    assert ".local" not in ck.ptx and ck.resources.stack_frame == 0
    assert metric(r["ptx"][0], "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum") == 32


def test_local_array_ptxas_turned_into_selects_has_no_local_traffic():
    """A dynamically indexed local array stays .local in the PTX (st.local.v4, ld.local), but
    ptxas replaces it with a chain of compares and predicated moves (stack frame 0, no
    LDL/STL): the PTX path counts no local traffic, since the hardware issues none."""
    args = lambda: (np.ones(1024, np.float32), np.arange(1024, dtype=np.int32), np.zeros(1024, np.float32))  # noqa: E731
    ck = compile_kernel(local_select, args(), gpu="H200")
    assert "st.local" in ck.ptx and "ld.local" in ck.ptx
    assert ck.resources.stack_frame == 0
    assert not any(i.base in ("LDL", "STL") for i in ck.sass.instructions)
    r = both(local_select, 4, 256, args)
    assert np.array_equal(r["ir"][1][2], r["ptx"][1][2])
    assert all(metric(r["ptx"][0], k) == 0 for k in LOCAL)
    assert metric(r["ir"][0], "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum") > 0


def test_local_array_in_memory_counts_the_compiled_vector_accesses():
    """A local array scattered into with data-dependent indices stays in local memory: the
    PTX path issues one request per warp per compiled access (the zero-fill as 16-byte
    vectors), i.e. 32 warps x the LDL/STL instructions of ptxas' SASS, not the IR path's one
    per element."""
    args = lambda: (np.arange(1024 * 8, dtype=np.int32) * 7, np.zeros(1024, np.int32))  # noqa: E731
    r = both(local_scatter, 4, 256, args)
    assert np.array_equal(r["ir"][1][1], r["ptx"][1][1])
    ck = r["ptx"][0].extras["ptx"]["compiled"]        # the code that ran
    stl = sum(i.base == "STL" for i in ck.sass.instructions)
    ldl = sum(i.base == "LDL" for i in ck.sass.instructions)
    assert ck.resources.stack_frame == 128 and stl and ldl
    st_ptx = sum(1 for ln in ck.ptx.splitlines() if ln.strip().startswith("st.local"))
    ld_ptx = sum(1 for ln in ck.ptx.splitlines() if ln.strip().startswith("ld.local"))
    # straight-line code (the loops are unrolled): every warp runs each access once
    assert metric(r["ptx"][0], "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum") == 32 * st_ptx == 32 * stl
    assert metric(r["ptx"][0], "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum") == 32 * ld_ptx
    # ptxas may merge or re-split the PTX's local loads (a known gap of the PTX path's memory
    # events, docs/compiled.md), and the PTX numba emits for this kernel varies a little
    # between compiles in one process (17-20 ld.local seen against 17-21 LDL)
    assert ldl > 0 and abs(ld_ptx - ldl) <= ldl // 2
    assert metric(r["ir"][0], "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum") > 32 * stl


def test_histogram_atomics_are_reductions_from_the_sass():
    """The histogram's atomic add (result unused) is RED in ptxas' SASS: the PTX path counts
    it under op_red, as the IR path's dead-result rule does, with the same requests."""
    data = np.arange(5000, dtype=np.int32)
    r = both(histogram, 20, 256, lambda: (data.copy(), np.zeros(37, np.int32)))
    ck = compile_kernel(histogram, (data, np.zeros(37, np.int32)), gpu="H200")
    assert any(i.base.startswith("RED") for i in ck.sass.instructions)
    for k in ("l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", "lts__t_sectors_op_red.sum"):
        assert metric(r["ptx"][0], k) == metric(r["ir"][0], k) > 0, k
    assert metric(r["ptx"][0], "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum") == 0


def test_matmul_memory_counts_follow_the_compiled_code():
    """Ragged tiled matmul: global traffic and shared loads equal the IR path's; shared
    stores are fewer on the PTX path, where the compiler turned the if/else zero-fill into a
    select and one store (the IR path stores on both sides of the divergent branch)."""
    n = 50
    r = both(matmul_tiled, (4, 4), (TILE, TILE),
             lambda: (np.ones((n, n), np.float32), np.ones((n, n), np.float32), np.zeros((n, n), np.float32), n))
    for k in GLOBAL + ["smsp__inst_executed_op_shared_ld.sum"]:
        assert metric(r["ir"][0], k) == metric(r["ptx"][0], k), k
    # 16 blocks x 8 warps x 4 tiles x 2 arrays: one STS per tile and array per warp
    assert metric(r["ptx"][0], "smsp__inst_executed_op_shared_st.sum") == 16 * 8 * 4 * 2
    assert metric(r["ir"][0], "smsp__inst_executed_op_shared_st.sum") > 16 * 8 * 4 * 2


# -- instruction counts from SASS ------------------------------------------------------------
def test_saxpy_inst_executed_is_sass_per_ptx_line_times_warps():
    """smsp__inst_executed on saxpy = sum over PTX lines of (warps executing it) x (SASS that
    ptxas made from it), computed here by hand from the facts: 1000 threads in 4 blocks of
    256 -> 32 warps; all 1024 threads run the index computation, the guard and the final
    `ret` (no user line; the body falls through to it), 1000 threads in 32 warps the body;
    thread counts likewise with the threads, but the final `ret`'s EXIT: the 24 threads past
    the end left at the guard's `@P0 EXIT`, so 1000 threads run it (its SASS block runs as the
    body's does, sass.flow's 'same' rule)."""
    args = (np.float32(2), np.ones(1000, np.float32), np.ones(1000, np.float32), np.zeros(1000, np.float32))
    rep = simgpu.launch(saxpy, 4, 256, args, executor="ptx", timing=False)
    ck = compile_kernel(saxpy, args, gpu="H200")
    lines = ck.ptx.splitlines()
    bra = next(n for n in range(1, len(lines) + 1) if " bra" in lines[n - 1])
    warps = threads = 0
    for n in ck.sass.sass_per_ptx_line.keys() | {ln for v in ck.sass.calls.values() for ln in v}:
        k = len(ck.sass.sass_for_ptx_line(n))
        if n <= bra:
            w, t = 32, 1024                # index and guard: every thread
        elif lines[n - 1].strip().startswith("ret"):
            w, t = 32, 1000                # the final ret: every warp, the threads still running
        else:
            w, t = 32, 1000                # the body
        warps += w * k
        threads += t * k
    assert rep.metrics["smsp__inst_executed.sum"] == warps
    assert rep.metrics["smsp__thread_inst_executed.sum"] == threads
    per_line = sum(v["inst_executed"] for v in rep.lines.values())
    assert per_line + rep.metrics["simgpu__inst_executed_no_source_line.sum"] == warps


def test_registers_per_thread_is_ptxas():
    """launch__registers_per_thread on the PTX path is ptxas' allocation for the kernel."""
    n = 50
    args = (np.zeros((n, n), np.float32), np.zeros((n, n), np.float32), np.zeros((n, n), np.float32), n)
    rep = simgpu.launch(matmul_tiled, (4, 4), (TILE, TILE), args, executor="ptx", timing=False)
    ck = compile_kernel(matmul_tiled, args, gpu="H200")
    assert rep.metrics["launch__registers_per_thread"] == ck.resources.registers
    assert rep.metrics["launch__shared_mem_per_block_static"] == ck.resources.shared_bytes == 2 * TILE * TILE * 4


def test_instruction_section_reads_the_same():
    """print(report) on the PTX path has the IR path's instruction lines, same metric names."""
    args = (np.float32(2), np.ones(100, np.float32), np.ones(100, np.float32), np.zeros(100, np.float32))
    text = str(simgpu.launch(saxpy, 1, 128, args, executor="ptx", timing=False))
    assert "smsp__inst_executed.sum" in text and "smsp__thread_inst_executed.sum" in text
    assert "launch__registers_per_thread" in text and "ptxas sm_90" in text


# -- errors ----------------------------------------------------------------------------------
def test_timing_is_on_by_default_on_the_ptx_path():
    """timing=None turns the timing model on for the compiled path too (tests/test_ptx_timing.py)."""
    args = (np.float32(2), np.ones(100, np.float32), np.ones(100, np.float32), np.zeros(100, np.float32))
    rep = simgpu.launch(saxpy, 1, 128, args, executor="ptx")
    assert rep.metrics["smsp__inst_executed.sum"] > 0 and rep.metrics["gpu__time_duration.sum"] > 0
    rep = simgpu.launch(saxpy, 1, 128, args, executor="ptx", timing=False)
    assert "gpu__time_duration.sum" not in rep.metrics


def test_out_of_bounds_names_thread_block_and_line():
    """Reading past an array in the compiled code is a KernelError naming the first faulting
    thread and block and the user's source line."""
    x = np.arange(100, dtype=np.int32)
    out = np.zeros(200, np.int32)
    with pytest.raises(KernelError) as e:     # x[100..127]: inside cuMemAlloc's 512-byte rounding
        simgpu.launch(unguarded, 3, 64, (x, out), executor="ptx", timing=False)
    err = e.value
    assert err.block == (2, 0, 0) and err.thread == (0, 0, 0)
    assert err.loc.endswith(f"test_ptx_path.py:{unguarded.__code__.co_firstlineno + 2}")
    assert "out-of-bounds" in str(err) and "thread (0, 0, 0)" in str(err) and "rounding" in str(err)


def test_the_default_executor_is_the_compiled_path_and_the_setting_overrides():
    """executor="auto" (the default) runs the PTX where the toolchain is installed (here);
    the executor setting ($SIMGPU_EXECUTOR) "ir" selects simgpu's IR path; an explicit
    executor= wins over both."""
    args = (np.float32(2), np.ones(64, np.float32), np.ones(64, np.float32), np.zeros(64, np.float32))
    with settings.override(executor="auto"):
        assert default_executor() == "ptx"
        assert simgpu.launch(saxpy, 1, 64, args, timing=False).extras.get("executor") == "ptx"
    with settings.override(executor="ir"):
        assert default_executor() == "ir"
        assert simgpu.launch(saxpy, 1, 64, args, timing=False).extras.get("executor") != "ptx"
        assert simgpu.launch(saxpy, 1, 64, args, timing=False, executor="ptx").extras.get("executor") == "ptx"
