"""CUDA C's front door: ``simgpu.cuda_source(src, "kernel_name", arch=...)``.

The source is compiled by NVRTC (the nvidia-cuda-nvrtc wheel numba-cuda uses) into PTX for the
launch's GPU, and launched as CUDA C launches, ``k[grid, block, stream, shared_bytes](*args)``,
through launch()'s steps (a :class:`CudaProgram`, runtime/foreign.py) to the same Report.

The argument types come from the kernel's prototype: a pointer parameter takes a numpy array
(or a CPU torch tensor; ``None`` is a null pointer) whose dtype matches the pointee where the
pointee is a plain C type; a scalar parameter takes a number, converted to the C type (an
integer that does not fit is refused); a ``const __grid_constant__ CUtensorMap`` parameter
takes :func:`tensor_map` (the array and its box, as ``cuTensorMapEncodeTiled`` encodes it on the
host; the kernel's TMA copies, ``cp.async.bulk.tensor``, read through it).  Other structs passed
by value, references and templates are not read from the prototype and are refused with an
error naming the parameter.
"""
from __future__ import annotations

import hashlib
import linecache
import os
import re

import numpy as np

from ..errors import ArgumentError, LaunchError, SimGPUError
from ..tracebacks import user_facing
from ..sass import analyze_ptx
from ..sass.kernel import CompiledKernel
from ..ptx.args import MappedOnly
from ..ptx.ops_tma import HOST_TO_PTX_TYPE, encode_tiled, tensormap_param
from ..sass.toolchain import nvrtc_kernel_ptx
from .foreign import SCALAR_DTYPES, ForeignParam, ForeignProgram, element_address, host_array
from .launch import launch
from .ptx_binding import HostArray
from .ptx_path import cc_for

# C scalar types -> the front doors' type names (runtime/foreign.SCALAR_DTYPES)
C_TYPES = {
    "float": "fp32", "double": "fp64", "half": "fp16", "__half": "fp16", "__nv_bfloat16": "bf16",
    "bool": "u1", "char": "i8", "signed char": "i8", "unsigned char": "u8",
    "short": "i16", "short int": "i16", "signed short": "i16", "unsigned short": "u16", "unsigned short int": "u16",
    "int": "i32", "signed": "i32", "signed int": "i32", "unsigned": "u32", "unsigned int": "u32",
    "long": "i64", "long int": "i64", "unsigned long": "u64", "unsigned long int": "u64",
    "long long": "i64", "long long int": "i64", "unsigned long long": "u64", "unsigned long long int": "u64",
    "size_t": "u64", "ptrdiff_t": "i64",
    "int8_t": "i8", "uint8_t": "u8", "int16_t": "i16", "uint16_t": "u16", "int32_t": "i32", "uint32_t": "u32",
    "int64_t": "i64", "uint64_t": "u64",
}
_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "struct", "__grid_constant__"}
TENSOR_MAP_TYPES = {"CUtensorMap", "CUtensorMap_st"}
# numpy dtype -> cuTensorMapEncodeTiled's CUtensorMapDataType (the driver's numbering)
_HOST_ELEM = {"uint8": 0, "int8": 0, "uint16": 1, "int16": 1, "uint32": 2, "int32": 3, "uint64": 4,
              "int64": 5, "float16": 6, "float32": 7, "float64": 8}
_SWIZZLES = {0: 0, None: 0, "none": 0, 32: 1, "32B": 1, 64: 2, "64B": 2, 128: 3, "128B": 3}


class TensorMapArg:
    """A host tensor map (``cuTensorMapEncodeTiled``) for a ``CUtensorMap`` kernel parameter:
    the array (C order, any leading dimensions), the box each TMA copy moves (numpy order:
    outermost first), the shared-memory swizzle (0, 32, 64 or 128 bytes) and the fill of
    out-of-bounds elements ("zero" or "nan").  ``dtype="bf16"`` reads a uint16 array as bfloat16."""

    def __init__(self, array, box, swizzle=0, fill="zero", dtype=None):
        arr = host_array(array)
        if arr is None:
            raise ArgumentError(f"tensor_map: the tensor must be a numpy array or a CPU torch tensor, "
                                f"not {type(array).__name__}")
        if not arr.flags.c_contiguous:
            raise ArgumentError("tensor_map: the tensor must be C-contiguous (its strides become the map's)")
        name = "bfloat16" if dtype in ("bf16", "bfloat16") else str(np.dtype(dtype or arr.dtype))
        if name == "bfloat16":
            self.elem = 9
        elif name in _HOST_ELEM:
            self.elem = _HOST_ELEM[name]
        else:
            raise ArgumentError(f"tensor_map: no tensor-map element type for {name}")
        if swizzle not in _SWIZZLES:
            raise ArgumentError(f"tensor_map: swizzle {swizzle!r} is not one of 0, 32, 64, 128")
        if fill not in ("zero", "nan"):
            raise ArgumentError(f"tensor_map: fill {fill!r} is not 'zero' or 'nan'")
        box = (int(box),) if np.isscalar(box) else tuple(int(b) for b in box)
        if len(box) != arr.ndim:
            raise ArgumentError(f"tensor_map: a box of {len(box)} dimension(s) for a {arr.ndim}-d tensor")
        self.array, self.host, self.box = array, arr, box
        self.swizzle, self.fill = _SWIZZLES[swizzle], fill

    def encode(self, address):
        """The 128 bytes for the tensor at device `address` (simgpu's layout, ptx/ops_tma.py)."""
        a = self.host
        return encode_tiled(address, HOST_TO_PTX_TYPE[self.elem], a.shape[::-1], list(a.strides[:-1])[::-1],
                            self.box[::-1], swizzle=self.swizzle, fill=1 if self.fill == "nan" else 0)

    def __repr__(self):
        return f"<simgpu.tensor_map {self.host.shape} {self.host.dtype}, box {self.box}>"


def tensor_map(array, box, swizzle=0, fill="zero", dtype=None):
    """A tensor map for a CUDA C kernel's ``const __grid_constant__ CUtensorMap`` parameter (what
    the host encodes with ``cuTensorMapEncodeTiled``): see :class:`TensorMapArg`."""
    return TensorMapArg(array, box, swizzle, fill, dtype)


def _strip_comments(src):
    src = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), src, flags=re.S)
    return re.sub(r"//[^\n]*", "", src)


def prototype(src, name):
    """(parameters, line of the prototype) of ``__global__`` kernel `name` in `src`."""
    text = _strip_comments(src)
    for m in re.finditer(r"__global__\b", text):
        k = re.compile(r"\b" + re.escape(name) + r"\s*\(").search(text, m.end())
        if k is None:
            break
        between = text[m.end():k.start()]
        if ";" in between or "{" in between or "}" in between:
            continue            # another kernel's body or declaration lies between
        depth, i = 1, k.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        inner = text[k.end():i - 1]
        line = text.count("\n", 0, k.start()) + 1
        return [param(name, p) for p in _split(inner)], line
    raise SimGPUError(f"cuda_source: no __global__ kernel named {name!r} in the source")


def _split(inner):
    parts, depth, cur = [], 0, ""
    for ch in inner:
        depth += {"<": 1, ">": -1, "(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip() and cur.strip() != "void":
        parts.append(cur)
    return [p.strip() for p in parts]


def param(kernel, text):
    """One C parameter -> ForeignParam (pointer with its pointee, or scalar of a C type)."""
    if "&" in text or "<" in text or "[" in text:
        raise SimGPUError(f"cuda_source: kernel {kernel!r}: cannot pass parameter {text!r} "
                          "(references, templates and arrays are not read from the prototype)")
    stars = text.count("*")
    words = [w for w in re.findall(r"[A-Za-z_]\w*", text.replace("*", " ")) if w not in _QUALIFIERS]
    if len(words) < 2:
        raise SimGPUError(f"cuda_source: kernel {kernel!r}: parameter {text!r} has no name")
    pname, ctype = words[-1], " ".join(words[:-1])
    if stars:
        return ForeignParam(pname, "pointer", C_TYPES.get(ctype, "") if stars == 1 else "")
    if ctype in TENSOR_MAP_TYPES:
        return ForeignParam(pname, "tensormap", "CUtensorMap")
    ty = C_TYPES.get(ctype)
    if ty is None or ty == "bf16":
        raise SimGPUError(f"cuda_source: kernel {kernel!r}: parameter {pname!r} is a {ctype}, which simgpu "
                          "cannot pass by value (numbers and pointers only)")
    return ForeignParam(pname, "scalar", ty)


def parse_arch(arch):
    """(cc or None, suffix): "sm_90a" / "compute_90a" -> ((9, 0), "a"); (8, 0) -> ((8, 0), "")."""
    if arch is None:
        return None, ""
    if isinstance(arch, (tuple, list)):
        return (int(arch[0]), int(arch[1])), ""
    m = re.fullmatch(r"(?:sm_|compute_)?(\d+)(\d)([af]?)", str(arch))
    if not m:
        raise SimGPUError(f"cuda_source: arch {arch!r} is not of the form 'sm_90', 'sm_90a' or (9, 0)")
    return (int(m.group(1)), int(m.group(2))), m.group(3)


class CudaProgram(ForeignProgram):
    """A ``__global__`` kernel of CUDA C source, compiled by NVRTC per compute capability."""

    def __init__(self, src, name, arch=None, options=(), filename=None):
        params, line = prototype(src, name)
        digest = hashlib.sha1(src.encode()).hexdigest()[:8]
        # NVRTC's .file names a relative name under the working directory: give it a whole path
        filename = os.path.abspath(filename) if filename else f"/cuda_source/{name}_{digest}.cu"
        super().__init__(name, params, filename, line)
        self.src = src
        self.cc, self.suffix = parse_arch(arch)
        self.compile_options = tuple(options)
        lines = src.splitlines(keepends=True)
        linecache.cache[filename] = (len(src), None, lines, filename)     # the Report's source lines
        self._compiled = {}
        self._maps = {}         # parameter -> the TensorMapArg of the launch being bound

    def bind_one(self, p, a):
        if p.kind == "tensormap":
            if not isinstance(a, TensorMapArg):
                raise ArgumentError(f"argument {p.name!r} of kernel {self.name!r} is a CUtensorMap: pass "
                                    f"simgpu.tensor_map(array, box), not {type(a).__name__}")
            self._maps[p.name] = a
            return (HostArray(a.host, a.array),)        # placed like an array; the map is encoded per launch
        v = super().bind_one(p, a)
        if isinstance(v, HostArray) and p.ctype:
            want = np.dtype(SCALAR_DTYPES[p.ctype]) if p.ctype != "bf16" else np.dtype(np.uint16)
            if p.ctype == "u1":
                want = np.dtype(np.bool_) if v.host.dtype == np.bool_ else want
            if v.host.dtype.itemsize != want.itemsize or v.host.dtype.kind != want.kind and \
                    not (p.ctype in ("fp16", "bf16") and v.host.dtype.itemsize == 2):
                raise ArgumentError(f"argument {p.name!r} of kernel {self.name!r} points to {p.ctype} "
                                    f"({want}); got an array of {v.host.dtype}")
        return v

    def compiled(self, launch, use_cache=True):
        cc = cc_for(launch.gpu)
        if self.cc is not None and tuple(self.cc) != tuple(cc):
            raise LaunchError(f"kernel {self.name!r} was compiled for sm_{self.cc[0]}{self.cc[1]}{self.suffix}; "
                              f"the {launch.gpu.name} is sm_{cc[0]}{cc[1]}")
        ck = self._compiled.get(tuple(cc))
        if ck is None:
            ptx, entry = nvrtc_kernel_ptx(self.src, self.name, f"compute_{cc[0]}{cc[1]}{self.suffix}",
                                          self.source_file, self.compile_options)
            ck = self._compiled[tuple(cc)] = CompiledKernel(
                name=self.name, entry=entry, cc=tuple(cc), argtypes=[p.ctype or "ptr" for p in self.params],
                ptx=ptx, facts=analyze_ptx(ptx, cc, use_cache=use_cache))
        args = []
        for p, v in zip(self.params, self.values(launch)):
            if p.kind == "tensormap":       # the tensor placed, then the map encoded at its address
                raw = self._maps[p.name].encode(element_address(launch.bindings[p.name][0]))
                args.extend([MappedOnly(v[0]), tensormap_param(raw)])
            else:
                args.append(v)
        return ck, args


class CudaKernel:
    """``simgpu.cuda_source(...)``: launch as ``k[grid, block]`` or ``k[grid, block, stream,
    shared_bytes](*args)``; ``k.ptx`` (after a launch or ``k.compile(gpu)``) is NVRTC's PTX."""

    def __init__(self, program, gpu=None):
        self.program, self.gpu = program, gpu
        self.name = self.__name__ = program.name

    def __repr__(self):
        return f"<simgpu.cuda_source {self.name}>"

    @property
    def params(self):
        return list(self.program.params)

    def __getitem__(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise LaunchError("launch as kernel[grid, block] or kernel[grid, block, stream, shared_bytes]")
        grid, block = config[0], config[1]
        smem = config[3] if len(config) > 3 else 0

        @user_facing
        def configured(*args, **options):
            return launch(self.program, grid, block, args, gpu=options.pop("gpu", self.gpu),
                          shared_bytes=smem, **options)
        return configured

    def __call__(self, *args, **kwargs):
        raise LaunchError(f"launch {self.name} with a configuration: {self.name}[grid, block](...)")


def cuda_source(src, name, arch=None, gpu=None, options=(), filename=None):
    """A CUDA C kernel for the modelled GPU: `src` (CUDA C++ source text), `name` (the
    ``__global__`` function; C++ name mangling is NVRTC's), `arch` ("sm_90", "sm_90a" for
    wgmma, (8, 0); default: the launch's GPU), `options` (more NVRTC flags, e.g. "-DN=4")."""
    return CudaKernel(CudaProgram(src, name, arch, options, filename), gpu)
