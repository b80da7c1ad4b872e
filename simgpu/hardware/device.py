"""A GPU description built from the CUDA card present (numba.cuda's device attributes).

    simgpu.gpus.from_device()   the card's own numbers over the nearest preset's
"""
from __future__ import annotations

from .._compat import load_numba_cuda
from ..errors import SimGPUError
from .presets import PRESETS
from .spec import GPU, CacheSpec, DramSpec


def from_device(device_id=0, base=None) -> GPU:
    """Build a GPU from the CUDA device attributes of the card present (numba.cuda).

    Attributes the driver reports (SM count, clock, L2 size, shared memory limits, thread and
    register limits, memory size and bus) replace the nearest preset's values; the rest (pipe
    widths, latencies) come from the preset of the same compute capability."""
    try:
        load_numba_cuda()
        from numba import cuda
        if not cuda.is_available():
            raise SimGPUError("no CUDA device was found (numba.cuda.is_available() is False)")
        dev = cuda.get_current_device() if device_id == 0 else cuda.select_device(device_id)
    except SimGPUError:
        raise
    except Exception as e:
        raise SimGPUError(f"no CUDA device was found ({type(e).__name__}: {e})") from None
    cc = tuple(dev.compute_capability)
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    if base is None:
        base = {(9, 0): PRESETS["H200" if "H200" in name else "H100"], (8, 0): PRESETS["A100"],
                (7, 0): PRESETS["V100"]}.get(cc, PRESETS["H100"])
    a = lambda attr, default: getattr(dev, attr, default)
    l2 = int(a("L2_CACHE_SIZE", base.l2.size_bytes))
    ways = base.l2.ways
    l2 = l2 - l2 % (ways * base.l2.line_bytes)
    bus_bits = int(a("GLOBAL_MEMORY_BUS_WIDTH", 0))
    mem_khz = int(a("MEMORY_CLOCK_RATE", 0))
    bw = 2 * mem_khz * 1e3 * bus_bits / 8 if bus_bits and mem_khz else base.dram.bandwidth_bytes_per_s
    try:
        total = cuda.current_context().get_memory_info()[1]
    except Exception:
        total = base.dram.size_bytes
    return base.with_(
        name=f"{name} (from device)",
        compute_capability=cc,
        sm_count=int(a("MULTIPROCESSOR_COUNT", base.sm_count)),
        clock_hz=float(a("CLOCK_RATE", base.clock_hz / 1e3)) * 1e3,
        max_threads_per_block=int(a("MAX_THREADS_PER_BLOCK", base.max_threads_per_block)),
        max_threads_per_sm=int(a("MAX_THREADS_PER_MULTIPROCESSOR", base.max_threads_per_sm)),
        max_warps_per_sm=int(a("MAX_THREADS_PER_MULTIPROCESSOR", base.max_threads_per_sm)) // 32,
        registers_per_sm=int(a("MAX_REGISTERS_PER_MULTIPROCESSOR", base.registers_per_sm)),
        shared_mem_per_sm_bytes=int(a("MAX_SHARED_MEMORY_PER_MULTIPROCESSOR", base.shared_mem_per_sm_bytes)),
        max_shared_mem_per_block_bytes=int(a("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
                                             base.max_shared_mem_per_block_bytes)),
        l2=CacheSpec(size_bytes=l2, line_bytes=base.l2.line_bytes, sector_bytes=base.l2.sector_bytes,
                     ways=ways, hit_latency_cycles=base.l2.hit_latency_cycles),
        dram=DramSpec(bandwidth_bytes_per_s=bw, size_bytes=int(total), access_bytes=base.dram.access_bytes,
                      latency_ns=base.dram.latency_ns),
        sources={**base.sources, "from_device": f"CUDA device attributes of {name}"},
    )
