"""Registers read that no instruction writes: undefined in PTX, reported as they run.

NVVM leaves such reads where LLVM folded a value to ``poison`` (numba's ``int64(3e38)``, an
out-of-range constant float-to-int cast, folded at compile time: the PTX then reads a register
nothing wrote, in an ``atom.add`` or a ``shfl`` of it).  On the GPU the read gives whatever the
physical register ptxas assigned held last -- another value of the kernel, different from run to
run of ptxas' allocation, not something the PTX says; simgpu reads 0.  :func:`watch` finds them
once per kernel (a register of the function read by an instruction and written by none) and
wraps each such instruction so that the first lanes to run it in a launch give one
``SimGPUWarning`` naming the PTX line, the register, the source line, block and thread -- what
compute-sanitizer's ``initcheck`` reports for uninitialised *memory* (it does not see registers).
Cost: nothing for instructions that read only written registers (almost all); the wrapped ones
run outside compiled runs.
"""
from __future__ import annotations

import warnings

from simgpu.errors import SimGPUWarning

_STORES = ("st", "red", "bar", "bra", "call", "ret", "exit", "prefetch", "membar", "fence")


def _regs(op, out):
    if isinstance(op, tuple):
        if op and op[0] == "reg":
            out.add(op[1])
        else:
            for x in op[1:]:
                if isinstance(x, (tuple, list)):
                    _regs(x, out)
    elif isinstance(op, list):
        for x in op:
            _regs(x, out)
    return out


def undefined_registers(fn):
    """Registers of ``fn`` that some instruction reads and none writes (a write is any register
    in an instruction's destination operand: vector and predicate-pair destinations included)."""
    written, read = set(), set()
    for st in fn.body or ():
        if isinstance(st, tuple) or not st.operands:
            continue
        dst, srcs = st.operands[0], st.operands[1:]
        if st.opcode in _STORES:
            _regs(st.operands, read)
        else:
            _regs(dst, written)
            if isinstance(dst, tuple) and dst[0] == "addr":     # an address destination is read
                _regs(dst, read)
            _regs(srcs, read)
        if st.guard is not None:
            read.add(st.guard[0])
    params = {p.name for p in fn.params} | {p.name for p in fn.rets}
    return {r for r in read - written if r in fn.regs and r not in params}


def watch(kernel):
    """Wrap the compiled instructions of ``kernel`` (runner.Kernel) that read an undefined
    register (before its runs are compiled); returns how many."""
    n = 0
    undefined = {}
    for pc, c in enumerate(kernel.compiled):
        fn = kernel.module.functions.get(c.func)
        if fn is None:
            continue
        if c.func not in undefined:
            undefined[c.func] = undefined_registers(fn)
        if not undefined[c.func]:
            continue
        ins = c.ptx
        regs = sorted(_regs(ins.operands if ins.opcode in _STORES else ins.operands[1:], set()) & undefined[c.func]
                      | ({ins.guard[0]} & undefined[c.func] if ins.guard else set()))
        if regs:
            c.exec = _wrapped(c.exec, ins, regs, c.func)
            n += 1
    return n


def _wrapped(run, ins, regs, func):
    def exec_(ex, lanes, pc):
        seen = ex.im.__dict__.setdefault("uninit_seen", set())
        if pc not in seen:
            seen.add(pc)
            lane = lanes[0] if lanes is not None and len(lanes) else \
                (ex.run_lanes[0] if ex.run_lanes is not None and len(ex.run_lanes) else 0)
            blk, thr = (tuple(int(v) for v in x) for x in ex.ch.where(int(lane)))
            src = ex.im.module.source(ins.loc)
            where = f" ({src})" if src else ""
            warnings.warn(SimGPUWarning(
                f"{ex.im.display_name}: PTX line {ins.line} `{ins.text.strip()}`{where} reads "
                f"{', '.join(regs)}, which no instruction of {'the kernel' if func == ex.im.kernel_name else func} writes (uninitialised: undefined in PTX, "
                f"LLVM poison); the GPU reads whatever its physical register held, simgpu reads 0 "
                f"-- first at block {blk}, thread {thr}"), stacklevel=2)
        return run(ex, lanes, pc)
    return exec_
