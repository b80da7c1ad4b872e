"""L1 per SM (loads allocate, stores write through without allocating), one write-back L2
(write-allocate with byte masks), DRAM at its access granularity; dirty lines may still be
in L2 when the kernel ends."""
import numpy as np
from hypothesis import given, settings, strategies as st
from numba import cuda

from simgpu.hardware import H200, CacheSpec, DramSpec, KiB
from simgpu.memory.schedule import Schedule
from simgpu.testing import run, traffic
from kernels_core import rows_in_lockstep


def reread(a, b, times):
    i = cuda.grid(1)
    if i < b.size:
        acc = np.float32(0)
        for k in range(times):
            acc += a[i]
        b[i] = acc


def store_then_load(a, b, c):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i]
        v = b[i]
        c[i] = v


def copy(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i]


def half_sector_then_read(b, out):
    i = cuda.grid(1)
    if i < out.size:
        b[2 * i] = np.float32(1)
        out[i] = b[2 * i + 1]


def every_other_sector(a, b):
    i = cuda.grid(1)
    if i < b.size:
        b[i] = a[16 * i]


def small_l2(kib, dram_access=32):
    return H200.with_(name=f"H200 with {kib} KiB L2",
                      l2=CacheSpec(size_bytes=kib * KiB, line_bytes=128, sector_bytes=32, ways=4),
                      dram=DramSpec(bandwidth_bytes_per_s=4.8e12, size_bytes=141 * 10**9, access_bytes=dram_access))


def test_rereads_hit_in_l1():
    """Reading the same element 4 times: 4x the sectors at L1, 3 of every 4 hit; the L2 and
    DRAM see each sector once.  (On the IR path: numba's compiler keeps a[i] in a register,
    so the compiled code reads it once -- test_ptx_path checks the compiled loads.)"""
    n = 4096
    a, b = np.ones(n, np.float32), np.zeros(n, np.float32)
    rep = run(reread, n // 128, 128, a, b, np.int64(4), executor="ir")
    m = rep.metrics
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 4 * n // 8
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"] == 3 * n // 8
    assert m["lts__t_sectors_srcunit_tex_op_read.sum"] == n // 8
    assert m["dram__bytes_read.sum"] == 4 * n


def test_stores_write_through_and_allocate_in_l1():
    """Stores go on to the L2 (write-through) and allocate their line in L1: a load of data
    the same SM just stored hits L1; the L2 sees every store sector, and only `a` is read
    from DRAM.  (On the IR path: the compiled code forwards the stored value and loads
    nothing.)"""
    n = 4096
    a, b, c = np.ones(n, np.float32), np.zeros(n, np.float32), np.zeros(n, np.float32)
    rep = run(store_then_load, n // 128, 128, a, b, c, executor="ir")
    rows = {r["source"]: r for r in rep.by_line()}
    load_b = rows["v = b[i]"]
    assert load_b["global_ld_sectors"] == n // 8 and load_b["l1_hit_rate_pct"] == 100.0
    assert "l2_bytes" not in load_b
    assert rep.metrics["lts__t_sectors_srcunit_tex_op_write.sum"] == 2 * n // 8
    assert rep.metrics["dram__bytes_read.sum"] == 4 * n


def test_repeated_partial_stores_hit_in_l1():
    """Eight stores to the eight floats of a sector: the first misses, the other seven hit
    (the line is allocated and the sector marked written) -- as the H200 counts the naive
    transpose's stores."""
    n = 256
    b = np.zeros(8 * n, np.float32)
    rep = run(eight_partial_stores, 1, n, b)
    m = rep.metrics
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == 8 * n
    assert m["l1tex__t_sector_hit_rate.pct"] == 100.0 * 7 / 8


def eight_partial_stores(b):
    t = cuda.threadIdx.x
    for k in range(8):
        b[8 * t + k] = np.float32(k)


def test_dirty_data_stays_in_a_large_l2():
    """A copy that fits in L2 writes nothing to DRAM during the kernel: all written bytes are
    still dirty in L2 at the end."""
    n = 1 << 15
    a, b = np.ones(n, np.float32), np.zeros(n, np.float32)
    t = traffic(run(copy, n // 256, 256, a, b))
    assert (t["dram_read_bytes"], t["dram_write_bytes"], t["l2_dirty_bytes"]) == (4 * n, 0, 4 * n)


def test_eager_write_back_keeps_dirty_bytes_under_the_limit():
    """GPU.l2_dirty_max_bytes (issue 22, docs/memory.md "Eager write-back"): a copy that fits
    in the L2 but writes more than the limit writes the excess back during the kernel and
    leaves at most the limit dirty (one line per set here); without a limit it writes nothing."""
    n = 1 << 16                                  # 256 KiB read, 256 KiB written; L2 512 KiB, 1024 sets
    a, b = np.ones(n, np.float32), np.zeros(n, np.float32)
    gpu = small_l2(512)
    assert gpu.l2.sets == 1024
    lazy = traffic(run(copy, n // 256, 256, a, b, gpu=gpu.with_(l2_dirty_max_bytes=0)))
    assert (lazy["dram_write_bytes"], lazy["l2_dirty_bytes"]) == (0, 4 * n)
    t = traffic(run(copy, n // 256, 256, a, b, gpu=gpu.with_(l2_dirty_max_bytes=128 * KiB)))
    assert t["dram_read_bytes"] == 4 * n
    assert t["dram_write_bytes"] + t["l2_dirty_bytes"] == 4 * n
    assert 0 < t["l2_dirty_bytes"] <= 128 * KiB


@given(st.sampled_from([16, 32, 64, 512]), st.sampled_from([1 << 14, 1 << 16]))
@settings(max_examples=8, deadline=None)
def test_every_written_byte_is_written_back_or_still_dirty(l2_kib, n):
    """Whatever the L2 size: DRAM reads = bytes read once; DRAM writes + dirty at the end
    = bytes written (each full sector exactly once)."""
    a, b = np.ones(n, np.float32), np.zeros(n, np.float32)
    t = traffic(run(copy, n // 256, 256, a, b, gpu=small_l2(l2_kib)))
    assert t["dram_read_bytes"] == 4 * n
    assert t["dram_write_bytes"] + t["l2_dirty_bytes"] == 4 * n
    if 8 * n > l2_kib * 1024:
        assert t["dram_write_bytes"] > 0


def test_dram_access_granularity():
    """One float32 per 64 bytes: with 32-byte DRAM accesses DRAM reads one sector per
    element; with 64-byte accesses it reads two."""
    n = 2048
    a, b = np.ones(16 * n, np.float32), np.zeros(n, np.float32)
    t32 = traffic(run(every_other_sector, n // 128, 128, a, b, gpu=small_l2(1024, 32)))
    t64 = traffic(run(every_other_sector, n // 128, 128, a, b, gpu=small_l2(1024, 64)))
    assert t32["ld_sectors"] == t64["ld_sectors"] == n
    assert (t32["dram_read_bytes"], t64["dram_read_bytes"]) == (32 * n, 64 * n)


def test_partial_sector_write_needs_no_dram_read_until_read():
    """Writing half of each sector allocates it in L2 with a byte mask (no DRAM read); the
    later read of the other half misses (in L1: the sector is only partly written) and
    fetches the sector from DRAM."""
    n = 1024
    b, out = np.zeros(2 * n, np.float32), np.zeros(n, np.float32)
    rep = run(half_sector_then_read, n // 128, 128, b, out)
    rows = {r["source"]: r for r in rep.by_line()}
    assert "dram_read_bytes" not in rows["b[2 * i] = np.float32(1)"]
    assert rows["out[i] = b[2 * i + 1]"]["dram_read_bytes"] == 8 * n


def test_two_sms_reading_the_same_data_read_dram_once():
    """Two blocks on two SMs read the same 128 floats: both miss their own L1, the second
    hits in L2, DRAM is read once."""
    a, b = np.ones(128, np.float32), np.zeros(256, np.float32)
    rep = run(copy_same, 2, 128, a, b)
    m = rep.metrics
    assert m["lts__t_sectors_srcunit_tex_op_read.sum"] == 2 * 16
    assert m["lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"] == 16
    assert m["dram__bytes_read.sum"] == 512


def copy_same(a, b):
    t = cuda.threadIdx.x
    b[cuda.blockIdx.x * 128 + t] = a[t]


def test_schedule_round_robin_and_interleaving():
    """Blocks go round-robin to SMs within a wave; per instruction the L2 sees warp 0 of
    every SM, then warp 1 of every SM ...; each SM's L1 sees its own warps in order."""
    s = Schedule(sm_count=2, blocks_per_sm=2, warps_per_block=2)
    order, sm_order, warp_sm = s.order(0, 4)      # blocks 0..3: SMs 0,1,0,1
    assert warp_sm.tolist() == [0, 0, 1, 1, 0, 0, 1, 1]
    assert order.tolist() == [0, 2, 1, 3, 4, 6, 5, 7]
    assert sm_order.tolist() == [0, 1, 4, 5, 2, 3, 6, 7]
    # chunks hold whole waves: as many as make 64 Ki lanes (256 waves of 256 lanes here)
    assert s.chunk_blocks(4000) == 256 * 4
    assert s.chunk_blocks(3) == 3


def even_then_odd(b, n):
    i = cuda.grid(1)
    if i < n:
        b[2 * i] = np.float32(1)
        b[2 * i + 1] = np.float32(2)


def even_only(b, n):
    i = cuda.grid(1)
    if i < n:
        b[2 * i] = np.float32(1)


def test_partial_writes_that_complete_a_sector_need_no_fill():
    """Two stores that each write half of every sector complete it in the L2's byte mask:
    nothing is read from DRAM, even when the lines are evicted.  A sector left half
    written costs a 32-byte fill read when it is evicted (as measured on the H200)."""
    n = 1 << 20                # 8 MiB of output; a wave's stores (2 MiB) fit in the 4 MiB L2
    gpu = small_l2(4096)
    b = np.zeros(2 * n, np.float32)
    t = traffic(run(even_then_odd, n // 256, 256, b, np.int64(n), gpu=gpu))
    assert t["dram_read_bytes"] == 0
    assert t["dram_write_bytes"] + t["l2_dirty_bytes"] == 8 * n
    t = traffic(run(even_only, n // 256, 256, b, np.int64(n), gpu=gpu))
    assert t["dram_write_bytes"] + t["l2_dirty_bytes"] == 8 * n
    assert t["dram_read_bytes"] == t["dram_write_bytes"] > 0


def test_hits_on_data_in_flight_are_counted():
    rows, n_blocks, block = 16, 132 * 4, 64
    a = np.random.default_rng(0).random((rows, block), dtype=np.float32)
    out = np.zeros(n_blocks * block, np.float32)
    rep = run(rows_in_lockstep, n_blocks, block, a, out)
    m = rep.metrics
    np.testing.assert_allclose(out, np.tile(a.sum(axis=0), n_blocks), rtol=1e-5)
    # a row is 256 B = 2 lines = 8 sectors; 2 warps per block, 4 blocks per SM
    warps = n_blocks * 2
    sectors = warps * rows * 4
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == sectors
    # per SM and row: the first warp of each half-row misses in L1, the other 3 hit in flight
    assert m["simgpu__l1_sector_hits_in_flight.sum"] == 132 * rows * 8 * 3
    # per row, one SM fetches each sector from DRAM, the other 131 hit it in flight
    assert m["simgpu__l2_sector_hits_in_flight.sum"] == rows * 8 * 131
    assert m["lts__t_sector_hit_rate.pct"] > 99.0 * 131 / 132 - 1
