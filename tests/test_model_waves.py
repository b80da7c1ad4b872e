"""Waves: a grid of blocks runs in rounds of blocks_per_sm x n_sms."""
import math

import pytest
from hypothesis import given, strategies as st

from simgpu.model.waves import tail_efficiency, wave_quantization, waves


def test_one_full_wave():
    """264 blocks at 2 per SM on 132 SMs are exactly one wave, tail efficiency 1."""
    assert waves(264, 2, 132) == 1.0
    assert tail_efficiency(264, 2, 132) == 1.0


def test_one_block_too_many_doubles_the_time():
    """133 blocks of one per SM on 132 SMs: 2 waves executed for 1.0076 of work: 133/264."""
    wq = wave_quantization(133, 1, 132)
    assert (wq.full_waves, wq.last_wave_blocks, wq.waves_executed) == (1, 1, 2)
    assert wq.tail_efficiency == 133 / 264


def test_under_filled_gpu():
    """A grid smaller than one wave uses n_blocks / wave_size of the GPU."""
    assert tail_efficiency(66, 1, 132) == 0.5
    assert wave_quantization(0, 1, 132).waves_executed == 0


def test_bad_arguments():
    with pytest.raises(ValueError):
        waves(10, 0, 132)
    with pytest.raises(ValueError):
        waves(-1, 1, 132)


@given(n=st.integers(0, 10**6), bps=st.integers(1, 32), sms=st.integers(1, 200))
def test_waves_cover_every_block(n, bps, sms):
    """ceil(waves) x SMs x blocks/SM >= n_blocks, and one wave fewer would not be enough;
    tail efficiency lies in (0, 1]."""
    wq = wave_quantization(n, bps, sms)
    assert wq.waves_executed == math.ceil(waves(n, bps, sms))
    assert wq.waves_executed * sms * bps >= n
    assert (wq.waves_executed - 1) * sms * bps < n or n == 0
    assert 0 < wq.tail_efficiency <= 1
    assert wq.full_waves * wq.wave_size + wq.last_wave_blocks == n
