"""simgpu: run numba.cuda kernels on a modelled GPU and see every byte and cycle.

    import simgpu
    rep = simgpu.jit(saxpy)[4096, 256](np.float32(2), x, y, out)
    print(rep)

The package is in one-way layers (docs/design.md; enforced by the import contract in setup.cfg):
cli > host > stepper | plot | validate | testing | sweeps > runtime > timing > memory > exec > frontend >
ir | sass > model > hardware > settings | patches > units | errors.
"""
from . import cuda
from . import model, patches, plot, settings, stepper, sweeps, validate
from .exec.budget import Budget, BudgetExceededError, RunawayLoopError
from .errors import (ArgumentError, DSLError, KernelError, LaunchError, SimGPUError, SimGPUWarning,
                     TypingError)
from .hardware import GPU, PRESETS, get_gpu
from .hardware import catalog as gpus
from .host import install, installed, uninstall
from .runtime import Kernel, Report, jit, launch, predict
from .stepper import step
from .sweeps import SweepTable, sweep

__version__ = "0.1.0"

__all__ = ["install", "installed", "uninstall", "cuda", "jit", "launch", "predict", "gpus", "model", "plot",
           "validate", "step", "stepper", "sweep", "sweeps", "SweepTable", "Kernel",
           "Report", "get_gpu", "PRESETS", "GPU", "SimGPUError", "DSLError", "TypingError", "KernelError",
           "LaunchError", "ArgumentError", "Budget", "RunawayLoopError", "BudgetExceededError",
           "SimGPUWarning", "settings", "patches"]
