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

import importlib
import json
import os
import sys
from contextlib import contextmanager

from .. import patches
from .. import settings
from .._compat import load_numba_cuda
from ..errors import SimGPUError
from ..runtime.ptx_path import set_program_memory
from . import api
from . import devicearray as da
from . import driver
from . import kernels
from . import nrt
from . import session as session_module
from .session import Session, current_session, set_session

_SAVED_ENV = {}       # environment variable -> value before install() (None: unset)
ENV = settings.variable("install")      # what a child process installs (JSON; startup/sitecustomize.py)
STARTUP_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "startup")


def host_api():
    """numba.cuda name -> simgpu's implementation (the names: simgpu/patches.py)."""
    names = {n: getattr(api, n) for n in patches.HOST_API}
    names.update({n: getattr(da, n) for n in patches.HOST_ARRAYS})
    names["gpus"] = api.gpus_object()
    return names


def _numba_cuda():
    cuda = load_numba_cuda()
    for name in ("numba.cuda.api", "numba.cuda.compiler", "numba.cuda.cudadrv.devices",
                 "numba.cuda.dispatcher", "numba.cuda.kernels.transpose"):
        importlib.import_module(name)
    # (numba.cuda is not yet an attribute of numba while its __init__ runs: a child installs
    # right after it)
    return cuda or sys.modules["numba.cuda"]


def install(gpu=None, memory=True, sass=True, children=True, devices=None):
    """Make numba.cuda's host API run on the modelled GPU (see the module docstring).
    Returns the Session that records the launches and transfers.  Installing again switches
    to a new session (and GPU).  memory=False, sass=False: results only -- no memory model and
    no ptxas/nvdisasm run per kernel (instruction counts and registers are then absent).
    children=True: Python processes this process starts (subprocess, multiprocessing) install
    simgpu too, with the same GPU and options, when they import numba.cuda (:func:`export_to_children`).
    gpu may be a list of presets, one per GPU of the system (mixed GPUs).
    devices: how many GPUs (all of this preset) the modelled system has (``cuda.gpus``,
    ``select_device``, ``with cuda.gpus[i]``; default the ``devices`` setting, SIMGPU_DEVICES, 1).
    Every name it replaces is in simgpu/patches.py, checked before anything is changed: a
    numba-cuda without one of them is a SimGPUError naming it."""
    cuda = _numba_cuda()
    patches.check()
    drv = sys.modules["numba.cuda.cudadrv.driver"]
    patches.swap("numba.cuda.cudadrv.driver:Stream.synchronize", session_module.model_synchronize)
    session_module.STREAM_CLASSES[:] = session_module.numba_stream_classes(drv.Stream)
    session = Session(gpu, memory=memory, sass=sass,
                      devices=settings.current().devices if devices is None else devices)
    set_session(session)
    da.set_transfer_hook(session.record_transfer)
    set_program_memory(kernels.program_memory)      # plain simgpu.launch reaches the device arrays too
    for name, value in host_api().items():
        patches.swap(f"numba.cuda:{name}", value)
        patches.swap(f"numba.cuda.api:{name}", value)    # `from numba.cuda.api import ...` gets ours too
    for module in ("numba.cuda.dispatcher", "numba.cuda.compiler"):
        patches.swap(f"{module}:get_current_device", api.get_current_device)
    # kernels: compiled by numba, run here
    patches.swap("numba.cuda.dispatcher:_Kernel",
                 kernels.kernel_class(patches.original("numba.cuda.dispatcher:_Kernel")))
    patches.swap("numba.cuda.dispatcher:ForAll._compute_thread_per_block", kernels.forall_block)
    patches.swap("numba.cuda.cudadrv.driver:_to_core_stream", kernels.to_core_stream)
    # numba's own host code makes device arrays with numba's constructor (gufunc broadcasting,
    # from_array_like, the transpose kernel's output): simgpu's class takes the same arguments
    patches.swap("numba.cuda.cudadrv.devicearray:DeviceNDArray", da.DeviceNDArray)
    # the driver entry points numba's host code calls (copies, memsets, the device), its
    # deallocation queue, and NRT's memory system (host/driver.py, host/nrt.py)
    patches.swap("numba.cuda.kernels.transpose:driver", driver.DRIVER)
    patches.swap("numba.cuda.cudadrv.driver:driver", driver.DRIVER)
    patches.swap("numba.cuda.memory_management.nrt:driver", driver.DRIVER)
    patches.swap("numba.cuda.memory_management.nrt:launch", nrt.core_launch)
    patches.swap("numba.cuda.memory_management.nrt:_Runtime._compile_memsys_module", nrt.compile_memsys_module)
    patches.swap("numba.cuda.memory_management.nrt:_Runtime.set_memsys_to_module", nrt.set_memsys_to_module)
    da.set_driver(driver.DRIVER, driver.allocation_freed)
    # numba.cuda.testing asks numba.cuda.cudadrv.devices for the cc
    patches.swap("numba.cuda.cudadrv.devices:get_context", api.current_context)
    patches.swap("numba.cuda.cudadrv.devices:gpus", cuda.gpus)
    if children:
        export_to_children(session)
    return session


def export_to_children(session):
    """Child Python processes install simgpu as this one did.  Like numba's simulator, whose
    ``NUMBA_ENABLE_CUDASIM=1`` a child inherits, through the environment: ``SIMGPU_INSTALL``
    holds the GPU's name and the options, and simgpu/host/startup/ goes first on
    ``PYTHONPATH``; its ``sitecustomize`` (imported by every Python at startup) installs simgpu
    when the child imports numba.cuda.  uninstall() restores both variables."""
    _set_env(ENV, json.dumps({"gpu": [g.name for g in session.gpus], "memory": bool(session.memory),
                              "sass": bool(session.sass), "devices": session.devices}))
    path = os.environ.get("PYTHONPATH", "")
    if STARTUP_DIR not in path.split(os.pathsep):
        _set_env("PYTHONPATH", os.pathsep.join([STARTUP_DIR] + ([path] if path else [])))


def install_from_env():
    """install() with the options in ``SIMGPU_INSTALL`` (a child process: startup/sitecustomize.py)."""
    opts = json.loads(settings.current().install or "{}")
    return install(opts.get("gpu"), memory=opts.get("memory", True), sass=opts.get("sass", True),
                   devices=opts.get("devices"))


def _set_env(name, value):
    _SAVED_ENV.setdefault(name, os.environ.get(name))
    os.environ[name] = value


def uninstall():
    """Put numba.cuda's own host API back."""
    patches.restore()
    da.set_transfer_hook(None)
    da.set_driver(None)
    set_program_memory(None)
    session_module.STREAM_CLASSES[:] = [session_module.Stream, session_module.ExternalStream]
    for name, value in _SAVED_ENV.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _SAVED_ENV.clear()


def is_installed():
    return bool(patches.swapped_names())


@contextmanager
def installed(gpu=None, memory=True, sass=True, devices=None):
    """``with simgpu.installed(): ...`` -- numba.cuda on the modelled GPU inside the block."""
    if is_installed():
        raise SimGPUError("simgpu is already installed; nest no second simgpu.installed()")
    session = install(gpu, memory=memory, sass=sass, devices=devices)
    try:
        yield session
    finally:
        uninstall()


def session():
    """The current Session (its launches, transfers and summary())."""
    return current_session()
