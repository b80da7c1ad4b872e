"""Occupancy as NVIDIA's calculator computes it (cuda_occupancy.h), values derived by hand.

H100 and H200 share the SM: 64 warps, 32 blocks, 65536 registers in 4 sub-partitions
(allocated per warp in units of 256), 228 KiB shared memory, 1 KiB reserved per block,
allocated in units of 128 B.
"""
import pytest
from hypothesis import given, settings, strategies as st

from simgpu.hardware import H100, H200, V100
from simgpu.model.occupancy import OccupancyError, occupancy


def test_256_threads_32_registers_is_full_occupancy():
    """256 threads x 32 registers: Rw = 1024, 16 warps per sub-partition, 64 per SM -> 8 blocks,
    and 64 // 8 warps = 8 blocks too: 100 %, limited by registers and warps together."""
    occ = occupancy(H100, 256, 32)
    assert (occ.blocks_per_sm, occ.active_warps_per_sm, occ.theoretical_occupancy) == (8, 64, 1.0)
    assert occ.limiters == ("registers", "warps")
    assert occ.metrics() == {
        "launch__occupancy_limit_blocks": 32, "launch__occupancy_limit_registers": 8,
        "launch__occupancy_limit_shared_mem": 228, "launch__occupancy_limit_warps": 8,
        "sm__maximum_warps_per_active_cycle_pct": 100.0}


def test_64_registers_halve_occupancy():
    """Rw = 2048: 8 warps per sub-partition, 32 per SM, 4 blocks of 8 warps: 50 %."""
    occ = occupancy(H200, 256, 64)
    assert (occ.blocks_per_sm, occ.theoretical_occupancy, occ.limiter) == (4, 0.5, "registers")


def test_register_allocation_granularity():
    """33 registers allocate like 40: 33 x 32 = 1056 rounds up to 1280 = 5 x 256; 16384 // 1280 = 12
    warps per sub-partition, 48 per SM, 6 blocks of 256 threads: 75 %.  32 registers give 8 blocks."""
    assert occupancy(H100, 256, 33).registers_per_warp_allocated == 1280
    assert occupancy(H100, 256, 33).blocks_per_sm == occupancy(H100, 256, 40).blocks_per_sm == 6
    assert occupancy(H100, 256, 33).theoretical_occupancy == 0.75


def test_255_registers():
    """255 x 32 = 8160 -> 8192 per warp; 2 warps per sub-partition, 8 per SM: 2 blocks of 128 threads."""
    occ = occupancy(H100, 128, 255)
    assert (occ.blocks_per_sm, occ.active_warps_per_sm, occ.theoretical_occupancy) == (2, 8, 0.125)


def test_warp_limit_with_odd_block_size():
    """96 threads = 3 warps: 64 // 3 = 21 blocks by warps and by registers, 63 warps = 98.4375 %."""
    occ = occupancy(H100, 96, 32)
    assert (occ.blocks_per_sm, occ.active_warps_per_sm) == (21, 63)
    assert occ.theoretical_occupancy == 63 / 64


def test_block_limit_with_one_warp_blocks():
    """32-thread blocks stop at 32 blocks per SM: 32 warps, 50 %, limited by blocks."""
    occ = occupancy(H100, 32, 16)
    assert (occ.blocks_per_sm, occ.theoretical_occupancy, occ.limiters) == (32, 0.5, ("blocks",))


def test_shared_memory_limit_counts_the_reserved_kilobyte():
    """48 KiB + 1 KiB reserved = 50176 B per block; 233472 // 50176 = 4 blocks: 50 %."""
    occ = occupancy(H100, 256, 32, 48 * 1024)
    assert occ.shared_mem_per_block_allocated == 50176
    assert (occ.blocks_per_sm, occ.limit_shared_mem, occ.limiter) == (4, 4, "shared_mem")


def test_shared_memory_allocation_unit():
    """100 B + 1024 B reserved rounds up to 1152 B (9 x 128): 233472 // 1152 = 202 blocks by shared memory."""
    occ = occupancy(H100, 256, 32, 100)
    assert (occ.shared_mem_per_block_allocated, occ.limit_shared_mem) == (1152, 202)


def test_largest_shared_block_fits_once():
    """227 KiB is the opt-in maximum: one block per SM."""
    assert occupancy(H100, 128, 32, 227 * 1024).blocks_per_sm == 1


def test_1024_threads_64_registers():
    """32 warps x 2048 registers = 65536, exactly the per-block register file: one block, 50 %."""
    occ = occupancy(H100, 1024, 64)
    assert (occ.blocks_per_sm, occ.theoretical_occupancy) == (1, 0.5)


def test_v100_has_no_reserved_shared_memory():
    """V100 reserves nothing per block: with no shared memory there is no shared-memory limit,
    and 100 B rounds to its 256 B unit: 98304 // 256 = 384."""
    assert occupancy(V100, 256, 32).limit_shared_mem == 32
    assert occupancy(V100, 256, 32, 100).limit_shared_mem == 384


def test_register_check_rounds_warps_to_sub_partitions():
    """257 threads = 9 warps, but the hardware check assumes 12 (a multiple of 4 sub-partitions):
    169 registers -> 5632 per warp x 12 = 67584 > 65536, so the launch fails although
    9 x 5632 = 50688 would fit."""
    with pytest.raises(OccupancyError, match="67584 registers per block"):
        occupancy(H100, 257, 169)
    assert occupancy(H100, 256, 169).blocks_per_sm == 1


@pytest.mark.parametrize("args, words", [
    ((1025, 32, 0), "max_threads_per_block = 1024"),
    ((256, 256, 0), "max_registers_per_thread = 255"),
    ((128, 32, 227 * 1024 + 1), "max_shared_mem_per_block_bytes"),
    ((1024, 65, 0), "registers per block"),
    ((0, 32, 0), "threads_per_block must be positive"),
])
def test_blocks_that_cannot_fit_raise_naming_the_limit(args, words):
    """A block no SM can hold raises OccupancyError (a ValueError) naming the limit."""
    with pytest.raises(OccupancyError, match=words):
        occupancy(H100, *args)
    assert issubclass(OccupancyError, ValueError)


@settings(max_examples=200, deadline=None)
@given(threads=st.integers(1, 1024), regs=st.integers(0, 255), smem=st.integers(0, 227 * 1024))
def test_occupancy_never_exceeds_100_percent(threads, regs, smem):
    """Whenever a block fits: 1 <= blocks, warps <= 64, occupancy in (0, 1], blocks is the minimum limit."""
    try:
        occ = occupancy(H200, threads, regs, smem)
    except OccupancyError:
        warps_rounded = -(-(-(-threads // 32)) // 4) * 4
        assert warps_rounded * -(-regs * 32 // 256) * 256 > 65536
        return
    assert occ.blocks_per_sm >= 1
    assert 0 < occ.theoretical_occupancy <= 1
    assert occ.active_warps_per_sm == occ.blocks_per_sm * occ.warps_per_block <= H200.max_warps_per_sm
    assert occ.blocks_per_sm == min(occ.limit_blocks, occ.limit_registers, occ.limit_shared_mem, occ.limit_warps)


@settings(max_examples=100, deadline=None)
@given(threads=st.sampled_from([64, 128, 256, 512]), regs=st.integers(0, 120), extra=st.integers(1, 64),
       smem=st.integers(0, 100_000), more=st.integers(1, 100_000))
def test_more_resources_never_raise_occupancy(threads, regs, extra, smem, more):
    """Asking for more registers or more shared memory never increases blocks per SM
    (a block that no longer fits counts as 0)."""
    def blocks(*args):
        try:
            return occupancy(H100, *args).blocks_per_sm
        except OccupancyError:
            return 0
    base = blocks(threads, regs, smem)
    assert blocks(threads, regs + extra, smem) <= base
    assert blocks(threads, regs, smem + more) <= base
