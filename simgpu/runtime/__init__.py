"""The runtime: kernels (compile caches), launch as named steps, the executor seam, Reports.

    Kernel / jit         runtime/kernel.py      k[grid, block](*args) -> Report
    launch / predict     runtime/launch.py      specialise -> bind -> plan -> run -> collect -> report
    Executor             runtime/executor.py    the interface a second executor implements
    Report               runtime/report.py      metrics named as Nsight Compute names them
    ForeignProgram       runtime/foreign.py     PTX from another compiler: Triton (triton_door.py),
                                                CUDA C through NVRTC (cuda_source.py)
"""
from .executor import EXECUTORS, Executor, IRExecutor, get_executor
from .cuda_source import CudaKernel, cuda_source
from .foreign import ForeignProgram
from .kernel import Kernel, TritonKernel, jit
from .launch import DEFAULT_CHUNK_LANES, Launch, launch, predict
from .program import KernelProgram, as_program
from .report import Report

__all__ = ["Kernel", "KernelProgram", "jit", "launch", "predict", "Launch", "Report", "Executor",
           "IRExecutor", "EXECUTORS", "get_executor", "as_program", "DEFAULT_CHUNK_LANES",
           "cuda_source", "CudaKernel", "ForeignProgram", "TritonKernel"]
