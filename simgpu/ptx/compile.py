"""Compiling the linked program once per kernel (runner.Kernel, shared by its launches): every
PTX instruction becomes a closure over lane arrays (simgpu/ptx/instrs.py builds them; ops_mem
and ops_warp add memory and warp ops).  What a launch sets, the closures read from the
launch's Image (``ex.im``) when they run."""
from __future__ import annotations

from simgpu.errors import SimGPUError
from simgpu.ptx import devrt, ops_async, ops_fp8, ops_mbarrier, ops_mem, ops_mma, ops_tma, ops_warp, ops_wgmma
from simgpu.ptx.instrs import HANDLERS, Compiled, Ctx, build_arith, unsupported

TABLE = dict(HANDLERS, **ops_mem.HANDLERS, **ops_warp.HANDLERS, **ops_fp8.HANDLERS,
             **ops_mbarrier.HANDLERS, **ops_mma.HANDLERS, **ops_async.HANDLERS,
             **ops_wgmma.HANDLERS, **ops_tma.HANDLERS, call=devrt.build_call)


def compile_instr(kernel, pc):
    ins = kernel.linked.code[pc]
    func = kernel.linked.func_of[pc]
    ctx = Ctx(kernel, func, pc)
    build = TABLE.get(ins.opcode, build_arith)
    try:
        fn = build(ctx, ins) if build else unsupported(ctx, ins)
    except SimGPUError as e:
        fn = unsupported(ctx, ins, str(e))
    except (KeyError, IndexError, ValueError, StopIteration) as e:
        fn = unsupported(ctx, ins, f"cannot decode operands ({type(e).__name__}: {e})")
    return Compiled(ins, fn, func)
