"""GPU presets.  Each number carries its source.

Sources (abbreviations used below):
  [DS-H200]  NVIDIA H200 Tensor Core GPU datasheet (SXM: 141 GB HBM3e, 4.8 TB/s).
  [DS-H100]  NVIDIA H100 Tensor Core GPU datasheet (SXM5: 80 GB HBM3, 3.35 TB/s,
             67 TFLOP/s FP32, 989 TFLOP/s dense FP16/BF16, 494 TF32, 1979 FP8).
  [WP-H100]  NVIDIA H100 (Hopper) architecture whitepaper: 128 FP32 / 64 FP64 /
             64 INT32 lanes and 16 SFU lanes per SM, 4 sub-partitions, 256 KB L1/shared
             per SM, up to 228 KB shared per SM, 227 KB per block, 50 MB L2 (SXM5).
  [WP-A100]  NVIDIA A100 whitepaper: 108 SMs, 64 FP32 lanes/SM, 192 KB L1/shared per SM,
             164 KB shared per SM, 163 KB per block, 40 MB L2, 1410 MHz boost.
  [WP-V100]  NVIDIA V100 whitepaper: 80 SMs, 64 FP32 lanes/SM, 128 KB L1/shared,
             96 KB shared per SM, 6 MB L2, 1530 MHz boost, 900 GB/s HBM2.
  [CUDA-PG]  CUDA C++ Programming Guide, table "Technical Specifications per Compute
             Capability" (threads/blocks/warps/registers per SM, grid and block limits).
  [DEV]      CUDA device attributes read on the lent H200 (torch.cuda.get_device_properties:
             132 SMs, 60 MiB L2) -- see validation/README.md.
  [MB]       our microbenchmarks on the H200, validation/microbench/ (method and data there).
  [LAT]      validation/microbench/latency_mlp.py on an H100 SXM under ncu (2026-12-07):
             validation/data/latency_mlp/ (docs/timing.md, latency-bound launches).
  [LEC]      library-level microbenchmarks on the H200 through PyTorch/cuBLAS/Triton,
             validation/lecture/ (data: validation/data/lecture_h200*.json).
"""
from __future__ import annotations

from .spec import GPU, CacheSpec, DramSpec, KiB, MiB, GiB

DOBENCH_FLOOR_H200_NS = 2307.0          # validation/tensor_cores/lecture/derive_floor.py (H200: add_1)
DOBENCH_FLOOR_H100_NS = 2310.0          # the same (H100: empty and one-store kernels, 8 launches)
DOBENCH_HOST_DESC_H100_NS = 105.0       # the same (H100: near-empty kernels of 1, 2, 4 host TensorDescriptors)
DOBENCH_DEVICE_DESC_H100_NS = 506.0     # the same (H100: 1, 2 tl.make_tensor_descriptor)

H100 = GPU(
    name="H100 SXM",
    compute_capability=(9, 0),
    sm_count=132,                                 # [DS-H100]
    clock_hz=1.98e9,                              # [DS-H100] max boost; 67 TF FP32 = 2*128*132*1.98e9
    max_threads_per_sm=2048, max_warps_per_sm=64, max_blocks_per_sm=32,   # [CUDA-PG] cc 9.0
    registers_per_sm=65536, max_registers_per_thread=255,                  # [CUDA-PG]
    shared_mem_per_sm_bytes=228 * KiB, max_shared_mem_per_block_bytes=227 * KiB,  # [WP-H100]
    l1=CacheSpec(size_bytes=256 * KiB, line_bytes=128, sector_bytes=32, ways=64, hit_latency_cycles=33),  # [WP-H100]
    l2=CacheSpec(size_bytes=50 * MiB, line_bytes=128, sector_bytes=32, ways=16, hit_latency_cycles=260),  # [WP-H100]
    dram=DramSpec(bandwidth_bytes_per_s=3.35e12, size_bytes=80 * GiB, access_bytes=32, latency_ns=480.0),  # [DS-H100]
    l2_bandwidth_bytes_per_s=10.0e12,
    fp32_lanes_per_sm=128, fp64_lanes_per_sm=64, int32_lanes_per_sm=64, sfu_lanes_per_sm=16,  # [WP-H100]
    tensor_fp16_flops=989.4e12, tensor_tf32_flops=494.7e12, tensor_fp8_flops=1978.9e12,      # [DS-H100]
    # [OP] validation/data/h100_opcodes.json: F2I/I2F.S64/F2F/I2F.F64 18.0-18.9 cycles (MUFU 17-19)
    conv_latency_cycles=18.0, sfu_latency_cycles=18.0,
    sources={"sm_count": "DS-H100", "clock_hz": "DS-H100", "l2": "WP-H100", "dram": "DS-H100",
             "l2_bandwidth_bytes_per_s": "lead; replaced by [MB] where measured"},
)

H200 = H100.with_(
    name="H200",
    # Load-to-use latencies (from a load's issue to its dependent's): a uint32 pointer chase step
    # [MB latency, chaseu_*] is LDG + one IMAD.WIDE.U32 (its SASS, validation/data/sass/micro), and
    # IMAD.WIDE's own latency is 8.0 cycles [timing/opcosts.py, H100 opcode benches, 2026-12-07],
    # so load-to-use = cycles per step - 8.0 (before: - 4, the FMA latency, which the per-opcode
    # table has since shown IMAD.WIDE is not; validation/microbench/latency_model_check.py).
    # DRAM: 4.8 TB/s [DS-H200] (the roofline's); latency 662.5 - 8.0 = 654.5 cycles = 330.6 ns at
    # 1.9795 GHz (the clock ncu read): chase over 128 MiB, one word per line [MB chaseu_128MB]
    # access 64 B: an isolated read costs 64 B of DRAM traffic [MB granularity, gran_read; validation/README.md]
    dram=DramSpec(bandwidth_bytes_per_s=4.8e12, size_bytes=141 * 10**9, access_bytes=64, latency_ns=330.6),
    # DRAM latencies differ from access to access: K independent chases in one warp (one warp per
    # SM, cold, 256 MiB) take 736.5 / 830.2 / 901.9 / 984.9 cycles a step for K = 1 / 2 / 4 / 8
    # [LAT chase*_dram, H100]; the model's loads all took the mean, and its K-steps were 742.7 /
    # 752.2 / 754.5 for K = 2 / 4 / 8.  With each DRAM-served load's latency spread uniformly over
    # +-a (sim.SM._dram_latency) a warp waits for the slowest of its loads in flight; the model's
    # K-steps grow linearly in a (a = 198 cycles: +60.8 / +71.5 / +135.5) and meet the card's at
    # a = 288 / 418 / 340 cycles: a = 349 cycles = 175 ns (the mean of the three).  With it the
    # few-block f64 streams (not fitted) come out 1.11 / 1.00 / 1.07 / 0.98 of the card's times
    # (0.89 / 0.81 / 0.86 / 0.80 without).  Measured on the H100 (HBM3); the H200 (HBM3e, the
    # same GH100 memory controllers) takes it unmeasured.
    dram_latency_spread_ns=175.0,
    # L2 60 MiB [DEV]; hit latency 287.5 - 8.0 = 279.5 cycles: chase over 1-16 MiB [MB chaseu_1MB..16MB]
    l2=CacheSpec(size_bytes=60 * MiB, line_bytes=128, sector_bytes=32, ways=16, hit_latency_cycles=279.5),
    # L1 hit latency 39.6 - 8.0 = 31.6 cycles: chase over 8 KiB / 192 KiB [MB latency, chaseu_8KB]
    l1=CacheSpec(size_bytes=256 * KiB, line_bytes=128, sector_bytes=32, ways=64, hit_latency_cycles=31.6),
    # eager write-back: a 2 GiB store stream leaves 26,094,592 B dirty in the L2 at the kernel's end
    # (dram__bytes_write.sum 2,121,389,056 of 2,147,483,648 B stored) [MB writeback,
    # dram_write_bytes_2GiB_write]; the model's LRU L2 would leave all 60 MiB dirty (issue 22)
    l2_dirty_max_bytes=26_094_592,
    l2_read_bytes_per_s=5.85e12,             # [MB bandwidth, l2_bw_16MB_x100: 16 MiB resident, read 100x]
    # the analytic model's L2 roof (simgpu.model: roofline, matmul): 8.71 TB/s, a Triton kernel
    # reading an 8 MiB resident buffer with 16-byte loads [LEC l2_read]; it replaces the 10 TB/s
    # placeholder.  (The numba-built read kernel above reaches 5.85; the timing model keeps that.)
    l2_bandwidth_bytes_per_s=8.71e12,
    # requests of 16 bytes a lane (cp.async.cg 16, TMA, ld.v4) read the L2 at that Triton kernel's
    # 8.71 TB/s [LEC l2_read, 16-byte loads]; the numba kernel's 4-byte loads reach 5.85 above
    l2_read_wide_bytes_per_s=8.71e12,
    # triton.testing.do_bench's median of a 1-element vector add, 4.32 us [validation/triton add_1],
    # less simgpu's predicted time of it (validation/tensor_cores/lecture/derive_floor.py)
    dobench_floor_ns=DOBENCH_FLOOR_H200_NS,
    # launches outside a profiler run at 1.794 GHz on the H200: the tensor-pipe microbenchmarks'
    # %clock64 spans against their CUDA-event times (validation/tensor_cores/pipe/h200, two lengths
    # of one kernel give the clock and the events' overhead; every kernel there, one warp of HMMAs
    # to two warpgroups of dense wgmma, is within 3 % of it: validation/tensor_cores/clock/
    # derive_h200.py); under ncu the clock is clock_hz's 1.979 GHz
    unprofiled_clock_hz=1.794e9,
    # SFU: 16 lanes/SM [WP-H100] = [LEC exp2: 4.10e12 MUFU.EX2/s = 16 x 132 x 1.94 GHz]
    clock_hz=1.98e9,                         # [MB clock: ncu sm__cycles_elapsed / duration, median 1.979 GHz]
    # timing-model fields (simgpu.timing); [MB] = validation/data/h200_microbench.json summary
    # integer ALU pipe: 64 lanes/SM [WP-H100: 16 INT32 per SMSP]; [MB issue_iadd_i32] reached 116.1
    # adds/clk/SM because ptxas put 70 of its 133 adds on the FMA pipe as IMAD.IADD (SASS), and
    # [MB2 bcast2] runs at the ALU pipe's bound (16 ALU SASS per iteration: 513 cycles, 612 measured)
    int_alu_lanes_per_sm=64,
    int32_lanes_per_sm=64,                   # [MB issue_imad_i32: 63.8 IMAD/clk/SM] = [WP-H100]
    conv_lanes_per_sm=16,                    # [CUDA-PG throughput table, cc 9.0]; the XU pipe MUFU uses too
    shfl_lanes_per_sm=32,                    # [CUDA-PG throughput table, cc 9.0]
    # ADU: LDC c[0x3][R] with one address a warp 0.499 and LDC.64 c[0x3][imm] 0.492 a cycle per SM,
    # one ncu ADU count each [OP3 ldc_warp, ldc64_imm: validation/data/opcodes/h100_opcodes3.json,
    # H100, the same SM]; ncu's own peak of sm__inst_executed_pipe_adu is the same 0.5 a cycle
    adu_per_sm_cycle=0.5,
    l1_bytes_per_cycle=128,                  # [MB smem_bw: 126.2 B/clk/SM conflict-free LDS]
    # a global load over many 128-byte lines (L1 hits, 2-byte lanes; validation/tensor_cores/lecture/
    # l1_lines.py on the H100, the same SM): rows 3000 B apart, 32 lines a request: 12.60 cycles
    # (0.394 a line; 16 lines 6.95); rows 1024 B apart: 1.00 cycle a line (32, 16 and 8 lines) --
    # lines whose index agrees mod 4 (or 8; the data fit both) take a cycle each
    l1_line_cycles=0.394,
    l1_tag_banks=4,
    # tensor pipe [MB tensor]: validation/tensor_cores/pipe/h200/h200_pipe.json (2026-12-02), SM
    # cycles from %clock64: wgmma m64n256k16 f16, 2 warpgroups x 4 chained per commit: 4096 FLOP per
    # SM cycle (989 TF datasheet = 4096 x 132 x 1.83 GHz); mma.sync m16n8k16, 32 warps/SM x 4
    # chains: 1.526 SM cycles per HMMA = 6.1 per SMSP (626 TF); one dependent chain: 24.9 cycles;
    # wgmma + commit + wait_group 0: 66 cycles beyond the pipe's occupancy (n64/n128/n256, 4 chained)
    tensor_fp16_flops_per_sm_cycle=4096.0,
    mma_sync_16816_cycles=6.1,
    mma_sync_latency_cycles=24.9,
    wgmma_latency_cycles=66.0,
    fp32_latency_cycles=4.0,                 # [MB fma_f32_latency: 270,890 cycles / 65,536 dependent FFMA = 4.13]
    fp64_latency_cycles=8.0,                 # [MB fma_f64_latency: 531,511 / 65,536 = 8.11]
    # [OP] validation/data/h100_opcodes.json (H100, the same Hopper SM; validation/microbench/opcodes.py):
    # IADD3 4.27, IMAD 4.24, SHF/PRMT 4.27 cycles per dependent step; MUFU.EX2/LG2/RSQ/SQRT 17.0,
    # RCP 18.9, SIN 18.7; F2I/I2F.S64/F2F/I2F.F64 18.0-18.9 (per opcode: simgpu/timing/opcosts.py)
    int_latency_cycles=4.0,
    sfu_latency_cycles=18.0,
    conv_latency_cycles=18.0,
    shared_latency_cycles=24.3,              # [MB latency, chaseu_shared: 28.56 cycles/step - 4.24 (IMAD, opcosts)]
    # a taken branch over the slow path of a BSSY/BSYNC region (IEEE sqrt.rn, div.rn/rcp.rn), its
    # BSYNC included, costs the warp 32 cycles beyond its instructions' latencies [LAT sqrt_chain,
    # div_chain: validation/data/latency_mlp/, H100 (same SM), 67.7 and 88.0 cycles a step; the
    # model's step without it 44.7 (of which 9.9 hidden behind MUFU.RSQ) and 57.0: 32.9 and 31.0]
    branch_region_cycles=32.0,
    dram_read_bytes_per_s=4.43e12,           # [MB bandwidth, dram_read8_2GiB: 2 GiB read, 8 loads in flight]
    dram_write_cost=1.52,                    # [MB memcpy d2d 1 GiB: 3.51 TB/s read+write => (1 + c) / 4.43 = 2 / 3.51]
    atomic_same_address_ns=1.76,             # [MB atomic_one_addr_f32: 1,081,344 float REDs on one word in 1,904.7 us]
    # [MB2 atom2_hist256_u32, validation/data/h200_microbench2.json: 202,752 warp REDs, every warp
    # over the same 256 words (1 KiB), 806.4 us; ncu: the busiest L2 slice had half of all
    # atomic-input cycles, so the 1 KiB is served by 2 slices -> 512 B per slice's unit.  A
    # request is served in passes over each line (a pass takes one lane per address): the
    # pattern has 1,944,541 line passes, so 806.4 us / (1,944,541 / 2) = 0.829 ns per pass]
    atomic_pass_ns=0.829,
    # stores in the L2 [MB2 st2_l2_stride*, 16 MiB resident]: a full-sector store 8.33 ps per
    # sector, a 1-sector (partial) store request 17.76 ps; a read sector at 5.85 TB/s is 5.47 ps
    l2_store_sector_cost=1.52,
    l2_store_request_sectors=3.25,
    atomic_unit_bytes=512,
    launch_overhead_ns=1484.0,               # [MB empty_kernel: 1,568 ns (ncu), less one block start (84 ns)]
    block_launch_cycles=166.0,               # [MB empty_kernel_1056x256 - empty_kernel = 672 ns for 8 blocks/SM]
    sources={"sm_count": "DS-H200/DEV", "clock_hz": "MB", "l2": "DEV/MB", "dram": "DS-H200/MB",
             "l2_dirty_max_bytes": "MB (validation/data/h200_microbench.json summary.writeback.dram_write_bytes_2GiB_write)",
             "l2_bandwidth_bytes_per_s": "LEC (validation/data/lecture_h200.json micro.l2_read)",
             "timing": "validation/data/h200_microbench.json (see presets.py comments, docs/timing.md)"},
)

# The H100 SXM is the H200's die (GH100: the same SM, L2 and clock) with 50 MB of L2 enabled and
# HBM3 at 3.35 TB/s: the SM- and L2-level measurements above transfer; its memory stays its own
# (datasheet).  do_bench's floor on an H100 [validation/tensor_cores/lecture/h100: an empty and a
# one-store Triton kernel at 1, 132, 1056 and 8448 blocks; do_bench median less simgpu's time of
# the same launch, median of the 8; derive_floor.py]
SAME_DIE = ("clock_hz", "int_alu_lanes_per_sm", "int32_lanes_per_sm", "conv_lanes_per_sm", "shfl_lanes_per_sm",
            "adu_per_sm_cycle",
            "l1_bytes_per_cycle", "l1_line_cycles", "l1_tag_banks", "tensor_fp16_flops_per_sm_cycle", "mma_sync_16816_cycles",
            "mma_sync_latency_cycles", "wgmma_latency_cycles", "fp32_latency_cycles", "fp64_latency_cycles",
            "int_latency_cycles", "sfu_latency_cycles", "conv_latency_cycles", "shared_latency_cycles",
            "branch_region_cycles", "dram_latency_spread_ns",
            "l2_read_bytes_per_s", "l2_read_wide_bytes_per_s", "l2_bandwidth_bytes_per_s", "l2_store_sector_cost",
            "l2_store_request_sectors", "atomic_same_address_ns", "atomic_pass_ns", "atomic_unit_bytes",
            "block_launch_cycles")
# Measured on an H100 SXM itself [LAT] (validation/microbench/latency_mlp.py under ncu, 2026-12-07,
# validation/data/latency_mlp/): the DRAM's load-to-use latency and the launch floor.
#  * DRAM: a chase step over 256 MiB (cold, 64 B of DRAM a step) 736.5 cycles, over 16 KiB (L1
#    hits) 65.5: the step's own arithmetic is 65.5 - 31.6 (the L1's load-to-use, same SM) = 33.9,
#    so 702.6 cycles at the 1.994 GHz ncu read = 352.3 ns (the datasheet-less 480 ns before).
#  * launch: one block of 32 threads storing a word, gpu__time_duration 2,240 ns; simgpu's time
#    of that block 205 cycles (103.5 ns at 1.98 GHz): 2,136.5 ns (the H200's 1,484 before).
#    do_bench's floor was derived as do_bench's median less simgpu's time of eight launches
#    (derive_floor.py, 2,310 ns); every one of them is now 652.5 ns longer: 1,657.5 ns.
H100_LAUNCH_OVERHEAD_NS = 2136.5
H100 = H100.with_(
    l1=H200.l1, l2=CacheSpec(size_bytes=50 * MiB, line_bytes=128, sector_bytes=32, ways=16,
                             hit_latency_cycles=H200.l2.hit_latency_cycles),
    dram=DramSpec(bandwidth_bytes_per_s=3.35e12, size_bytes=80 * GiB, access_bytes=32, latency_ns=352.3),
    launch_overhead_ns=H100_LAUNCH_OVERHEAD_NS,
    dobench_floor_ns=DOBENCH_FLOOR_H100_NS - (H100_LAUNCH_OVERHEAD_NS - H200.launch_overhead_ns),
    dobench_host_desc_ns=DOBENCH_HOST_DESC_H100_NS, dobench_device_desc_ns=DOBENCH_DEVICE_DESC_H100_NS,
    # outside a profiler the H100 ran dense wgmma at 1.811-1.860 GHz when launched as do_bench
    # launches (a 256 MB memset before each; 10-300 us kernels; %clock64 against %globaltimer in
    # every block): the median of the four lengths' medians [validation/tensor_cores/clock/h100,
    # 2026-12-07, derive_h100.py] (the H200's 1.794 GHz came from CUDA events, not this method)
    unprofiled_clock_hz=1.8305e9,
    # eager write-back, measured on an H100 itself the way the H200's limit was: a kernel storing
    # 1 GiB once writes 1,048,779,008 of its 1,073,741,824 B to DRAM during the kernel, leaving
    # 24,962,816 B dirty [validation/writeback/h100_2026-12-07, bench.py `wr 1024`, ncu_none.csv];
    # stores of 28 MiB - 256 MiB leave 24.4-25.2 MB, those up to 16 MiB write nothing back
    l2_dirty_max_bytes=24_962_816,
    sources={**H100.sources, "unprofiled_clock_hz": "MB (H100, validation/tensor_cores/clock/derive_h100.py)", "l2_bandwidth_bytes_per_s": "LEC (H200, same die)",
             "l2_dirty_max_bytes": "MB (H100, validation/writeback/h100_2026-12-07, wr 1024)",
             "timing": "the H200's SM and L2 measurements (same die), see H200"},
    **{f: getattr(H200, f) for f in SAME_DIE})

A100 = GPU(
    name="A100 SXM",
    compute_capability=(8, 0),
    sm_count=108, clock_hz=1.41e9,                                         # [WP-A100]
    max_threads_per_sm=2048, max_warps_per_sm=64, max_blocks_per_sm=32,    # [CUDA-PG] cc 8.0
    shared_mem_per_sm_bytes=164 * KiB, max_shared_mem_per_block_bytes=163 * KiB,  # [WP-A100]
    l1=CacheSpec(size_bytes=192 * KiB, ways=48, hit_latency_cycles=33),     # [WP-A100]
    l2=CacheSpec(size_bytes=40 * MiB, ways=16, hit_latency_cycles=200),     # [WP-A100]
    dram=DramSpec(bandwidth_bytes_per_s=2.039e12, size_bytes=80 * GiB, latency_ns=480.0),  # A100 80GB datasheet
    l2_bandwidth_bytes_per_s=5.5e12,
    fp32_lanes_per_sm=64, fp64_lanes_per_sm=32, int32_lanes_per_sm=64, sfu_lanes_per_sm=16,  # [WP-A100]
    tensor_fp16_flops=312e12, tensor_tf32_flops=156e12,                      # A100 datasheet
    sources={"all": "WP-A100 / A100 datasheet / CUDA-PG"},
)

V100 = GPU(
    name="V100 SXM2",
    compute_capability=(7, 0),
    sm_count=80, clock_hz=1.53e9,                                          # [WP-V100]
    max_threads_per_sm=2048, max_warps_per_sm=64, max_blocks_per_sm=32,    # [CUDA-PG] cc 7.0
    shared_mem_per_sm_bytes=96 * KiB, max_shared_mem_per_block_bytes=96 * KiB,
    reserved_shared_mem_per_block_bytes=0,
    shared_mem_alloc_unit_bytes=256,
    l1=CacheSpec(size_bytes=128 * KiB, ways=32, hit_latency_cycles=28),     # [WP-V100]
    l2=CacheSpec(size_bytes=6 * MiB, ways=16, hit_latency_cycles=193),      # [WP-V100]
    dram=DramSpec(bandwidth_bytes_per_s=0.9e12, size_bytes=32 * GiB, latency_ns=450.0),  # [WP-V100]
    l2_bandwidth_bytes_per_s=2.5e12,
    fp32_lanes_per_sm=64, fp64_lanes_per_sm=32, int32_lanes_per_sm=64, sfu_lanes_per_sm=16,  # [WP-V100]
    tensor_fp16_flops=125e12,                                               # [WP-V100]
    sources={"all": "WP-V100 / CUDA-PG"},
)

PRESETS = {"H200": H200, "H100": H100, "A100": A100, "V100": V100}
ALIASES = {"H100 SXM": "H100", "H100SXM": "H100", "A100 SXM": "A100", "V100 SXM2": "V100"}


# ---------------------------------------------------------------------------------------------
# [LEC] Library-level (cuBLAS / PyTorch) parameters of the H200, for simgpu.model.gemm and
# simgpu.model.attention: microbenchmarks through torch 2.11 + cuBLAS 13.1 on the lent H200,
# 2026-11-30, validation/data/lecture_h200.json and lecture_h200_holdout.json ("micro" parts
# only), derived by validation/lecture/derive.py -> validation/data/lecture_h200_params.json.
# A GEMM rate is the chip rate while every SM is busy: the measured rate at one large shape with
# the padded-tile work and the idle tail of the last wave added back (tile from the kernel name).
# ---------------------------------------------------------------------------------------------
H200_GEMM = {
    # Hopper wgmma kernels (nvjet / sm90_xmma), 16-byte aligned operands; measured at
    # 16384 x 16384 x 8192 (699.6 TFLOP/s bf16, 665.2 fp16, 363.5 tf32, 1287 / 1298 fp8)
    "tensor_flops": {"bf16": 722.8e12, "fp16": 687.3e12, "tf32": 369.0e12,
                     "fp8_e4m3": 1296.4e12, "fp8_e5m2": 1307.1e12},
    # fallbacks cuBLAS takes when a leading dimension is not a multiple of 16 bytes, measured at
    # N = 8190 / 8191 (square): sm80 s16816 align2 (4- or 8-byte aligned rows), sm75 s1688
    # align1 (2-byte), the tf32 s1688 align1 kernel; fp32 SIMT (sm80 xmma ffma, 256x128x8 tiles)
    # aligned at 8192 x 8192 x 4096 and at N = 8191
    "sm80_align2_flops": {"bf16": 276.6e12, "fp16": 271.1e12},
    "sm75_align1_flops": {"bf16": 157.6e12, "fp16": 153.7e12},
    "tf32_align1_flops": 141.9e12,
    "simt_fp32_flops": 52.1e12,
    "simt_fp32_unaligned_flops": 49.0e12,
    # fp32 SIMT rate by tile (call 3, lecture_h200_kernels.json): 128x128 at 6144 x 6144 x 64
    # (batch 8) and 64x64 at 6144 x 64 x 6144 (batch 8) and 1536^3, the C-tile store after the
    # main loop taken off (see derive.py); 256x128 as simt_fp32_flops
    "simt_tile_flops": {(256, 128): 52.1e12, (128, 128): 48.5e12, (64, 64): 43.6e12},
    # streaming: batch-1 GEMV over an 8192 x 28672 bf16 weight (bytes read / time); a 4 GiB
    # device copy (read + write); L2 reads of an 8 MiB resident buffer (Triton, 16-byte loads)
    "gemv_bytes_per_s": 4.34e12,
    "copy_bytes_per_s": 4.29e12,
    "l2_read_bytes_per_s": 8.71e12,
    # MUFU ex2: 4.10e12/s = 16 lanes x 132 SMs x 1.94 GHz (Triton exp2 loop)
    "exp2_per_s": 4.10e12,
    # per call: torch.matmul back-to-back in a Python loop (host dispatch) and the same call
    # replayed from a CUDA graph (launch + smallest kernel); torch.add likewise
    "host_floor_s": 11.36e-6,
    "kernel_floor_s": 2.22e-6,
    "elementwise_host_floor_s": 6.99e-6,
    "elementwise_kernel_floor_s": 1.38e-6,
    # one PyTorch op on a 6144 x 6144 tensor, CUDA-graph replayed: counted bytes / time (call 3)
    "elementwise_bytes_per_s": {"copy": 4.16e12, "add": 4.30e12, "abs": 4.08e12, "to_bf16": 4.23e12,
                                "to_fp8": 3.12e12, "max": 2.54e12, "softmax": 2.62e12, "where": 2.65e12,
                                "eq": 2.17e12, "all": 2.12e12, "to_fp32": 2.07e12,
                                "mul_0d_tensor": 1.16e12},
    # y.copy_(x): (bytes per buffer, read+write bytes/s, graph-replayed) -- L2-resident to HBM
    "copy_curve": ((2 ** 20, 1.24e12), (2 ** 21, 2.12e12), (2 ** 22, 3.26e12), (2 ** 23, 4.37e12),
                   (2 ** 24, 5.39e12), (2 ** 25, 3.82e12), (2 ** 26, 4.00e12), (2 ** 28, 4.17e12),
                   (2 ** 30, 4.25e12), (2 ** 32, 4.29e12)),
    # the SM clock the rates above hold at: a back-to-back GEMM loop runs the card at its 700 W
    # power limit, where the clock settles to 1.68 GHz (median of 546 clock probes read right after
    # the timed samples of call 6's sweeps; NVML flagged the power cap in every sustained window).
    # A kernel alone after an idle gap (a profiler's view) starts at up to the 1.98 GHz maximum.
    "sustained_sm_clock_hz": 1.684e9,
    "source": "validation/data/lecture_h200_params.json (validation/lecture/derive.py)",
    # timing="dobench": triton.testing.do_bench, a 256 MB zero_ (the L2 flush) before every call,
    # events around the call alone.  Microbenchmarks of validation/gemm_dobench (call 1,
    # 2026-12-02, "micro" part only; derive.py there): the flush alone 61.2 us; a 64^3 bf16 call
    # 5.76 us (launch + smallest kernel inside the events); the cold GEMV curve 1 x n @ 8192 x n
    # bf16 (n = 4096..28672, never 8192) = 13.0 us + bytes / 4.24 TB/s, so a kernel streaming its
    # operands from HBM after the flush pays 13.0 - 5.76 = 7.2 us more than the floor (the flush's
    # dirty lines written back as they are evicted, the stream's ramp); 16384 x 16384 x 8192 bf16
    # at 687.4 TFLOP/s, 0.9826 of the back-to-back 699.6 on the same shape: a long compute-bound
    # kernel settles at 0.9826 x 1.684 = 1.655 GHz under do_bench; the flush alone in a do_bench
    # loop draws 138 W (NVML, read right after it) of the 700 W limit: share 0.197.
    # Checked against plain reads, no GEMM (call 3, validation/gemm_small_m/derive.py): torch.sum
    # over 128 MiB..1 GiB under do_bench = 16.9 us + bytes / 4.35 TB/s (128 MiB: 47.3 us; a Triton
    # read 44.2 us); 8.2 us of torch.sum's 128 MiB is the flush's dirty lines (39.0 us after a clean
    # 256 MB read instead of zero_).  The aligned decode GEMMs stream as fast as the Triton read
    # (x(8 x 8192) @ W 42.7 us after zero_, 34.6 after a clean read), so the GEMV curve's terms stay.
    "dobench": {"flush_s": 61.2e-6, "floor_s": 5.76e-6, "stream_start_s": 7.2e-6,
                "stream_bytes_per_s": 4.24e12, "power_limited_sm_clock_hz": 1.655e9,
                "flush_power_share": 138.0 / 700.0,
                # call 2 (K = 6144, M = 2..96, N = 8191 / 8190 / 6144: no target shape): the rate at
                # which cuBLAS's fallback kernels stream the big operand at small M, bytes / (time -
                # floor - start), median per family as the profiler named it (derive.py): the align1
                # and align2 kernels load 2 or 4 bytes at a time, far under the HBM bandwidth
                "fallback_stream_bytes_per_s": {("sm75", "bf16"): 1.06e12, ("sm75", "fp16"): 1.53e12,
                                                ("sm80", "bf16"): 2.25e12, ("sm80", "fp16"): 2.65e12,
                                                ("simt", "fp32"): 1.60e12, ("gemv", "small_m"): 1.32e12},
                # call 3 (validation/gemm_small_m, derive.py): fp16 / bf16 with min(M, N) <= 64 and
                # rows not 16-byte aligned, one family per cuBLAS kernel family as torch.profiler
                # names it, seconds = t0 + (M K + K N + M N) e / bytes_per_s, fitted on the
                # calibration half of the grid only (sha256 of the shape even); gemmSN streams
                # through ceil(max(M, N) / 64) CTAs at per_cta each, at most bytes_per_s
                "small_m_max_dim": 64,
                "small_m": {("gemv", "bf16"): (4.4e-6, 1.77e12), ("gemv", "fp16"): (8.1e-6, 2.14e12),
                            ("gemmSN", "bf16"): (10.1e-6, 1.57e12, 6.3e9),
                            ("gemmSN", "fp16"): (5.9e-6, 1.86e12, 3.2e9),
                            ("sm75", "bf16"): (11.4e-6, 1.10e12), ("sm75", "fp16"): (9.5e-6, 1.27e12),
                            ("sm80", "bf16"): (12.0e-6, 2.36e12), ("sm80", "fp16"): (11.7e-6, 2.39e12),
                            # call 5 (fp32, M <= 64, any alignment; its calibration half): gemmSN's
                            # grid has ceil(M / 4) slices along M, each reading all of B
                            ("gemv", "fp32"): (9.1e-6, 3.71e12), ("gemmSN", "fp32"): (7.5e-6, 3.75e12, 11.9e9),
                            ("largek", "fp32"): (43.4e-6, 3.45e12, 30.0e9), ("simt", "fp32"): (11.0e-6, 1.76e12)},
                "gemmsn_max_m": 16, "largek_max_m": 8},
}

# achievable fractions of the datasheet roofs [DS-H100/DS-H200], for reading the numbers above:
# bf16 0.73, fp16 0.69, tf32 0.75, fp8 0.66 of the dense tensor peaks; fp32 SIMT 0.78 of 66.9;
# GEMV 0.90 and copy 0.89 of 4.8 TB/s
H200_GEMM["achievable_fraction"] = {
    "bf16": H200_GEMM["tensor_flops"]["bf16"] / H200.tensor_fp16_flops,
    "fp16": H200_GEMM["tensor_flops"]["fp16"] / H200.tensor_fp16_flops,
    "tf32": H200_GEMM["tensor_flops"]["tf32"] / H200.tensor_tf32_flops,
    "fp8_e4m3": H200_GEMM["tensor_flops"]["fp8_e4m3"] / H200.tensor_fp8_flops,
    "fp32_simt": H200_GEMM["simt_fp32_flops"] / H200.fp32_flops,
    "gemv": H200_GEMM["gemv_bytes_per_s"] / H200.dram_bandwidth,
    "copy": H200_GEMM["copy_bytes_per_s"] / H200.dram_bandwidth,
}

LIBRARY_PARAMS = {"H200": H200_GEMM}
