"""The observer contract: what the executor reports, for memory and timing models.

An observer is any object with some of these methods (missing ones are not called):

``instruction(ev: InstrEvent)``
    once per executed instruction per chunk: all warps of the chunk that executed the PTX
    instruction at this step, together (warps at other PCs report at their own step).
``mem_access(ev: MemEvent)``
    once per executed ld/st/atom/red per chunk (after ``instruction`` for the same step),
    with every executing lane's address.
``chunk(first_block, nblocks)``
    when the executor starts a chunk of blocks (blocks in row-major linear order).

Events are built from arrays over the executing lanes, never Python loops over lanes;
derived arrays (per-warp counts, thread/block ids) are computed only when asked for.
Lanes are numbered within the chunk: lane = block_in_chunk * padded_block + thread_linear,
where padded_block is the block size rounded up to a multiple of 32 (warps are aligned).
Warp ids are global: (linear block id) * warps_per_block + thread_linear // 32.
Serialisation: within one step, memory operations of the lanes take effect in increasing
lane order (so for conflicting stores the highest lane wins, and atomics see the lower
lanes' updates); steps of a chunk happen in order, chunks in increasing block order.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class _Base:
    pc: int                 # index in the linked program
    line: int               # PTX line number (0 for synthetic jumps)
    loc: str | None         # user source 'file:line' from .loc, if any
    text: str               # the PTX instruction as written
    opcode: str
    lanes: np.ndarray       # chunk lane indices that executed (guard-true lanes for memory)
    ctx: object             # the chunk (for the lazily derived fields)

    @property
    def warp_ids(self):
        """Global warp id of each executing lane."""
        return self.ctx.warp_global[self.lanes]

    @property
    def thread_ids(self):
        """(n, 3) threadIdx of each executing lane."""
        return self.ctx.tid[:, self.lanes].T

    @property
    def block_ids(self):
        """(n, 3) blockIdx of each executing lane."""
        return self.ctx.block_xyz[self.ctx.block_row[self.lanes]]


@dataclass
class InstrEvent(_Base):
    guarded: int = 0        # lanes whose guard predicate was true (== executing if no guard)
    executor: object = None  # the chunk's executor (its registers: ``executor.regs``), for steppers

    @property
    def active_per_warp(self):
        """(warp ids, active lane count) for the warps that executed this instruction."""
        w = self.ctx.warp_global[self.lanes]
        ids, counts = np.unique(w, return_counts=True)
        return ids, counts


@dataclass
class MemEvent(_Base):
    space: str = "global"   # 'global' 'shared' 'local' 'const' 'param'
    kind: str = "load"      # 'load' 'store' 'atomic'
    width: int = 4          # bytes per lane (all elements of a vector access)
    addresses: np.ndarray | None = None   # per executing lane: state-space address (device
                                   # address for global), uint64
