"""simgpu.ptx: parse the PTX that numba-cuda emits and execute it, vectorised over lanes.

Kept import-light: names are re-exported lazily so that importing this package never
fails while a sibling module (e.g. ``semantics``) is absent or being edited.
"""

_LAZY = {
    "parse": ("simgpu.ptx.parser", "parse"),
    "run": ("simgpu.ptx.runner", "run"),
    "launch_numba": ("simgpu.ptx.runner", "launch_numba"),
    "flatten_args": ("simgpu.ptx.args", "flatten_args"),
}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        mod, attr = _LAZY[name]
        return getattr(importlib.import_module(mod), attr)
    raise AttributeError(f"module 'simgpu.ptx' has no attribute {name!r}")
