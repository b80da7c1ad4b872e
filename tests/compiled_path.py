"""Test modules that need NVIDIA's compiler wheels skip, whole, where they are missing."""
import pytest

from simgpu.sass.toolchain import compiled_path_available


def skip_without_compiled_path():
    """Skip the calling test module unless numba-cuda and ptxas/nvdisasm are installed
    (simgpu.sass.toolchain.compiled_path_available: what executor="auto" decides by)."""
    ok, why = compiled_path_available()
    if not ok:  # pragma: no cover - depends on the machine
        pytest.skip(why, allow_module_level=True)
