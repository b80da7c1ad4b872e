"""Facts from NVIDIA's real compiler toolchain, no GPU needed.

A kernel is compiled to PTX by numba-cuda, to SASS by ``ptxas``, and disassembled by
``nvdisasm``; the results are cached on disk (see ``cache``).

Modules: ``toolchain`` (finding/running tools, Python -> PTX, argument typing, GPU -> cc),
``ptxas`` (resource usage from ``ptxas -v``), ``ptxlines`` (PTX rewrite giving each
instruction its own debug line), ``disasm`` (SASS per PTX line), ``opclasses`` (SASS opcode ->
Nsight Compute pipe), ``fingerprint`` (cache key of a Python kernel), ``cache`` (disk cache),
``kernel`` (``compile_kernel``: all of it together).
"""
from .kernel import CompiledKernel, PtxFacts, analyze_ptx, compile_kernel
from .disasm import KernelSass, SassInstr
from .opclasses import PIPES, base_opcode, pipe_of, unknown_opcodes
from .ptxas import FunctionResources, PtxasReport
from .ptxlines import SourceLoc
from .toolchain import (ToolFailedError, ToolNotFoundError, cc_for_gpu, compile_ptx, find_tool,
                        numba_types_for_args, toolchain_versions)

__all__ = [
    "CompiledKernel", "PtxFacts", "analyze_ptx", "compile_kernel", "KernelSass", "SassInstr",
    "PIPES", "base_opcode", "pipe_of", "unknown_opcodes", "FunctionResources", "PtxasReport",
    "SourceLoc", "ToolFailedError", "ToolNotFoundError", "cc_for_gpu", "compile_ptx",
    "find_tool", "numba_types_for_args", "toolchain_versions",
]
