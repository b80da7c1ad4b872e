"""KernelProgram: a kernel's compile cache.  The IR is lowered once, and typed (with the
compiler's fused multiply-adds marked) once per argument signature, as numba specialises."""
from __future__ import annotations

import types as pytypes

from ..errors import SimGPUError
from ..frontend.lower import Lowerer
from ..ir.infer import infer
from ..ir.passes import contract
from ..ir.printer import format_function


def py_function(fn):
    py = getattr(fn, "py_func", None)
    if isinstance(py, pytypes.FunctionType):
        return py
    if isinstance(fn, pytypes.FunctionType):
        return fn
    raise SimGPUError(f"expected a Python function or a numba.cuda kernel, got {type(fn).__name__}")


class KernelProgram:
    """The compile side of a kernel (or device function): ``lower``, ``specialize``, ``ir``."""

    def __init__(self, fn, device=False, gpu=None, **options):
        self.py_func = py_function(fn)
        # a numba.cuda dispatcher: the compiled path compiles with its options and explicit
        # signatures (sass/toolchain.py: dispatcher_options, explicit_signature)
        self.numba_dispatcher = fn if hasattr(fn, "targetoptions") and hasattr(fn, "overloads") else None
        self.__name__ = self.name = self.py_func.__name__
        self.__doc__ = self.py_func.__doc__
        self.device = device
        self.gpu = gpu
        self.options = options
        self._untyped = None
        self._typed = {}

    def __repr__(self):
        return f"<simgpu.Kernel {self.name}{' (device)' if self.device else ''}>"

    def lower(self):
        if self._untyped is None:
            self._untyped = Lowerer(self.py_func).lower_function()
        return self._untyped

    def specialize(self, param_types):
        key = tuple(param_types)
        fn = self._typed.get(key)
        if fn is None:
            fn = Lowerer(self.py_func).lower_function()
            infer(fn, dict(zip(fn.params, param_types)))
            contract(fn)          # mark multiply-adds the compiler fuses, memory spaces
            self._typed[key] = fn
        return fn

    @property
    def ir(self):
        """The kernel's IR with source lines (typed for the last launch, if any)."""
        fn = next(reversed(self._typed.values())) if self._typed else self.lower()
        return format_function(fn)


def as_program(kernel):
    """A KernelProgram for a simgpu kernel, a numba.cuda kernel or a plain Python function."""
    return kernel if isinstance(kernel, KernelProgram) else KernelProgram(kernel)
