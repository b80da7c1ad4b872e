"""simgpu: run numba.cuda kernels on a modelled GPU and see every byte and cycle.

    import simgpu
    rep = simgpu.jit(saxpy)[4096, 256](np.float32(2), x, y, out)
    print(rep)
"""
from ._compat import patch_numpy_for_numba

patch_numpy_for_numba()          # before anything imports numba.cuda (numba 0.68.0 + numpy 2.5)

from . import cuda  # noqa: E402
from .errors import (ArgumentError, DSLError, KernelError, LaunchError, SimGPUError, TypingError)
from .hardware import get_gpu, PRESETS, GPU
from .kernel import Kernel, jit, launch
from .report import Report
from . import gpus, model, plot
from .validate import validate
from .step import step

__version__ = "0.1.0"

__all__ = ["cuda", "jit", "launch", "gpus", "model", "plot", "validate", "step", "Kernel", "Report", "get_gpu", "PRESETS", "GPU",
           "SimGPUError", "DSLError", "TypingError", "KernelError", "LaunchError", "ArgumentError"]
