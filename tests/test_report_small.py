"""Reports for small launches and learners (issue 12, part 4): per-thread counts (GPU-Puzzles'
scores), titles as the user wrote the kernel, launches smaller than one wave, the shared rows'
wavefront column.  Both execution paths."""
import numpy as np
import pytest
from numba import cuda, float32

import simgpu
from simgpu.runtime.report import kernel_title
from simgpu.sass.toolchain import compiled_path_available

PATHS = ["ir", pytest.param("ptx", marks=pytest.mark.skipif(not compiled_path_available()[0],
                                                            reason="no numba-cuda/ptxas"))]


def pool_test(cuda):                    # GPU-Puzzles' style: a kernel made by a function
    def call(out, a, size):
        i = cuda.threadIdx.x
        if i < size:
            s = a[i]
            if i >= 1:
                s += a[i - 1]
            if i >= 2:
                s += a[i - 2]
            out[i] = s
    return call


def shared_test(cuda):
    TPB = 8

    def call(out, a, size):
        shared = cuda.shared.array(TPB, float32)
        i = cuda.threadIdx.x
        if i < size:
            shared[i] = a[i]
        cuda.syncthreads()
        if i < size:
            out[i] = shared[i] + shared[(i + 1) % TPB]
    return call


def copy(out, a):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i]


@pytest.mark.parametrize("executor", PATHS)
def test_per_thread_global_reads_and_writes(executor):
    out, a = np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
    rep = simgpu.launch(pool_test(cuda), 1, 8, (out, a, 8), executor=executor)
    assert list(out) == [0, 1, 3, 6, 9, 12, 15, 18]
    pt = rep.per_thread
    assert pt.threads == 8
    reads, writes = pt.get("global", "reads"), pt.get("global", "writes")
    assert (reads.max, reads.total, reads.mean) == (3, 21, 21 / 8)     # 1 + 2 + 3 * 6 reads
    assert (writes.max, writes.mean) == (1, 1.0)
    assert pt.summary() == {"global reads": (3, 2.625), "global writes": (1, 1.0)}
    lines = {ln: row for (f, ln), row in pt.by_line.items()}
    first = pool_test.__code__.co_firstlineno
    assert lines[first + 4][("global", "reads")].total == 8            # s = a[i]
    assert lines[first + 6][("global", "reads")].total == 7            # a[i - 1]
    assert lines[first + 8][("global", "reads")].total == 6            # a[i - 2]
    text = str(rep)
    assert "Per thread (each thread's global and shared memory accesses: max and mean over the 8 threads" in text
    assert "  global reads           3 max       2.62 mean" in text
    assert "<td>global reads</td><td style='text-align:right'>3</td>" in rep._repr_html_()


@pytest.mark.parametrize("executor", PATHS)
def test_per_thread_shared(executor):
    out, a = np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
    rep = simgpu.launch(shared_test(cuda), 1, 8, (out, a, 8), executor=executor)
    assert out[0] == 1 and out[7] == 7
    pt = rep.per_thread
    assert (pt.get("shared", "reads").max, pt.get("shared", "writes").max) == (2, 1)
    assert (pt.get("global", "reads").max, pt.get("global", "writes").max) == (1, 1)


def test_titles_name_the_kernel_as_written():
    assert kernel_title("map_test.<locals>.call") == "map_test"
    assert kernel_title("outer.<locals>.map_test.<locals>.call") == "map_test"
    assert kernel_title("saxpy") == "saxpy"
    out, a = np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
    rep = simgpu.launch(pool_test(cuda), 1, 8, (out, a, 8), executor="ir")
    assert rep.title == "pool_test"
    assert str(rep).startswith("simgpu report: pool_test  on H200  (kernel 'call', defined in pool_test)")
    assert repr(rep).startswith("<simgpu.Report pool_test ")
    assert "simgpu report: pool_test</b>" in rep._repr_html_()
    rep = simgpu.launch(copy, 1, 8, (out, a), executor="ir")
    assert str(rep).startswith("simgpu report: copy  on H200\n")


@pytest.mark.parametrize("executor", PATHS)
def test_a_launch_smaller_than_one_wave_shows_what_matters_at_that_size(executor):
    out, a = np.zeros(4, np.float32), np.arange(4, dtype=np.float32)
    rep = simgpu.launch(copy, 1, 4, (out, a), executor=executor)
    assert rep.small_launch
    text = str(rep)
    assert "= 4 threads in 1 warp: less than one wave" in text
    assert "a launch smaller than one wave: its time is latency" in text
    assert "SMs busy                                  1 of 132" in text
    assert "warps                                     1 (1 per block; 4 of 32 lanes busy" in text
    for gpu_wide in ("TFLOP/s", "occupancy  ", "block starts", "roofline point"):
        assert gpu_wide not in text, gpu_wide
    assert "gpu__time_duration.sum" in rep.metrics          # the numbers are all still there
    assert "less than one wave" in rep._repr_html_()


def test_a_full_launch_keeps_the_gpu_wide_view():
    n = 300 * 1024                       # 300 blocks of 1024 threads: more than one wave (264)
    out, a = np.zeros(n, np.float32), np.ones(n, np.float32)
    rep = simgpu.launch(copy, 300, 1024, (out, a), executor="ir", sample=True)
    assert not rep.small_launch
    text = str(rep)
    assert "roofline point" in text and "less than one wave" not in text


def test_shared_rows_put_wavefronts_in_their_own_column():
    out, a = np.zeros(8, np.float32), np.arange(8, dtype=np.float32)
    rep = simgpu.launch(shared_test(cuda), 1, 8, (out, a, 8), executor="ir", timing=False)
    lines = str(rep).splitlines()
    head = next(ln for ln in lines if ln.lstrip().startswith("level"))
    end = head.index("wavefronts") + len("wavefronts")
    row = next(ln for ln in lines if ln.lstrip().startswith("shared    ld"))
    wf = rep.bytes_by_level["shared"]["ld"]["wavefronts"]
    assert row[:end].rstrip().endswith(f" {wf}")                 # under the wavefronts heading
    assert row[head.index("sectors") - 7:head.index("sectors") + 7].strip() == ""   # no sectors
    assert row.rstrip().endswith("0 bank conflicts")


def test_per_thread_counts_add_up_over_chunks():
    def pool_grid(out, a, size):
        i = cuda.grid(1)
        if i < size:
            s = a[i]
            if i % 8 >= 1:
                s += a[i - 1]
            out[i] = s
    out, a = np.zeros(32, np.float32), np.arange(32, dtype=np.float32)
    one = simgpu.launch(pool_grid, 4, 8, (out, a, 32), executor="ir", timing=False).per_thread
    many = simgpu.launch(pool_grid, 4, 8, (out, a, 32), executor="ir", timing=False, chunk_lanes=32).per_thread
    for pt in (one, many):
        assert pt.threads == 32
        r = pt.get("global", "reads")
        assert (r.max, r.total) == (2, 32 + 28)
    assert {k: (c.max, c.total) for k, c in one.counts.items()} == \
        {k: (c.max, c.total) for k, c in many.counts.items()}
