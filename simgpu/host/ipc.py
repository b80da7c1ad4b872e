"""CUDA IPC on the modelled GPU: ``ctx.get_ipc_handle(memory)``, ``DeviceNDArray.get_ipc_handle()``,
``cuda.open_ipc_array(handle_bytes, ...)``, numba's ``IpcHandle`` / ``IpcArrayHandle`` API
(``open``, ``open_array``, ``open_staged``, ``close``, pickling, ``with handle as array``).

Each process that uses simgpu has its own modelled device memory (numpy buffers at modelled
device addresses).  To share an allocation with another process as the driver does, exporting
it moves its bytes into a Linux ``memfd`` (anonymous shared memory) that this process maps, and
every device array over that allocation is re-pointed at the mapping.  The handle's 64 bytes
(``CUipcMemHandle.reserved``) name the exporting process and the memfd; a process that opens it
maps the same pages through ``/proc/<pid>/fd/<fd>``, so writes on either side are seen by the
other at once, as two processes sharing device memory see them.  The opened memory is an
allocation of the opening process's modelled device, at its own device address (as on a GPU,
where the mapping's address differs per process).  Opening a handle in the process that made
it gives that allocation itself.

Only device memory can be exported (as ``cuIpcGetMemHandle``: not pinned, mapped or managed
memory).  A handle outlives neither its exporter's allocation nor the exporting process's fd.
"""
from __future__ import annotations

import mmap
import os
import struct
import weakref
from contextlib import contextmanager

import numpy as np

from ..errors import SimGPUError
from . import devicearray as da

_MAGIC = b"SGIP"
_LAYOUT = "<4sIIIQQ"          # magic, version, pid, fd, allocation bytes, base address (exporter's)
_VERSION = 1
_EXPORTED = {}                # exporter: base address -> (fd, mmap) of an exported allocation


class MemHandle:
    """``CUipcMemHandle``: 64 opaque bytes (``reserved``)."""

    def __init__(self, reserved=b""):
        if not isinstance(reserved, (bytes, bytearray, memoryview)):
            raise ValueError(f"an IPC memory handle is 64 bytes (ipch.handle.reserved), not {reserved!r}")
        self.reserved = bytes(reserved).ljust(64, b"\0")[:64]

    def __eq__(self, other):
        return isinstance(other, MemHandle) and self.reserved == other.reserved

    def __repr__(self):
        return f"<simgpu CUipcMemHandle {self.reserved[:32].hex()}...>"


def _decode(reserved):
    raw = bytes(reserved)
    if len(raw) < struct.calcsize(_LAYOUT) or raw[:4] != _MAGIC:
        raise ValueError("not an IPC memory handle of simgpu's modelled GPU (cuIpcOpenMemHandle: "
                         "CUDA_ERROR_INVALID_VALUE)")
    _, version, pid, fd, nbytes, base = struct.unpack_from(_LAYOUT, raw)
    if version != _VERSION:
        raise ValueError(f"IPC handle of simgpu's format {version}, this simgpu reads {_VERSION}")
    return pid, fd, nbytes, base


def _shared_buffer(nbytes, fd=None, pid=None):
    """A uint8 numpy array over `nbytes` of shared memory: a new memfd (fd None), or the memfd
    `fd` of process `pid`.  Returns (array, fd this process holds, mmap)."""
    if fd is None:
        if not hasattr(os, "memfd_create"):
            raise SimGPUError("CUDA IPC on the modelled GPU needs Linux (os.memfd_create)")
        own = os.memfd_create("simgpu-ipc", 0)
        os.ftruncate(own, max(nbytes, 1))
    else:
        try:
            own = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDWR)
        except OSError as e:
            raise SimGPUError(f"open IPC handle: the exporting process {pid} or its allocation is gone "
                              f"({e.strerror}); the exporter must keep the array alive while it is shared") from None
    mm = mmap.mmap(own, max(nbytes, 1))
    return np.frombuffer(mm, np.uint8, count=nbytes), own, mm


def export(alloc):
    """The handle bytes of allocation `alloc` (a DeviceNDArray owning its buffer), moving its
    bytes into shared memory the first time (module docstring)."""
    if alloc.kind != "device":
        raise SimGPUError(f"get_ipc_handle: a {alloc.kind} array cannot be shared between processes "
                          "(cuIpcGetMemHandle takes device memory from cuMemAlloc only)")
    base = alloc._base_address
    if base not in _EXPORTED:
        old = da._alloc_bytes(alloc)
        buf, fd, mm = _shared_buffer(old.nbytes)
        buf[:] = old
        da.repoint_allocation(alloc, buf)
        _EXPORTED[base] = (fd, mm)
        weakref.finalize(alloc, _unexport, base)
    fd = _EXPORTED[base][0]
    return MemHandle(struct.pack(_LAYOUT, _MAGIC, _VERSION, os.getpid(), fd, alloc._origin.nbytes, base))


def _unexport(base):
    fd, mm = _EXPORTED.pop(base, (None, None))
    if fd is not None:
        os.close(fd)


class IpcHandle:
    """numba's ``IpcHandle``: an exported allocation (`handle`), `size` bytes at `offset` in it."""

    def __init__(self, base, handle, size, source_info=None, offset=0):
        self.base = base                # the exporter's memory (None once pickled)
        self.handle = handle if isinstance(handle, MemHandle) else MemHandle(getattr(handle, "reserved", handle))
        self.size = int(size)
        self.source_info = source_info
        self.offset = int(offset)
        self._opened = None             # (DeviceNDArray allocation, fd, mmap) while open

    def open(self, context=None):
        """The shared memory as a device pointer of this process (numba's MemoryPointer)."""
        if self._opened is not None:
            raise ValueError("IpcHandle is already opened")
        pid, fd, nbytes, base = _decode(self.handle.reserved)
        if pid == os.getpid():
            _, owner = da.allocation_at(base)
            if owner is None or owner._base_address != base:
                raise SimGPUError("open IPC handle: its allocation has been freed in this process")
            self._opened = (owner, None, None)
        else:
            buf, own, mm = _shared_buffer(nbytes, fd, pid)
            owner = da.DeviceNDArray._make(buf, origin=buf)
            self._opened = (owner, own, mm)
        if self.offset + self.size > nbytes:
            raise ValueError(f"IPC handle: {self.size} bytes at offset {self.offset} past the "
                             f"{nbytes}-byte allocation")
        return da.DeviceMemory(self._opened[0], self.offset, self.size)

    open_direct = open

    def open_staged(self, context=None):
        """numba's staged open (for a device without peer access): here the same mapping."""
        return self.open(context)

    def open_array(self, context=None, shape=None, dtype=None, strides=None):
        """The shared memory as a device array of `shape`, `dtype` (and `strides`)."""
        mem = self.open(context)
        dtype = np.dtype(dtype)
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)
        return da.DeviceNDArray(shape, strides, dtype, gpu_data=mem)

    def close(self):
        if self._opened is None:
            raise ValueError("IpcHandle not opened")
        _, own, mm = self._opened
        self._opened = None
        if own is not None:
            os.close(own)       # the mapping (and the arrays over it) stay valid until unmapped

    def __reduce__(self):
        return (_rebuild_handle, (self.handle.reserved, self.size, self.source_info, self.offset))

    def __repr__(self):
        return f"<simgpu IpcHandle {self.size} B at offset {self.offset}>"


def _rebuild_handle(reserved, size, source_info, offset):
    return IpcHandle(None, MemHandle(reserved), size, source_info, offset)


class IpcArrayHandle:
    """numba's ``IpcArrayHandle`` (``DeviceNDArray.get_ipc_handle()``): ``with h as array:``
    opens the shared array in this process and closes it at the end."""

    def __init__(self, ipc_handle, array_desc):
        self._array_desc = array_desc
        self._ipc_handle = ipc_handle

    def open(self):
        mem = self._ipc_handle.open()
        return da.DeviceNDArray(gpu_data=mem, **self._array_desc)

    def close(self):
        self._ipc_handle.close()

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()
        return False


def get_ipc_handle(memory, source_info=None):
    """``ctx.get_ipc_handle(memory)``: `memory` a device pointer (DeviceMemory) of this process."""
    if not isinstance(memory, da.DeviceMemory) or memory.owner is None:
        raise SimGPUError(f"get_ipc_handle({memory!r}): not device memory of the modelled GPU")
    owner = memory.owner
    return IpcHandle(memory, export(owner), memory.size, source_info, offset=memory.offset)


def array_ipc_handle(array):
    """``DeviceNDArray.get_ipc_handle()``."""
    ipch = get_ipc_handle(array.gpu_data)
    return IpcArrayHandle(ipch, dict(shape=array.shape, strides=array.strides, dtype=array.dtype))


def open_ipc_array(handle, shape, dtype, strides=None, offset=0):
    """``cuda.open_ipc_array(handle, shape, dtype, strides, offset)`` (a context manager):
    `handle` the 64 bytes of ``ipch.handle.reserved`` (or a handle object; checked at the call)."""
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    ipch = IpcHandle(None, MemHandle(getattr(handle, "reserved", handle)), size, offset=offset)
    return _opened(ipch, shape, dtype, strides)


@contextmanager
def _opened(ipch, shape, dtype, strides):
    array = ipch.open_array(None, shape=shape, dtype=dtype, strides=strides)
    try:
        yield array
    finally:
        ipch.close()
