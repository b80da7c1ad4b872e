"""``cuda.jit`` on the modelled GPU: kernels that launch on simgpu's compiled path.

``jit(f)`` returns a :class:`SimKernel`; ``kernel[grid, block, stream, shared_bytes](*args)``
runs the PTX numba-cuda compiles for the modelled GPU's compute capability on simgpu
(``runtime.launch(..., executor="ptx")``), writes what the kernel stored into the device
arrays and host arrays passed to it, records the launch in the session and advances the
stream's modelled clock by the predicted time.

Device functions (``device=True``) are numba-cuda's own dispatchers: numba compiles them
into the kernels that call them, so they are returned by numba's real ``cuda.jit``.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import ArgumentError, LaunchError
from ..runtime.executor import get_executor
from ..runtime.launch import launch
from ..runtime.program import KernelProgram
from .session import SimGPUWarning, current_session

#: jit options accepted and applied (or meaningless on the model)
ACCEPTED = {"cache", "inline", "forceinline", "boundscheck", "argtypes", "restype", "opt",
            "shared_memory_carveout", "launch_bounds", "max_registers"}
#: options that change the compiled code; accepted, but simgpu compiles without them for now
NOT_APPLIED = {"fastmath", "debug", "lineinfo", "lto"}
FORALL_BLOCK = 256


class SimKernel:
    """A kernel of the modelled GPU (numba's CUDADispatcher, as far as programs use it)."""

    def __init__(self, py_func, sigs=None, options=None):
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func
        self.options = dict(options or {})
        self.sigs = [normalize(s) for s in (sigs or [])]
        self.program = KernelProgram(py_func)
        self.reports = []
        check_options(py_func.__name__, self.options)

    def __repr__(self):
        return f"<simgpu kernel {self.__name__} (numba.cuda.jit on the modelled GPU)>"

    @property
    def overloads(self):
        return {tuple(s[0]): self for s in self.sigs}

    def __getitem__(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise LaunchError(f"launch {self.__name__} as kernel[grid, block] or "
                              "kernel[grid, block, stream, shared_bytes]")
        grid, block = config[0], config[1]
        stream = config[2] if len(config) > 2 else 0
        smem = config[3] if len(config) > 3 else 0
        return lambda *args: self.launch(args, grid, block, stream, smem)

    def configure(self, griddim, blockdim, stream=0, sharedmem=0):
        return lambda *args: self.launch(args, griddim, blockdim, stream, sharedmem)

    def forall(self, ntasks, tpb=0, stream=0, sharedmem=0):
        """``kernel.forall(n)(*args)``: enough blocks of `tpb` threads (default 256) for n tasks."""
        if ntasks < 0:
            raise ValueError("Can't create ForAll with negative task count")
        block = int(tpb) or FORALL_BLOCK
        grid = max(1, -(-int(ntasks) // block))
        return lambda *args: self.launch(args, grid, block, stream, sharedmem) if ntasks else None

    def __call__(self, *args, **kwargs):
        raise LaunchError(f"kernel {self.__name__} needs a launch configuration: "
                          f"{self.__name__}[blocks, threads_per_block](...)")

    def specialize(self, *args):
        return self

    def launch(self, args, grid, block, stream=0, shared_bytes=0):
        """Run on the modelled GPU; the Report is kept in .reports and in the session."""
        session = current_session()
        s = session.stream_of(stream)
        args = cast_to_signature(self.__name__, self.sigs, args)
        ex = get_executor("ptx")
        timing = bool(getattr(ex, "supports_timing", False))
        rep = launch(self.program, grid, block, args, gpu=session.gpu, executor=ex,
                     timing=timing, memory=session.memory or timing, shared_bytes=shared_bytes)
        self.reports.append(rep)
        session.record_launch(self.__name__, rep.grid, rep.block, rep, s)
        return None


def check_options(name, options):
    unknown = set(options) - ACCEPTED - NOT_APPLIED - {"device", "link"}
    if unknown:
        raise TypeError(f"cuda.jit got unexpected option(s) {', '.join(sorted(unknown))} for {name!r}")
    if options.get("link"):
        raise LaunchError(f"kernel {name!r}: cuda.jit(link=...) links CUDA C/PTX files into the kernel; "
                          "simgpu does not link external code yet (write the function in Python with "
                          "cuda.jit(device=True))")
    applied = sorted(k for k in NOT_APPLIED if options.get(k))
    if applied:
        warnings.warn(f"kernel {name!r}: cuda.jit option(s) {', '.join(applied)} are accepted but simgpu "
                      "compiles without them for now", SimGPUWarning, stacklevel=3)


def normalize(sig):
    """(argument types, return type) of a numba signature (string or object)."""
    from numba.cuda.core.sigutils import normalize_signature
    args, ret = normalize_signature(sig)
    if ret is not None and str(ret) != "none":
        raise TypeError(f"kernel signature {sig!r}: a kernel returns nothing (void), not {ret}")
    return tuple(args), ret


def cast_to_signature(name, sigs, args):
    """The arguments as an eager signature types them: scalars cast to the signature's
    types (numba casts them the same way); an argument that fits no signature is numba's
    TypeError."""
    if not sigs:
        return args
    errors = []
    for argtypes, _ in sigs:
        try:
            return tuple(_cast(a, t) for a, t in zip(args, argtypes, strict=True))
        except (TypeError, ValueError) as e:
            errors.append(str(e))
    raise TypeError(f"No matching definition for argument type(s) of kernel {name!r}: "
                    f"{'; '.join(errors)}")


def _cast(value, ty):
    from numba.cuda import types
    from numba.cuda.np.numpy_support import as_dtype
    if isinstance(ty, types.Array):
        dt = as_dtype(ty.dtype)
        have = getattr(value, "dtype", None)
        if have is None or np.dtype(have) != dt or getattr(value, "ndim", -1) != ty.ndim:
            raise TypeError(f"{ty} expected, got {type(value).__name__} "
                            f"{getattr(value, 'dtype', '')}{getattr(value, 'shape', '')}")
        return value
    if isinstance(ty, (types.Number, types.Boolean)):
        return as_dtype(ty).type(value)
    return value


def make_jit(numba_jit):
    """numba.cuda.jit's signature: kernels -> SimKernel, device functions -> numba's own."""
    def jit(func_or_sig=None, device=False, **options):
        if options.get("link") and device:
            raise ArgumentError("cuda.jit(device=True, link=...): simgpu does not link external code yet")
        sigs = None
        if func_or_sig is None or isinstance(func_or_sig, (str, list, tuple)) or _is_sig(func_or_sig):
            sigs = func_or_sig if isinstance(func_or_sig, list) else (
                [func_or_sig] if func_or_sig is not None else None)

            def decorate(fn):
                if device:
                    return numba_jit(func_or_sig, device=True, **options)(fn)
                return SimKernel(fn, sigs, options)
            return decorate
        if device:
            return numba_jit(func_or_sig, device=True, **options)
        return SimKernel(func_or_sig, None, options)
    jit.__doc__ = numba_jit.__doc__
    return jit


def _is_sig(obj):
    from numba.cuda.core.sigutils import is_signature
    return not callable(obj) or is_signature(obj)
