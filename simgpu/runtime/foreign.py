"""PTX that arrives from another compiler (Triton, NVRTC): a program kind for launch().

numba kernels are KernelPrograms: launch() binds them from their Python signature and the PTX
executor compiles them with numba-cuda (runtime/ptx_path.py).  A :class:`ForeignProgram` is the
same thing for PTX that another compiler makes -- Triton (runtime/triton_door.py) or NVRTC from
CUDA C (runtime/cuda_source.py).  It goes through the same steps of launch() -- specialise
(:meth:`ForeignProgram.bind_args`: the arguments against the parameters the other compiler
declares), bind (arrays at the modelled device addresses, as for numba kernels), prepare
(:class:`ForeignPTXExecutor`: the program compiles for the launch, now that the addresses are
known, and ptxas gives the SASS facts), run chunks on the same PTX executor, report -- and gives
the same Report, in ncu's names.  The differences are confined here:

* the parameters come from the other compiler (Triton's signature, the CUDA C prototype), each
  a pointer or a scalar of a fixed type;
* arrays are passed as bare device pointers (``ptx.args.flatten_args(pointers=True)``), not as
  numba's array structs; ``None`` is a null pointer;
* the program decides the PTX's parameter list for the launch (:meth:`ForeignProgram.ptx_args`:
  Triton drops its constexprs and appends its scratch pointers).
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass

import numpy as np

from ..errors import ArgumentError, LaunchError
from ..ir.nodes import Loc
from ..ptx.args import byte_span
from .ptx_binding import HostArray, PySignature, kernel_args
from .ptx_path import PTXExecutor

# the numpy dtype of each scalar type the front doors declare (Triton's names; C's map to them)
SCALAR_DTYPES = {
    "i1": np.uint8, "u1": np.uint8, "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16,
    "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64,
    "fp16": np.float16, "bf16": np.float32, "fp32": np.float32, "fp64": np.float64,
}


@dataclass(frozen=True)
class ForeignParam:
    """One kernel parameter as the other compiler declares it."""
    name: str
    kind: str               # "pointer" | "scalar" | "any" (Triton: typed by the value at the call)
    ctype: str = ""         # the scalar's type ("i32", "fp32", ...), or the pointee's ("" unknown)


def host_array(a):
    """The numpy array behind an argument: a numpy array, a CPU torch tensor (its .numpy()
    view, so results land in the tensor), simgpu's device arrays; None when it is not one."""
    host = getattr(a, "__simgpu_ndarray__", a)
    if isinstance(host, np.ndarray):
        return host
    if type(a).__module__.startswith("torch") and hasattr(a, "numpy") and hasattr(a, "is_cuda"):
        if a.is_cuda:
            return None
        return a.detach().numpy()
    return None


def scalar_value(kernel, p, v):
    """A scalar argument as the numpy type the parameter declares (range-checked)."""
    if isinstance(v, (bool, np.bool_)):
        v = int(v)
    if not isinstance(v, (int, float, np.integer, np.floating)):
        raise ArgumentError(f"argument {p.name!r} of kernel {kernel!r} is a {p.ctype or 'scalar'}; "
                            f"got {type(v).__name__}")
    dt = np.dtype(SCALAR_DTYPES.get(p.ctype, np.int64))
    if dt.kind in "iu":
        if isinstance(v, (float, np.floating)) and float(v) != int(v):
            raise ArgumentError(f"argument {p.name!r} of kernel {kernel!r} is an integer ({p.ctype}); got {v!r}")
        info = np.iinfo(dt)
        if not info.min <= int(v) <= info.max:
            raise ArgumentError(f"argument {p.name!r} of kernel {kernel!r}: {int(v)} does not fit "
                                f"its type {p.ctype}")
        return dt.type(int(v))
    return dt.type(v)


class ForeignProgram:
    """PTX from another compiler, launched by runtime/launch.py like a numba kernel.

    Subclasses give ``params`` (ForeignParam list), ``source_file`` and ``compiled(launch)``
    (the CompiledKernel for the launch, cached by the subclass)."""

    py_func = None          # no Python function numba compiles
    device = False
    options: dict = {}

    def __init__(self, name, params, source_file, first_line=1, qualname=None):
        self.name = self.__name__ = name
        self.qualname = qualname or name
        self.params = list(params)
        self.source_file = source_file
        self.first_line = first_line

    def __repr__(self):
        return f"<simgpu {type(self).__name__} {self.name}>"

    # -- specialise -------------------------------------------------------------------------
    def signature(self):
        """What bind_python binds from: the parameter names and the source lines."""
        lines = {}
        for n, text in enumerate(linecache.getlines(self.source_file), 1):
            lines[(self.source_file, n)] = text.rstrip("\n")
        return PySignature(self.name, [p.name for p in self.params], lines,
                           Loc(self.source_file, self.first_line, 0, self.name))

    def bind_args(self, args):
        """Each argument against its parameter: HostArray for a pointer (None: a null
        pointer), a numpy scalar of the declared type for a scalar."""
        if len(args) != len(self.params):
            raise ArgumentError(f"kernel {self.name!r} takes {len(self.params)} argument(s) "
                                f"({', '.join(p.name for p in self.params)}), got {len(args)}")
        return [self.bind_one(p, a) for p, a in zip(self.params, args)]

    def bind_one(self, p, a):
        arr = host_array(a)
        if p.kind == "pointer" or (p.kind == "any" and arr is not None):
            if a is None:
                return None
            if arr is None:
                raise ArgumentError(f"argument {p.name!r} of kernel {self.name!r} is a pointer: pass a "
                                    f"numpy array (or a CPU torch tensor, or None), not {type(a).__name__}")
            return HostArray(arr, a)
        if arr is not None:
            raise ArgumentError(f"argument {p.name!r} of kernel {self.name!r} is a scalar "
                                f"({p.ctype or 'a number'}); got an array")
        if p.kind == "any":
            if a is None or isinstance(a, (bool, int, float, np.integer, np.floating)):
                return a
            raise ArgumentError(f"argument {p.name!r} of kernel {self.name!r}: cannot pass a "
                                f"{type(a).__name__}; pass numpy arrays, numbers or None")
        return scalar_value(self.name, p, a)

    # -- prepare ------------------------------------------------------------------------------
    def compiled(self, launch, use_cache=True):
        """(CompiledKernel, PTX arguments in parameter order) for this launch."""
        raise NotImplementedError

    def values(self, launch):
        """The bound arguments in parameter order (working arrays, scalars, None)."""
        return kernel_args(launch.fn, launch.bindings)


def element_address(handle):
    """The device address of element 0 of a bound array (what a GPU pointer would be)."""
    return int(handle.base_addr) + byte_span(handle.work)[1]


def null_pointer(v):
    return np.uint64(0) if v is None else v


class ForeignPTXExecutor(PTXExecutor):
    """The PTX executor for a ForeignProgram: the program compiles itself (Triton, NVRTC);
    ptxas' facts, the chunks, the counters and the models are the numba path's."""

    bare_pointers = True

    def prepare(self, program, launch, values=None):
        if not isinstance(program, ForeignProgram):
            raise LaunchError(f"ForeignPTXExecutor runs PTX from Triton or CUDA C, not {program!r}")
        ck, args = program.compiled(launch, self.use_cache)
        return self.adopt(ck, launch, program.name, program.source_file, [null_pointer(a) for a in args])
