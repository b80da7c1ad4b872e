"""Many small matrix units (GPU) vs few big ones (TPU): utilisation of odd and small matmuls.

An H100/H200 has 132 SMs x 4 tensor cores = 528 matrix units (one per SM sub-partition,
[WP-H100]); a TPU v4/v5p chip has 2 TensorCores x 4 MXUs = 8, each a 128 x 128 systolic
array.  A matmul C[M,N] = A[M,K] B[K,N] is cut into the pieces one unit executes at a time:

  GPU tensor core  mma.sync.m16n8k16: a 16 x 8 piece of C, 16 deep in K (PTX ISA shape)
  TPU MXU          8 LHS rows x a 128 x 128 weight tile: 8 x 128 of C, 128 deep in K [HTSYM]

  padding efficiency  = M N K / (roundup(M, tm) roundup(N, tn) roundup(K, tk))
  work items          = ceil(M/tm) ceil(N/tn) ceil(K/tk)
  waves               = ceil(items / units);   occupancy = items / (waves x units)
  utilisation         = padding efficiency x occupancy
  time                = max(waves x item FLOPs / per-unit peak,
                            (MK + KN + MN) x bytes / HBM bandwidth)

Per-unit peak = datasheet peak / units (dense fp16/bf16).  K pieces accumulate into the same
C piece; splitting K across units is counted as free (an optimistic assumption for both).
The GPU numbers are the instruction-level ceiling; a real kernel pads to its block tile
(128 x 128 in ``matmul.py``), which costs more.

The lecture says "a TPU tensor core refuses inputs smaller than 64-dim".  We do not model a
refusal: the MXU pads N and K to 128, so a 64-wide operand uses at most half of it.  Shapes
with N or K below ``tpu.lecture_min_dim`` are flagged ``below_lecture_min``.
"""
from __future__ import annotations

from dataclasses import dataclass

from simgpu.hardware.spec import GPU
from simgpu.hardware.tpu import TPU
from .roofline import dtype_bytes

GPU_MMA_SHAPE = (16, 8, 16)     # PTX ISA: mma.sync.aligned.m16n8k16 for f16/bf16 inputs


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class MatrixUnits:
    """The matrix engines of one chip, reduced to what the utilisation model needs."""

    name: str
    units: int
    unit_tile: tuple            # (tm, tn, tk) of one unit operation
    flops_per_unit: float
    hbm_bandwidth: float
    min_dim: int | None = None  # the lecture's minimum, TPU only

    @property
    def peak_flops(self) -> float:
        return self.units * self.flops_per_unit


def gpu_matrix_units(gpu: GPU, tile=GPU_MMA_SHAPE) -> MatrixUnits:
    """One tensor core per SM sub-partition: ``sm_count x schedulers_per_sm`` units."""
    units = gpu.sm_count * gpu.schedulers_per_sm
    return MatrixUnits(gpu.name, units, tuple(tile), gpu.tensor_fp16_flops / units, gpu.dram_bandwidth)


def tpu_matrix_units(tpu: TPU) -> MatrixUnits:
    """``tensorcores x MXUs`` units, each taking 8 LHS rows against a rows x cols weight tile."""
    return MatrixUnits(tpu.name, tpu.mxus, (tpu.mxu_lhs_rows_per_push, tpu.mxu_cols, tpu.mxu_rows),
                       tpu.peak_bf16_flops / tpu.mxus, tpu.hbm_bandwidth_bytes_per_s, tpu.lecture_min_dim)


@dataclass(frozen=True)
class UnitUtilisation:
    """How well one matmul fills one chip's matrix units."""

    chip: str
    m: int
    n: int
    k: int
    padded: tuple
    padding_efficiency: float
    work_items: int
    waves: int
    occupancy: float
    utilisation: float
    compute_time_s: float
    memory_time_s: float
    below_lecture_min: bool

    @property
    def time_s(self) -> float:
        return max(self.compute_time_s, self.memory_time_s)

    @property
    def tflops(self) -> float:
        return 2.0 * self.m * self.n * self.k / self.time_s / 1e12


def matmul_utilisation(units: MatrixUnits, m: int, n: int, k: int, dtype: str = "bf16") -> UnitUtilisation:
    """Padding, occupancy and time of C[M,N] = A[M,K] B[K,N] on ``units`` (formulas above).

    Worked example, N = K = 96 (a head dim), M = 4096: the tensor core pads nothing
    (96 = 12 x 8 = 6 x 16); the MXU pads N and K to 128: 96^2 / 128^2 = 0.5625.

    >>> from simgpu.hardware import H200
    >>> from simgpu.hardware.tpu import TPU_V5P
    >>> matmul_utilisation(gpu_matrix_units(H200), 4096, 96, 96).padding_efficiency
    1.0
    >>> matmul_utilisation(tpu_matrix_units(TPU_V5P), 4096, 96, 96).padding_efficiency
    0.5625
    """
    if min(m, n, k) <= 0:
        raise ValueError(f"sizes must be positive, got {(m, n, k)}")
    tm, tn, tk = units.unit_tile
    padded = (_ceil_div(m, tm) * tm, _ceil_div(n, tn) * tn, _ceil_div(k, tk) * tk)
    items = _ceil_div(m, tm) * _ceil_div(n, tn) * _ceil_div(k, tk)
    waves = _ceil_div(items, units.units)
    pad_eff = m * n * k / (padded[0] * padded[1] * padded[2])
    occ = items / (waves * units.units)
    item_time = 2.0 * tm * tn * tk / units.flops_per_unit
    mem = (m * k + k * n + m * n) * dtype_bytes(dtype) / units.hbm_bandwidth
    below = units.min_dim is not None and min(n, k) < units.min_dim
    return UnitUtilisation(units.name, m, n, k, padded, pad_eff, items, waves, occ, pad_eff * occ,
                           waves * item_time, mem, below)


def compare(gpu: GPU, tpu: TPU, shapes, dtype: str = "bf16") -> list:
    """(shape, GPU utilisation, TPU utilisation) for each (M, N, K) in ``shapes``."""
    g, t = gpu_matrix_units(gpu), tpu_matrix_units(tpu)
    return [(tuple(s), matmul_utilisation(g, *s, dtype=dtype), matmul_utilisation(t, *s, dtype=dtype))
            for s in shapes]


def square_sweep(units: MatrixUnits, sizes, dtype: str = "bf16") -> list:
    """``matmul_utilisation`` of N x N x N for each N (for plots)."""
    return [matmul_utilisation(units, s, s, s, dtype) for s in sizes]


__all__ = ["GPU_MMA_SHAPE", "MatrixUnits", "gpu_matrix_units", "tpu_matrix_units", "UnitUtilisation",
           "matmul_utilisation", "compare", "square_sweep"]
