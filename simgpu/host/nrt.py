"""numba's NRT memory system (``numba.cuda.memory_management.nrt.rtsys``) on the modelled GPU.

On a GPU, numba compiles NRT's ``memsys.cu`` into a module it loads itself, allocates the
``NRT_MemSys`` structure in device memory, initialises it and switches its statistics with
one-thread launches of the module's kernels, and, at a kernel's bind while statistics are on,
points the kernel's module variable ``TheMSys`` at it (``NRT_MemSys_set``); the kernel's own
``NRT_Allocate``/``NRT_Free`` then count their calls there with atomics.  install() keeps all
of numba's ``_Runtime`` and replaces only what needs the driver:

* ``_compile_memsys_module``: memsys.cu compiled to PTX by NVRTC, as simgpu compiles the files
  numba links (:class:`ModelModule`: its entries run on simgpu's PTX executor, its module
  variables kept between launches);
* ``cuda.core.launch`` as nrt.py calls it (:func:`core_launch`): an entry of that module;
* ``set_memsys_to_module``: the memsys module's ``NRT_MemSys_set`` runs; for a numba kernel,
  its kept variable ``TheMSys`` is written (host/kernels.py's bind calls it as numba's does);
* nrt.py's ``driver`` (the copy of ``memsys_size`` to the host) is simgpu's :data:`driver.DRIVER`.

So ``rtsys.get_allocation_stats()`` reads the counters the kernels' NRT code updated on the
modelled device.
"""
from __future__ import annotations

import os
import sys

import numpy as np

from ..errors import SimGPUError
from ..ptx.parser import parse_cached
from ..ptx.runner import Image, kernel_for, run_image
from ..sass.toolchain import linking_file_ptx
from .driver import ModuleGlobals, _value
from .kernels import program_memory
from .session import current_session

MEMSYS_POINTER = "TheMSys"          # nrt.cu/memsys.cu: the module variable NRT_MemSys_set writes


class ModelFunction:
    """``module.get_function(name)``: an entry of a ModelModule (``.kernel`` is what numba
    passes to ``cuda.core.launch``)."""

    def __init__(self, module, name):
        self.module, self.name = module, name
        self.kernel = self


class ModelModule:
    """A module numba loads itself (NRT's ``memsys.cu``): its PTX, its module variables
    (kept: :class:`~simgpu.host.driver.ModuleGlobals`), its entries launched on the model."""

    def __init__(self, ptx):
        self.ptx = ptx
        self.parsed = parse_cached(ptx)
        self.globals = ModuleGlobals()
        self.entries = [n for n, f in self.parsed.functions.items() if f.kind == "entry"]

    def get_function(self, name):
        return ModelFunction(self, self.parsed.entry(name))

    def get_global_symbol(self, name):
        """(numba's MemoryPointer of variable `name`, its size in bytes)."""
        init = kernel_for(self.parsed, self.entries[0]).global_init
        if name not in init:
            raise SimGPUError(f"the module has no global variable {name!r}")
        self.globals.place(None, name, init[name])
        arr = self.globals.arrays[name]
        return arr.gpu_data, int(init[name].size)

    def launch(self, name, grid, block, params):
        entry = self.parsed.entry(name)
        image = Image(self.parsed, entry, grid, block, [_value(p) for p in params],
                      program_memory((), self.globals))
        run_image(image)


def compile_memsys_module(runtime):
    """``rtsys._compile_memsys_module``: numba's memsys.cu, compiled to PTX by NVRTC for the
    modelled GPU."""
    nrt = sys.modules["numba.cuda.memory_management.nrt"]        # imported by numba.cuda
    path = os.path.join(os.path.dirname(os.path.abspath(nrt.__file__)), "memsys.cu")
    cc = tuple(current_session().gpu.compute_capability)
    runtime._memsys_module = ModelModule(linking_file_ptx(path, cc))


def core_launch(stream, config, kernel, *params):
    """``cuda.core.launch`` as numba's NRT calls it: an entry of a ModelModule, run now."""
    if not isinstance(kernel, ModelFunction):
        raise SimGPUError("cuda.core.launch of a kernel simgpu did not load: launch numba kernels with "
                          "kernel[grid, block](...)")
    kernel.module.launch(kernel.name, tuple(config.grid), tuple(config.block), params)


def set_memsys_to_module(runtime, module, stream=None):
    """``rtsys.set_memsys_to_module``: the module's ``TheMSys`` points at the memsys."""
    if runtime._memsys is None:
        raise RuntimeError("Please allocate NRT Memsys first before setting to module.")
    address = runtime._memsys.device_address
    if isinstance(module, ModelModule):
        module.launch("NRT_MemSys_set", (1, 1, 1), (1, 1, 1), [address])
    elif isinstance(module, ModuleGlobals):       # a numba kernel's kept variables
        module.write(MEMSYS_POINTER, np.uint64(address).tobytes())
    else:
        raise SimGPUError(f"set_memsys_to_module: {type(module).__name__} is not a module simgpu loaded")
