"""Kernel arguments: numpy arrays and scalars -> the flat parameter values numba.cuda passes.

numba-cuda (``Dispatcher._prepare_args``) passes each argument as:

* array of ndim n: ``meminfo, parent, nitems, itemsize, data, shape[0..n-1], strides[0..n-1]``
  (meminfo = parent = 0, data = the device pointer, strides in bytes) -- 5 + 2n params;
* integer: the C type of its numba type; float32/float64: c_float/c_double; float16: its
  uint16 bits; boolean: one byte; complex64/128: real and imaginary part; datetime64 /
  timedelta64: int64; tuples: their members in order, recursively.

Python ints are int64 and Python floats float64 (numba.typeof).  Arrays are given device
addresses in a :class:`DeviceMemory` (base 1<<40, 512-byte aligned); a non-contiguous array is
copied to a C-contiguous buffer that :func:`write_back` copies back after the launch.
"""
from __future__ import annotations

import numpy as np

from simgpu.errors import SimGPUError
from simgpu.ptx.memory import DeviceMemory


def _scalar_values(val):
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
    if isinstance(val, (np.datetime64, np.timedelta64)):
        return [np.int64(val.view(np.int64))]
    return None


def flatten_args(args, memory=None, pointers=False):
    """(param values, memory, copies): the flat parameter list numba.cuda would pass for
    ``args`` (numpy scalars, device pointers as np.uint64), the :class:`DeviceMemory` holding
    the arrays, and (original, buffer) pairs for arrays that had to be copied.  With
    ``pointers=True`` an array is passed as its bare device pointer (as C/CUDA C++ kernels
    and ``CPointer`` arguments take it)."""
    memory = memory if memory is not None else DeviceMemory()
    values, copies = [], []

    def add(val):
        if isinstance(val, np.ndarray):
            arr = val
            if not (arr.flags.c_contiguous or arr.flags.f_contiguous):
                arr = np.ascontiguousarray(val)
                copies.append((val, arr))
            if not arr.flags.writeable:
                raise SimGPUError("kernel array arguments must be writeable")
            flat = arr.reshape(-1, order="A").view(np.uint8) if arr.size else \
                np.zeros(0, np.uint8)
            ptr = memory.alloc(flat, name=f"array argument {len(values)}")
            strides = arr.strides if arr.ndim else ()
            if pointers:
                values.append(np.uint64(ptr))
                return
            values.extend([np.uint64(0), np.uint64(0), np.int64(arr.size),
                           np.int64(arr.itemsize), np.uint64(ptr)])
            values.extend(np.int64(s) for s in arr.shape)
            values.extend(np.int64(s) for s in strides)
            return
        if isinstance(val, tuple):
            for v in val:
                add(v)
            return
        sv = _scalar_values(val)
        if sv is None:
            raise SimGPUError(f"unsupported kernel argument of type {type(val).__name__}")
        values.extend(sv)

    for a in args:
        add(a)
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
