"""Bad hardware descriptions are refused with a message naming the problem."""
import pytest

from simgpu.hardware import H200, CacheSpec, HardwareError, KiB, MiB
from simgpu.memory import MemoryModel


class _Launch:
    threads_per_block, warps_per_block, smem_bytes, fn, facts = 256, 8, 0, None, None


def test_cachespec_refuses_lines_that_are_not_whole_sectors():
    with pytest.raises(HardwareError, match="not a whole number of 32 B sectors"):
        CacheSpec(size_bytes=64 * KiB, line_bytes=48, sector_bytes=32, ways=4)


def test_cachespec_refuses_sizes_that_are_not_ways_times_lines():
    with pytest.raises(HardwareError, match="not a multiple of ways x line"):
        CacheSpec(size_bytes=60 * MiB + 8, line_bytes=128, sector_bytes=32, ways=16)


def test_cachespec_refuses_non_positive_sizes():
    with pytest.raises(HardwareError, match="must be positive"):
        CacheSpec(size_bytes=0)


def test_memory_model_needs_equal_l1_and_l2_lines():
    gpu = H200.with_(l1=CacheSpec(size_bytes=256 * KiB, line_bytes=64, sector_bytes=32, ways=64))
    with pytest.raises(HardwareError, match="same line and sector size"):
        MemoryModel(gpu, _Launch())


def test_memory_model_needs_power_of_two_sectors():
    gpu = H200.with_(l1=CacheSpec(size_bytes=240 * KiB, line_bytes=96, sector_bytes=24, ways=64),
                     l2=CacheSpec(size_bytes=60 * MiB, line_bytes=96, sector_bytes=24, ways=16))
    with pytest.raises(HardwareError, match="power-of-two"):
        MemoryModel(gpu, _Launch())
