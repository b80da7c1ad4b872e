"""Waves: how a grid of blocks is cut into rounds of "every SM full".

One wave is the number of blocks the whole GPU holds at once, ``blocks_per_sm x n_sms``.

  waves            = n_blocks / (blocks_per_sm x n_sms)      (Nsight: launch__waves_per_multiprocessor)
  full waves       = floor(waves),   last-wave blocks = n_blocks - full x wave size
  waves executed   = ceil(waves)     (a partial last wave costs as long as a full one when
                                      every block takes the same time)
  tail efficiency  = waves / ceil(waves)   (share of block slots doing work, over the launch)

Worked example: 133 blocks of one block per SM on 132 SMs make 1.0076 waves; the second wave
holds one block, so the launch takes two block-times for 1.0076 block-times of work:
tail efficiency 133 / 264 = 0.504.  This is wave quantisation, one of the three cliffs of
the lecture's matmul "mystery plot".
"""
from __future__ import annotations

import math
from dataclasses import dataclass


def _check(n_blocks: int, blocks_per_sm: int, n_sms: int):
    if n_blocks < 0 or blocks_per_sm <= 0 or n_sms <= 0:
        raise ValueError(f"need n_blocks >= 0, blocks_per_sm > 0 and n_sms > 0; "
                         f"got {n_blocks}, {blocks_per_sm}, {n_sms}")


def wave_size(blocks_per_sm: int, n_sms: int) -> int:
    """Blocks resident on the whole GPU at once."""
    _check(0, blocks_per_sm, n_sms)
    return blocks_per_sm * n_sms


def waves(n_blocks: int, blocks_per_sm: int, n_sms: int) -> float:
    """launch__waves_per_multiprocessor = n_blocks / (blocks_per_sm x n_sms).

    >>> waves(264, 2, 132), waves(265, 2, 132)
    (1.0, 1.003787878787879)
    """
    _check(n_blocks, blocks_per_sm, n_sms)
    return n_blocks / (blocks_per_sm * n_sms)


def tail_efficiency(n_blocks: int, blocks_per_sm: int, n_sms: int) -> float:
    """waves / ceil(waves): the fraction of block slots, over all waves, that hold a block.

    1.0 when the grid is a whole number of waves; close to 1/ceil(waves) after a cliff.
    A grid smaller than one wave has efficiency n_blocks / wave_size (the GPU is under-filled).

    >>> tail_efficiency(133, 1, 132)
    0.5037878787878788
    """
    _check(n_blocks, blocks_per_sm, n_sms)
    if n_blocks == 0:
        return 1.0
    w = waves(n_blocks, blocks_per_sm, n_sms)
    return w / math.ceil(w)


@dataclass(frozen=True)
class WaveQuantization:
    """The wave picture of one launch."""

    n_blocks: int
    blocks_per_sm: int
    n_sms: int
    wave_size: int
    waves: float                 # launch__waves_per_multiprocessor
    full_waves: int
    last_wave_blocks: int        # blocks in the partial last wave (0 when waves is whole)
    waves_executed: int          # ceil(waves)
    tail_efficiency: float

    def __str__(self):
        return (f"{self.n_blocks} blocks / ({self.blocks_per_sm} x {self.n_sms}) = {self.waves:.3f} waves "
                f"-> {self.waves_executed} executed, last wave {self.last_wave_blocks or self.wave_size}"
                f"/{self.wave_size} full, tail efficiency {self.tail_efficiency:.3f}")


def wave_quantization(n_blocks: int, blocks_per_sm: int, n_sms: int) -> WaveQuantization:
    """Everything about the waves of a launch in one record.

    >>> wq = wave_quantization(300, 2, 132)
    >>> wq.full_waves, wq.last_wave_blocks, wq.waves_executed
    (1, 36, 2)
    """
    _check(n_blocks, blocks_per_sm, n_sms)
    size = blocks_per_sm * n_sms
    full, last = divmod(n_blocks, size)
    return WaveQuantization(
        n_blocks=n_blocks, blocks_per_sm=blocks_per_sm, n_sms=n_sms, wave_size=size,
        waves=n_blocks / size, full_waves=full, last_wave_blocks=last,
        waves_executed=full + (1 if last else 0),
        tail_efficiency=tail_efficiency(n_blocks, blocks_per_sm, n_sms),
    )


__all__ = ["waves", "wave_size", "tail_efficiency", "wave_quantization", "WaveQuantization"]
