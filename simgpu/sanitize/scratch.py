"""Global scratch memory: which bytes of a device allocation were written since allocation.

``cuda.device_array`` (``device_array_like``, ``to_device(copy=False)``) allocates device
memory without initial contents; on a GPU it holds whatever was there.  initcheck reports a
read of such memory that nothing wrote: not this launch (the sanitizer's own shadow) and not
earlier, since the allocation (this map).

What marks bytes written (simgpu/host/devicearray.py calls :func:`track`, :func:`mark`):

* host copies into the array or a view of it (``copy_to_device``, ``to_device(..., to=)``,
  ``d[...] = value``);
* launches: a sanitized launch marks exactly what its stores and atomics wrote
  (:meth:`ScratchShadow.commit`); a launch *without* the sanitizer marks every argument array
  it was passed as written (:func:`launch_done`): it costs one slice assignment per tracked
  argument and never causes a false report later -- a later sanitized read of bytes that
  launch did not in fact write goes unreported (a false negative, docs/sanitizer.md);
* views (slices, ``.T``, ``reshape``, ``view``) share their base allocation's map.

Arrays with initial contents (``to_device(host)``, pinned/mapped host memory, managed memory,
plain numpy arguments) have no map: nothing to check.

The map is lazy: "nothing written" and "everything written" need no storage; a bool per byte
is made at the first partial write.
"""
from __future__ import annotations

import numpy as np


class InitMap:
    """Written-since-allocation flags of one allocation's bytes."""

    __slots__ = ("nbytes", "bits", "uniform")

    def __init__(self, nbytes):
        self.nbytes = int(nbytes)
        self.bits = None            # a bool per byte, or None: every byte is `uniform`
        self.uniform = False

    @property
    def complete(self):
        return self.bits is None and self.uniform

    def mark(self, where):
        """Bytes `where` (a slice or an index array of byte offsets) written."""
        if self.complete:
            return
        if isinstance(where, slice) and where.start <= 0 and where.stop >= self.nbytes:
            self.bits, self.uniform = None, True
            return
        if self.bits is None:
            self.bits = np.full(self.nbytes, self.uniform, bool)
        self.bits[where] = True

    def mark_where(self, where, written):
        """Bytes `where` whose `written` flag is set (bool array over where's bytes)."""
        if self.complete or not written.any():
            return
        if written.all():
            self.mark(where)
            return
        if self.bits is None:
            self.bits = np.full(self.nbytes, self.uniform, bool)
        if isinstance(where, slice):
            self.bits[where] |= written
        else:
            self.bits[where[written]] = True

    def read(self, where, n):
        """The flags of bytes `where` (n of them) as a new bool array."""
        if self.bits is None:
            return np.full(n, self.uniform, bool)
        return self.bits[where].copy()


# -- device arrays -------------------------------------------------------------------------------
def new_map(dev):
    """The map of a new allocation without initial contents (the device array keeps it, and
    gives it to its future views)."""
    return InitMap(_span(dev.allocation_buffer))


def init_map(obj):
    """The InitMap of a device array (or None: untracked, or everything written)."""
    m = getattr(obj, "init_map", None)
    return None if m is None or m.complete else m


def mark(dev, item=None):
    """The host wrote `dev` (or `dev[item]`)."""
    m = init_map(dev)
    if m is None:
        return
    if item is None:
        m.mark(view_bytes(dev))
        return
    offs = _element_offsets(dev)[item]
    offs = np.asarray(offs, np.int64).reshape(-1)
    m.mark(_bytes_of(offs, dev.backing_array.dtype.itemsize))


def view_bytes(dev):
    """The bytes of the device array `dev` in its allocation, in C order of its elements (the
    order of a launch's working copy): a slice where the view is C-contiguous, else an index
    array."""
    a = dev.backing_array
    start = _addr(a) - _addr(dev.allocation_buffer)
    if a.flags.c_contiguous:
        return slice(start, start + a.nbytes)
    return _bytes_of(_element_offsets(dev).reshape(-1), a.dtype.itemsize)


def _element_offsets(dev):
    return _offsets(dev.backing_array, _addr(dev.backing_array) - _addr(dev.allocation_buffer))


def _offsets(a, start):
    """Byte offsets of a's elements (shape a.shape) from `start` + its strides."""
    o = np.full((), start, np.int64)
    for n, s in zip(a.shape, a.strides):
        o = o[..., None] + np.arange(n, dtype=np.int64) * s
    return o


def _bytes_of(elem_offsets, itemsize):
    if itemsize == 1:
        return elem_offsets
    return (elem_offsets[:, None] + np.arange(itemsize, dtype=np.int64)).reshape(-1)


def _addr(a):
    return a.__array_interface__["data"][0]


def _span(a):
    """Bytes from the first element's address to past the last (an allocation's buffer)."""
    if a.size == 0:
        return 0
    hi = sum((n - 1) * s for n, s in zip(a.shape, a.strides) if s > 0)
    return hi + a.dtype.itemsize


# -- launches ------------------------------------------------------------------------------------
def tracked_handles(handles):
    """(handle, device array, InitMap) of a launch's arguments that are scratch memory with
    unwritten bytes."""
    out = []
    for h in handles:
        m = init_map(h.orig)
        if m is not None:
            out.append((h, h.orig, m))
    return out


class ScratchShadow:
    """One tracked argument during a sanitized launch: a bool per byte of the launch's working
    buffer (``handle.data``), written since allocation or in this launch."""

    def __init__(self, handle, dev, imap):
        self.handle, self.dev, self.imap = handle, dev, imap
        n = handle.data.nbytes
        self.where = handle_bytes(handle, dev, imap.nbytes)
        if isinstance(self.where, slice):
            self.written = imap.read(self.where, n)
        else:                               # bytes of no element (-1): never reported
            self.valid = self.where >= 0
            self.written = np.ones(n, bool)
            self.written[self.valid] = imap.read(self.where[self.valid], int(self.valid.sum()))
        self.before = self.written.copy()

    def access(self, kind, off, w):
        """Byte offsets `off` (into the working buffer) of w-byte accesses -> bool per access:
        read before anything wrote it (loads and atomics); stores and atomics mark."""
        idx = off if w == 1 else (off[:, None] + np.arange(w, dtype=np.int64)).reshape(-1)
        bad = None
        if kind != "st":
            unw = ~self.written[idx]
            bad = unw.reshape(-1, w).any(axis=1) if w > 1 else unw
        if kind != "ld":
            self.written[idx] = True
        return bad

    def commit(self):
        """What this launch wrote, into the allocation's map."""
        new = self.written & ~self.before
        if isinstance(self.where, slice):
            self.imap.mark_where(self.where, new)
        elif new.any():
            self.imap.mark(self.where[new & self.valid])


def handle_bytes(h, dev, span):
    """Where each byte of a launch's working buffer lies in the device array's allocation: a
    slice where the launch works on the allocation's memory in place (the compiled path, and
    C-contiguous arrays on either), else an index array (-1: a byte of no element) for a copy
    (the IR path's host copy, a contiguous copy of a strided view): element by element."""
    data = h.data
    lo = _addr(data) - _addr(dev.allocation_buffer)
    if data.nbytes == 0 or (0 <= lo and lo + data.nbytes <= span):
        return slice(lo, lo + data.nbytes)
    work = h.work
    view = dev.backing_array
    isz = view.dtype.itemsize
    out = np.full(data.nbytes, -1, np.int64)
    if work.shape != view.shape or work.dtype.itemsize != isz:
        return out
    in_data = _offsets(work, _addr(work) - _addr(data)).reshape(-1)
    in_alloc = _offsets(view, _addr(view) - _addr(dev.allocation_buffer)).reshape(-1)
    ok = (in_data >= 0) & (in_data + isz <= data.nbytes)
    out[_bytes_of(in_data[ok], isz)] = _bytes_of(in_alloc[ok], isz)
    return out


def launch_done(handles, shadows=None):
    """After a launch (also one that failed): mark what it wrote.  `shadows`: the sanitizer's
    ScratchShadows by id(handle) (exact); other tracked arguments are marked written whole."""
    shadows = shadows or {}
    for h, dev, m in tracked_handles(handles):
        s = shadows.get(id(h))
        if s is not None:
            s.commit()
        else:
            m.mark(view_bytes(dev))
