"""What the simulated SM did over time: block residency per slot and each warp's state.

A listener of the simulator (sim.SM calls `block` and `warp`); consecutive intervals of the
same state are merged.  `simgpu.plot.timing.timeline` draws it.
"""
from __future__ import annotations

from typing import NamedTuple


class BlockSpan(NamedTuple):
    """A block's residency on the simulated SM, in cycles."""
    slot: int                     # the block slot it held
    index: int                    # its place in the SM's stream of blocks
    t0: float
    t1: float


class Timeline:
    STATES = ("issue", "memory", "dependency", "barrier", "pipe", "not_selected")

    def __init__(self, max_warp_intervals=200_000):
        self.blocks = []              # BlockSpan, in the order blocks end
        self.warps = {}               # (slot, warp in block) -> [[state, t0, t1], ...]
        self.max_warp_intervals = max_warp_intervals
        self._n = 0

    def block(self, slot, index, t0, t1):
        self.blocks.append(BlockSpan(slot, index, t0, t1))

    def warp(self, wid, state, t0, t1):
        if t1 <= t0 or self._n >= self.max_warp_intervals:
            return
        iv = self.warps.setdefault(wid, [])
        if iv and iv[-1][0] == state and t0 - iv[-1][2] < 1e-9:
            iv[-1][2] = t1
            return
        iv.append([state, t0, t1])
        self._n += 1

    @property
    def end(self):
        return max((b.t1 for b in self.blocks), default=0.0)


__all__ = ["Timeline", "BlockSpan"]
