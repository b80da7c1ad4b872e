"""The modelled GPUs by name: ``simgpu.gpus``.

    simgpu.gpus.list()          names of the presets
    simgpu.gpus.get("H100")     a preset (simgpu.hardware.GPU)
    simgpu.gpus.table()         one line per preset with its headline numbers
    simgpu.gpus.from_device()   a GPU built from the attributes of the CUDA card present
"""
from __future__ import annotations

from . import get_gpu
from .device import from_device
from .presets import PRESETS
from .spec import GPU


def list():  # noqa: A001 - reads as simgpu.gpus.list()
    return [*PRESETS]


def get(name=None) -> GPU:
    return get_gpu(name)


def table() -> str:
    return "\n".join(f"{k:6s} {g}" for k, g in PRESETS.items())


__all__ = ["list", "get", "table", "from_device"]
