"""nvJitLink, NVIDIA's JIT linker, through ctypes: what numba-cuda links a kernel with on a GPU.

numba-cuda (>= 0.16) links every ``cuda.jit`` kernel with link-time optimisation by default where
nvJitLink (>= 12.3) is installed (``decorators.py``: ``lto = _have_nvjitlink() and not debug``):
NVVM writes the kernel as LTO-IR (``-gen-lto``), NVRTC writes the CUDA C it links (the fp16/bf16
shims, ``link=`` sources) as LTO-IR too, and nvJitLink optimises the whole program again and
lowers it.  simgpu executes PTX, so it asks nvJitLink for the linked PTX (``-lto -ptx``, as
``Dispatcher.inspect_lto_ptx`` does) -- see ``sass/toolchain.py``.

* ``library()`` -- the libnvJitLink this process uses: the ``$SIMGPU_TOOLCHAIN`` folder's (its
  ``lib`` folders; ``pip install --target DIR nvidia-nvjitlink==13.0.88`` puts the card's there)
  when that is set, else the installed wheel's (``cuda.pathfinder``, as cuda.bindings finds it).
  ``NvJitLinkMissing`` (with how to install it) when there is none.
* ``linker(path)`` -- (``link``, "nvJitLink MAJOR.MINOR") for the library at ``path``;
  ``link(inputs, options, output)`` links ``[(data, kind)]`` (kind "ptx" or "ltoir") and returns
  PTX text (output "ptx") or cubin bytes ("cubin"); ``NvJitLinkError`` with nvJitLink's log.
* ``version()`` -- ``library()``'s version text (part of the PTX cache's key).

Only the 13.0 entry points (``__nvJitLink*_13_0``, which every 13.x library exports) are bound.
"""
from __future__ import annotations

import ctypes
import functools
import os
import re

from ..errors import SimGPUError
from . import toolchain     # a cycle (toolchain links through this module); used only at call time

#: nvJitLinkInputType
INPUT_KINDS = {"ptx": 2, "ltoir": 3}
#: the pip package providing it (numba-cuda[cu13] depends on it)
PACKAGE = "nvidia-nvjitlink"
#: numba-cuda's floor for LTO (``_have_nvjitlink``: nvJitLink 12.3 or newer)
MIN_VERSION = (12, 3)


class NvJitLinkMissing(SimGPUError):
    """No usable libnvJitLink: the kernel cannot be linked as numba-cuda links it with LTO."""


class NvJitLinkError(SimGPUError):
    """nvJitLink refused the link (its error log is in the message)."""


def library():
    """Path of the libnvJitLink to use (see the module docstring); NvJitLinkMissing if none."""
    chosen = toolchain.selected_toolchain()
    if chosen is not None:
        if chosen.get("nvjitlink"):
            return chosen["nvjitlink"]
        raise NvJitLinkMissing(
            f"$SIMGPU_TOOLCHAIN = {chosen['root']!r} has no libnvJitLink; install the matching one there "
            f"with: pip install --target {chosen['root']} {PACKAGE}==<its version>")
    return _installed_library()


@functools.lru_cache(maxsize=None)
def _installed_library():
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
    except ImportError:
        load_nvidia_dynamic_lib = None
    if load_nvidia_dynamic_lib is not None:
        try:
            path = load_nvidia_dynamic_lib("nvJitLink").abs_path
        except Exception:  # noqa: BLE001  (not found, or a broken install)
            path = None
        if path:
            return path
    raise NvJitLinkMissing(f"libnvJitLink is not installed (pip install {PACKAGE}, which "
                           f"numba-cuda[cu13] installs)")


def version():
    """"nvJitLink MAJOR.MINOR" of ``library()``."""
    return linker(library())[1]


@functools.lru_cache(maxsize=None)
def linker(path):
    """(link, "nvJitLink MAJOR.MINOR") for the libnvJitLink at ``path`` (see the module docstring).
    NvJitLinkMissing when it cannot be loaded or is older than numba-cuda's floor (12.3)."""
    try:
        h = ctypes.CDLL(path)
        f = {n: getattr(h, f"__nvJitLink{n}_13_0") for n in
             ("Create", "AddData", "Complete", "GetLinkedCubinSize", "GetLinkedCubin", "GetLinkedPtxSize",
              "GetLinkedPtx", "GetErrorLogSize", "GetErrorLog", "Destroy")}
    except (OSError, AttributeError) as exc:
        raise NvJitLinkMissing(f"cannot use {path} as nvJitLink 13: {exc}") from exc
    major, minor = ctypes.c_uint(), ctypes.c_uint()
    if h.nvJitLinkVersion(ctypes.byref(major), ctypes.byref(minor)) != 0:
        raise NvJitLinkMissing(f"nvJitLinkVersion failed for {path}")
    if (major.value, minor.value) < MIN_VERSION:
        raise NvJitLinkMissing(f"{path} is nvJitLink {major.value}.{minor.value}; LTO needs 12.3 or newer")
    C = ctypes

    def link(inputs, options, output="ptx"):
        size, get = {"cubin": ("GetLinkedCubinSize", "GetLinkedCubin"),
                     "ptx": ("GetLinkedPtxSize", "GetLinkedPtx")}[output]
        hd = C.c_void_p()
        opts = (C.c_char_p * len(options))(*[o.encode() for o in options])
        if f["Create"](C.byref(hd), len(options), opts):
            raise NvJitLinkError(f"nvJitLinkCreate refused the options {options}")
        try:
            r = 0
            for i, (data, kind) in enumerate(inputs):
                if isinstance(data, str):
                    data = data.encode()
                if kind == "ptx" and not data.endswith(b"\0"):
                    data += b"\0"
                name = f"input{i}.{kind}".encode()
                r = r or f["AddData"](hd, INPUT_KINDS[kind], C.c_char_p(data), C.c_size_t(len(data)), name)
            r = r or f["Complete"](hd)
            if r:
                n = C.c_size_t()
                f["GetErrorLogSize"](hd, C.byref(n))
                buf = C.create_string_buffer(n.value + 1)
                f["GetErrorLog"](hd, buf)
                raise NvJitLinkError(f"nvJitLink error {r} (options {' '.join(options)}): "
                                     + buf.value.decode(errors="replace")[-2000:])
            n = C.c_size_t()
            f[size](hd, C.byref(n))
            buf = C.create_string_buffer(n.value)
            f[get](hd, buf)
            return buf.raw[:n.value] if output == "cubin" else buf.value.decode()
        finally:
            f["Destroy"](C.byref(hd))
    return link, f"nvJitLink {major.value}.{minor.value}"


def find_in(folder):
    """The newest ``libnvJitLink.so*`` directly in ``folder``, or None."""
    if not os.path.isdir(folder):
        return None
    libs = sorted(f for f in os.listdir(folder) if re.fullmatch(r"libnvJitLink\.so(\.\d+)*", f))
    return os.path.join(folder, libs[-1]) if libs else None
