"""Matmul global-memory traffic: naive 2MNK reads, tiled M K ceil(N/T) + K N ceil(M/T)."""
from hypothesis import given, settings, strategies as st

from simgpu.model.tiling import (naive_matmul_traffic, reuse, rows_sectors, segment_sectors,
                                 tiled_matmul_traffic, tiling_reduction)


def test_naive_reads_two_mnk():
    t = naive_matmul_traffic(300, 200, 100)
    assert (t.elements_loaded, t.elements_written) == (2 * 300 * 200 * 100, 300 * 200)


def test_tiled_with_dividing_tile_is_two_n_cubed_over_t():
    """n = 1024, T = 32: 2 x 1024^3 / 32 = 67108864 elements, 32x fewer than naive; fp32 rows of
    4096 B are sector-aligned: 67108864 x 4 / 32 = 8388608 sectors."""
    t = tiled_matmul_traffic(1024, 1024, 1024, 32)
    assert t.elements_loaded == t.elements_requested == 2 * 1024**3 // 32
    assert t.sectors_loaded == 8388608
    assert tiling_reduction(1024, 1024, 1024, 32) == 32


def test_boundary_tiles():
    """n = 1000, T = 32: 32^3 block-steps request 67108864 elements (padded); bounds-checked loads
    fetch 2 x 1000^2 x 32 = 64000000."""
    t = tiled_matmul_traffic(1000, 1000, 1000, 32)
    assert (t.tiles, t.elements_requested, t.elements_loaded) == (32768, 67108864, 64000000)


def test_misaligned_rows_cost_extra_sectors():
    """n = 1001 (fp32 rows of 4004 B): rows start at every 4-byte offset, so most 128-byte tile
    rows straddle 5 sectors; sector efficiency falls to 0.817."""
    assert round(tiled_matmul_traffic(1001, 1001, 1001, 32).sector_efficiency, 3) == 0.817


def test_lecture_sentence():
    """"Each input is read N/T times from global memory and T times from shared memory"."""
    r = reuse(4096, 64)
    assert (r.tiled_global_reads_per_element, r.shared_reads_per_global_load, r.uses_per_element) == (64, 64, 4096)


def test_segment_sectors():
    assert segment_sectors(0, 64) == 2 and segment_sectors(2, 64) == 3 and segment_sectors(5, 0) == 0


@given(n=st.integers(1, 600), t=st.sampled_from([1, 2, 4, 8, 16, 32, 64]))
def test_dividing_tile_is_exact(n, t):
    """When T divides n, tiled traffic is exactly 2 n^3 / T elements."""
    n = n * t
    assert tiled_matmul_traffic(n, n, n, t).elements_loaded == 2 * n**3 // t


@given(m=st.integers(1, 700), n=st.integers(1, 700), k=st.integers(1, 700), t=st.integers(1, 128))
def test_traffic_decreases_with_tile(m, n, k, t):
    """A bigger tile never loads more elements; loads never exceed requests; sectors cover bytes."""
    a, b = tiled_matmul_traffic(m, n, k, t), tiled_matmul_traffic(m, n, k, t + 1)
    assert b.elements_loaded <= a.elements_loaded <= a.elements_requested
    assert 32 * a.sectors_loaded >= a.bytes_loaded


@settings(max_examples=60)
@given(r0=st.integers(0, 50), rows=st.integers(0, 40), pitch=st.integers(1, 400),
       starts=st.lists(st.integers(0, 200), min_size=1, max_size=4), length=st.integers(0, 90))
def test_rows_sectors_matches_brute_force(r0, rows, pitch, starts, length):
    """The periodic shortcut equals counting every row's segments one by one."""
    brute = sum(int(segment_sectors(r * pitch + s, length)) for r in range(r0, r0 + rows) for s in starts)
    assert rows_sectors(r0, r0 + rows, pitch, starts, [length] * len(starts)) == brute
