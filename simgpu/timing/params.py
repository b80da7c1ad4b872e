"""The numbers the simulator runs on, derived from the GPU spec (a pure function).

Per sub-partition (SMSP; `schedulers_per_sm` of them per SM), a warp instruction on pipe p
occupies that pipe for  warp_size / (lanes_per_sm[p] / schedulers_per_sm)  cycles:

    H200  fp32 128 lanes/SM -> 1 cycle     fp64 64 -> 2     int (ALU) 64 -> 2      imad 64 -> 2
          sfu (XU: MUFU and conversions) 16 -> 8 cycles     shfl 32 -> 4     lsu 32 -> 4

The tensor pipe ("tensor", compiled path) counts work, not instructions: a tensor-core SASS
instruction is ``ptx_trace.tensor_units`` units of 1024 dense fp16 FLOPs per warp, and a unit
occupies the SMSP's tensor pipe for  1024 / (tensor_fp16_flops / (sm_count x clock x
schedulers_per_sm))  cycles: the datasheet's dense fp16 peak at the modelled clock (H200: 989.4
TFLOP/s over 132 SMs x 4 SMSPs at 1.98 GHz: 946 FLOP/cycle/SMSP, 1.08 cycles a unit; an
HGMMA.64x128x16 is 64 units per warp, 69 cycles).  Not measured yet (issue 27 step 5): the
rates per shape and dtype, and the latency, taken as the occupancy plus the fp32 latency.

Integer adds and moves ("iadd") go to whichever of the ALU and FMA-heavy (imad) pipes frees
first, split between them as ptxas does (IADD3 / IMAD.IADD, MOV / IMAD.MOV).

The issue port of an SMSP issues one warp instruction per cycle.  Latencies are counted
from issue to the result being usable by a dependent instruction.  An IR op that becomes a
routine of n SASS instructions (libdevice sin, IEEE division, ...) has latency
    latency(main pipe) + (n - 1) * fp32_latency * ROUTINE_ILP
where ROUTINE_ILP = 0.5 says half of the routine's instructions are on its critical path
(an assumption from the routines' structure, docs/timing.md).
"""
from __future__ import annotations

from dataclasses import dataclass

ROUTINE_ILP = 0.5
WIDE_SECTORS = 16           # sectors of a warp's request of 16 bytes a lane, coalesced: L2 at the wide rate
LSU_QUEUE_CYCLES = 16        # a warp waits for its request to reach the L1 at most this early
# The GPU spec's hit latencies (L1, L2, DRAM, shared) are load-to-use: from a load's issue to a
# dependent instruction's, as a pointer chase measures them.  The simulator's request path adds
# its own cycles before the level's latency: the request enters the L1 / shared data path one
# cycle after issue and holds it one cycle a wavefront (sim.SM.memory).  TimingParams takes
# these 2 cycles (a one-wavefront request's) off, so a chase step costs what the card's did.
REQUEST_PATH_CYCLES = 2.0


def tensor_unit_cycles(gpu):
    """Cycles one unit of tensor work (1024 dense fp16 FLOPs of a warp) occupies an SMSP's tensor
    pipe with wgmma: measured (gpu.tensor_fp16_flops_per_sm_cycle), else the datasheet's dense
    fp16 peak spread over the SMSPs at the modelled clock (a GPU without one: 1 cycle)."""
    if gpu.tensor_fp16_flops_per_sm_cycle > 0:
        return 1024.0 / (gpu.tensor_fp16_flops_per_sm_cycle / gpu.schedulers_per_sm)
    peak = getattr(gpu, "tensor_fp16_flops", 0.0) or 0.0
    if peak <= 0:
        return 1.0
    return 1024.0 / (peak / (gpu.sm_count * gpu.clock_hz * gpu.schedulers_per_sm))


@dataclass(frozen=True)
class TimingParams:
    clock_hz: float
    schedulers: int
    interval: dict              # pipe -> cycles one warp instruction occupies the SMSP's pipe
    latency: dict               # pipe -> cycles from issue to result
    l1_hit_cycles: float
    l2_hit_cycles: float
    dram_cycles: float
    shared_cycles: float
    l1_bytes_per_cycle: float
    l2_bytes_per_cycle: float   # whole GPU
    dram_bytes_per_cycle: float  # whole GPU, sustained reads
    dram_write_cost: float      # DRAM time of a written byte, in read bytes
    l2_slices: int
    dram_channels: int
    atomic_cycles: float        # per lane-operation on one hot address
    atomic_pass_cycles: float   # per pass over one line at an L2 slice's atomic unit
    l2_store_sector_cost: float  # L2 time of a stored sector, in read sectors
    l2_store_request_sectors: float  # least L2 time of a store request to one line, in read sectors
    atomic_unit_bytes: int      # contiguous bytes one atomic unit serves
    launch_overhead_s: float
    block_launch_cycles: float
    sm_count: int
    dram_access_bytes: int
    # L2 time of a byte of a 16-byte-a-lane request (a warp's request of >= WIDE_SECTORS sectors:
    # cp.async 16, TMA, ld.v4), in narrow read bytes: the two measured read rates' ratio
    l2_wide_cost: float = 1.0
    # what a taken branch over the slow path of a BSSY/BSYNC region (IEEE sqrt, division) costs
    # the warp beyond its instructions (GPU.branch_region_cycles; sass_stream.routine_timing)
    region_cycles: float = 0.0
    # half-width of the uniform spread of a DRAM-served load's latency about dram_cycles
    # (GPU.dram_latency_spread_ns; sim.SM._dram_latency)
    dram_spread_cycles: float = 0.0

    @classmethod
    def from_gpu(cls, gpu):
        per = gpu.schedulers_per_sm
        w = gpu.warp_size

        def iv(lanes):
            return max(1.0, w / (lanes / per))

        interval = {"fp32": iv(gpu.fp32_lanes_per_sm), "fp64": iv(gpu.fp64_lanes_per_sm),
                    "int": iv(gpu.int_alu_lanes_per_sm), "imad": iv(gpu.int32_lanes_per_sm),
                    "sfu": iv(gpu.sfu_lanes_per_sm), "shfl": iv(gpu.shfl_lanes_per_sm),
                    "lsu": iv(gpu.lsu_lanes_per_sm), "branch": 1.0,
                    # the ADU (LDC, BAR, S2UR; ncu's sm__inst_executed_pipe_adu): measured 0.5 warp
                    # instructions per SM cycle on Hopper, 8 cycles an SMSP; unmeasured: the LSU's
                    "adu": (per / gpu.adu_per_sm_cycle if gpu.adu_per_sm_cycle > 0 else iv(gpu.lsu_lanes_per_sm)),
                    "iadd": iv(gpu.int_alu_lanes_per_sm),     # either integer pipe (sim.SM.warp)
                    "barrier": 1.0, "none": 1.0,      # an issue slot, no pipe (BRA, ULDC, UMOV: ncu counts
                                                      # them in no pipe; validation/ncu_bottleneck)
                    # the uniform datapath (UIADD3, ULOP3, ...; compiled path): measured on an H100,
                    # UIADD3 + ULOP3 chains at 1.87 per SM cycle together, 0.47 per SMSP: 2 cycles
                    # (validation/microbench/opcodes.py `uiadd3`, docs/timing.md)
                    "uniform": 2.0,
                    "tensor": tensor_unit_cycles(gpu),
                    # mma.sync (HMMA/IMMA/DMMA of one warp): measured per HMMA.16816 (4 units)
                    "tensor_sync": (gpu.mma_sync_16816_cycles / 4.0 if gpu.mma_sync_16816_cycles > 0
                                    else tensor_unit_cycles(gpu))}
        latency = {"fp32": gpu.fp32_latency_cycles, "fp64": gpu.fp64_latency_cycles,
                   "int": gpu.int_latency_cycles, "imad": gpu.int_latency_cycles, "iadd": gpu.int_latency_cycles,
                   "sfu": gpu.sfu_latency_cycles,
                   "conv": gpu.conv_latency_cycles, "shfl": gpu.shared_latency_cycles,
                   "lsu": gpu.shared_latency_cycles, "adu": gpu.shared_latency_cycles,
                   "branch": gpu.int_latency_cycles,
                   "barrier": 1.0, "uniform": gpu.int_latency_cycles, "none": gpu.int_latency_cycles,
                   "tensor": gpu.wgmma_latency_cycles or gpu.fp32_latency_cycles,
                   "tensor_sync": (max(0.0, gpu.mma_sync_latency_cycles - gpu.mma_sync_16816_cycles)
                                   if gpu.mma_sync_latency_cycles > 0 else gpu.fp32_latency_cycles)}
        clk = gpu.clock_hz
        r = REQUEST_PATH_CYCLES   # the spec's latencies are load-to-use; the request path adds these
        l2_bw = gpu.l2_read_bytes_per_s or gpu.l2_bandwidth_bytes_per_s or 2.5 * gpu.dram.bandwidth_bytes_per_s
        dram_bw = gpu.dram_read_bytes_per_s or gpu.dram.bandwidth_bytes_per_s
        return cls(
            clock_hz=clk, schedulers=per, interval=interval, latency=latency,
            l1_hit_cycles=max(0.0, gpu.l1.hit_latency_cycles - r), l2_hit_cycles=max(0.0, gpu.l2.hit_latency_cycles - r),
            dram_cycles=max(0.0, gpu.dram.latency_ns * 1e-9 * clk - r),
            shared_cycles=max(0.0, gpu.shared_latency_cycles - r),
            l1_bytes_per_cycle=float(gpu.l1_bytes_per_cycle),
            l2_bytes_per_cycle=l2_bw / clk, dram_bytes_per_cycle=dram_bw / clk,
            dram_write_cost=gpu.dram_write_cost,
            l2_slices=gpu.l2_slices, dram_channels=gpu.dram_channels,
            atomic_cycles=gpu.atomic_same_address_ns * 1e-9 * clk,
            atomic_pass_cycles=gpu.atomic_pass_ns * 1e-9 * clk, atomic_unit_bytes=gpu.atomic_unit_bytes,
            l2_store_sector_cost=gpu.l2_store_sector_cost, l2_store_request_sectors=gpu.l2_store_request_sectors,
            launch_overhead_s=gpu.launch_overhead_ns * 1e-9, block_launch_cycles=gpu.block_launch_cycles,
            sm_count=gpu.sm_count, dram_access_bytes=gpu.dram.access_bytes,
            l2_wide_cost=min(1.0, l2_bw / gpu.l2_read_wide_bytes_per_s) if gpu.l2_read_wide_bytes_per_s else 1.0,
            region_cycles=gpu.branch_region_cycles,
            dram_spread_cycles=gpu.dram_latency_spread_ns * 1e-9 * clk)

    def op_latency(self, mix, first=None, instructions=None):
        """Latency of an op whose SASS instructions are {pipe: count}; ``first``: the slowest
        instruction's own latency where known (per opcode, timing/opcosts.py), else its pipe's;
        ``instructions``: how many SASS instructions it is, where the mix counts pipe work (an
        IMAD.WIDE is one instruction of two IMAD intervals: its latency is its own, 8 cycles)."""
        tp = "tensor" if mix.get("tensor") else "tensor_sync" if mix.get("tensor_sync") else None
        t = mix.get(tp, 0) if tp else 0
        n = sum(v for p, v in mix.items() if p not in ("tensor", "tensor_sync")) + (1 if t else 0)
        if instructions is not None and not t:
            n = instructions
        if n == 0:
            return 0.0
        if t:                       # the result is ready when the tensor pipe has done the work
            return (t * self.interval[tp] + self.latency[tp]
                    + (n - 1) * self.latency["fp32"] * ROUTINE_ILP)
        if first is None:
            main = max(mix, key=lambda p: self.latency.get(p, 4.0))
            first = self.latency.get(main, 4.0)
        return first + (n - 1) * self.latency["fp32"] * ROUTINE_ILP


__all__ = ["TimingParams", "tensor_unit_cycles", "ROUTINE_ILP", "LSU_QUEUE_CYCLES", "REQUEST_PATH_CYCLES"]
