"""Hardware descriptions: specs (data) and presets with sources."""
from .spec import GPU, CacheSpec, DramSpec, HardwareError, KiB, MiB, GiB
from .presets import PRESETS, H200, H100, A100, V100, ALIASES

DEFAULT = "H200"


def get_gpu(gpu=None) -> GPU:
    """Resolve a GPU argument: None (the default H200), a preset name, or a GPU object."""
    if gpu is None:
        return PRESETS[DEFAULT]
    if isinstance(gpu, GPU):
        return gpu
    if isinstance(gpu, str):
        key = ALIASES.get(gpu, gpu)
        key = {k.lower(): k for k in PRESETS}.get(key.lower(), key)
        if key in PRESETS:
            return PRESETS[key]
        raise HardwareError(f"unknown GPU {gpu!r}; presets: {', '.join(PRESETS)}")
    raise HardwareError(f"gpu must be a preset name or a simgpu GPU, not {type(gpu).__name__}")


__all__ = ["GPU", "CacheSpec", "DramSpec", "HardwareError", "get_gpu", "PRESETS", "H200", "H100",
           "A100", "V100", "KiB", "MiB", "GiB", "DEFAULT"]
