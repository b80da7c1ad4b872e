"""Global memory per warp instruction: one request, and the distinct 32-byte sectors the
active lanes touch -- strided, misaligned, partial and uniform accesses cost what the
formula says."""
import numpy as np
from hypothesis import given, settings, strategies as st
from numba import cuda

from simgpu.testing import (assert_traffic, dtypes, offsets, requests, run, strided_sectors, strides,
                            traffic)


def gather_strided(a, b, stride, offset):
    i = cuda.grid(1)
    if i < b.size:
        b[i] = a[offset + i * stride]


def scatter_strided(a, b, stride):
    i = cuda.grid(1)
    if i < a.size:
        b[i * stride] = a[i]


def uniform_load(a, b):
    i = cuda.grid(1)
    if i < b.size:
        b[i] = a[3]


def atomic_hist(x, h):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(h, x[i], 1)


@given(strides(max_stride=40), offsets(max_offset=40), dtypes(), st.integers(1, 700))
@settings(max_examples=40, deadline=None)
def test_strided_load_sectors_match_formula(stride, offset, dtype, n):
    """x[offset + i*stride] by n threads: requests = ceil(n/32) and sectors = the formula,
    for every element size."""
    a = np.zeros(offset + n * stride, dtype=dtype)
    b = np.zeros(n, dtype=dtype)
    rep = run(gather_strided, -(-n // 128), 128, a, b, np.int64(stride), np.int64(offset))
    base = 0   # arrays start on a 512-byte boundary
    assert_traffic(rep, ld_requests=requests(n),
                   ld_sectors=strided_sectors(n, stride, a.itemsize, offset=offset, base_byte=base),
                   st_requests=requests(n), st_sectors=strided_sectors(n, 1, a.itemsize))


def test_coalesced_float32_warp_reads_four_sectors():
    """32 consecutive float32 = 128 bytes = one line = 4 sectors per request."""
    a = np.ones(4096, np.float32)
    b = np.zeros(4096, np.float32)
    t = traffic(run(gather_strided, 32, 128, a, b, np.int64(1), np.int64(0)))
    assert (t["ld_requests"], t["ld_sectors"]) == (128, 512)


def test_misaligned_by_one_element_costs_a_fifth_sector():
    """Shifting a coalesced float32 read by 4 bytes makes each warp straddle two lines:
    5 sectors per request instead of 4 (the last warp reads one element less)."""
    a = np.ones(4096 + 1, np.float32)
    b = np.zeros(4096, np.float32)
    t = traffic(run(gather_strided, 32, 128, a, b, np.int64(1), np.int64(1)))
    assert (t["ld_requests"], t["ld_sectors"]) == (128, 128 * 5)


def test_stride_32_floats_touches_one_sector_per_lane():
    """Stride 128 bytes: every lane its own line: 32 sectors per request."""
    a = np.ones(32 * 1024, np.float32)
    b = np.zeros(1024, np.float32)
    t = traffic(run(gather_strided, 8, 128, a, b, np.int64(32), np.int64(0)))
    assert (t["ld_requests"], t["ld_sectors"]) == (32, 32 * 32)


def test_strided_store_sectors():
    """Stores are coalesced the same way: stride 2 float64 = 16 bytes apart: 16 sectors per
    warp; the L2 receives the same sectors as writes."""
    a = np.ones(1024, np.float64)
    b = np.zeros(2048, np.float64)
    t = traffic(run(scatter_strided, 8, 128, a, b, np.int64(2)))
    assert (t["st_requests"], t["st_sectors"], t["l2_write_sectors"]) == (32, 32 * 16, 32 * 16)
    assert b[::2].sum() == 1024


def test_uniform_address_is_one_sector_per_request():
    """All lanes reading one element: one sector, and the L1 serves every warp after the
    first one on each SM."""
    a = np.arange(8, dtype=np.float32)
    b = np.zeros(4096, np.float32)
    rep = run(uniform_load, 32, 128, a, b)
    t = traffic(rep)
    assert (t["ld_requests"], t["ld_sectors"]) == (128, 128)
    assert np.all(b == 3)


def test_partial_last_warp():
    """n = 40 threads: two requests; the second warp has 8 active lanes = 1 sector."""
    a = np.ones(64, np.float32)
    b = np.zeros(40, np.float32)
    t = traffic(run(gather_strided, 1, 64, a, b, np.int64(1), np.int64(0)))
    assert (t["ld_requests"], t["ld_sectors"]) == (2, 5)


def atomic_old(x, h, old):
    i = cuda.grid(1)
    if i < x.size:
        o = cuda.atomic.add(h, x[i], 1)
        old[i] = o


def test_atomics_count_requests_and_sectors_and_go_to_l2():
    """A histogram's atomics: one request per warp, performed in the L2 (not cached in L1),
    served in passes: lanes on the same address go one per pass, so a sector is accessed as
    often as its most popular address has lanes.  Here each warp hits bins 0..15 twice: 2
    sectors x 2 passes = 4 sector accesses per request.  The result is unused, so these are
    reductions (RED, Nsight's op_red); an atomic whose old value is used is op_atom."""
    x = (np.arange(256) % 16).astype(np.int32)          # bins 0..15: 64 bytes = 2 sectors
    h = np.zeros(16, np.int32)
    m = run(atomic_hist, 2, 128, x, h).metrics
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"] == 8
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"] == 8 * 4
    assert m["lts__t_sectors_srcunit_tex_op_red.sum"] == 8 * 4
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"] == 0
    assert np.all(h == 16)
    m = run(atomic_old, 2, 128, x, np.zeros(16, np.int32), np.zeros(256, np.int32)).metrics
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"] == 8
    assert m["lts__t_sectors_srcunit_tex_op_atom.sum"] == 8 * 4
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"] == 0
