"""jit / Kernel: the user's entry points.  ``simgpu.jit(f)[grid, block](*args)`` launches on
the modelled GPU (runtime/launch.py) and returns the Report."""
from __future__ import annotations

from ..errors import LaunchError
from ..tracebacks import user_facing
from .launch import launch
from .program import KernelProgram
from .triton_door import is_triton


class Kernel(KernelProgram):
    """A kernel (or device function) that simgpu can run.  Use ``k[grid, block](*args)``."""

    def __getitem__(self, config):
        if self.device:
            raise LaunchError(f"{self.name} is a device function; call it from a kernel")
        if not isinstance(config, tuple) or len(config) < 2:
            raise LaunchError("launch as kernel[grid, block](*args)")
        grid, block = config[0], config[1]
        if len(config) > 4:
            raise LaunchError("launch as kernel[grid, block] or kernel[grid, block, stream, shared_bytes]")
        smem = config[3] if len(config) > 3 else 0      # config[2]: the stream (one, in order)
        extra = {"shared_bytes": smem} if smem else {}   # the IR path refuses it (launch.py)

        @user_facing
        def configured(*args, **kw):
            return launch(self, grid, block, args, gpu=kw.pop("gpu", self.gpu), **{**self.options, **extra, **kw})
        return configured

    def __call__(self, *args):
        if self.device:
            return self.py_func(*args)
        raise LaunchError(f"launch kernel {self.name} with a configuration: {self.name}[grid, block](...)")


class TritonKernel:
    """A ``@triton.jit`` function on the modelled GPU, called with Triton's syntax:
    ``simgpu.jit(fn)[grid](*args, **meta)`` (docs/triton.md)."""

    def __init__(self, fn, gpu=None, **options):
        self.fn, self.gpu, self.options = fn, gpu, options
        self.name = self.__name__ = getattr(getattr(fn, "fn", None), "__name__", repr(fn))

    def __repr__(self):
        return f"<simgpu.TritonKernel {self.name}>"

    def __getitem__(self, grid):
        @user_facing
        def configured(*args, **meta):
            opts = {**self.options, **{k: meta.pop(k) for k in list(meta) if k in LAUNCH_OPTIONS}}
            return launch(self.fn, grid, None, args, gpu=opts.pop("gpu", self.gpu), **opts, **meta)
        return configured

    def __call__(self, *args, **kwargs):
        raise LaunchError(f"launch Triton kernel {self.name} with a grid: {self.name}[grid](...)")


# launch()'s own options, which a Triton call may give beside the meta-parameters
LAUNCH_OPTIONS = ("gpu", "observers", "memory", "timing", "chunk_lanes", "progress", "registers_per_thread",
                  "sample", "timing_detail", "budget", "check", "poison")


def jit(fn=None, device=False, gpu=None, **options):
    """Make a function runnable on the modelled GPU: ``simgpu.jit(f)`` or ``@simgpu.jit``."""
    if fn is None:
        return lambda f: Kernel(f, device=device, gpu=gpu, **options)
    if isinstance(fn, (Kernel, TritonKernel)):
        return fn
    if is_triton(fn):
        return TritonKernel(fn, gpu=gpu, **options)
    if isinstance(fn, str) or isinstance(fn, (list, tuple)):     # numba-style signature string
        return lambda f: Kernel(f, device=device, gpu=gpu, **options)
    return Kernel(fn, device=device, gpu=gpu, **options)
