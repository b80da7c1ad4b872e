"""Binding a launch on the compiled path (executor="ptx") without simgpu's own frontend.

The IR path binds from the IR Function that simgpu's frontend lowers (runtime/binding.py:
``fn.params``, ``fn.shared``, ``fn.consts``, ``fn.source_lines``).  The compiled path must not
need that frontend -- numba-cuda types and compiles the kernel -- so here the launch is bound
from what Python itself says:

* the parameters: the names in the function's signature (``inspect.signature``);
* the arguments: numpy arrays (any dtype numba takes: numbers, complex, float16, records) of any
  layout (C, F, strided views: worked on in place, binding.global_array(compiled=True)), record
  scalars (np.void/np.record: by pointer, as numba-cuda passes them), numba device arrays
  (through ``copy_to_host``), scalars and (nested) tuples of them; arrays are placed at device
  addresses by ``binding.DeviceAddresses``, as the IR path places them, so the memory model's
  counters stay comparable between the paths;
* the Report's source lines: the kernel's source (``inspect``), plus every line the PTX's
  ``.loc`` names (device functions) once the kernel is compiled.

Typing is numba's: nothing here judges whether the kernel can be compiled; numba-cuda's errors
reach the user unchanged (runtime/ptx_path.PTXExecutor.prepare).
"""
from __future__ import annotations

import enum
import inspect
import linecache
from dataclasses import dataclass, field

import numpy as np

from ..errors import ArgumentError
from ..exec.state import ArrayHandle
from ..ir.nodes import Loc
from ..ptx.args import scalar_values, is_record
from .binding import DeviceAddresses, global_array, record_argument


@dataclass(eq=False)
class PySignature:
    """What the PTX path binds from instead of the IR Function: parameter names, source lines,
    where the kernel is.  It has no IR: ``shared``/``local``/``consts``/``body`` are empty
    (the compiled code's own facts come from ptxas and the PTX: see ptx_path.program_facts)."""
    name: str
    params: list
    source_lines: dict                      # (file, line) -> text
    loc: Loc
    shared: dict = field(default_factory=dict)
    local: dict = field(default_factory=dict)
    consts: dict = field(default_factory=dict)
    body: list = field(default_factory=list)
    var_types: dict = field(default_factory=dict)

    def add_source(self, locs):
        """Add the text of every (file, line) in `locs` (the PTX's .loc: device functions)."""
        for f, ln in locs:
            if (f, ln) not in self.source_lines:
                text = linecache.getline(f, ln)
                if text:
                    self.source_lines[(f, ln)] = text.rstrip("\n")


@dataclass(eq=False)
class HostArray:
    """An array argument before placement: the host array and what the user passed."""
    host: np.ndarray
    orig: object


@dataclass(eq=False)
class HostRecord:
    """A record (structured scalar) argument before placement."""
    rec: np.void
    orig: object


def python_signature(py_func):
    """The kernel's parameter names and source lines, from Python (no simgpu frontend)."""
    name = py_func.__name__
    params = []
    for p in inspect.signature(py_func).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY):
            raise ArgumentError(f"kernel {name!r}: parameter {p.name!r} ({p.kind.description}) cannot "
                                "be passed at a launch; kernels take positional parameters")
        params.append(p.name)
    first = py_func.__code__.co_firstlineno
    try:
        lines, _ = inspect.getsourcelines(py_func)
        file = inspect.getsourcefile(py_func) or "<kernel>"
    except (OSError, TypeError):        # exec'd code: numba-cuda compiles it; no source lines
        return PySignature(name, params, {}, Loc(py_func.__code__.co_filename, first, 0, name))
    source = {(file, first + i): text.rstrip("\n") for i, text in enumerate(lines)}
    return PySignature(name, params, source, Loc(file, first, 0, name))


def bind_args_python(sig, args):
    """Check the argument count against the Python signature and take each argument's host
    value: HostArray for arrays, tuples element-wise, scalars as given (numba types them)."""
    if len(args) != len(sig.params):
        raise ArgumentError(f"kernel {sig.name!r} takes {len(sig.params)} argument(s) "
                            f"({', '.join(sig.params)}), got {len(args)}")
    return [_host_value(sig.name, p, a) for p, a in zip(sig.params, args)]


def _host_value(kernel, name, a):
    host = getattr(a, "__simgpu_ndarray__", a)      # simgpu.host's device arrays: their buffer
    if host is a and hasattr(a, "copy_to_host") and not isinstance(a, np.ndarray):    # numba DeviceNDArray
        host = a.copy_to_host()
    if isinstance(host, np.ndarray):
        return HostArray(host, a)
    if is_record(host):                             # np.void / np.record: passed by pointer
        return HostRecord(host, a)
    if isinstance(host, tuple):
        return same_tuple(host, [_host_value(kernel, f"{name}[{i}]", v) for i, v in enumerate(host)])
    if isinstance(host, enum.Enum) and isinstance(host.value, tuple):     # numba: the value's tuple
        _host_value(kernel, name, host.value)
        return host
    if scalar_values(host) is None:
        raise ArgumentError(f"argument {name!r} of kernel {kernel!r}: cannot pass a "
                            f"{type(a).__name__}; pass numpy arrays, numbers and tuples of them")
    return host


def same_tuple(like, items):
    """`items` as a tuple of `like`'s kind: a namedtuple stays one of its class (numba types it
    as a NamedTuple, whose fields the kernel reads by name: ``p.x``), any other tuple a tuple."""
    if hasattr(type(like), "_fields"):
        return type(like)(*items)
    return tuple(items)


def bind_memory_python(sig, values, keep_offsets=False):
    """Give each argument array (also inside tuples, depth first: the order numba flattens
    them) a device address and a handle, exactly as binding.bind_memory does.  keep_offsets:
    a view is placed at its offset in its allocation (modulo the alignment), as a GPU tensor's
    view is (Triton specialises on the pointer's 16-divisibility)."""
    bindings, handles, addresses = {}, [], DeviceAddresses()

    def place(name, v):
        if isinstance(v, HostArray):
            h = global_array(name, v.host, v.orig, addresses, compiled=True, keep_offset=keep_offsets)
            handles.append(h)
            return h
        if isinstance(v, HostRecord):
            h = record_argument(name, v.rec, v.orig, addresses)
            handles.append(h)
            return h
        if isinstance(v, tuple):
            return same_tuple(v, [place(f"{name}[{i}]", x) for i, x in enumerate(v)])
        return v

    for name, v in zip(sig.params, values):
        bindings[name] = place(name, v)
    return bindings, handles


def kernel_args(sig, bindings):
    """The kernel's arguments in parameter order for numba-cuda and simgpu.ptx: the working
    arrays (copied back to the user's by binding.copy_back), scalars, tuples rebuilt."""
    def arg(v):
        if isinstance(v, ArrayHandle):
            return v.work[0] if v.record else v.work
        if isinstance(v, tuple):
            return same_tuple(v, [arg(x) for x in v])
        return v
    return [arg(bindings[p]) for p in sig.params]
