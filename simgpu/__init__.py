"""simgpu: run numba.cuda kernels on a modelled GPU and see every byte and cycle.

    import simgpu
    rep = simgpu.jit(saxpy)[4096, 256](np.float32(2), x, y, out)
    print(rep)

The package is in one-way layers (docs/design.md; enforced by the import contract in setup.cfg):
cli > host > stepper | plot | validate | testing | sweeps > runtime > timing > memory > exec > frontend >
ir | sass > model > hardware > settings | patches > units | errors | events.

``import simgpu`` is fast (numpy only): each name below is imported the first time it is used
(PEP 562), so numba-cuda, simpy and matplotlib load with the part of simgpu that needs them.
benchmarks/bench_import.py measures it.
"""
import importlib

from . import patches, settings  # noqa: F401  (numpy only; import changes nothing outside simgpu)
from . import jitcache as _jitcache

_jitcache.check()     # numba cache files of changed sources removed (stale inlined code crashes)

__version__ = "0.1.0"

# name -> (module, attribute); attribute None: the module itself
_LAZY = {
    "cuda": ("simgpu.cuda", None), "model": ("simgpu.model", None), "plot": ("simgpu.plot", None),
    "stepper": ("simgpu.stepper", None), "sweeps": ("simgpu.sweeps", None),
    "validate": ("simgpu.validate", None), "gpus": ("simgpu.hardware.catalog", None),
    "Budget": ("simgpu.exec.budget", "Budget"), "BudgetExceededError": ("simgpu.exec.budget", "BudgetExceededError"),
    "RunawayLoopError": ("simgpu.exec.budget", "RunawayLoopError"),
    "SimGPUWarning": ("simgpu.errors", "SimGPUWarning"),
    **{name: ("simgpu.errors", name) for name in ("ArgumentError", "DSLError", "KernelError", "LaunchError",
                                                  "SimGPUError", "TypingError")},
    **{name: ("simgpu.hardware", name) for name in ("GPU", "PRESETS", "get_gpu")},
    **{name: ("simgpu.host", name) for name in ("install", "installed", "uninstall")},
    **{name: ("simgpu.runtime", name) for name in ("Kernel", "Report", "jit", "launch", "predict",
                                                    "cuda_source")},
    "as_tensor": ("simgpu.runtime.triton_door", "as_tensor"),
    "tensor_map": ("simgpu.runtime.cuda_source", "tensor_map"),
    "step": ("simgpu.stepper", "step"),
    "SweepTable": ("simgpu.sweeps", "SweepTable"), "sweep": ("simgpu.sweeps", "sweep"),
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'simgpu' has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value          # imported once; later lookups do not come here
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["install", "installed", "uninstall", "cuda", "jit", "launch", "predict", "gpus", "model", "plot",
           "validate", "step", "stepper", "sweep", "sweeps", "SweepTable", "Kernel",
           "Report", "get_gpu", "PRESETS", "GPU", "SimGPUError", "DSLError", "TypingError", "KernelError",
           "LaunchError", "ArgumentError", "Budget", "RunawayLoopError", "BudgetExceededError",
           "SimGPUWarning", "settings", "patches", "cuda_source", "as_tensor", "tensor_map"]
