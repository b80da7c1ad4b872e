"""AfterFlush: the memory model of a launch timed by ``triton.testing.do_bench``, which zeroes a
256 MB buffer (its L2 flush, ``cache.zero_()``) right before every call.

The kernel then starts with an L2 that holds none of its data -- as MemoryModel's empty L2,
the state ncu's cache control gives the calibration -- but *full*: every line holds the
memset's last bytes, and the memset wrote them, so they are dirty, up to the GPU's
``l2_dirty_max_bytes`` (the H200's eager write-back keeps at most 26.1 MB dirty, the rest of the
lines clean; 0: no limit, every line dirty).  Each line the kernel allocates evicts one of
them, the least recently written first -- the clean ones, which the eager write-back already
wrote back, then the memset's last lines, still dirty -- and a dirty one is written back to DRAM (32 B a sector, at the GPU's ``dram_write_cost``),
charged to the instruction whose access evicted it: the timing model's DRAM server carries
those bytes, so a kernel that streams from DRAM after the flush shares the DRAM with the
memset's write-backs, as on the card (H200, validation/gemm_small_m: ``torch.sum`` over 128 MiB
47.3 us after ``zero_(256 MB)``, 39.0 us after a clean 256 MB read).  Lines the kernel dirties
beyond a set's share write back the set's least recently used dirty line first, the memset's
ones before its own (they are older).  The memset's lines still dirty at the end are not the
kernel's (``simgpu__l2_dirty_bytes_at_end`` leaves them out); ``dram__bytes_write.sum`` counts the
ones the kernel wrote back.

    simgpu.launch(kernel, grid, block, args, memory=AfterFlush)    # then validate.dobench_seconds

What it leaves out (docs/design.md): the TLB (simgpu has none: the memset's 256 MB of pages
may evict the kernel's translations), instruction and constant caches (an empty kernel runs as
fast right after the flush as warm on the H100, 0.83 us both: lecture/h100/dobench_excess), the
tensor maps' fetch (in do_bench's per-descriptor floor, measured in this state).
"""
from __future__ import annotations

import numpy as np

from .cache import BYTES, FLUSH_WRITER, META, STAMP2, TAG
from .model import MemoryModel

DOBENCH_FLUSH_BYTES = 256 * 1024 * 1024      # triton.testing.do_bench's cache (Triton 3.x): 256 MB


def fill_after_flush(l2, l2r, line_bytes, sector_bytes, dirty_max_bytes, flush_bytes=DOBENCH_FLUSH_BYTES):
    """Fill an empty L2 (cache.new_l2's arrays) as a memset of `flush_bytes` leaves it: its last
    lines, all sectors valid and written; dirty up to `dirty_max_bytes` (each set its share, as
    the eager write-back keeps them; 0: every line), the rest clean.  The lines' tags are
    negative (no address of the kernel's), their stamps negative (older than any access of the
    launch: the oldest, clean ones are evicted first); their writer is FLUSH_WRITER.  Returns the
    dirty bytes."""
    sets, _, ways = l2.shape
    n = min(sets * ways, flush_bytes // line_bytes)
    spl = line_bytes // sector_bytes
    full = (1 << spl) - 1
    per_set = np.full(sets, n // sets, dtype=np.int64)
    per_set[: n % sets] += 1                                  # the memset's lines, most in every set
    if dirty_max_bytes:
        dcap = dirty_max_bytes // line_bytes
        r = np.arange(sets, dtype=np.int64)
        cap = (dcap * (r + 1)) // sets - (dcap * r) // sets         # cache.set_dirty_cap's shares
        dirty_per_set = np.minimum(cap, per_set)
    else:
        dirty_per_set = per_set
    way = np.arange(ways)[None, :]
    present = way < per_set[:, None]
    # way k holds the set's k-th oldest line of the memset; the eager write-back left its newest
    # ones dirty, so LRU evicts the clean ones first
    dirty = present & (way >= (per_set - dirty_per_set)[:, None])
    l2[:, TAG, :] = np.where(present, -2 - (np.arange(sets)[:, None] * ways + way), -1)
    l2[:, STAMP2, :] = np.where(present, way - ways, 0)          # older than the launch's first access (1)
    meta = np.where(present, full, 0) | np.where(dirty, full << 16, 0) | (np.int64(FLUSH_WRITER) << 48)
    l2r[:, :, META] = np.where(present, meta, 0)
    words = max(1, line_bytes // 64)
    l2r[:, :, BYTES:BYTES + words] = np.where(present, -1, 0)[:, :, None]
    return int(dirty.sum()) * line_bytes


class AfterFlush(MemoryModel):
    """A MemoryModel whose L2 starts as do_bench's flush leaves it (see the module docstring)."""

    flush_bytes = DOBENCH_FLUSH_BYTES

    def __init__(self, gpu, launch, facts=None):
        super().__init__(gpu, launch, facts)
        self.flush_dirty_bytes = fill_after_flush(self.l2, self.l2r, gpu.l2.line_bytes, gpu.l2.sector_bytes,
                                                  gpu.l2_dirty_max_bytes, self.flush_bytes)
