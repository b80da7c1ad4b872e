"""Hardware as data: frozen, typed specs whose field names carry their units.

Every preset number has its source next to it (see ``presets.py``).  Specs check
themselves in ``__post_init__`` so an inconsistent GPU is refused at construction,
not discovered as a wrong count later.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..errors import SimGPUError
from ..units import GiB, KiB, MiB


class HardwareError(SimGPUError, ValueError):
    """A hardware description that cannot describe a real GPU."""


@dataclass(frozen=True)
class CacheSpec:
    """A sectored, set-associative cache."""

    size_bytes: int
    line_bytes: int = 128
    sector_bytes: int = 32
    ways: int = 16
    hit_latency_cycles: int = 30

    def __post_init__(self):
        if self.size_bytes <= 0 or self.line_bytes <= 0 or self.sector_bytes <= 0 or self.ways <= 0:
            raise HardwareError(f"cache sizes must be positive: {self}")
        if self.line_bytes % self.sector_bytes:
            raise HardwareError(
                f"cache line of {self.line_bytes} B is not a whole number of {self.sector_bytes} B sectors")
        if self.size_bytes % (self.ways * self.line_bytes):
            raise HardwareError(
                f"cache of {self.size_bytes} B is not a multiple of ways x line "
                f"({self.ways} x {self.line_bytes} B = {self.ways * self.line_bytes} B)")

    @property
    def sets(self) -> int:
        return self.size_bytes // (self.ways * self.line_bytes)

    @property
    def sectors_per_line(self) -> int:
        return self.line_bytes // self.sector_bytes


@dataclass(frozen=True)
class DramSpec:
    bandwidth_bytes_per_s: float
    size_bytes: int
    access_bytes: int = 32          # smallest unit read or written (one sector)
    latency_ns: float = 500.0

    def __post_init__(self):
        if self.bandwidth_bytes_per_s <= 0 or self.access_bytes <= 0:
            raise HardwareError(f"DRAM bandwidth and access size must be positive: {self}")


@dataclass(frozen=True)
class GPU:
    """One GPU model.  Limits follow CUDA's device attributes and occupancy calculator."""

    name: str
    compute_capability: tuple
    sm_count: int
    clock_hz: float                          # SM clock under load
    warp_size: int = 32
    # launch limits (CUDA device attributes)
    max_threads_per_block: int = 1024
    max_block_dim: tuple = (1024, 1024, 64)
    max_grid_dim: tuple = (2**31 - 1, 65535, 65535)
    # per-SM resources (occupancy calculator)
    max_threads_per_sm: int = 2048
    max_warps_per_sm: int = 64
    max_blocks_per_sm: int = 32
    registers_per_sm: int = 65536
    max_registers_per_thread: int = 255
    register_alloc_unit: int = 256           # registers, per warp
    shared_mem_per_sm_bytes: int = 228 * KiB
    max_shared_mem_per_block_bytes: int = 227 * KiB   # with opt-in
    static_shared_mem_per_block_bytes: int = 48 * KiB  # without opt-in
    shared_mem_alloc_unit_bytes: int = 128
    reserved_shared_mem_per_block_bytes: int = 1 * KiB
    shared_banks: int = 32
    shared_bank_bytes: int = 4
    schedulers_per_sm: int = 4
    # caches and memory
    l1: CacheSpec = field(default_factory=lambda: CacheSpec(size_bytes=256 * KiB, ways=64))
    l2: CacheSpec = field(default_factory=lambda: CacheSpec(size_bytes=50 * MiB, ways=16))
    dram: DramSpec = field(default_factory=lambda: DramSpec(bandwidth_bytes_per_s=3.35e12, size_bytes=80 * GiB))
    l2_bandwidth_bytes_per_s: float = 0.0
    # eager write-back (docs/memory.md): the most bytes the L2 keeps dirty; a write that dirties a
    # line beyond a set's share writes the set's least recently used dirty line back (it stays
    # valid).  0: no limit (dirty lines leave only when evicted)
    l2_dirty_max_bytes: int = 0
    # arithmetic: lanes per SM per cycle for each pipe (results per cycle per SM)
    fp32_lanes_per_sm: int = 128
    fp64_lanes_per_sm: int = 64
    int32_lanes_per_sm: int = 64
    sfu_lanes_per_sm: int = 16
    lsu_lanes_per_sm: int = 32
    # dense tensor-core peaks from the datasheet (FLOP/s)
    tensor_fp16_flops: float = 0.0
    tensor_tf32_flops: float = 0.0
    tensor_fp8_flops: float = 0.0
    # the tensor pipe as microbenchmarks measure it (0: derived from the datasheet's peak)
    tensor_fp16_flops_per_sm_cycle: float = 0.0   # dense fp16 work per SM cycle, wgmma at full rate
    mma_sync_16816_cycles: float = 0.0       # an SMSP's tensor pipe per HMMA.16816 (mma.sync) at full rate
    mma_sync_latency_cycles: float = 0.0     # dependent HMMA.16816 -> HMMA.16816
    wgmma_latency_cycles: float = 0.0        # wait_group's return after the pipe's last work (beyond occupancy)
    # timing model (simgpu.timing): issue rates, latencies and overheads.  Defaults are the
    # Hopper values; presets.py gives each one's source (datasheet, CUDA-PG or [MB]).
    int_alu_lanes_per_sm: int = 64           # integer ALU pipe (IADD3/LOP3/ISETP/SEL/SHF) lanes per SM
    conv_lanes_per_sm: int = 16              # type conversions per SM per clock (the XU pipe, with MUFU)
    shfl_lanes_per_sm: int = 32              # warp-shuffle results per SM per clock
    # the address divergence unit (ADU): constant loads (LDC), block barriers (BAR), S2UR; warp
    # instructions per SM per clock (0: no such unit, those instructions issue to the LSU)
    adu_per_sm_cycle: float = 0.0
    l1_bytes_per_cycle: int = 128            # L1/shared data path per SM: one 128 B wavefront per clock
    l1_line_cycles: float = 1.0              # L1 tag-stage cycles per 128-byte line of a global request over many lines
    l1_tag_banks: int = 1                    # lines in one bank (line index mod banks) take a cycle each
    fp32_latency_cycles: float = 4.0         # dependent-issue latency of FFMA
    fp64_latency_cycles: float = 8.0         # DFMA
    int_latency_cycles: float = 4.0          # IADD3/IMAD/LOP3
    sfu_latency_cycles: float = 18.0         # MUFU
    conv_latency_cycles: float = 12.0        # F2I/I2F/F2F
    shared_latency_cycles: float = 30.0      # LDS with no bank conflict
    # a taken branch over a slow path inside a BSSY/BSYNC region (IEEE sqrt, division), BSYNC
    # included: cycles the warp loses beyond the instructions' latencies (0: not measured)
    branch_region_cycles: float = 0.0
    # DRAM load-to-use latencies differ from access to access: half-width of a uniform spread
    # about dram.latency_ns (a warp waiting for several loads waits for the slowest; 0: none)
    dram_latency_spread_ns: float = 0.0
    dram_read_bytes_per_s: float = 0.0       # sustained DRAM read bandwidth (0: the datasheet's)
    l2_read_bytes_per_s: float = 0.0         # sustained L2 -> SM read bandwidth (0: l2_bandwidth_bytes_per_s)
    l2_read_wide_bytes_per_s: float = 0.0    # the same for 16-byte-per-lane requests (cp.async, TMA, ld.v4; 0: as above)
    dram_write_cost: float = 1.0             # DRAM time of a written byte, in read bytes
    # the SM clock of launches outside a profiler (do_bench, CUPTI/torch.profiler, a program's own
    # timing): %clock64 against time on the card; clock_hz is the clock under Nsight Compute,
    # which the timing model's calibration used.  0: clock_hz (simgpu.validate.unprofiled)
    unprofiled_clock_hz: float = 0.0
    l2_slices: int = 96                      # L2 slices (parallel servers of L2 bandwidth)
    dram_channels: int = 80                  # DRAM channels (parallel servers of DRAM bandwidth)
    atomic_same_address_ns: float = 0.5      # one atomic lane-operation on one hot address in the L2
    atomic_pass_ns: float = 1.0              # an L2 slice's atomic unit: time per pass over one line
    l2_store_sector_cost: float = 1.0        # L2 time of a stored sector, in read sectors
    l2_store_request_sectors: float = 0.0    # least L2 time of one store request (one line), in read sectors
    atomic_unit_bytes: int = 512             # contiguous bytes one slice's atomic unit serves
    launch_overhead_ns: float = 2000.0       # gpu__time_duration of an empty kernel, less one block start
    block_launch_cycles: float = 0.0         # SM cycles to start each block (one at a time per SM)
    dobench_floor_ns: float = 0.0            # what triton.testing.do_bench's median adds to the predicted time
    dobench_host_desc_ns: float = 0.0        # ... more per host TensorDescriptor of a Triton launch
    dobench_device_desc_ns: float = 0.0      # ... more per tl.make_tensor_descriptor of a Triton kernel
    sources: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        if self.sm_count <= 0 or self.clock_hz <= 0:
            raise HardwareError(f"{self.name}: sm_count and clock_hz must be positive")
        if self.max_warps_per_sm * self.warp_size != self.max_threads_per_sm:
            raise HardwareError(f"{self.name}: max_warps_per_sm x warp_size != max_threads_per_sm")
        if self.max_shared_mem_per_block_bytes > self.shared_mem_per_sm_bytes:
            raise HardwareError(f"{self.name}: a block cannot have more shared memory than its SM")
        if self.max_threads_per_block > self.max_threads_per_sm:
            raise HardwareError(f"{self.name}: max_threads_per_block exceeds max_threads_per_sm")

    # -- derived peaks -------------------------------------------------
    @property
    def fp32_flops(self) -> float:
        """Peak FP32 FLOP/s (an FMA counts as two)."""
        return 2.0 * self.fp32_lanes_per_sm * self.sm_count * self.clock_hz

    @property
    def fp64_flops(self) -> float:
        return 2.0 * self.fp64_lanes_per_sm * self.sm_count * self.clock_hz

    @property
    def dram_bandwidth(self) -> float:
        return self.dram.bandwidth_bytes_per_s

    def ridge_point(self, flops: float | None = None) -> float:
        """Arithmetic intensity (FLOP/byte) where the roofline's slope meets its roof."""
        return (flops or self.fp32_flops) / self.dram_bandwidth

    def with_(self, **changes) -> "GPU":
        """A copy with some fields changed (checked again)."""
        return replace(self, **changes)

    def __str__(self):
        return (f"{self.name}: {self.sm_count} SMs @ {self.clock_hz / 1e9:.2f} GHz, "
                f"L2 {self.l2.size_bytes / MiB:.0f} MiB, DRAM {self.dram_bandwidth / 1e12:.2f} TB/s, "
                f"FP32 {self.fp32_flops / 1e12:.1f} TFLOP/s")
