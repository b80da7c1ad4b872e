"""Kernel arguments: numpy arrays and scalars -> the flat parameter values numba.cuda passes.

numba-cuda (``Dispatcher._prepare_args``) passes each argument as:

* array of ndim n: ``meminfo, parent, nitems, itemsize, data, shape[0..n-1], strides[0..n-1]``
  (meminfo = parent = 0, data = the device pointer, strides in bytes) -- 5 + 2n params;
* integer: the C type of its numba type; float32/float64: c_float/c_double; float16: its
  uint16 bits; boolean: one byte; complex64/128: real and imaginary part; datetime64 /
  timedelta64: int64; enum members: their value; tuples: their members in order, recursively.

* record (structured numpy scalar, ``np.void``/``np.record``): a pointer to the record's bytes
  (numba-cuda copies the record to the device and passes ``devrec.ptr``; the kernel does loads
  and stores at the fields' offsets).

Python ints are int64 and Python floats float64 (numba.typeof).  Arrays are given device
addresses in a :class:`DeviceMemory` (base 1<<40, 512-byte aligned) and are worked on in place,
whatever their layout: the bytes an array spans (:func:`byte_span`: C, F or any strided view,
negative strides included) are mapped at the device address, the data pointer is element 0's
address inside them and the strides are the array's own -- so a kernel numba compiled for an
'F' or 'A' layout reads and writes exactly the elements it would on a GPU.
"""
from __future__ import annotations

import enum

import numpy as np

from simgpu.errors import SimGPUError
from simgpu.ptx.memory import DeviceMemory


def scalar_values(val):
    if isinstance(val, enum.Enum):      # numba passes an enum member as its value (EnumMember's model)
        return scalar_values(val.value)
    if isinstance(val, (bool, np.bool_)):
        return [np.uint8(bool(val))]
    if isinstance(val, (int,)) and not isinstance(val, np.integer):
        return [np.int64(val)]
    if isinstance(val, float):
        return [np.float64(val)]
    if isinstance(val, complex):
        return [np.float64(val.real), np.float64(val.imag)]
    if isinstance(val, np.complexfloating):
        part = np.float32 if val.dtype == np.complex64 else np.float64
        return [part(val.real), part(val.imag)]
    if isinstance(val, np.float16):
        return [val.view(np.uint16)]
    if isinstance(val, (np.integer, np.floating)):
        return [val]
    if isinstance(val, np.void) and val.dtype.names is None:
        return [val]                # raw parameter bytes (a CUtensorMap: ops_tma.tensormap_param)
    if isinstance(val, (np.datetime64, np.timedelta64)):
        return [np.int64(val.view(np.int64))]
    return None


class _Raw:
    """An __array_interface__ over host memory, keeping its owner alive (the array's .base)."""

    def __init__(self, iface, owner):
        self.__array_interface__ = iface
        self.owner = owner


def raw_bytes(owner, ptr, nbytes):
    """A writable uint8 array over `nbytes` bytes at host address `ptr` (inside `owner`)."""
    iface = {"version": 3, "shape": (int(nbytes),), "typestr": "|u1", "data": (int(ptr), False),
             "strides": None}
    return np.asarray(_Raw(iface, owner))


def byte_span(arr):
    """(uint8 view of the bytes `arr` spans, offset of element 0 in it): for a C- or
    F-contiguous array its own bytes, for any strided view (steps, transposes, negative strides,
    record fields) every byte from its lowest to its highest element, shared with `arr`."""
    if arr.size == 0:
        return np.zeros(0, np.uint8), 0
    if arr.ndim == 0 or arr.flags.c_contiguous or arr.flags.f_contiguous:
        try:
            return arr.reshape(-1, order="A").view(np.uint8), 0
        except ValueError:          # a dtype numpy will not view as bytes: by address below
            pass
    lo = sum(s * (n - 1) for s, n in zip(arr.strides, arr.shape) if s < 0)
    hi = sum(s * (n - 1) for s, n in zip(arr.strides, arr.shape) if s > 0) + arr.itemsize
    ptr = arr.__array_interface__["data"][0]
    return raw_bytes(arr, ptr + lo, hi - lo), -lo


def record_bytes(rec):
    """The bytes of a record scalar (np.void / np.record): for a record taken from an array,
    the array's own bytes (a kernel's stores land in it, as numba copies the record back)."""
    iface = rec.__array_interface__          # an owning scalar: numpy's copy ('__ref')
    return raw_bytes(iface, iface["data"][0], rec.dtype.itemsize)


def is_record(val):
    return isinstance(val, np.void) and val.dtype.names is not None


class MappedOnly:
    """An array placed in device memory that is no parameter of its own (a tensor map's
    tensor: the kernel reaches it through the map's address)."""

    def __init__(self, arr):
        self.arr = arr


def flatten_args(args, memory=None, pointers=False):
    """(param values, memory, copies): the flat parameter list numba.cuda would pass for
    ``args`` (numpy scalars, device pointers as np.uint64), the :class:`DeviceMemory` holding
    the arrays, and (original, buffer) pairs for arrays that had to be copied (only a
    non-contiguous array passed as a bare pointer; :func:`write_back` copies them back).  With
    ``pointers=True`` an array is passed as its bare device pointer (as C/CUDA C++ kernels
    and ``CPointer`` arguments take it)."""
    memory = memory if memory is not None else DeviceMemory()
    values, copies = [], []

    def add(val):           # a tuple's members are returned, to be added in order after it
        if isinstance(val, MappedOnly):
            flat, _ = byte_span(val.arr)
            memory.alloc(flat, name=f"array argument {len(values)}")
            return
        if isinstance(val, np.ndarray):
            arr = val
            if pointers and not (arr.flags.c_contiguous or arr.flags.f_contiguous):
                arr = np.ascontiguousarray(val)     # a bare pointer: the callee indexes densely
                copies.append((val, arr))
            if not arr.flags.writeable:
                raise SimGPUError("kernel array arguments must be writeable")
            flat, off = byte_span(arr)
            ptr = memory.alloc(flat, name=f"array argument {len(values)}") + off
            strides = arr.strides if arr.ndim else ()
            if pointers:
                values.append(np.uint64(ptr))
                return
            values.extend([np.uint64(0), np.uint64(0), np.int64(arr.size),
                           np.int64(arr.itemsize), np.uint64(ptr)])
            values.extend(np.int64(s) for s in arr.shape)
            values.extend(np.int64(s) for s in strides)
            return
        if is_record(val):          # numba-cuda: a pointer to the record on the device
            values.append(np.uint64(memory.alloc(record_bytes(val), name=f"record argument {len(values)}")))
            return
        if isinstance(val, enum.Enum) and isinstance(val.value, tuple):
            val = val.value         # an enum member of tuple value: its value's members
        if isinstance(val, tuple):
            return val
        sv = scalar_values(val)
        if sv is None:
            raise SimGPUError(f"unsupported kernel argument of type {type(val).__name__}")
        values.extend(sv)

    # depth first, without add calling itself: a closure that names itself is a reference cycle,
    # which kept each launch's DeviceMemory (views of its arrays) alive until a full collection
    pending = list(reversed(args))
    while pending:
        members = add(pending.pop())
        if members is not None:
            pending.extend(reversed(members))
    return values, memory, copies


def write_back(copies):
    for orig, buf in copies:
        orig[...] = buf


def pack_param(value, size):
    """Bytes of a parameter value for a PTX param of ``size`` bytes (sign/zero extended or
    truncated like a C argument conversion)."""
    raw = np.asarray(value).tobytes()
    if len(raw) >= size:
        return raw[:size]
    fill = b"\xff" if (np.asarray(value).dtype.kind == "i" and value < 0) else b"\x00"
    return raw + fill * (size - len(raw))
