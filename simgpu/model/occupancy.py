"""CUDA theoretical occupancy, computed the way NVIDIA's calculator does.

This follows ``cuda_occupancy.h`` (the header behind ``cudaOccupancyMaxActiveBlocksPerMultiprocessor``
and the Nsight Compute "Occupancy" section), for compute capability 7.0 and later:

  warps per block       W   = ceil(threads / warp_size)
  warp limit            Lw  = floor(max_warps_per_sm / W)
  block limit           Lb  = max_blocks_per_sm
  registers per warp    Rw  = roundup(regs_per_thread * warp_size, register_alloc_unit)
  register limit        Lr  = floor(floor((registers_per_sm / P) / Rw) * P / W)
                              (P = sub-partitions = gpu.schedulers_per_sm: registers are
                              allocated inside each sub-partition, so the warp count the
                              register file allows is rounded down to a multiple of P)
  shared per block      S   = roundup(shared_mem + reserved_per_block, shared_mem_alloc_unit)
  shared limit          Ls  = floor(shared_mem_per_sm / S)
  blocks per SM         B   = min(Lw, Lb, Lr, Ls);  occupancy = B * W / max_warps_per_sm

A block that cannot fit at all (threads > max per block, shared memory above the opt-in
per-block maximum, registers above the per-thread maximum or the per-block register file)
raises ``OccupancyError`` naming the limit: that is the launch a real GPU refuses with
"too many resources requested for launch".

Assumptions: the shared-memory carve-out is the largest the SM offers
(``gpu.shared_mem_per_sm_bytes``), which is what the driver uses unless a smaller carve-out
is preferred (pass ``shared_mem_carveout_bytes`` to model one); the per-block register file
equals ``gpu.registers_per_sm`` (64 Ki registers on cc 7.0 - 9.0).
"""
from __future__ import annotations

from dataclasses import dataclass

from simgpu.hardware.spec import GPU

LIMIT_NAMES = ("blocks", "registers", "shared_mem", "warps")


class OccupancyError(ValueError):
    """A block that no SM can hold; the message names the resource and its limit."""


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, unit: int) -> int:
    return _ceil_div(a, unit) * unit


@dataclass(frozen=True)
class Occupancy:
    """Theoretical occupancy of one kernel configuration on one GPU."""

    threads_per_block: int
    warps_per_block: int
    blocks_per_sm: int
    active_warps_per_sm: int
    max_warps_per_sm: int
    theoretical_occupancy: float          # fraction, 0..1
    limit_blocks: int
    limit_registers: int
    limit_shared_mem: int
    limit_warps: int
    limiters: tuple                       # names from LIMIT_NAMES reaching the minimum
    registers_per_warp_allocated: int
    shared_mem_per_block_allocated: int

    @property
    def limiter(self) -> str:
        """The first limiting resource (Nsight lists every one that ties)."""
        return self.limiters[0]

    def metrics(self) -> dict:
        """The numbers under the names Nsight Compute gives them."""
        return {
            "launch__occupancy_limit_blocks": self.limit_blocks,
            "launch__occupancy_limit_registers": self.limit_registers,
            "launch__occupancy_limit_shared_mem": self.limit_shared_mem,
            "launch__occupancy_limit_warps": self.limit_warps,
            "sm__maximum_warps_per_active_cycle_pct": 100.0 * self.theoretical_occupancy,
        }

    def __str__(self):
        return (f"{self.blocks_per_sm} blocks/SM x {self.warps_per_block} warps = "
                f"{self.active_warps_per_sm}/{self.max_warps_per_sm} warps "
                f"({100 * self.theoretical_occupancy:.1f} %), limited by {', '.join(self.limiters)}")


def _check_fits(gpu: GPU, threads: int, regs: int, smem: int, regs_per_block: int):
    if threads <= 0:
        raise OccupancyError(f"threads_per_block must be positive, got {threads}")
    if threads > gpu.max_threads_per_block:
        raise OccupancyError(
            f"{threads} threads per block exceeds max_threads_per_block = {gpu.max_threads_per_block} on {gpu.name}")
    if regs < 0 or regs > gpu.max_registers_per_thread:
        raise OccupancyError(
            f"{regs} registers per thread exceeds max_registers_per_thread = {gpu.max_registers_per_thread} on {gpu.name}")
    if smem < 0 or smem > gpu.max_shared_mem_per_block_bytes:
        raise OccupancyError(
            f"{smem} B shared memory per block exceeds max_shared_mem_per_block_bytes = "
            f"{gpu.max_shared_mem_per_block_bytes} on {gpu.name}")
    if regs_per_block > gpu.registers_per_sm:
        raise OccupancyError(
            f"{regs} registers x {threads} threads allocate {regs_per_block} registers per block "
            f"(warps rounded up to a multiple of the {gpu.schedulers_per_sm} sub-partitions), more than "
            f"the {gpu.registers_per_sm} a block may have on {gpu.name} (registers per block)")


def occupancy(gpu: GPU, threads_per_block: int, registers_per_thread: int = 32,
              shared_mem_per_block: int = 0, shared_mem_carveout_bytes: int | None = None) -> Occupancy:
    """Blocks and warps resident per SM, and which resource limits them.

    Worked example, H100 (64 warps, 32 blocks, 65536 registers in 4 sub-partitions,
    228 KiB shared, 1 KiB reserved per block), 256 threads x 64 registers, no shared memory:
    W = 8 warps; Rw = 64*32 = 2048 registers; 16384 // 2048 = 8 warps per sub-partition,
    32 per SM, so Lr = 32 // 8 = 4; Lw = 64 // 8 = 8; Lb = 32; S = 1024 B, Ls = 228.
    B = 4 blocks, 32 warps, 50 %, limited by registers.

    >>> from simgpu.hardware import H100
    >>> occ = occupancy(H100, 256, 64)
    >>> occ.blocks_per_sm, occ.theoretical_occupancy, occ.limiters
    (4, 0.5, ('registers',))
    """
    warp = gpu.warp_size
    parts = gpu.schedulers_per_sm
    warps_per_block = _ceil_div(threads_per_block, warp) if threads_per_block > 0 else 0
    regs_per_warp = _round_up(registers_per_thread * warp, gpu.register_alloc_unit)
    # the hardware check assumes the block's warps are spread over all sub-partitions
    regs_per_block = regs_per_warp * _round_up(warps_per_block, parts)
    smem_alloc = _round_up(shared_mem_per_block + gpu.reserved_shared_mem_per_block_bytes,
                           gpu.shared_mem_alloc_unit_bytes)
    _check_fits(gpu, threads_per_block, registers_per_thread, shared_mem_per_block, regs_per_block)

    limit_blocks = gpu.max_blocks_per_sm
    limit_warps = gpu.max_warps_per_sm // warps_per_block
    if regs_per_warp > 0:
        warps_per_partition = (gpu.registers_per_sm // parts) // regs_per_warp
        limit_registers = (warps_per_partition * parts) // warps_per_block
    else:
        limit_registers = limit_blocks          # no registers: no register limit
    carveout = gpu.shared_mem_per_sm_bytes if shared_mem_carveout_bytes is None else shared_mem_carveout_bytes
    if smem_alloc == 0:
        limit_shared = limit_blocks             # nothing allocated: no shared-memory limit
    else:                                       # a too-small preferred carve-out is raised to fit one block
        limit_shared = max(1, carveout // smem_alloc)

    limits = dict(zip(LIMIT_NAMES, (limit_blocks, limit_registers, limit_shared, limit_warps)))
    blocks = min(limits.values())
    if blocks == 0:   # cannot happen after _check_fits; kept as a guard with a clear message
        raise OccupancyError(f"no block fits on an SM of {gpu.name}: limits {limits}")
    active = blocks * warps_per_block
    return Occupancy(
        threads_per_block=threads_per_block, warps_per_block=warps_per_block,
        blocks_per_sm=blocks, active_warps_per_sm=active, max_warps_per_sm=gpu.max_warps_per_sm,
        theoretical_occupancy=active / gpu.max_warps_per_sm,
        limit_blocks=limit_blocks, limit_registers=limit_registers,
        limit_shared_mem=limit_shared, limit_warps=limit_warps,
        limiters=tuple(n for n in LIMIT_NAMES if limits[n] == blocks),
        registers_per_warp_allocated=regs_per_warp, shared_mem_per_block_allocated=smem_alloc,
    )


def occupancy_table(gpu: GPU, block_sizes=(64, 128, 256, 512, 1024), registers_per_thread: int = 32,
                    shared_mem_per_block: int = 0) -> list:
    """``occupancy`` for several block sizes (the calculator's "impact of varying block size")."""
    return [occupancy(gpu, t, registers_per_thread, shared_mem_per_block) for t in block_sizes]


__all__ = ["Occupancy", "OccupancyError", "occupancy", "occupancy_table", "LIMIT_NAMES"]
