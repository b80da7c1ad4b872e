"""``simgpu.install()``: numba.cuda with the modelled GPU underneath.

numba's own simulator (``NUMBA_ENABLE_CUDASIM=1``) swaps numba.cuda's API at import: its
``__init__`` takes ``jit``, ``to_device``, streams ... from ``numba.cuda.simulator`` instead of
the driver, and the kernels then run as Python.  simgpu swaps less: the *host* API only.

* ``install()`` imports the real numba.cuda and replaces, on that module object, the names in
  :data:`HOST_API` (``jit``, ``to_device``, ``device_array``, ``stream``, ``event``,
  ``get_current_device``, ...) with simgpu's (host/api.py, host/kernels.py,
  host/devicearray.py).  The originals are kept and put back by ``uninstall()``.
* Everything a kernel uses -- ``cuda.threadIdx``, ``cuda.shared.array``, ``cuda.atomic``,
  ``cuda.random``'s device functions, ``cuda.jit(device=True)`` functions -- stays numba's,
  because numba-cuda compiles the kernel: a kernel launched through the swapped ``cuda.jit``
  is compiled by the real numba-cuda to PTX for the modelled GPU's compute capability and the
  PTX runs on simgpu (``executor="ptx"``).  Patching the module object in place, rather than
  putting another module into ``sys.modules``, keeps ``types.Module(numba.cuda)`` -- the key
  numba types ``cuda.<name>`` inside kernels by -- the one numba registered.
* numba-cuda asks ``get_current_device()`` for the compute capability when it compiles
  device functions with signatures; ``numba.cuda.dispatcher`` and ``numba.cuda.compiler``
  hold their own reference to it, which is swapped too.

So ``from numba import cuda`` in an unmodified program, run by ``simgpu run prog.py`` or after
``simgpu.install()`` (or inside ``with simgpu.installed():``), gets the modelled GPU.  Names a
program bound before install() (``from numba.cuda import to_device`` at import) keep numba's.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager

from .._compat import patch_numpy_for_numba
from ..errors import SimGPUError
from . import api
from . import devicearray as da
from .kernels import make_jit
from .session import Session, current_session, set_session

_SAVED = {}           # (module name, attribute) -> original value


def host_api(numba_jit):
    """numba.cuda name -> simgpu's implementation."""
    names = {n: getattr(api, n) for n in (
        "get_current_device", "current_context", "require_context", "select_device", "list_devices",
        "close", "is_available", "cuda_error", "is_supported_version", "is_float16_supported",
        "is_bfloat16_supported", "is_fp8_supported", "detect", "synchronize", "stream",
        "default_stream", "legacy_default_stream", "per_thread_default_stream", "external_stream",
        "event", "event_elapsed_time", "pinned", "mapped", "defer_cleanup", "profile_start",
        "profile_stop", "profiling", "open_ipc_array", "set_memory_manager")}
    names.update({n: getattr(da, n) for n in (
        "to_device", "device_array", "device_array_like", "pinned_array", "pinned_array_like",
        "mapped_array", "mapped_array_like", "managed_array", "is_cuda_array", "as_cuda_array",
        "from_cuda_array_interface")})
    names["gpus"] = api.gpus_object()
    names["jit"] = make_jit(numba_jit)
    return names


def _numba_cuda():
    patch_numpy_for_numba()
    import numba.cuda
    import numba.cuda.api
    import numba.cuda.compiler
    import numba.cuda.cudadrv.devices
    import numba.cuda.dispatcher
    return numba.cuda


def _swap(module, name, value):
    key = (module.__name__, name)
    if key not in _SAVED:
        _SAVED[key] = (module, getattr(module, name, _MISSING))
    setattr(module, name, value)


_MISSING = object()


def install(gpu=None, memory=True):
    """Make numba.cuda's host API run on the modelled GPU (see the module docstring).
    Returns the Session that records the launches and transfers.  Installing again switches
    to a new session (and GPU)."""
    cuda = _numba_cuda()
    session = Session(gpu, memory=memory)
    set_session(session)
    da.set_transfer_hook(session.record_transfer)
    saved_jit = _SAVED.get(("numba.cuda", "jit"), (None, cuda.jit))[1]
    api_module = sys.modules["numba.cuda.api"]    # `from numba.cuda.api import ...` gets ours too
    for name, value in host_api(saved_jit).items():
        _swap(cuda, name, value)
        if hasattr(api_module, name):
            _swap(api_module, name, value)
    for mod in (sys.modules["numba.cuda.dispatcher"], sys.modules["numba.cuda.compiler"],
                sys.modules.get("numba.cuda.api")):
        if mod is not None and hasattr(mod, "get_current_device"):
            _swap(mod, "get_current_device", api.get_current_device)
    devices = sys.modules["numba.cuda.cudadrv.devices"]   # numba.cuda.testing asks it for the cc
    _swap(devices, "get_context", api.current_context)
    _swap(devices, "gpus", cuda.gpus)
    return session


def uninstall():
    """Put numba.cuda's own host API back."""
    for (_, name), (module, value) in list(_SAVED.items()):
        if value is _MISSING:
            delattr(module, name)
        else:
            setattr(module, name, value)
    _SAVED.clear()
    da.set_transfer_hook(None)


def is_installed():
    return bool(_SAVED)


@contextmanager
def installed(gpu=None, memory=True):
    """``with simgpu.installed(): ...`` -- numba.cuda on the modelled GPU inside the block."""
    if is_installed():
        raise SimGPUError("simgpu is already installed; nest no second simgpu.installed()")
    session = install(gpu, memory=memory)
    try:
        yield session
    finally:
        uninstall()


def session():
    """The current Session (its launches, transfers and summary())."""
    return current_session()
