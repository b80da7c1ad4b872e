"""Every change simgpu makes to numba-cuda, in one registry.

simgpu runs numba.cuda programs by replacing a few names on numba-cuda's module objects (why
each, in host/install.py).  Several are private names of numba-cuda (``dispatcher._Kernel``,
``driver._to_core_stream``), so a numba-cuda release may rename them.  Each target is listed in
:data:`PATCHES` with the numba-cuda version it was written against; :func:`check` (run by
``simgpu.install()`` before it changes anything) raises a SimGPUError naming every missing
target and the installed numba-cuda version, instead of a quiet failure.

* :func:`swap` replaces a target until :func:`restore` (``simgpu.uninstall()``), which puts
  back every original -- the value before the first swap, or no attribute at all.
* :func:`swapped` replaces a target for a ``with`` block (and :func:`push` until the function
  it returns is called), putting back the value it found.
* Nothing outside this module writes an attribute of numba-cuda.

A patch whose ``optional`` is set is left alone where its target is absent (a module that does
not hold that name has nothing to redirect).  This module imports nothing of simgpu's but
errors: it is in the bottom layer; the values swapped in come from the callers.
"""
from __future__ import annotations

import importlib
import importlib.util
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

from .errors import SimGPUError

WRITTEN_AGAINST = ("0.30.4",)       # numba-cuda versions the targets below were checked on

_MISSING = object()


@dataclass(frozen=True)
class Patch:
    module: str                 # "numba.cuda.dispatcher"
    attribute: str              # "_Kernel", or "ForAll._compute_thread_per_block" (a class's)
    why: str
    optional: bool = False      # absent in some numba-cuda versions: then left alone
    written_against: tuple = WRITTEN_AGAINST

    @property
    def name(self):
        return f"{self.module}:{self.attribute}"


# numba.cuda's host API (host/api.py and host/devicearray.py implement them): public names
HOST_API = ("get_current_device", "current_context", "require_context", "select_device", "list_devices",
            "close", "is_available", "cuda_error", "is_supported_version", "is_float16_supported",
            "is_bfloat16_supported", "is_fp8_supported", "detect", "synchronize", "stream",
            "default_stream", "legacy_default_stream", "per_thread_default_stream", "external_stream",
            "event", "event_elapsed_time", "pinned", "mapped", "defer_cleanup", "profile_start",
            "profile_stop", "profiling", "open_ipc_array", "set_memory_manager")
HOST_ARRAYS = ("to_device", "device_array", "device_array_like", "pinned_array", "pinned_array_like",
               "mapped_array", "mapped_array_like", "managed_array", "is_cuda_array", "as_cuda_array",
               "from_cuda_array_interface")
HOST_NAMES = HOST_API + HOST_ARRAYS + ("gpus",)

_LIST = [
    *(Patch("numba.cuda", n, "numba.cuda's host API runs on the modelled GPU") for n in HOST_NAMES),
    *(Patch("numba.cuda.api", n, "`from numba.cuda.api import ...` gets simgpu's too", optional=True)
      for n in HOST_NAMES),
    Patch("numba.cuda.cudadrv.driver", "Stream.synchronize", "work ran when it was issued"),
    Patch("numba.cuda.dispatcher", "get_current_device",
          "the compiler asks it for the compute capability: the modelled GPU's (or a compile's cc)"),
    Patch("numba.cuda.compiler", "get_current_device", "as dispatcher's", optional=True),
    Patch("numba.cuda.dispatcher", "_Kernel", "compiled by numba, bound and launched on simgpu"),
    Patch("numba.cuda.dispatcher", "ForAll._compute_thread_per_block",
          "a block size without the driver's occupancy API"),
    Patch("numba.cuda.cudadrv.driver", "_to_core_stream", "simgpu's streams pass through"),
    Patch("numba.cuda.cudadrv.devicearray", "DeviceNDArray",
          "numba's host code makes device arrays with numba's constructor"),
    Patch("numba.cuda.kernels.transpose", "driver", "the transpose kernel's output array"),
    Patch("numba.cuda.cudadrv.driver", "driver",
          "the driver entry points numba's host code calls (copies, memsets) act on the model"),
    Patch("numba.cuda.memory_management.nrt", "driver", "NRT copies memsys_size to the host"),
    Patch("numba.cuda.memory_management.nrt", "launch", "NRT's one-thread kernels run on the model"),
    Patch("numba.cuda.memory_management.nrt", "_Runtime._compile_memsys_module",
          "NRT's memsys.cu compiled to PTX (NVRTC) and loaded on the model"),
    Patch("numba.cuda.memory_management.nrt", "_Runtime.set_memsys_to_module",
          "a kernel's TheMSys set in its kept module variables"),
    Patch("numba.cuda.cudadrv.devices", "get_context", "numba.cuda.testing asks it for the cc"),
    Patch("numba.cuda.cudadrv.devices", "gpus", "numba.cuda.testing asks it for the cc"),
]
PATCHES = {p.name: p for p in _LIST}

_lock = threading.RLock()
_SAVED = {}          # name -> (owner object, original value or _MISSING), by swap()


def numba_cuda_version():
    """The installed numba-cuda's version ("builtin": numba's own CUDA target; "absent")."""
    try:
        return version("numba-cuda")
    except PackageNotFoundError:
        return "builtin" if importlib.util.find_spec("numba") and importlib.util.find_spec("numba.cuda") else "absent"
    except Exception as exc:  # an unreadable installation
        return f"unknown ({type(exc).__name__})"


def _lookup(patch):
    """(owner, attribute, current value or _MISSING); owner None if the module or class is absent."""
    try:
        owner = importlib.import_module(patch.module)
    except ImportError:
        return None, None, _MISSING
    *path, attr = patch.attribute.split(".")
    for part in path:
        owner = getattr(owner, part, None)
        if owner is None:
            return None, attr, _MISSING
    return owner, attr, getattr(owner, attr, _MISSING)


def missing(names=None):
    """The required patches (of ``names``, default all) whose target is absent."""
    out = []
    for name in (PATCHES if names is None else names):
        patch = _patch(name)
        if not patch.optional and _lookup(patch)[2] is _MISSING:
            out.append(name)
    return out


def check(names=None):
    """Raise SimGPUError if a required target (of ``names``, default all) is absent."""
    gone = missing(names)
    if gone:
        raise SimGPUError(
            f"numba-cuda {numba_cuda_version()} lacks what simgpu patches: {', '.join(gone)} (simgpu's "
            f"patches were written against numba-cuda {', '.join(WRITTEN_AGAINST)}; simgpu/patches.py)")


def _patch(name):
    try:
        return PATCHES[name]
    except KeyError:
        raise SimGPUError(f"{name!r} is not in simgpu's patch registry (simgpu/patches.py)") from None


def _target(name):
    patch = _patch(name)
    owner, attr, value = _lookup(patch)
    if value is _MISSING and not patch.optional:
        check([name])
    return patch, owner, attr, value


def swap(name, value):
    """Replace target ``name`` with ``value`` until restore(); False where an optional target
    is absent (nothing done)."""
    with _lock:
        patch, owner, attr, old = _target(name)
        if old is _MISSING:
            return False
        _SAVED.setdefault(name, (owner, attr, old))
        setattr(owner, attr, value)
        return True


def original(name):
    """The target's value before swap() replaced it (its value now, if not swapped)."""
    with _lock:
        saved = _SAVED.get(name)
        return saved[2] if saved is not None else _target(name)[3]


def restore(names=None):
    """Put back every original swap() replaced (or those of ``names``)."""
    with _lock:
        for name in list(_SAVED if names is None else names):
            saved = _SAVED.pop(name, None)
            if saved is not None:
                owner, attr, value = saved
                setattr(owner, attr, value)


def swapped_names():
    """The targets swap() has replaced and restore() has not put back."""
    return sorted(_SAVED)


def push(name, value):
    """Replace target ``name`` with ``value`` now; returns the function that puts back what it
    found (if the target still holds ``value``)."""
    with _lock:
        _, owner, attr, old = _target(name)
        if old is _MISSING:
            return lambda: None
        setattr(owner, attr, value)

    def undo():
        with _lock:
            if getattr(owner, attr, _MISSING) is value:
                setattr(owner, attr, old)
    return undo


@contextmanager
def swapped(name, value):
    """``with patches.swapped(name, value): ...`` -- the target holds ``value`` in the block."""
    undo = push(name, value)
    try:
        yield
    finally:
        undo()


def snapshot(names=None):
    """{name: the object each present target holds now} (tests compare identities)."""
    out = {}
    for name in (PATCHES if names is None else names):
        owner, attr, value = _lookup(_patch(name))
        if value is not _MISSING:
            out[name] = value
    return out
