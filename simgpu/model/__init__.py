"""Analytic models: pure functions of a GPU spec and a problem size.

  occupancy   theoretical occupancy as NVIDIA's calculator computes it
  waves       waves per SM, tail efficiency, wave quantisation
  roofline    arithmetic intensity, attainable FLOP/s, ridge points
  tiling      matmul global-memory traffic, naive and tiled, in elements and sectors
  matmul      the "mystery plot": tile, wave and alignment effects under the roofline
  gemm        one cuBLAS GEMM: candidate kernels costed with measured H200 rates, fastest wins
  attention   naive vs FlashAttention traffic, FLOPs and time; online softmax; SDPA backends timed
  tricks      the lecture's six tricks as numbers
  tpu         many small (GPU) vs few big (TPU) matrix units

Nothing here holds state: the GPU is always an argument (``simgpu.hardware.get_gpu`` resolves
a name).  See docs/model.md for formulas, assumptions and how to reproduce the lecture.
"""
from .occupancy import Occupancy, OccupancyError, occupancy, occupancy_table
from .waves import WaveQuantization, tail_efficiency, wave_quantization, wave_size, waves
from .roofline import (RooflinePoint, arithmetic_intensity, attainable_flops, compute_roof,
                       dtype_bytes, elementwise_intensity, matmul_intensity, memory_roof,
                       ridge_point, roofline_point, roofline_time)
from .tiling import (MatmulTraffic, Reuse, naive_matmul_traffic, reuse, rows_sectors,
                     segment_sectors, tiled_matmul_traffic, tiling_reduction)
from .matmul import MatmulBreakdown, MysteryCurve, matmul_throughput, mystery_curve
from .gemm import GemmEstimate, alignment_bytes, elementwise, gemm, quantize_fp8
from .attention import (AttentionCost, AttentionEstimate, attention, attention_reference, flash_attention, flash_block_sizes,
                        naive_attention, online_attention, online_softmax, softmax)
from . import tricks
from .tpu import compare as tpu_compare, gpu_matrix_units, matmul_utilisation, tpu_matrix_units

__all__ = [
    "Occupancy", "OccupancyError", "occupancy", "occupancy_table",
    "WaveQuantization", "tail_efficiency", "wave_quantization", "wave_size", "waves",
    "RooflinePoint", "arithmetic_intensity", "attainable_flops", "compute_roof", "dtype_bytes",
    "elementwise_intensity", "matmul_intensity", "memory_roof", "ridge_point", "roofline_point",
    "roofline_time",
    "MatmulTraffic", "Reuse", "naive_matmul_traffic", "reuse", "rows_sectors", "segment_sectors",
    "tiled_matmul_traffic", "tiling_reduction",
    "MatmulBreakdown", "MysteryCurve", "matmul_throughput", "mystery_curve",
    "GemmEstimate", "alignment_bytes", "elementwise", "gemm", "quantize_fp8",
    "AttentionCost", "AttentionEstimate", "attention", "attention_reference", "flash_attention", "flash_block_sizes", "naive_attention",
    "online_attention", "online_softmax", "softmax",
    "tricks", "tpu_compare", "gpu_matrix_units", "matmul_utilisation", "tpu_matrix_units",
]
