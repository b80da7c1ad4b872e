"""Stand-in for ``numba.cuda`` inside kernels, so simgpu works without numba-cuda.

    from simgpu import cuda

    def saxpy(a, x, y, out):
        i = cuda.grid(1)
        ...

These objects are markers: the frontend recognises them (as it recognises numba.cuda's
own) and never calls them.  Calling one outside a kernel raises a clear error.
"""
from __future__ import annotations

from .frontend.stubs import STUBS, is_stub, stub_path
from .runtime.kernel import jit as _jit

globals().update(STUBS)


def jit(fn=None, device=False, **kwargs):
    """``simgpu.cuda.jit``: the same as ``simgpu.jit`` (kernels) or a device function."""
    return _jit(fn, device=device, **kwargs)


__all__ = [*STUBS, "jit", "is_stub", "stub_path"]
