"""Device arrays of the modelled GPU: host numpy buffers at modelled device addresses.

A :class:`DeviceNDArray` owns (or views) a numpy buffer that stands for GPU memory, placed at
a device address handed out like cudaMalloc's (512-byte aligned, from 1 << 40; the same
arithmetic as ``runtime.binding.DeviceAddresses``).  Slices, ``.T``, ``reshape`` and ``view``
share the buffer, as on a GPU.  A kernel launch works on the buffer itself (the runtime
reads it through ``__simgpu_ndarray__``), so what a kernel writes is in the device array
afterwards -- and in the host array only after ``copy_to_host``, as with numba.cuda.

Every host<->device copy is recorded in the session as a transfer with its predicted time
over the modelled host link (session.py).
"""
from __future__ import annotations

import weakref

import numpy as np

from ..errors import ArgumentError
from ..runtime.binding import DeviceAddresses
from ..sanitize import scratch

_ADDRESSES = DeviceAddresses(start=1 << 44)     # apart from a launch's own argument copies
_BY_ADDRESS = weakref.WeakValueDictionary()     # base address -> owning DeviceNDArray (while alive)
_TRANSFER_HOOK = [None]                         # session.record_transfer, set by install()
POISON = 0xFF       # the byte memory allocated without contents starts as (None: zeros); docs/sanitizer.md


def live_allocations():
    """(device address, uint8 view of the buffer, name) of every device array allocated."""
    out = []
    for base, dev in list(_BY_ADDRESS.items()):
        origin = dev._origin
        if origin.flags.c_contiguous or origin.flags.f_contiguous:
            out.append((base, origin.ravel(order="K").view(np.uint8), f"device array at 0x{base:x}"))
    return out


def set_transfer_hook(hook):
    _TRANSFER_HOOK[0] = hook


def _transfer(kind, nbytes, stream):
    if _TRANSFER_HOOK[0] is not None:
        _TRANSFER_HOOK[0](kind, int(nbytes), stream)


class DeviceNDArray:
    """numba.cuda's DeviceNDArray on the modelled GPU (see the module docstring)."""

    __cuda_ndarray__ = True

    def __init__(self, ary, stream=0, base=None, kind="device"):
        self._ary = ary
        self.stream = stream
        self.kind = kind                     # device | pinned | mapped | managed
        self._init = getattr(base, "_init", None)   # written-since-allocation map (sanitize/scratch.py)
        if base is None:
            self.device_address = _ADDRESSES.place(max(ary.nbytes, 1))
            _BY_ADDRESS[self.device_address] = self
            self._origin = ary
        else:                                # a view: an offset into its base's buffer
            self._origin = base._origin
            offset = _offset(self._origin, ary)
            self.device_address = base.device_address - _offset(self._origin, base._ary) + offset

    # -- what numba's DeviceNDArray exposes ---------------------------------------------------
    shape = property(lambda self: self._ary.shape)
    strides = property(lambda self: self._ary.strides)
    dtype = property(lambda self: self._ary.dtype)
    ndim = property(lambda self: self._ary.ndim)
    size = property(lambda self: self._ary.size)
    nbytes = property(lambda self: self._ary.nbytes)
    alloc_size = property(lambda self: self._origin.nbytes)
    flags = property(lambda self: self._ary.flags)
    T = property(lambda self: self.transpose())

    @property
    def __simgpu_ndarray__(self):
        """The buffer a launch works on (runtime/ptx_binding.py reads it, no copy)."""
        return self._ary

    @property
    def __cuda_array_interface__(self):
        strides = None if self._ary.flags.c_contiguous else tuple(self._ary.strides)
        return {"shape": tuple(self.shape), "strides": strides, "typestr": self.dtype.str,
                "data": (int(self.device_address), False), "version": 3, "stream": None}

    @property
    def _numba_type_(self):
        """numba's type of this array (numba.cuda's typeof asks for it)."""
        from numba.cuda import types
        from numba.cuda.np.numpy_support import from_dtype
        layout = "C" if self._ary.flags.c_contiguous else "F" if self._ary.flags.f_contiguous else "A"
        return types.Array(from_dtype(self.dtype), self.ndim, layout)

    def __len__(self):
        return len(self._ary)

    def __repr__(self):
        return (f"<simgpu DeviceNDArray shape={self.shape} dtype={self.dtype} "
                f"at 0x{self.device_address:x} ({self.kind})>")

    def is_c_contiguous(self):
        return bool(self._ary.flags.c_contiguous)

    def is_f_contiguous(self):
        return bool(self._ary.flags.f_contiguous)

    def bind(self, stream=0):
        return DeviceNDArray(self._ary, stream, base=self, kind=self.kind)

    def _view_of(self, ary):
        return DeviceNDArray(ary, self.stream, base=self, kind=self.kind)

    def transpose(self, axes=None):
        return self._view_of(np.transpose(self._ary, axes))

    def reshape(self, *shape, order="C"):
        out = self._ary.reshape(*shape, order=order)
        if not np.shares_memory(out, self._ary):
            raise NotImplementedError("reshape would copy a non-contiguous device array "
                                      "(numba.cuda refuses this too)")
        return self._view_of(out)

    def ravel(self, order="C", stream=0):
        return self.reshape(-1, order=order)

    def view(self, dtype):
        return self._view_of(self._ary.view(dtype))

    def squeeze(self, axis=None, stream=0):
        return self._view_of(self._ary.squeeze(axis))

    def split(self, section, stream=0):
        return [self._view_of(a) for a in np.split(self._ary, range(section, len(self._ary), section))]

    def __getitem__(self, item):
        out = self._ary[item]
        if isinstance(out, np.ndarray):
            return self._view_of(out)
        return out

    getitem = __getitem__

    def __setitem__(self, item, value):
        if isinstance(value, DeviceNDArray):
            value = value._ary
        self._ary[item] = value
        scratch.mark(self, item)

    def setitem(self, item, value, stream=0):
        self[item] = value

    # -- copies ------------------------------------------------------------------------------
    def copy_to_host(self, ary=None, stream=0):
        """A host copy (or into `ary`); counted as a device-to-host transfer."""
        if ary is None:
            ary = np.empty(self.shape, self.dtype, order="F" if self._f_only() else "C")
        elif ary.shape != self.shape or ary.dtype != self.dtype:
            raise TypeError(f"copy_to_host: host array {ary.shape} {ary.dtype} does not match the "
                            f"device array {self.shape} {self.dtype}")
        np.copyto(ary, self._ary)
        _transfer("DtoH", self.nbytes, stream or self.stream)
        return ary

    def copy_to_device(self, ary, stream=0):
        """Copy `ary` (host array or device array) into this array."""
        src = ary._ary if isinstance(ary, DeviceNDArray) else np.asarray(ary)
        if src.size != self.size:
            raise ValueError(f"copy_to_device: {src.size} elements into a device array of {self.size}")
        if src.dtype != self.dtype and src.dtype.itemsize != self.dtype.itemsize:
            raise TypeError(f"copy_to_device: dtype {src.dtype} into a device array of {self.dtype}")
        self._ary[...] = src.reshape(self.shape) if src.shape != self.shape else src
        scratch.mark(self)
        kind = "DtoD" if isinstance(ary, DeviceNDArray) else "HtoD"
        _transfer(kind, self.nbytes, stream or self.stream)

    def copy_from_host(self, host):
        """The runtime's copy-back after a launch (a no-op where it worked in place)."""
        if host is not self._ary:
            self._ary[...] = host

    def _f_only(self):
        return self._ary.flags.f_contiguous and not self._ary.flags.c_contiguous

    # numpy-like arithmetic on device arrays is not numba.cuda's API
    def __array__(self, *a, **k):
        raise ArgumentError("a simgpu device array is GPU memory: use .copy_to_host() to get a "
                            "numpy array (numba.cuda's DeviceNDArray behaves the same way)")


def _offset(origin, view):
    lo, _ = np.byte_bounds(view) if hasattr(np, "byte_bounds") else np.lib.array_utils.byte_bounds(view)
    base, _ = (np.byte_bounds(origin) if hasattr(np, "byte_bounds")
               else np.lib.array_utils.byte_bounds(origin))
    return lo - base


# -- the allocation functions of numba.cuda --------------------------------------------------
def _check_host(obj, what):
    if isinstance(obj, DeviceNDArray):
        return obj
    try:
        return np.asarray(obj)
    except Exception as e:
        raise ArgumentError(f"{what}: cannot make a device array from {type(obj).__name__}: {e}") from None


def to_device(obj, stream=0, copy=True, to=None):
    """cuda.to_device: a device copy of a host array (or copy into `to`)."""
    host = _check_host(obj, "cuda.to_device")
    if isinstance(host, DeviceNDArray):
        host = host._ary
    if to is not None:
        to.copy_to_device(host, stream)
        return to
    buf = np.array(host, copy=True, order="F" if (host.flags.f_contiguous and not host.flags.c_contiguous)
                   else "C")
    dev = DeviceNDArray(buf if copy else _poisoned(np.zeros_like(buf)), stream)
    if copy:
        _transfer("HtoD", buf.nbytes, stream)
    else:
        scratch.track(dev)          # allocated, not copied: no initial contents
    return dev


def _empty(shape, dtype, strides, order):
    dtype = np.dtype(dtype)
    shape = (int(shape),) if np.isscalar(shape) else tuple(shape)
    dense = _c_strides(shape, dtype) if order == "C" else _c_strides(shape[::-1], dtype)[::-1]
    if strides is not None and tuple(strides) != tuple(dense):
        n = sum((s - 1) * abs(st) for s, st in zip(shape, strides)) + dtype.itemsize   # the span: a sum
        buf = np.zeros(-(-n // dtype.itemsize), dtype)
        return np.lib.stride_tricks.as_strided(buf, shape, strides, writeable=True)
    return np.zeros(shape, dtype, order=order)


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    """cuda.device_array: no initial contents -- the GPU's are whatever was there; here the
    POISON byte (NaN floats, -1 integers), never silent zeros.  initcheck reports reads of it
    before anything wrote it (sanitize/scratch.py)."""
    return scratch.track(DeviceNDArray(_poisoned(_empty(shape, dtype, strides, order)), stream))


def _poisoned(a):
    """Fill a new buffer with the POISON byte (not arrays holding Python objects)."""
    if POISON is not None and a.size and not a.dtype.hasobject:
        flat = a.ravel(order="K")
        if np.shares_memory(flat, a):
            flat.view(np.uint8)[...] = POISON
        else:                       # strided: fill the whole buffer it views
            base = a
            while isinstance(base.base, np.ndarray):
                base = base.base
            base.reshape(-1).view(np.uint8)[...] = POISON if base.flags.c_contiguous else 0
    return a


def managed_array(shape, dtype=np.float64, strides=None, order="C", stream=0, attach_global=True):
    return DeviceNDArray(_empty(shape, dtype, strides, order), stream, kind="managed")


def _like(ary):
    """(shape, dtype, strides, order) of a new array like `ary`, by numba.cuda's own rule
    (contiguous strides in the order of `ary`'s strides)."""
    from numba.cuda.api import _contiguous_strides_like_array, _order_like_array
    host = ary._ary if isinstance(ary, DeviceNDArray) else np.asarray(ary)
    return host.shape, host.dtype, _contiguous_strides_like_array(host), _order_like_array(host)


def device_array_like(ary, stream=0):
    shape, dtype, strides, order = _like(ary)
    return device_array(shape, dtype, strides, order, stream=stream)


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    """cuda.pinned_array: page-locked host memory (a numpy array here)."""
    return _empty(shape, dtype, strides, order)


def pinned_array_like(ary):
    shape, dtype, strides, order = _like(ary)
    return pinned_array(shape, dtype, strides, order)


class MappedArray(np.ndarray):
    """cuda.mapped_array: host memory the GPU reads directly; a numpy array with a device
    address (``device_address``, ``__cuda_array_interface__``)."""

    def __array_finalize__(self, obj):
        self.device_address = getattr(obj, "device_address", 0)

    @property
    def __simgpu_ndarray__(self):
        return self.view(np.ndarray)


def mapped_array(shape, dtype=np.float64, strides=None, order="C", stream=0, portable=False,
                 wc=False):
    out = _empty(shape, dtype, strides, order).view(MappedArray)
    out.device_address = _ADDRESSES.place(max(out.nbytes, 1))
    return out


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    shape, dtype, strides, order = _like(ary)
    return mapped_array(shape, dtype, strides, order, stream=stream)


def is_cuda_array(obj):
    return hasattr(obj, "__cuda_array_interface__")


def as_cuda_array(obj, sync=True):
    """A simgpu device array for an object exposing ``__cuda_array_interface__`` whose memory
    is a simgpu allocation; other producers (CuPy, PyTorch) have no memory on the modelled GPU."""
    if isinstance(obj, DeviceNDArray):
        return obj
    if not is_cuda_array(obj):
        raise TypeError("*obj* doesn't implement the cuda array interface.")
    return from_cuda_array_interface(obj.__cuda_array_interface__, owner=obj)


def from_cuda_array_interface(desc, owner=None, sync=True):
    """A device array over simgpu memory described by a ``__cuda_array_interface__``."""
    addr = desc["data"][0]
    dtype, shape = np.dtype(desc["typestr"]), tuple(desc["shape"])
    strides = tuple(desc.get("strides") or _c_strides(shape, dtype))
    for base, dev in _BY_ADDRESS.items():
        if base <= addr < base + max(dev.alloc_size, 1):
            flat = dev._origin.ravel(order="K").view(np.uint8)[addr - base:]
            span = sum((n - 1) * abs(s) for n, s in zip(shape, strides)) + dtype.itemsize
            typed = flat[:-(-span // dtype.itemsize) * dtype.itemsize].view(dtype)
            view = np.lib.stride_tricks.as_strided(typed, shape, strides, writeable=True)
            return DeviceNDArray(view, base=dev)
    raise ArgumentError(f"__cuda_array_interface__ at 0x{addr:x} is not memory of the modelled GPU: "
                        "simgpu can only use arrays it allocated (cuda.to_device, cuda.device_array)")


def _c_strides(shape, dtype):
    out, s = [], dtype.itemsize
    for n in reversed(shape):
        out.append(s)
        s *= n
    return tuple(reversed(out))
