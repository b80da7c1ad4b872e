"""Stand-in for ``numba.cuda`` inside kernels, so simgpu works without numba-cuda.

    from simgpu import cuda

    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        ...

These objects are markers: the frontend recognises them (as it recognises numba.cuda's
own) and never calls them.  Calling one outside a kernel raises a clear error.
"""
from __future__ import annotations

from .errors import SimGPUError


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

for _n in _NAMES:
    globals()[_n] = _Stub(f"cuda.{_n}")


def jit(fn=None, device=False, **kwargs):
    """``simgpu.cuda.jit``: the same as ``simgpu.jit`` (kernels) or a device function."""
    from .kernel import jit as _jit
    return _jit(fn, device=device, **kwargs)


def is_stub(obj):
    return isinstance(obj, _Stub)


def stub_path(obj):
    return obj._path
