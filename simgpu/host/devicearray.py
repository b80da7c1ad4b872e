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

import ctypes
import weakref

import numpy as np

from ..errors import ArgumentError
from ..ptx.memory import driver_span
from ..runtime.binding import DeviceAddresses
from ..sanitize import scratch
from . import ipc
from .session import current_session, initialise

_ADDRESSES = DeviceAddresses(start=1 << 44)     # apart from a launch's own argument copies
_BY_ADDRESS = weakref.WeakValueDictionary()     # base address -> owning DeviceNDArray (while alive)
_TRANSFER_HOOK = [None]                         # session.record_transfer, set by install()
_DRIVER = [None]            # install(): the driver whose entry points copies go through (host/driver.py)
_FREED_HOOK = [None]        # install(): told (base, bytes) when an allocation's last reference goes
POISON = 0xFF       # the byte memory allocated without contents starts as (None: zeros); docs/sanitizer.md


def live_allocations():
    """(device address, uint8 view of the buffer, name) of every device array allocated."""
    out = []
    for base, dev in list(_BY_ADDRESS.items()):
        origin = dev._origin
        if origin.flags.c_contiguous or origin.flags.f_contiguous:
            out.append((base, origin.ravel(order="K").view(np.uint8), f"device array at 0x{base:x}"))
    return out


def allocation_pad(base):
    """The padding bytes of the device array allocated at ``base`` (from its end to the
    driver's rounding, ptx.memory.driver_span): poison until a kernel writes past the end,
    kept with the array from launch to launch as the card keeps them; None if none lives."""
    dev = _BY_ADDRESS.get(base)
    if dev is None:
        return None
    pad = getattr(dev, "_pad", None)
    if pad is None:
        n = dev._origin.nbytes
        pad = dev._pad = np.full(driver_span(n) - n, POISON, np.uint8)
    return pad


def set_transfer_hook(hook):
    _TRANSFER_HOOK[0] = hook


def set_driver(driver, freed=None):
    """Copies between host and device arrays go through ``driver``'s ``cuMemcpy*`` entry
    points (None: numpy copies), and ``freed(base, nbytes)`` is told of every allocation whose
    last reference goes (numba's deallocation queue; host/driver.py)."""
    _DRIVER[0], _FREED_HOOK[0] = driver, freed


def _freed(base, nbytes):
    if _FREED_HOOK[0] is not None:
        _FREED_HOOK[0](base, nbytes)


def allocation_at(address):
    """(base address, owning DeviceNDArray) of the live allocation holding device ``address``
    ((None, None) if none)."""
    for base, dev in list(_BY_ADDRESS.items()):
        if base <= address < base + max(dev._origin.nbytes, 1):
            return base, dev
    return None, None


def repoint_allocation(alloc, buf):
    """Move allocation `alloc` (a DeviceNDArray owning its buffer) onto `buf`, a uint8 buffer
    holding the same bytes (host/ipc.py: into shared memory): it and every live view of it
    then read and write `buf`; its device address stays."""
    for arr in [alloc, *list(alloc.__dict__.get("_live_views", ()))]:
        a = arr._ary
        arr._ary = np.ndarray(a.shape, a.dtype, buffer=buf, offset=arr._offset, strides=a.strides)
        arr._origin = buf


def allocated_bytes(device=None):
    """The bytes of every live device allocation (of GPU `device` only, if given)."""
    return sum(d.alloc_size for d in list(_BY_ADDRESS.values())
               if device is None or d._device_id == device)


def mark_written(owner):
    """An allocation written by a copy or memset (initcheck's map: sanitize/scratch.py)."""
    scratch.mark(owner)


def _transfer(kind, nbytes, stream):
    if _TRANSFER_HOOK[0] is not None:
        _TRANSFER_HOOK[0](kind, int(nbytes), stream)


class DeviceMemory:
    """numba's ``MemoryPointer`` (a device array's ``gpu_data``) on the modelled GPU: `size`
    bytes at `offset` into an allocation (a DeviceNDArray that owns its buffer), i.e. at the
    device address ``allocation address + offset``.  The null pointer (allocation None) is what
    numba gives an array of no elements.  Two DeviceMemory are equal when they are the same
    bytes (numba's views of one allocation share one MemoryPointer object)."""

    __cuda_memory__ = True

    def __init__(self, alloc, offset=0, size=0):
        self._alloc, self.offset, self.size = alloc, int(offset), int(size)
        self._cuda_memsize_ = self.size

    @property
    def device_pointer(self):
        return 0 if self._alloc is None else self._alloc._base_address + self.offset

    handle = device_pointer

    @property
    def device_pointer_value(self):
        return self.device_pointer or None

    @property
    def device_ctypes_pointer(self):
        return ctypes.c_size_t(self.device_pointer)

    @property
    def owner(self):
        return self._alloc

    def view(self, start, stop=None):
        """The bytes [start, stop) of this memory (numba's MemoryPointer.view)."""
        size = self.size - start if stop is None else stop - start
        if size < 0:
            raise RuntimeError("size cannot be negative")
        if self._alloc is None:
            if size:
                raise RuntimeError("non-empty slice into empty slice")
            return self
        return DeviceMemory(self._alloc, self.offset + start, size)

    def memset(self, byte, count=None, stream=0):
        """cuMemsetD8: `count` bytes (all) set to `byte`."""
        count = self.size if count is None else int(count)
        if self._alloc is not None and count:
            _alloc_bytes(self._alloc)[self.offset:self.offset + count] = byte
            scratch.mark(self._alloc)

    def free(self):
        return None

    def __eq__(self, other):
        return (isinstance(other, DeviceMemory) and self._alloc is other._alloc
                and (self.offset, self.size) == (other.offset, other.size))

    def __hash__(self):
        return hash((id(self._alloc), self.offset, self.size))

    def __repr__(self):
        return f"<simgpu DeviceMemory 0x{self.device_pointer:x}, {self.size} B>"


def _alloc_bytes(alloc):
    """The bytes of an allocation (a uint8 view of its contiguous buffer)."""
    return alloc._origin.reshape(-1, order="A").view(np.uint8)


def _first_offset(origin, ary):
    """Byte offset of `ary`'s first element (its data pointer, numpy's and the CUDA array
    interface's: for negative strides not the lowest byte) from the start of `origin`."""
    return ary.__array_interface__["data"][0] - _lo(origin)


def _lo(a):
    return (np.byte_bounds(a) if hasattr(np, "byte_bounds") else np.lib.array_utils.byte_bounds(a))[0]


def _shape(shape):
    """A shape as numba takes it (an int or a sequence) as a tuple of ints."""
    return (int(shape),) if np.isscalar(shape) else tuple(int(n) for n in shape)


def _strided(shape, dtype, strides):
    """(an array of `shape` with `strides` over a new zeroed byte buffer of exactly their span --
    numba's memory_size_from_info -- negative strides included, that buffer)."""
    size = int(np.prod(shape, dtype=np.int64))
    lo = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0) if size else 0
    span = (sum((n - 1) * abs(s) for n, s in zip(shape, strides)) + dtype.itemsize) if size else 0
    buf = np.zeros(span, np.uint8)
    return np.ndarray(shape, dtype, buffer=buf, offset=-lo, strides=strides), buf


def _span_after(ary):
    """Bytes from `ary`'s first element to the end of its highest byte."""
    if ary.size == 0:
        return 0
    return sum((n - 1) * s for n, s in zip(ary.shape, ary.strides) if s > 0) + ary.dtype.itemsize


class DeviceNDArray:
    """numba.cuda's DeviceNDArray on the modelled GPU (see the module docstring).

    ``DeviceNDArray(shape, strides, dtype, stream=0, gpu_data=None)`` is numba's constructor
    (install() puts this class at ``numba.cuda.cudadrv.devicearray.DeviceNDArray``: numba's
    gufunc broadcasting, ``from_array_like`` and its transpose kernel make arrays with it):
    a new allocation, or a view of the memory `gpu_data` (a :class:`DeviceMemory`) with the
    given strides."""

    __cuda_ndarray__ = True

    def __init__(self, shape, strides=None, dtype=np.float64, stream=0, gpu_data=None):
        dtype = np.dtype(dtype)
        shape = _shape(shape)
        strides = _shape(_c_strides(shape, dtype) if strides is None else strides)
        if len(strides) != len(shape):
            raise ValueError("strides not match ndim")
        size = int(np.prod(shape, dtype=np.int64))
        if gpu_data is None or (size == 0 and isinstance(gpu_data, DeviceMemory) and gpu_data._alloc is None):
            ary, buf = _strided(shape, dtype, strides)
            self._setup(ary, stream, origin=buf)
            if gpu_data is None and size:
                _poisoned(buf)
                self.init_map = scratch.new_map(self)
            return
        if not isinstance(gpu_data, DeviceMemory):
            raise ArgumentError(f"DeviceNDArray(gpu_data={gpu_data!r}): simgpu can only view memory of the "
                                "modelled GPU (a device array's gpu_data)")
        if gpu_data._alloc is None:
            raise RuntimeError("non-empty array on a NULL pointer")
        alloc = gpu_data._alloc
        ary = np.ndarray(shape, dtype, buffer=_alloc_bytes(alloc), offset=gpu_data.offset, strides=strides)
        self._setup(ary, stream, base=alloc, kind=alloc.kind)

    @classmethod
    def _make(cls, ary, stream=0, base=None, kind="device", origin=None):
        """simgpu's constructor: an allocation holding `ary` (its buffer `origin`, default
        `ary` itself), or with `base` a view `ary` into base's allocation."""
        self = cls.__new__(cls)
        self._setup(ary, stream, base, kind, origin)
        return self

    def _setup(self, ary, stream=0, base=None, kind="device", origin=None):
        self._ary = ary
        self.stream = stream
        self.kind = kind                     # device | pinned | mapped | managed
        # written-since-allocation map, kept by the sanitizer (sanitize/scratch.py track/init_map)
        self.init_map = getattr(base, "init_map", None)
        if base is None:                     # a new allocation
            initialise()
            self._origin = ary if origin is None else origin
            self._owner = None               # (not itself: no reference cycle, so freed at once)
            self._base_address = _ADDRESSES.place(max(self._origin.nbytes, 1))
            self._device_id = current_session().current_device()     # the GPU it lives on
            _BY_ADDRESS[self._base_address] = self
            weakref.finalize(self, _freed, self._base_address, self._origin.nbytes)
        else:                                # a view: an offset into its base's buffer
            self._owner = base._alloc
            self._origin = self._owner._origin
            views = self._owner.__dict__.get("_live_views")
            if views is None:
                views = self._owner._live_views = weakref.WeakSet()
            views.add(self)                  # re-pointed if the allocation moves (repoint_allocation)
        self._offset = _first_offset(self._origin, ary)

    @property
    def _alloc(self):
        """The DeviceNDArray owning this array's allocation (itself for an allocation)."""
        return self if self._owner is None else self._owner

    @property
    def backing_array(self):
        """The numpy array holding this device array's elements on the model (a view into its
        allocation's buffer)."""
        return self._ary

    @property
    def allocation_buffer(self):
        """The numpy buffer of the whole allocation this array lies in."""
        return self._origin

    @property
    def device_address(self):
        """The device address of the first element (0 for an array of no elements, numba's
        NULL pointer): ``__cuda_array_interface__["data"][0]``."""
        return self._alloc._base_address + self._offset if self._ary.size else 0

    @property
    def gpu_data(self):
        """numba's MemoryPointer of this array: its bytes from the first element on."""
        if not self._ary.size:
            return DeviceMemory(None)
        if self._alloc is self and self._offset == 0:
            return DeviceMemory(self, 0, self._origin.nbytes)
        return DeviceMemory(self._alloc, self._offset, _span_after(self._ary))

    @property
    def device_ctypes_pointer(self):
        return self.gpu_data.device_ctypes_pointer

    def get_ipc_handle(self):
        """numba's IPC handle of this array (host/ipc.py): pickle it to another process and
        open it there with ``with handle as array:``."""
        return ipc.array_ipc_handle(self)

    def __simgpu_place__(self, data):
        """The device address of `data` (a launch's view of this array's bytes: the runtime's
        binding asks) when it lies in this array's allocation, else None: a kernel argument
        is then at the program's own address, with its own alignment."""
        if not data.size:
            return None
        buf = _alloc_bytes(self._alloc)
        lo, blo = _lo(data), _lo(buf)
        if blo <= lo and lo + data.nbytes <= blo + buf.nbytes and np.shares_memory(data, buf):
            return self._alloc._base_address + (lo - blo)
        return None

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
        """Version 3 as numba.cuda produces it: strides None when C-contiguous (ignoring
        broadcast and 1-sized dimensions), the first element's address (0 for no elements),
        and the array's stream (its handle; None for the default 0)."""
        strides = None if _c_contiguous(self._ary) else tuple(self._ary.strides)
        return {"shape": tuple(self.shape), "strides": strides, "typestr": self.dtype.str,
                "data": (int(self.device_address), False), "version": 3,
                "stream": _stream_field(self.stream)}

    @property
    def _numba_type_(self):
        """numba's type of this array (numba.cuda's typeof asks for it): layout C or F, but A
        for a broadcast array (a 0 stride), as numba's DeviceNDArray types it."""
        from numba.cuda import types
        from numba.cuda.np.numpy_support import from_dtype
        f = self._ary.flags
        broadcast = 0 in self.strides and self.size != 0
        layout = "A" if broadcast else "C" if f.c_contiguous else "F" if f.f_contiguous else "A"
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
        return DeviceNDArray._make(self._ary, stream, base=self, kind=self.kind)

    def _view_of(self, ary):
        return DeviceNDArray._make(ary, self.stream, base=self, kind=self.kind)

    def transpose(self, axes=None):
        """numba.cuda's rule: the identity permutation is the array itself; any other is
        2-d only and *copies*, by numba's own transpose kernel (numba.cuda.kernels.transpose)
        run on the modelled GPU, into a new C-contiguous array."""
        if axes and tuple(axes) == tuple(range(self.ndim)):
            return self
        if self.ndim != 2:
            raise NotImplementedError("transposing a non-2D DeviceNDArray isn't supported")
        if axes is not None and set(axes) != set(range(self.ndim)):
            raise ValueError("invalid axes list %r" % (axes,))
        from numba.cuda.kernels.transpose import transpose
        return transpose(self)

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
        """A host copy (or into `ary`); counted as a device-to-host transfer.  numba.cuda does
        not copy an array with a negative stride to the host (nor does simgpu)."""
        if any(s < 0 for s in self.strides):
            raise NotImplementedError(f"D->H copy not implemented for negative strides: {self.strides}")
        if ary is None:
            ary = np.empty(self.shape, self.dtype, order="F" if self._f_only() else "C")
        elif ary.shape != self.shape or ary.dtype != self.dtype:
            raise TypeError(f"copy_to_host: host array {ary.shape} {ary.dtype} does not match the "
                            f"device array {self.shape} {self.dtype}")
        if not _through_driver("DtoH", ary, self):
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
        kind = "DtoD" if isinstance(ary, DeviceNDArray) else "HtoD"
        if not _through_driver(kind, self, ary if kind == "DtoD" else src):
            self._ary[...] = src.reshape(self.shape) if src.shape != self.shape else src
        scratch.mark(self)
        _transfer(kind, self.nbytes, stream or self.stream)

    def copy_from_host(self, host):
        """The runtime's copy-back after a launch (a no-op where it worked in place)."""
        if host is not self._ary:
            self._ary[...] = host

    def _f_only(self):
        return self._ary.flags.f_contiguous and not self._ary.flags.c_contiguous

    def __array__(self, dtype=None, copy=None):
        """numba.cuda's DeviceNDArray.__array__: a copy to the host (np.asarray(d_arr))."""
        if copy is False:
            raise ValueError("`copy=False` is not supported. A copy is always created.")
        host = self.copy_to_host()
        return host.astype(dtype, copy=False) if dtype else host


def _same_layout(a, b):
    """Both arrays one dense block of the same bytes (a copy is one cuMemcpy)."""
    return (a.dtype.itemsize == b.dtype.itemsize and a.shape == b.shape and a.nbytes == b.nbytes
            and ((a.flags.c_contiguous and b.flags.c_contiguous) or (a.flags.f_contiguous and b.flags.f_contiguous)))


def _through_driver(kind, dst, src):
    """A dense copy through the installed driver's entry point (as numba copies: one
    ``cuMemcpy{HtoD,DtoH,DtoD}`` of the bytes; a program that replaces the entry point sees
    it); False where there is no driver or the copy is not one dense block."""
    drv = _DRIVER[0]
    if drv is None:
        return False
    d = dst._ary if isinstance(dst, DeviceNDArray) else dst
    s_ = src._ary if isinstance(src, DeviceNDArray) else src
    if not d.size or not _same_layout(d, s_):
        return False
    if kind == "HtoD":
        drv.cuMemcpyHtoD(dst.device_address, s_.ctypes.data, d.nbytes)
    elif kind == "DtoH":
        drv.cuMemcpyDtoH(d.ctypes.data, src.device_address, d.nbytes)
    else:
        drv.cuMemcpyDtoD(dst.device_address, src.device_address, d.nbytes)
    return True


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
    order = "F" if (host.flags.f_contiguous and not host.flags.c_contiguous) else "C"
    if copy and _DRIVER[0] is not None and host.size and _same_layout(host, host):
        dev = DeviceNDArray._make(_poisoned(np.empty(host.shape, host.dtype, order=order)), stream)
        _through_driver("HtoD", dev, host)       # numba's copy: the driver's cuMemcpyHtoD
        _transfer("HtoD", host.nbytes, stream)
        return dev
    buf = np.array(host, copy=True, order=order)
    dev = DeviceNDArray._make(buf if copy else _poisoned(np.zeros_like(buf)), stream)
    if copy:
        _transfer("HtoD", buf.nbytes, stream)
    else:
        dev.init_map = scratch.new_map(dev)     # allocated, not copied: no initial contents
    return dev


def _empty(shape, dtype, strides, order):
    """A zeroed host array (pinned / mapped memory) with numba's shape, strides and order."""
    return _allocation(shape, dtype, strides, order)[0]


def _allocation(shape, dtype, strides, order):
    """(the array, its allocation's contiguous buffer) for a new device array: with strides
    that are not dense, a byte buffer of the strides' span (numba's memory_size_from_info)."""
    dtype = np.dtype(dtype)
    shape = _shape(shape)
    dense = _c_strides(shape, dtype) if order == "C" else _c_strides(shape[::-1], dtype)[::-1]
    if strides is None or tuple(strides) == tuple(dense) or 0 in shape:
        ary = np.zeros(shape, dtype, order=order)
        return ary, ary
    return _strided(shape, dtype, _shape(strides))


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    """cuda.device_array: no initial contents -- the GPU's are whatever was there; here the
    POISON byte (NaN floats, -1 integers), never silent zeros.  initcheck reports reads of it
    before anything wrote it (sanitize/scratch.py)."""
    ary, buf = _allocation(shape, dtype, strides, order)
    dev = DeviceNDArray._make(ary, stream, origin=_poisoned(buf))
    dev.init_map = scratch.new_map(dev)
    return dev


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
    ary, buf = _allocation(shape, dtype, strides, order)
    return DeviceNDArray._make(ary, stream, kind="managed", origin=buf)


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
    address (``device_address``: its first element's) and a ``__cuda_array_interface__``."""

    def __array_finalize__(self, obj):
        self._mapped = getattr(obj, "_mapped", None)     # (the mapped buffer, its device address)
        self.stream = getattr(obj, "stream", 0)

    @property
    def device_address(self):
        """The first element's device address (0: no elements, or not mapped memory -- a new
        array numpy made from a mapped one)."""
        if self._mapped is None or not self.size or not np.shares_memory(self, self._mapped[0]):
            return 0
        buf, dev = self._mapped
        return dev + self.__array_interface__["data"][0] - _lo(buf)

    @property
    def __cuda_array_interface__(self):
        return {"shape": tuple(self.shape), "strides": None if _c_contiguous(self) else tuple(self.strides),
                "typestr": self.dtype.str, "data": (int(self.device_address), False), "version": 3,
                "stream": _stream_field(self.stream)}

    @property
    def __simgpu_ndarray__(self):
        return self.view(np.ndarray)


def mapped_array(shape, dtype=np.float64, strides=None, order="C", stream=0, portable=False,
                 wc=False):
    initialise()
    out = _empty(shape, dtype, strides, order).view(MappedArray)
    out._mapped = (out.view(np.ndarray), _ADDRESSES.place(max(out.nbytes, 1)))
    out.stream = stream
    return out


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    shape, dtype, strides, order = _like(ary)
    return mapped_array(shape, dtype, strides, order, stream=stream)


def is_cuda_array(obj):
    return hasattr(obj, "__cuda_array_interface__")


def as_cuda_array(obj, sync=True):
    """numba.cuda.as_cuda_array: a device array over the memory of an object exposing
    ``__cuda_array_interface__`` (also a device array: through its interface, as numba does);
    the memory must be a simgpu allocation: other producers (CuPy, PyTorch) have no memory on
    the modelled GPU."""
    interface = getattr(obj, "__cuda_array_interface__", None)
    if interface is None:
        raise TypeError("*obj* doesn't implement the cuda array interface.")
    return from_cuda_array_interface(interface, owner=obj, sync=sync)


def from_cuda_array_interface(desc, owner=None, sync=True):
    """numba.cuda.from_cuda_array_interface over simgpu memory: masks refused, the data
    pointer is the first element's (0: no elements), and a "stream" becomes the array's stream
    (an external stream of that handle), synchronized first when `sync` and numba's
    ``CUDA_ARRAY_INTERFACE_SYNC`` say so (as numba.cuda does)."""
    if (desc.get("version") or 0) >= 1 and desc.get("mask") is not None:
        raise NotImplementedError("Masked arrays are not supported")
    dtype = np.dtype(desc["typestr"])
    shape = _shape(desc["shape"])
    strides = desc.get("strides")
    strides = _c_strides(shape, dtype) if strides is None else tuple(int(s) for s in strides)
    addr = int(desc["data"][0] or 0)
    stream_ptr = desc.get("stream")
    stream = 0
    if stream_ptr is not None:
        stream = current_session().external_stream(stream_ptr)
        if sync and _interface_sync():
            stream.synchronize()
    if not int(np.prod(shape, dtype=np.int64)):
        return DeviceNDArray(shape, strides, dtype, stream=stream, gpu_data=DeviceMemory(None))
    for base, dev in list(_BY_ADDRESS.items()):
        if base <= addr < base + max(dev.alloc_size, 1):
            mem = DeviceMemory(dev, addr - base, dev.alloc_size - (addr - base))
            try:
                return DeviceNDArray(shape, strides, dtype, stream=stream, gpu_data=mem)
            except (TypeError, ValueError) as e:
                raise ArgumentError(f"__cuda_array_interface__ at 0x{addr:x}: shape {shape} strides {strides} "
                                    f"reach past the allocation at 0x{base:x} ({dev.alloc_size} B): {e}") from None
    raise ArgumentError(f"__cuda_array_interface__ at 0x{addr:x} is not memory of the modelled GPU: "
                        "simgpu can only use arrays it allocated (cuda.to_device, cuda.device_array)")


def _interface_sync():
    """numba's config.CUDA_ARRAY_INTERFACE_SYNC (NUMBA_CUDA_ARRAY_INTERFACE_SYNC)."""
    from numba.cuda.core import config
    return bool(config.CUDA_ARRAY_INTERFACE_SYNC)


def _c_contiguous(ary):
    """C-contiguous ignoring broadcast (0-stride) and 1-sized dimensions (numba's is_contiguous)."""
    size = ary.dtype.itemsize
    for n, st in zip(reversed(ary.shape), reversed(ary.strides)):
        if n > 1 and st != 0:
            if st != size:
                return False
            size *= n
    return True


def _stream_field(stream):
    """The CUDA array interface's "stream": the stream's handle, None for numba's default 0."""
    return None if stream is None or (isinstance(stream, int) and stream == 0) else int(stream)


def _c_strides(shape, dtype):
    out, s = [], dtype.itemsize
    for n in reversed(shape):
        out.append(s)
        s *= n
    return tuple(reversed(out))
