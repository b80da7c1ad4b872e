"""The roofline: attainable FLOP/s = min(peak, arithmetic intensity x bandwidth).

  arithmetic intensity  AI = FLOPs / bytes moved at the chosen memory level
  attainable            P(AI) = min(peak_compute, AI x bandwidth)
  ridge point           AI* = peak_compute / bandwidth   (below: memory-bound, above: compute-bound)
  predicted time        t = max(FLOPs / peak_compute, bytes / bandwidth)

Roofs come from the GPU spec, never from constants here:

  compute roofs  "fp32" (CUDA cores, FMA = 2 FLOP), "fp64", "fp16_tensor" (also bf16),
                 "tf32_tensor", "fp8_tensor"   (dense tensor-core datasheet peaks)
  memory roofs   "dram" (HBM), "l2"

Worked example (H200: 66.9 TFLOP/s FP32, 4.8 TB/s HBM): the FP32 ridge point is
66.9e12 / 4.8e12 = 13.9 FLOP/B; SAXPY (y = a*x + y: 2 FLOP per 12 B, AI = 0.167) attains
0.167 x 4.8e12 = 0.8 TFLOP/s, 1.2 % of the FP32 roof.  The fp16 tensor ridge is
989.4e12 / 4.8e12 = 206 FLOP/B, fifteen times further right: "compute is outgrowing memory".
"""
from __future__ import annotations

from dataclasses import dataclass

from simgpu.hardware.spec import GPU

DTYPE_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int8": 1}
DTYPE_ROOF = {"fp64": "fp64", "fp32": "fp32", "tf32": "tf32_tensor", "fp16": "fp16_tensor",
              "bf16": "fp16_tensor", "fp8": "fp8_tensor"}
COMPUTE_ROOFS = ("fp32", "fp64", "fp16_tensor", "tf32_tensor", "fp8_tensor")
MEMORY_ROOFS = ("dram", "l2")


def dtype_bytes(dtype: str) -> int:
    """Bytes per element of a dtype name ('fp32', 'fp16', 'bf16', 'fp8', ...)."""
    try:
        return DTYPE_BYTES[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}; known: {', '.join(DTYPE_BYTES)}") from None


def compute_roof(gpu: GPU, name: str = "fp32") -> float:
    """Peak FLOP/s of one compute roof (see module docstring)."""
    values = {"fp32": gpu.fp32_flops, "fp64": gpu.fp64_flops, "fp16_tensor": gpu.tensor_fp16_flops,
              "tf32_tensor": gpu.tensor_tf32_flops, "fp8_tensor": gpu.tensor_fp8_flops}
    if name not in values:
        raise ValueError(f"unknown compute roof {name!r}; choose from {', '.join(COMPUTE_ROOFS)}")
    if values[name] <= 0:
        raise ValueError(f"{gpu.name} has no {name} peak in its spec")
    return values[name]


def memory_roof(gpu: GPU, name: str = "dram") -> float:
    """Bandwidth in bytes/s of one memory roof: 'dram' (HBM) or 'l2'."""
    values = {"dram": gpu.dram_bandwidth, "l2": gpu.l2_bandwidth_bytes_per_s}
    if name not in values:
        raise ValueError(f"unknown memory roof {name!r}; choose from {', '.join(MEMORY_ROOFS)}")
    if values[name] <= 0:
        raise ValueError(f"{gpu.name} has no {name} bandwidth in its spec")
    return values[name]


def arithmetic_intensity(flops: float, bytes_moved: float) -> float:
    """FLOPs per byte moved.  SAXPY in fp32 does 2 FLOP per 12 B (read x, y; write y):

    >>> arithmetic_intensity(2, 12)
    0.16666666666666666
    """
    if bytes_moved <= 0:
        raise ValueError("bytes_moved must be positive")
    return flops / bytes_moved


def attainable_flops(gpu: GPU, ai: float, compute: str = "fp32", memory: str = "dram") -> float:
    """min(peak, AI x bandwidth) for the chosen roofs."""
    return min(compute_roof(gpu, compute), ai * memory_roof(gpu, memory))


def ridge_point(gpu: GPU, compute: str = "fp32", memory: str = "dram") -> float:
    """AI (FLOP/B) where the slope meets the roof: peak / bandwidth."""
    return compute_roof(gpu, compute) / memory_roof(gpu, memory)


def roofline_time(gpu: GPU, flops: float, bytes_moved: float, compute: str = "fp32",
                  memory: str = "dram") -> float:
    """max(FLOPs / peak, bytes / bandwidth): the time the roofline allows (no overlap loss)."""
    return max(flops / compute_roof(gpu, compute), bytes_moved / memory_roof(gpu, memory))


@dataclass(frozen=True)
class RooflinePoint:
    """One kernel placed on the roofline of one GPU."""

    name: str
    flops: float
    bytes: float
    compute: str
    memory: str
    peak_flops: float
    bandwidth: float
    measured_time_s: float | None = None

    @property
    def arithmetic_intensity(self) -> float:
        return self.flops / self.bytes

    @property
    def ridge_point(self) -> float:
        return self.peak_flops / self.bandwidth

    @property
    def attainable_flops(self) -> float:
        return min(self.peak_flops, self.arithmetic_intensity * self.bandwidth)

    @property
    def bound(self) -> str:
        """'memory' left of the ridge point, 'compute' at or right of it."""
        return "memory" if self.arithmetic_intensity < self.ridge_point else "compute"

    @property
    def predicted_time_s(self) -> float:
        return max(self.flops / self.peak_flops, self.bytes / self.bandwidth)

    @property
    def achieved_flops(self) -> float | None:
        return None if self.measured_time_s is None else self.flops / self.measured_time_s

    @property
    def fraction_of_roof(self) -> float | None:
        a = self.achieved_flops
        return None if a is None else a / self.attainable_flops


def roofline_point(gpu: GPU, name: str, flops: float, bytes_moved: float, compute: str = "fp32",
                   memory: str = "dram", measured_time_s: float | None = None) -> RooflinePoint:
    """Place a kernel (its FLOPs and bytes) on the chosen roofs of ``gpu``."""
    if bytes_moved <= 0 or flops < 0:
        raise ValueError(f"{name}: need flops >= 0 and bytes > 0")
    return RooflinePoint(name, float(flops), float(bytes_moved), compute, memory,
                         compute_roof(gpu, compute), memory_roof(gpu, memory), measured_time_s)


def matmul_intensity(m: int, n: int, k: int, dtype: str = "fp16") -> float:
    """Best-case AI of C = A.B (M x K times K x N): 2MNK FLOPs over (MK + KN + MN) elements,
    each moved once.  For square N in fp16 this is 2N^3 / (6N^2) = N/3 FLOP/B."""
    return 2.0 * m * n * k / ((m * k + k * n + m * n) * dtype_bytes(dtype))


def elementwise_intensity(flops_per_element: float, reads: int = 1, writes: int = 1,
                          dtype: str = "fp32") -> float:
    """AI of an elementwise kernel: FLOPs per element over (reads + writes) x element bytes."""
    return flops_per_element / ((reads + writes) * dtype_bytes(dtype))


__all__ = ["DTYPE_BYTES", "DTYPE_ROOF", "COMPUTE_ROOFS", "MEMORY_ROOFS", "dtype_bytes", "compute_roof",
           "memory_roof", "arithmetic_intensity", "attainable_flops", "ridge_point", "roofline_time",
           "RooflinePoint", "roofline_point", "matmul_intensity", "elementwise_intensity"]
