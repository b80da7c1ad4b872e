"""The parts of the CUDA driver that numba-cuda's host code itself calls, on the modelled GPU.

simgpu models the GPU, not the driver; but numba-cuda's own host code reaches a few driver
entry points directly, and its tests mock them.  install() puts these in their place:

* :data:`DRIVER` (a :class:`ModelDriver`) is ``numba.cuda.cudadrv.driver.driver``: the copy and
  memset entry points (``cuMemcpyHtoD``, ``cuMemcpyDtoH``, ``cuMemcpyDtoD``, their ``Async``
  forms, ``cuMemsetD8``) act on the modelled device memory by address, and simgpu's device
  arrays copy through them, so a program (or a test) that replaces one sees every copy go
  through its replacement, as on a GPU.  Any other ``cu*`` name is a SimGPUError naming it.
* :data:`MEMORY_MANAGER` is ``current_context().memory_manager``: numba's deallocation queue
  (``deallocations``: an allocation whose last reference goes is queued, and the queue is
  flushed by numba's rules -- more than ``CUDA_DEALLOCS_COUNT`` items or
  ``CUDA_DEALLOCS_RATIO`` of the device memory -- or by ``clear()``), ``memalloc``,
  ``get_memory_info`` and IPC handles (host/ipc.py).
* :class:`ModuleGlobals`: a kernel's ``.global`` variables, kept from launch to launch as a
  module loaded on a GPU keeps them (numba's NRT sets ``TheMSys`` in a kernel's module once,
  at bind; ``<kernel>__errcode__`` is zeroed before each launch, as numba does).
* numba's NRT memory system (``numba.cuda.memory_management.nrt.rtsys``): its ``memsys.cu``
  module compiled to PTX by NVRTC and run on the model (:class:`ModelModule`), launched through
  :func:`core_launch` (numba's ``cuda.core.launch``): the allocation statistics numba's tests
  read (``rtsys.get_allocation_stats()``) are the NRT's own counters, updated by the kernels'
  own ``NRT_Allocate``/``NRT_Free`` on the modelled device.
"""
from __future__ import annotations

import ctypes
import sys
from contextlib import contextmanager

import numpy as np

from ..errors import SimGPUError
from . import devicearray as da
from . import ipc
from .device import PRIMARY_MEMORY_MANAGER, SimDevice
from .session import current_session


def _value(ptr):
    """An address given as an int, a ctypes integer or pointer, or numba's pointer objects."""
    for attr in ("value", "device_pointer_value", "device_pointer"):
        if not isinstance(ptr, (int, np.integer)) and hasattr(ptr, attr):
            ptr = getattr(ptr, attr)
    return int(ptr or 0)


def device_bytes(address, nbytes, what):
    """The uint8 view of ``nbytes`` device bytes at ``address`` (inside one allocation)."""
    base, owner = da.allocation_at(address)
    if owner is None or address + nbytes > base + max(owner._origin.nbytes, 1):
        raise SimGPUError(f"{what}: {nbytes} bytes at device address 0x{address:x} are not inside one "
                          "allocation of the modelled GPU")
    off = address - base
    return da._alloc_bytes(owner)[off:off + nbytes], owner


def _host_bytes(address, nbytes):
    return (ctypes.c_uint8 * nbytes).from_address(address) if nbytes else None


class ModelDriver:
    """``numba.cuda.cudadrv.driver.driver`` on the modelled GPU (see the module docstring)."""

    is_available = True

    @staticmethod
    def get_device(devnum=0):
        session = current_session()
        dev = session.check_device(devnum, f"driver.get_device({devnum!r})")
        return SimDevice(session.gpus[dev], dev, session)

    @staticmethod
    def get_device_count():
        return current_session().devices

    def cuMemcpyHtoD(self, dst, src, size):
        size = int(size)
        if size:
            out, owner = device_bytes(_value(dst), size, "cuMemcpyHtoD")
            out[:] = np.frombuffer(_host_bytes(_value(src), size), np.uint8)
            da.mark_written(owner)

    def cuMemcpyDtoH(self, dst, src, size):
        size = int(size)
        if size:
            data, _ = device_bytes(_value(src), size, "cuMemcpyDtoH")
            ctypes.memmove(_value(dst), data.ctypes.data, size)

    def cuMemcpyDtoD(self, dst, src, size):
        size = int(size)
        if size:
            data, _ = device_bytes(_value(src), size, "cuMemcpyDtoD")
            out, owner = device_bytes(_value(dst), size, "cuMemcpyDtoD")
            out[:] = data.copy()
            da.mark_written(owner)

    def cuMemsetD8(self, dst, value, count):
        count = int(count)
        if count:
            out, owner = device_bytes(_value(dst), count, "cuMemsetD8")
            out[:] = int(value) & 0xFF
            da.mark_written(owner)

    # the stream-ordered forms: work runs when it is issued on the model
    def cuMemcpyHtoDAsync(self, dst, src, size, stream=None):
        self.cuMemcpyHtoD(dst, src, size)

    def cuMemcpyDtoHAsync(self, dst, src, size, stream=None):
        self.cuMemcpyDtoH(dst, src, size)

    def cuMemcpyDtoDAsync(self, dst, src, size, stream=None):
        self.cuMemcpyDtoD(dst, src, size)

    def cuMemsetD8Async(self, dst, value, count, stream=None):
        self.cuMemsetD8(dst, value, count)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise SimGPUError(f"driver.{name} is the CUDA driver's API, which simgpu does not model (simgpu "
                          "models the GPU and the driver's copies, memsets and memory queue; use the "
                          "numba.cuda host API)")


DRIVER = ModelDriver()


# -- numba's deallocation queue and memory manager --------------------------------------------
def _deallocs_limits():
    config = sys.modules["numba.cuda"].config      # installed: numba.cuda is imported
    return int(getattr(config, "CUDA_DEALLOCS_COUNT", 10)), float(getattr(config, "CUDA_DEALLOCS_RATIO", 0.2))


class PendingDeallocs:
    """numba's ``_PendingDeallocs`` on the model: a freed allocation is queued (nothing is
    returned to the driver until the queue is flushed: more than CUDA_DEALLOCS_COUNT items, or
    more than CUDA_DEALLOCS_RATIO of the device memory pending, or ``clear()``), unless
    deallocation is disabled (``defer_cleanup``)."""

    def __init__(self, capacity):
        self._items = []
        self._size = 0
        self._disabled = 0
        self._capacity = int(capacity)

    @property
    def _max_pending_bytes(self):
        return int(self._capacity * _deallocs_limits()[1])

    def add_item(self, dtor=None, handle=None, size=-1):
        self._items.append((dtor, handle, size))
        self._size += max(int(size), 0)
        if len(self._items) > _deallocs_limits()[0] or self._size > self._max_pending_bytes:
            self.clear()

    def clear(self):
        if self._disabled:
            return
        while self._items:
            dtor, handle, _ = self._items.pop()
            if dtor is not None:
                dtor(handle)
        self._size = 0

    @contextmanager
    def disable(self):
        self._disabled += 1
        try:
            yield
        finally:
            self._disabled -= 1

    @property
    def is_disabled(self):
        return self._disabled > 0

    def __len__(self):
        return len(self._items)


class ModelMemoryManager:
    """``current_context().memory_manager`` (numba's memory manager interface, version 1)."""

    interface_version = 1

    def __init__(self):
        self._deallocations = None

    @property
    def deallocations(self):
        if self._deallocations is None:
            self._deallocations = PendingDeallocs(current_session().gpu.dram.size_bytes)
        return self._deallocations

    def memalloc(self, size):
        """``size`` bytes of device memory (numba's MemoryPointer: a DeviceMemory)."""
        return da.device_array((int(size),), np.uint8).gpu_data

    def get_memory_info(self):
        total = int(current_session().gpu.dram.size_bytes)
        return (total - da.allocated_bytes(), total)

    def get_ipc_handle(self, memory):
        """cuIpcGetMemHandle: a handle another process opens (host/ipc.py)."""
        return ipc.get_ipc_handle(memory)

    def reset(self):
        if self._deallocations is not None:
            self._deallocations.clear()

    def defer_cleanup(self):
        return self.deallocations.disable()


MEMORY_MANAGER = ModelMemoryManager()
PRIMARY_MEMORY_MANAGER[0] = MEMORY_MANAGER


def allocation_freed(base, nbytes):
    """A device allocation's last reference went (devicearray's finalizer): queued as numba's
    memory manager queues it."""
    MEMORY_MANAGER.deallocations.add_item(None, base, nbytes)


# -- a kernel's module variables, kept between launches -----------------------------------------
class ModuleGlobals:
    """The ``.global`` variables of one loaded module: each a device allocation, made at the
    first launch from the PTX's initial bytes (with any value written before it) and kept."""

    def __init__(self):
        self.arrays = {}
        self.pending = {}           # name -> bytes written before the first launch

    def place(self, memory, name, init):
        """The address of variable `name` (made from `init` the first time), mapped into the
        launch's `memory` (a HostMemory; None: only made)."""
        arr = self.arrays.get(name)
        if arr is None:
            buf = init.copy()
            early = self.pending.pop(name, None)
            if early is not None:
                buf[:len(early)] = np.frombuffer(early, np.uint8)[:len(buf)]
            arr = self.arrays[name] = da.DeviceNDArray._make(buf)
        base = arr._base_address
        if memory is not None and base not in memory.bases:
            memory.add_allocation(base, da._alloc_bytes(arr), name)
        return base

    def write(self, name, raw):
        arr = self.arrays.get(name)
        if arr is None:
            self.pending[name] = bytes(raw)
        else:
            da._alloc_bytes(arr)[:len(raw)] = np.frombuffer(bytes(raw), np.uint8)

    def zero(self, suffix):
        """Zero every variable whose name ends with ``suffix`` (numba zeroes a debug kernel's
        ``__errcode__`` before each launch)."""
        for name, arr in self.arrays.items():
            if name.endswith(suffix):
                da._alloc_bytes(arr)[:] = 0

    def address(self, name):
        arr = self.arrays.get(name)
        return None if arr is None else arr._base_address


def module_globals(kernel_code):
    """The ModuleGlobals of a numba kernel (its module), kept on the kernel."""
    store = kernel_code.__dict__.get("_simgpu_module_globals")
    if store is None:
        store = kernel_code.__dict__["_simgpu_module_globals"] = ModuleGlobals()
    return store
