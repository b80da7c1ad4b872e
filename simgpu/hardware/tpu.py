"""TPU specs as data, for the GPU/TPU comparison in ``simgpu.model.tpu``.

A TPU chip has one or two *TensorCores* (Google's word; not NVIDIA's tensor core).  Each
TensorCore has a few big matrix units (MXUs, weight-stationary systolic arrays of
128 x 128 multiply-accumulators on v4/v5), one vector unit (VPU) and one scalar unit.
An H100/H200 has 132 SMs with 4 small tensor cores each: 528 matrix units.  That is the
lecture's "many small vs few big".

Sources (abbreviations used below):
  [GC-v4]   Google Cloud TPU docs, "TPU v4": 2 TensorCores per chip, 4 MXUs per TensorCore,
            275 TFLOP/s bf16 per chip, HBM2 32 GiB at 1200 GB/s.
  [GC-v5e]  Google Cloud TPU docs, "TPU v5e": 1 TensorCore per chip, 4 MXUs,
            197 TFLOP/s bf16, HBM2 16 GB at 819 GB/s.
  [GC-v5p]  Google Cloud TPU docs, "TPU v5p": 2 TensorCores per chip, 4 MXUs per
            TensorCore, 459 TFLOP/s bf16, HBM2e 95 GB at 2765 GB/s.
  [GC-arch] Google Cloud TPU docs, "TPU architecture": an MXU is 128 x 128
            multiply-accumulators in a systolic array on TPU versions before v6e.
  [JOUPPI23] Jouppi et al., "TPU v4: An Optically Reconfigurable Supercomputer for Machine
            Learning with Hardware Support for Embeddings", ISCA 2023: 1050 MHz clock.
  [HTSYM]   Austin et al., "How To Scale Your Model", part 2 "How to think about TPUs":
            the MXU does bf16[8,128] @ bf16[128,128] -> f32[8,128] every 8 cycles; the VPU
            is a (8 sublanes x 128 lanes) SIMD unit; v5e runs at 1.5 GHz; v5e VMEM 128 MiB.
  [DERIVED] clock = datasheet peak / (2 FLOP x MXUs x 128 x 128); stated as derived.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .spec import GiB, HardwareError, MiB


@dataclass(frozen=True)
class TPU:
    """One TPU chip.  ``peak_bf16_flops`` is the datasheet number; ``mxu_bf16_flops`` is
    rebuilt from the units and must agree with it within 1 % (checked at construction)."""

    name: str
    tensorcores_per_chip: int
    mxus_per_tensorcore: int
    mxu_rows: int                      # systolic array height (K, the contraction dim)
    mxu_cols: int                      # systolic array width (N, output columns)
    clock_hz: float
    hbm_bandwidth_bytes_per_s: float
    hbm_size_bytes: int
    peak_bf16_flops: float             # datasheet, per chip, dense
    vpu_sublanes: int = 8
    vpu_lanes: int = 128
    mxu_lhs_rows_per_push: int = 8     # LHS rows streamed per MXU push [HTSYM]
    vmem_bytes_per_tensorcore: int | None = None
    # The lecture: "a TPU tensor core refuses inputs smaller than 64-dim".  Kept as data so
    # the comparison can flag such shapes; the modelled cost is padding to the MXU size.
    lecture_min_dim: int = 64
    sources: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        if min(self.tensorcores_per_chip, self.mxus_per_tensorcore, self.mxu_rows, self.mxu_cols) <= 0:
            raise HardwareError(f"{self.name}: unit counts and MXU sizes must be positive")
        if self.clock_hz <= 0 or self.hbm_bandwidth_bytes_per_s <= 0:
            raise HardwareError(f"{self.name}: clock and HBM bandwidth must be positive")
        rebuilt = self.mxu_bf16_flops
        if abs(rebuilt - self.peak_bf16_flops) > 0.01 * self.peak_bf16_flops:
            raise HardwareError(
                f"{self.name}: MXUs give {rebuilt / 1e12:.1f} TFLOP/s but the datasheet says "
                f"{self.peak_bf16_flops / 1e12:.1f}; check clock or unit counts")

    @property
    def mxus(self) -> int:
        """Matrix units per chip."""
        return self.tensorcores_per_chip * self.mxus_per_tensorcore

    @property
    def mxu_bf16_flops(self) -> float:
        """2 FLOP per multiply-accumulate x MACs per cycle x clock, whole chip."""
        return 2.0 * self.mxus * self.mxu_rows * self.mxu_cols * self.clock_hz

    @property
    def flops_per_mxu(self) -> float:
        return self.peak_bf16_flops / self.mxus

    def ridge_point(self) -> float:
        """FLOP/byte where the bf16 roof meets the HBM slope."""
        return self.peak_bf16_flops / self.hbm_bandwidth_bytes_per_s


TPU_V4 = TPU(
    name="TPU v4",
    tensorcores_per_chip=2, mxus_per_tensorcore=4,          # [GC-v4]
    mxu_rows=128, mxu_cols=128,                              # [GC-arch]
    clock_hz=1.05e9,                                         # [JOUPPI23]
    hbm_bandwidth_bytes_per_s=1200e9, hbm_size_bytes=32 * GiB,   # [GC-v4]
    peak_bf16_flops=275e12,                                  # [GC-v4]
    sources={"units": "GC-v4", "mxu": "GC-arch", "clock": "JOUPPI23", "vpu": "HTSYM"},
)

TPU_V5E = TPU(
    name="TPU v5e",
    tensorcores_per_chip=1, mxus_per_tensorcore=4,          # [GC-v5e]
    mxu_rows=128, mxu_cols=128,                              # [GC-arch]
    clock_hz=1.5e9,                                          # [HTSYM]
    hbm_bandwidth_bytes_per_s=819e9, hbm_size_bytes=16 * 10**9,  # [GC-v5e]
    peak_bf16_flops=197e12,                                  # [GC-v5e]
    vmem_bytes_per_tensorcore=128 * MiB,                     # [HTSYM]
    sources={"units": "GC-v5e", "mxu": "GC-arch", "clock": "HTSYM", "vmem": "HTSYM"},
)

TPU_V5P = TPU(
    name="TPU v5p",
    tensorcores_per_chip=2, mxus_per_tensorcore=4,          # [GC-v5p]
    mxu_rows=128, mxu_cols=128,                              # [GC-arch]
    clock_hz=1.75e9,                                         # [DERIVED] 459e12 / (2*8*128*128)
    hbm_bandwidth_bytes_per_s=2765e9, hbm_size_bytes=95 * 10**9,  # [GC-v5p]
    peak_bf16_flops=459e12,                                  # [GC-v5p]
    sources={"units": "GC-v5p", "mxu": "GC-arch", "clock": "DERIVED from GC-v5p peak"},
)

TPU_PRESETS = {"v4": TPU_V4, "v5e": TPU_V5E, "v5p": TPU_V5P}


def get_tpu(tpu=None) -> TPU:
    """None (TPU v5p), a preset name ('v4', 'v5e', 'v5p', 'TPU v4', ...) or a TPU object."""
    if tpu is None:
        return TPU_V5P
    if isinstance(tpu, TPU):
        return tpu
    if isinstance(tpu, str):
        key = tpu.lower().replace("tpu", "").strip()
        if key in TPU_PRESETS:
            return TPU_PRESETS[key]
        raise HardwareError(f"unknown TPU {tpu!r}; presets: {', '.join(TPU_PRESETS)}")
    raise HardwareError(f"tpu must be a preset name or a TPU, not {type(tpu).__name__}")


__all__ = ["TPU", "TPU_V4", "TPU_V5E", "TPU_V5P", "TPU_PRESETS", "get_tpu"]
