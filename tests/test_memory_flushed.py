"""AfterFlush (memory=AfterFlush): the L2 as do_bench's 256 MB memset leaves it -- full, its newest
lines dirty up to the GPU's l2_dirty_max_bytes.  A kernel's misses evict the clean lines first,
then write the dirty ones back, charged to the evicting instruction; the memset's lines are never
the kernel's dirty data at the end."""
import numpy as np
from numba import cuda

import simgpu
from simgpu.hardware import get_gpu
from simgpu.hardware.spec import CacheSpec
from simgpu.memory import AfterFlush
from simgpu.memory.cache import BYTES, FLUSH_WRITER, META, STAMP2, TAG, new_l2, set_dirty_cap
from simgpu.memory.flushed import fill_after_flush

KiB, MiB = 1 << 10, 1 << 20


@cuda.jit
def read_sum(a, out):
    i = cuda.grid(1)
    s = 0.0
    st = cuda.gridsize(1)
    while i < a.shape[0]:
        s += a[i]
        i += st
    if s == 1234.5:
        out[0] = s


def small_gpu(dirty_max):
    """The H200 with a 1 MiB L2 (512 sets of 16 ways): the flush's effects at test sizes."""
    g = get_gpu("H200")
    return g.with_(l2=CacheSpec(size_bytes=1 * MiB, line_bytes=128, sector_bytes=32, ways=16,
                                hit_latency_cycles=g.l2.hit_latency_cycles), l2_dirty_max_bytes=dirty_max)


def test_fill_leaves_every_line_present_and_the_newest_dirty():
    l2, l2r = new_l2(8, 4)
    dirty = fill_after_flush(l2, l2r, 128, 32, dirty_max_bytes=12 * 128)
    assert dirty == 12 * 128
    assert (l2[:, TAG, :] < -1).all() and len(np.unique(l2[:, TAG, :])) == 32
    d = (l2r[:, :, META] >> 16) & 0xFFFF
    assert ((d != 0).sum(axis=1) == [set_dirty_cap(12, r, 8) for r in range(8)]).all()
    for row in range(8):                        # the dirty ways are the set's newest (highest stamps)
        dw = np.flatnonzero(d[row])
        assert dw.min() == 4 - len(dw)
    assert (l2[:, STAMP2, :] < 1).all() and (np.diff(l2[:, STAMP2, :], axis=1) > 0).all()
    assert (l2r[:, :, META] & 0xFFFF == 0xF).all() and (l2r[:, :, META] >> 48 == FLUSH_WRITER).all()
    assert (l2r[:, :, BYTES] == -1).all()
    l2, l2r = new_l2(8, 4)                       # no limit: every line dirty
    assert fill_after_flush(l2, l2r, 128, 32, dirty_max_bytes=0) == 32 * 128


def _read(gpu, n_bytes, memory):
    x = np.ones(n_bytes // 4, dtype=np.float32)
    return simgpu.launch(read_sum, 8, 128, (x, np.zeros(1, np.float32)), gpu=gpu, memory=memory)


def test_a_read_within_the_clean_lines_writes_nothing_back():
    g = small_gpu(512 * KiB)                    # half the 1 MiB L2 dirty
    rep = _read(g, 256 * KiB, AfterFlush)
    assert rep.metrics["dram__bytes_write.sum"] == 0
    assert rep.metrics["simgpu__l2_dirty_bytes_at_end.sum"] == 0


def test_a_read_past_the_clean_lines_writes_the_dirty_ones_back_and_takes_longer():
    g = small_gpu(512 * KiB)
    cold, flushed = _read(g, 4 * MiB, True), _read(g, 4 * MiB, AfterFlush)
    assert cold.metrics["dram__bytes_write.sum"] == 0
    assert flushed.metrics["dram__bytes_write.sum"] == 512 * KiB        # every dirty line, once
    assert flushed.metrics["dram__bytes_read.sum"] == cold.metrics["dram__bytes_read.sum"]
    assert flushed.metrics["simgpu__l2_dirty_bytes_at_end.sum"] == 0
    assert flushed.metrics["gpu__time_duration.sum"] > cold.metrics["gpu__time_duration.sum"]


def test_without_a_limit_every_allocated_line_costs_a_write_back():
    g = small_gpu(0)
    rep = _read(g, 512 * KiB, AfterFlush)
    assert rep.metrics["dram__bytes_write.sum"] == 512 * KiB
