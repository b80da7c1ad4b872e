"""simgpu: run numba.cuda kernels on a modelled GPU and see every byte and cycle.

    import simgpu
    rep = simgpu.jit(saxpy)[4096, 256](np.float32(2), x, y, out)
    print(rep)

The package is in one-way layers (docs/design.md; enforced by the import contract in setup.cfg):
cli > host > stepper | plot | validate | testing | sweeps > runtime > timing > memory > exec > frontend >
ir | sass > model > hardware > units | errors.
"""
from ._compat import patch_numpy_for_numba

patch_numpy_for_numba()          # before anything imports numba.cuda (numba 0.68.0 + numpy 2.5)

from . import cuda  # noqa: E402
from . import model, plot, stepper, sweeps, validate  # noqa: E402
from .exec.budget import Budget, BudgetExceededError, RunawayLoopError  # noqa: E402
from .frontend.lint import SimGPUWarning  # noqa: E402
from .errors import (ArgumentError, DSLError, KernelError, LaunchError, SimGPUError, TypingError)  # noqa: E402
from .hardware import GPU, PRESETS, get_gpu  # noqa: E402
from .hardware import catalog as gpus  # noqa: E402
from .host import install, installed, uninstall  # noqa: E402
from .runtime import Kernel, Report, jit, launch, predict  # noqa: E402
from .stepper import step  # noqa: E402
from .sweeps import SweepTable, sweep  # noqa: E402

__version__ = "0.1.0"

__all__ = ["install", "installed", "uninstall", "cuda", "jit", "launch", "predict", "gpus", "model", "plot",
           "validate", "step", "stepper", "sweep", "sweeps", "SweepTable", "Kernel",
           "Report", "get_gpu", "PRESETS", "GPU", "SimGPUError", "DSLError", "TypingError", "KernelError",
           "LaunchError", "ArgumentError", "Budget", "RunawayLoopError", "BudgetExceededError",
           "SimGPUWarning"]
