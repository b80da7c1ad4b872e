"""Load `path/to/file.py::kernel` and its arguments for the command line.

Convention: the file defines the kernel as a plain function (or numba.cuda.jit kernel) and
a function that builds its arguments: `args_<kernel>()` if present, else `make_args()`,
returning a tuple (numpy arrays and numbers).  `--args "expr"` overrides it with a Python
expression evaluated with numpy as `np` and the file's globals in scope.
"""
from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np

from ..errors import SimGPUError


def load_target(target):
    if "::" not in target:
        raise SimGPUError(f"expected path/to/file.py::kernel_name, got {target!r}")
    path, name = target.rsplit("::", 1)
    if not os.path.exists(path):
        raise SimGPUError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    mod = importlib.util.module_from_spec(spec)
    folder = os.path.dirname(os.path.abspath(path))
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)          # the file may import its neighbours
    try:
        spec.loader.exec_module(mod)
    except Exception as e:
        raise SimGPUError(f"could not import {path}: {type(e).__name__}: {e}") from None
    finally:
        if added:
            sys.path.remove(folder)
    if not hasattr(mod, name):
        raise SimGPUError(f"{path} has no kernel named {name!r}")
    return mod, getattr(mod, name)


def build_args(mod, name, expr=None):
    if expr:
        env = dict(vars(mod))
        env["np"] = np
        try:
            v = eval(expr, env)
        except Exception as e:
            raise SimGPUError(f"--args {expr!r} failed: {type(e).__name__}: {e}") from None
        return v if isinstance(v, tuple) else (v,)
    for fname in (f"args_{name}", "make_args"):
        f = getattr(mod, fname, None)
        if callable(f):
            v = f()
            return v if isinstance(v, tuple) else (v,)
    raise SimGPUError(f"{mod.__file__} defines neither args_{name}() nor make_args(); "
                      "add one returning the kernel's arguments, or pass --args")


def parse_dims(text):
    try:
        dims = tuple(int(v) for v in str(text).replace("x", ",").split(",") if v.strip())
    except ValueError:
        raise SimGPUError(f"bad dimensions {text!r}: write 128 or 32,8 or 32x8") from None
    if not 1 <= len(dims) <= 3:
        raise SimGPUError(f"bad dimensions {text!r}: 1 to 3 numbers")
    return dims
