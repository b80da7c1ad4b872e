"""The host side: whole numba.cuda programs on the modelled GPU.

    import simgpu
    simgpu.install()                    # numba.cuda's host API now runs on the modelled GPU
    from numba import cuda
    ...unchanged numba.cuda program...
    print(simgpu.host.session().summary())

or ``simgpu run prog.py`` / ``simgpu run -m package.module``.  The mechanism (which names are
swapped in numba.cuda and why kernels still compile with numba-cuda) is described in
host/install.py; device arrays in host/devicearray.py; streams, events and the modelled clock
in host/session.py; kernels in host/kernels.py; running a program in host/program.py.
"""
from ..errors import SimGPUWarning
from .install import install, installed, is_installed, session, uninstall
from .session import LaunchRecord, Session, Transfer
from .devicearray import DeviceNDArray
from .program import run_program

__all__ = ["install", "uninstall", "installed", "is_installed", "session", "Session", "LaunchRecord",
           "Transfer", "SimGPUWarning", "DeviceNDArray", "run_program"]
