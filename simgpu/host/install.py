"""``simgpu.install()``: numba.cuda with the modelled GPU underneath.

numba's own simulator (``NUMBA_ENABLE_CUDASIM=1``) swaps numba.cuda's API at import: its
``__init__`` takes ``jit``, ``to_device``, streams ... from ``numba.cuda.simulator`` instead of
the driver, and kernels then run as Python with numpy's semantics.  simgpu swaps less, and
after import: only what touches the CUDA *driver*.

* ``install()`` imports the real numba.cuda and replaces, on the module objects, the host API
  names listed in :func:`host_api` (``to_device``, ``device_array``, ``stream``, ``event``,
  ``synchronize``, ``get_current_device``, ``detect`` ...; host/api.py, host/devicearray.py) in
  ``numba.cuda`` and ``numba.cuda.api``, and ``get_current_device`` where numba-cuda's compiler
  and dispatcher hold their own reference (they ask it for the compute capability: now the
  modelled GPU's).  ``uninstall()`` puts every original back.
* ``cuda.jit`` stays numba's, so everything about compiling -- typing, eager signatures and their
  casts, ``device=True``, ``declare_device``, ``specialize``, ``inspect_*``, ``cache=True`` -- is
  numba-cuda's own.  Only the compiled kernel's class ``numba.cuda.dispatcher._Kernel`` is
  swapped for a subclass (host/kernels.py) whose ``bind`` does not load a cubin through the
  driver and whose ``launch`` runs the kernel's PTX on simgpu (``executor="ptx"``).  numba's
  ``driver._to_core_stream`` passes simgpu's streams through, and ``ForAll`` picks a block size
  without the driver's occupancy API.
* The device side (``cuda.threadIdx``, ``cuda.shared.array``, ``cuda.atomic``, ``cuda.random``'s
  device functions) is untouched: numba-cuda compiles it.  Patching module objects in place,
  rather than putting another module into ``sys.modules``, keeps ``types.Module(numba.cuda)``,
  the key numba types ``cuda.<name>`` by inside kernels, the one numba registered.

So ``from numba import cuda`` in an unmodified program, run by ``simgpu run prog.py`` or after
``simgpu.install()`` (or inside ``with simgpu.installed():``), gets the modelled GPU.  Names a
program bound before install() (``from numba.cuda import to_device`` at import) keep numba's.
"""
from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager

from .._compat import patch_numpy_for_numba
from ..errors import SimGPUError
from . import api
from . import devicearray as da
from . import kernels
from . import session as session_module
from .session import Session, current_session, set_session

_SAVED = {}           # (module name, attribute) -> original value
_SAVED_ENV = {}       # environment variable -> value before install() (None: unset)
ENV = "SIMGPU_INSTALL"                  # what a child process installs (JSON; startup/sitecustomize.py)
STARTUP_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "startup")


def host_api():
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
    return names


def _numba_cuda():
    patch_numpy_for_numba()
    import numba.cuda
    import numba.cuda.api
    import numba.cuda.compiler
    import numba.cuda.cudadrv.devices
    import numba.cuda.dispatcher
    import numba.cuda.kernels.transpose
    return sys.modules["numba.cuda"]     # (numba.cuda is not yet an attribute of numba while its
                                         # __init__ runs: a child process installs right after it)


def _swap(module, name, value):
    key = (_key_name(module), name)
    if key not in _SAVED:
        _SAVED[key] = (module, getattr(module, name, _MISSING))
    setattr(module, name, value)


_MISSING = object()


def _original(module, name):
    """The value before install() swapped it (install() may run twice)."""
    saved = _SAVED.get((_key_name(module), name))
    return saved[1] if saved is not None else getattr(module, name)


def _key_name(module):
    return getattr(module, "__qualname__", None) or module.__name__


def install(gpu=None, memory=True, sass=True, children=True):
    """Make numba.cuda's host API run on the modelled GPU (see the module docstring).
    Returns the Session that records the launches and transfers.  Installing again switches
    to a new session (and GPU).  memory=False, sass=False: results only -- no memory model and
    no ptxas/nvdisasm run per kernel (instruction counts and registers are then absent).
    children=True: Python processes this process starts (subprocess, multiprocessing) install
    simgpu too, with the same GPU and options, when they import numba.cuda (:func:`export_to_children`)."""
    cuda = _numba_cuda()
    drv = sys.modules["numba.cuda.cudadrv.driver"]
    _swap(drv.Stream, "synchronize", session_module.model_synchronize)   # work ran when issued
    session_module.STREAM_CLASSES[:] = session_module.numba_stream_classes(drv.Stream)
    session = Session(gpu, memory=memory, sass=sass)
    set_session(session)
    da.set_transfer_hook(session.record_transfer)
    api_module = sys.modules["numba.cuda.api"]    # `from numba.cuda.api import ...` gets ours too
    for name, value in host_api().items():
        _swap(cuda, name, value)
        if hasattr(api_module, name):
            _swap(api_module, name, value)
    for mod in (sys.modules["numba.cuda.dispatcher"], sys.modules["numba.cuda.compiler"],
                sys.modules.get("numba.cuda.api")):
        if mod is not None and hasattr(mod, "get_current_device"):
            _swap(mod, "get_current_device", api.get_current_device)
    dispatcher = sys.modules["numba.cuda.dispatcher"]       # kernels: compiled by numba, run here
    _swap(dispatcher, "_Kernel", kernels.kernel_class(_original(dispatcher, "_Kernel")))
    _swap(dispatcher.ForAll, "_compute_thread_per_block", kernels.forall_block)
    _swap(sys.modules["numba.cuda.cudadrv.driver"], "_to_core_stream", kernels.to_core_stream)
    # numba's own host code makes device arrays with numba's constructor (gufunc broadcasting,
    # from_array_like, the transpose kernel's output): simgpu's class takes the same arguments
    _swap(sys.modules["numba.cuda.cudadrv.devicearray"], "DeviceNDArray", da.DeviceNDArray)
    _swap(sys.modules["numba.cuda.kernels.transpose"], "driver", api.ModelDriver())
    devices = sys.modules["numba.cuda.cudadrv.devices"]   # numba.cuda.testing asks it for the cc
    _swap(devices, "get_context", api.current_context)
    _swap(devices, "gpus", cuda.gpus)
    if children:
        export_to_children(session)
    return session


def export_to_children(session):
    """Child Python processes install simgpu as this one did.  Like numba's simulator, whose
    ``NUMBA_ENABLE_CUDASIM=1`` a child inherits, through the environment: ``SIMGPU_INSTALL``
    holds the GPU's name and the options, and simgpu/host/startup/ goes first on
    ``PYTHONPATH``; its ``sitecustomize`` (imported by every Python at startup) installs simgpu
    when the child imports numba.cuda.  uninstall() restores both variables."""
    _set_env(ENV, json.dumps({"gpu": session.gpu.name, "memory": bool(session.memory),
                              "sass": bool(session.sass)}))
    path = os.environ.get("PYTHONPATH", "")
    if STARTUP_DIR not in path.split(os.pathsep):
        _set_env("PYTHONPATH", os.pathsep.join([STARTUP_DIR] + ([path] if path else [])))


def install_from_env():
    """install() with the options in ``SIMGPU_INSTALL`` (a child process: startup/sitecustomize.py)."""
    opts = json.loads(os.environ.get(ENV) or "{}")
    return install(opts.get("gpu"), memory=opts.get("memory", True), sass=opts.get("sass", True))


def _set_env(name, value):
    _SAVED_ENV.setdefault(name, os.environ.get(name))
    os.environ[name] = value


def uninstall():
    """Put numba.cuda's own host API back."""
    for (_, name), (module, value) in list(_SAVED.items()):
        if value is _MISSING:
            delattr(module, name)
        else:
            setattr(module, name, value)
    _SAVED.clear()
    da.set_transfer_hook(None)
    session_module.STREAM_CLASSES[:] = [session_module.Stream, session_module.ExternalStream]
    for name, value in _SAVED_ENV.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _SAVED_ENV.clear()


def is_installed():
    return bool(_SAVED)


@contextmanager
def installed(gpu=None, memory=True, sass=True):
    """``with simgpu.installed(): ...`` -- numba.cuda on the modelled GPU inside the block."""
    if is_installed():
        raise SimGPUError("simgpu is already installed; nest no second simgpu.installed()")
    session = install(gpu, memory=memory, sass=sass)
    try:
        yield session
    finally:
        uninstall()


def session():
    """The current Session (its launches, transfers and summary())."""
    return current_session()
