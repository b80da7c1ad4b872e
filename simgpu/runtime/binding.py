"""Binding a launch: its configuration checked against the modelled GPU, the arguments typed
as numba types them, and the arrays placed at device addresses aligned as cudaMalloc aligns
them (so the memory model sees real addresses).  Results are copied back at the end."""
from __future__ import annotations

import numpy as np

from ..errors import ArgumentError, LaunchError
from ..exec.state import ArrayHandle
from ..ir import types as T
from ..ptx.args import byte_span, record_bytes
from ..ptx.memory import driver_span, next_place

ALIGN = 512          # cudaMalloc's alignment (measured on the H200: 512 B; 2 MiB above 1 MiB)


def dim3(v, what):
    if isinstance(v, (int, np.integer)):
        v = (int(v),)
    try:
        v = tuple(int(x) for x in v)
    except TypeError:
        raise LaunchError(f"{what} must be an int or a tuple of up to 3 ints, not {v!r}") from None
    if not 1 <= len(v) <= 3:
        raise LaunchError(f"{what} must have 1 to 3 dimensions, not {len(v)}")
    if any(x < 1 for x in v):
        raise LaunchError(f"{what} {v} has a dimension below 1")
    return v + (1,) * (3 - len(v))


def bind_args(fn, kernel_name, args):
    if len(args) != len(fn_params := fn.params):
        raise ArgumentError(f"kernel {kernel_name!r} takes {len(fn_params)} argument(s) "
                            f"({', '.join(p for p in fn_params)}), got {len(args)}")
    types_, values = [], []
    for name, a in zip(fn_params, args):
        host = a
        if hasattr(a, "copy_to_host") and not isinstance(a, np.ndarray):    # numba DeviceNDArray
            host = a.copy_to_host()
        if isinstance(host, np.ndarray):
            if host.dtype.names is not None:
                raise ArgumentError(f"argument {name!r} of kernel {kernel_name!r}: record arrays "
                                    f"(structured dtype {host.dtype}) are not supported on the IR path; "
                                    "use executor='ptx' (the compiled code), which passes them as numba does")
            if host.dtype.kind not in "biuf":
                raise ArgumentError(f"argument {name!r}: arrays of dtype {host.dtype} are not supported "
                                    "(use a numeric dtype)")
            if host.ndim == 0:
                raise ArgumentError(f"argument {name!r}: pass a 0-d array as a scalar")
            types_.append(T.ArrayType(T.from_numpy(host.dtype), host.ndim, "global"))
            values.append((host, a))
        elif isinstance(host, (bool, np.bool_, int, float, np.integer, np.floating)):
            types_.append(T.typeof_value(host))
            values.append(host)
        elif isinstance(host, np.void) and host.dtype.names is not None:
            raise ArgumentError(f"argument {name!r} of kernel {kernel_name!r}: record arguments "
                                f"(structured dtype {host.dtype}) are not supported on the IR path; "
                                "use executor='ptx' (the compiled code), which passes them by pointer as numba does")
        else:
            raise ArgumentError(f"argument {name!r} of kernel {kernel_name!r}: cannot pass a "
                                f"{type(a).__name__}; pass numpy arrays and numbers")
    return types_, values


def check_launch(gpu, grid, block, smem_bytes, name):
    tpb = block[0] * block[1] * block[2]
    if tpb > gpu.max_threads_per_block:
        raise LaunchError(f"block {block} has {tpb} threads; the {gpu.name} allows at most "
                          f"{gpu.max_threads_per_block} threads per block (max_threads_per_block)")
    for k, (b, lim) in enumerate(zip(block, gpu.max_block_dim)):
        if b > lim:
            raise LaunchError(f"block dimension {'xyz'[k]} = {b} exceeds the {gpu.name}'s limit "
                              f"{lim} (max_block_dim)")
    for k, (g, lim) in enumerate(zip(grid, gpu.max_grid_dim)):
        if g > lim:
            raise LaunchError(f"grid dimension {'xyz'[k]} = {g} exceeds the {gpu.name}'s limit "
                              f"{lim} (max_grid_dim)")
    if smem_bytes > gpu.static_shared_mem_per_block_bytes:
        raise LaunchError(f"kernel {name!r} declares {smem_bytes:,} B of static shared memory per block; "
                          f"the limit for static shared arrays is {gpu.static_shared_mem_per_block_bytes:,} B "
                          "(static_shared_mem_per_block_bytes)")


def shared_layout(fn):
    layout, off = {}, 0
    for key, (shape, dtype) in fn.shared.items():
        dt = T.np_dtype(dtype)
        off = -(-off // max(dt.itemsize, 16)) * max(dt.itemsize, 16) if off else 0
        layout[key] = off
        off += int(np.prod(shape)) * dt.itemsize
    return layout, off


class DeviceAddresses:
    """Device addresses handed out as cudaMalloc would: from 1 << 40, each allocation
    aligned as the driver aligns it and taking its rounded size (ptx.memory.driver_span), with
    an ALIGN gap after it (which the card does not leave: docs/design.md).  Both paths place
    arrays with it, so their memory counters see the same addresses."""

    def __init__(self, start=1 << 40):
        self.next = start

    def place(self, nbytes):
        addr = next_place(self.next - ALIGN, nbytes)
        self.next = addr + driver_span(nbytes) + ALIGN
        return addr


def offset_in_allocation(arr):
    """Where `arr` starts in the array that owns its memory, modulo ALIGN: a view's address on a
    GPU is its tensor's allocation plus this (what Triton's 16-divisibility sees)."""
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    return (arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]) % ALIGN


def global_array(name, host, orig, addresses, compiled=False, keep_offset=False):
    """An argument array at its device address, worked on in place where possible.

    compiled=True (the PTX path: numba-cuda compiled the kernel for the array's own layout,
    'C', 'F' or 'A' with strides): every layout stays as it is -- the bytes it spans
    (ptx.args.byte_span) at the device address, element 0 inside them, its own strides; only a
    read-only array is worked on in a copy of the same layout (order='K').

    compiled=False (the IR path, which indexes with element strides): C- and F-contiguous arrays
    and strided views with non-negative strides in whole elements stay in place with their own
    element strides; anything else (negative strides, strides that are not whole elements) is
    worked on in a C-contiguous copy.  copy_back writes any copy to the user's array."""
    if compiled:
        work = host if host.flags.writeable else np.array(host, order="K")
        data, off = byte_span(work)
        if work.flags.c_contiguous or work.flags.f_contiguous:
            data = work.reshape(-1, order="A") if work.size else work.reshape(-1)
        own = getattr(orig, "__simgpu_place__", None)      # simgpu.host's device arrays: their own address
        base = own(data) if own is not None and work is host else None
        if base is None:        # keep_offset: a view starts where it would in its allocation
            off = offset_in_allocation(data) if keep_offset and work is host else 0
            base = addresses.place(data.nbytes + off) + off
        return ArrayHandle(name, "global", host.shape, host.dtype, data, base_addr=base,
                           host=host, orig=orig, work=work)
    work, strides = host, _elem_strides(host)
    if strides is None or not host.flags.writeable:
        work, strides = np.ascontiguousarray(host), ()
    data = byte_span(work)[0]
    if data.dtype != work.dtype:
        data = data.view(work.dtype) if data.size else np.zeros(0, work.dtype)
    return ArrayHandle(name, "global", host.shape, host.dtype, data, elem_strides=strides,
                       base_addr=addresses.place(data.nbytes), host=host, orig=orig, work=work)


def _elem_strides(a):
    """The array's strides in elements when the IR path can index it in place, else None."""
    if a.flags.c_contiguous:
        return ()
    st = [s // a.itemsize for s in a.strides]
    if any(s < 0 or s * a.itemsize != b for s, b in zip(st, a.strides)):
        return None
    return tuple(st)


def record_argument(name, rec, orig, addresses):
    """A record (structured scalar) argument: numba-cuda passes a pointer to its bytes.  The
    handle's data is the record's own memory (a 1-element structured array over it), so the
    kernel's stores land in the user's record (and the array it came from)."""
    work = record_bytes(rec).view(rec.dtype)
    h = ArrayHandle(name, "global", (), rec.dtype, work,
                    base_addr=addresses.place(work.nbytes), host=work, orig=orig, work=work,
                    record=True)
    return h


def bind_memory(fn, values):
    """Give each argument array a device address (aligned like cudaMalloc) and a handle."""
    bindings, handles, addresses = {}, [], DeviceAddresses()
    for name, v in zip(fn.params, values):
        if isinstance(v, tuple):
            host, orig = v
            h = bindings[name] = global_array(name.split(".")[-1], host, orig, addresses)
            handles.append(h)
        else:
            bindings[name] = v
    for key, arr in fn.consts.items():
        bindings[key] = ArrayHandle("const", "const", arr.shape, arr.dtype, arr.reshape(-1),
                                    base_addr=addresses.place(arr.nbytes))
    return bindings, handles


def copy_back(handles):
    for h in handles:
        host, orig, work = h.host, h.orig, h.work
        if host is None:
            continue
        if work is not host and host.flags.writeable:
            host[...] = work
        if orig is not host and hasattr(orig, "copy_from_host"):
            orig.copy_from_host(host)



