"""The order in which memory accesses reach the caches.

Model (documented in docs/memory.md, "Schedule"):
  * Blocks are dispatched in waves.  A wave is `blocks_per_sm x sm_count` blocks
    (blocks_per_sm from the occupancy calculator, with the launch's registers per thread:
    ptxas' on the compiled path or the caller's registers_per_thread; 32 where neither is
    known, simgpu's IR path).  Within a wave, block q goes to SM
    q % sm_count (round robin) in slot q // sm_count; the next wave reuses the same SMs, so
    an SM's L1 keeps what the previous wave left in it.
  * Each chunk the executor runs is one wave (or several whole waves when a wave is tiny),
    and the executor runs one instruction for all warps of the chunk before the next one.
  * Per instruction, warps reach their SM's L1 in (slot, warp) order and the SMs are
    interleaved warp by warp into the L2: warp 0 of every SM, then warp 1 of every SM, ...
    This is the order of SMs issuing in lockstep; a real GPU's order varies from run to run.
  * The L1 is what the shared-memory carve-out leaves of the unified L1/shared array: the
    driver picks the smallest carve-out (from the architecture's list) that holds the
    shared memory of all resident blocks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model.occupancy import OccupancyError, occupancy
from ..units import KiB

# Shared-memory capacities an SM can be configured with (CUDA C++ Programming Guide,
# "Shared Memory" sections for compute capability 7.x, 8.x and 9.0), in KiB.
CARVEOUTS_KIB = {
    (7, 0): (0, 8, 16, 32, 64, 96),
    (8, 0): (0, 8, 16, 32, 64, 100, 132, 164),
    (9, 0): (0, 8, 16, 32, 64, 100, 132, 164, 196, 228),
}
ASSUMED_REGISTERS_PER_THREAD = 32
MIN_CHUNK_LANES = 65536        # below this the executor's per-instruction overhead dominates


def blocks_per_sm(gpu, threads_per_block, smem_bytes, registers_per_thread=ASSUMED_REGISTERS_PER_THREAD):
    """Resident blocks per SM (the occupancy calculator; 1 if the block does not fit)."""
    try:
        occ = occupancy(gpu, threads_per_block, registers_per_thread, smem_bytes)
    except OccupancyError:
        return 1, smem_bytes
    return occ.blocks_per_sm, occ.shared_mem_per_block_allocated


def carveout_bytes(gpu, shared_needed_bytes):
    """The smallest shared-memory carve-out that holds `shared_needed_bytes` per SM."""
    options = CARVEOUTS_KIB.get(tuple(gpu.compute_capability[:1]) + (0,))
    if options is None:
        return min(gpu.l1.size_bytes, -(-shared_needed_bytes // (8 * KiB)) * 8 * KiB)
    for kib in options:
        if kib * KiB >= shared_needed_bytes:
            return kib * KiB
    return options[-1] * KiB


def l1_ways(gpu, shared_needed_bytes):
    """Ways of the L1 left after the carve-out (sets and line size as in gpu.l1)."""
    left = gpu.l1.size_bytes - carveout_bytes(gpu, shared_needed_bytes)
    return max(1, left // (gpu.l1.sets * gpu.l1.line_bytes))


@dataclass
class Schedule:
    sm_count: int
    blocks_per_sm: int
    warps_per_block: int
    waves_per_chunk: int = 1

    @property
    def wave_blocks(self):
        return self.blocks_per_sm * self.sm_count

    def chunk_blocks(self, per_chunk):
        """Blocks per chunk: whole waves, several only when a wave has few lanes."""
        wave_lanes = self.wave_blocks * self.warps_per_block * 32
        k = max(1, min(per_chunk // self.wave_blocks, -(-MIN_CHUNK_LANES // wave_lanes)))
        if per_chunk < self.wave_blocks:          # the caller wants small chunks: respect it
            self.waves_per_chunk = 1
            return per_chunk
        self.waves_per_chunk = k
        return k * self.wave_blocks

    def order(self, first_block, n_blocks):
        """(order, sm_order, warp_sm) for a chunk: the chunk's warp indices in the order they
        reach the L2 for one instruction (SMs interleaved), the same warps grouped by SM
        (each SM's in its own order: what its L1 sees), and each warp's SM."""
        wpb, S = self.warps_per_block, self.sm_count
        b = np.arange(first_block, first_block + n_blocks, dtype=np.int64)
        wave = b // self.wave_blocks
        wave -= wave[0]
        q = b % self.wave_blocks
        sm, slot = q % S, q // S
        wi = np.arange(wpb, dtype=np.int64)
        key = (((wave * self.blocks_per_sm + slot)[:, None] * wpb + wi[None, :]) * S + sm[:, None]).reshape(-1)
        order = np.argsort(key, kind="stable").astype(np.int64)
        warp_sm = np.repeat(sm, wpb).astype(np.int64)
        sm_order = order[np.argsort(warp_sm[order], kind="stable")]
        return order, sm_order, warp_sm
