"""The markers that stand in for numba.cuda's names inside kernels (``simgpu.cuda``).

The frontend recognises them, as it recognises numba.cuda's own objects, and never calls
them; calling one outside a kernel raises a clear error.
"""
from __future__ import annotations

from ..errors import SimGPUError


class _Stub:
    def __init__(self, path):
        self._path = path

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub(f"{self._path}.{name}")

    def __call__(self, *a, **k):
        raise SimGPUError(f"{self._path}() can only be used inside a kernel run by simgpu")

    def __repr__(self):
        return f"<simgpu stand-in {self._path}>"


_NAMES = """threadIdx blockIdx blockDim gridDim laneid warpsize grid gridsize shared local const
syncthreads syncthreads_count syncthreads_and syncthreads_or syncwarp threadfence
threadfence_block threadfence_system atomic shfl_sync shfl_up_sync shfl_down_sync shfl_xor_sync
ballot_sync all_sync any_sync eq_sync activemask lanemask_lt popc clz ffs brev fma cbrt selp
match_any_sync match_all_sync""".split()

STUBS = {n: _Stub(f"cuda.{n}") for n in _NAMES}


def is_stub(obj):
    return isinstance(obj, _Stub)


def stub_path(obj):
    return obj._path
