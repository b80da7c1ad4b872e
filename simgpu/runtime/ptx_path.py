"""The PTX executor: run what the compiler emits.

``launch(k, grid, block, args, executor="ptx")`` compiles the kernel with numba-cuda for the
launch's GPU (simgpu.sass.compile_kernel: PTX, ptxas resources, SASS per PTX line), runs the
PTX with simgpu.ptx over the launch's chunks; the PTX executor's Emitter (ptx/emit.py) hands
the observers the records of simgpu/events.py, so the shared models count what the compiled
code does:

* memory: every executed ld/st/atom/red becomes a ``MemEvent`` whose ``inst`` is
  a :class:`PtxInst` (stable id = the PTX line, ``loc`` = the user's source line from the
  PTX ``.loc``).  Addresses are those the compiled code computes: global = device addresses
  (placed where the IR path's binding places the arrays, so both paths see the same
  addresses), shared = offsets in the block's window, local = per-thread offsets in the PTX
  ``.local`` frame; the access size is the PTX access's (``.v2``/``.v4`` vectors: all of it).
* instructions: ``exec.counters.InstCounter`` (with the ``CompiledSass`` cost source) counts, per executed PTX instruction, the warps and
  threads that executed it, each PTX loop's trip count per warp entry and the divergent
  branches; ``sass/flow.py`` turns them into executions of every SASS basic block (unrolled
  main and remainder loops follow the trip counts; ``$__internal_*`` subroutines once per
  CALL, slow paths not taken).  Code without a plan: a line's executions times its SASS.

The launch's ProgramFacts (:func:`program_facts`, read by the memory model's constructor):
the per-thread local frame that interleaves local memory is the PTX ``.local`` frame of the
kernel; the reductions (atomics compiled to RED) are the atomics whose PTX line ptxas turned
into a RED* SASS instruction.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


from ..errors import LaunchError, SimGPUError
from ..exec.budget import LaunchWatch, PtxLoopWatch
from ..exec.counters import CompiledSass, InstCounter
from ..events import ProgramFacts
from ..frontend.lint import warn_lint
from ..model.occupancy import occupancy
from ..ptx.args import flatten_args
from ..ptx.emit import Emitter
from ..ptx.executor import Chunk as PtxChunk
from ..ptx.executor import Executor as PtxChunkExecutor
from ..ptx.memory import DeviceMemory
from ..ptx.parser import parse_cached
from ..ptx.analysis import PtxLoops
from ..ptx.runner import Image, kernel_for
from ..ptx.types import bits
from ..sanitize import overrun
from ..sass import compile_kernel
from ..sass.facts import SassFacts
from ..sass.opclasses import base_opcode
from ..sass import devrt
from ..sass.toolchain import ToolFailedError, cast_to_signature, cc_for_gpu, explicit_signature
from .compile_errors import (check_externs, learner_error, note_kernel_location, note_learner_reading,
                             too_much_shared_error, unlinked_extern_error)
from .ptx_binding import kernel_args

MAX_STEPS = 10 ** 9


def cc_for(gpu):
    """Compute capability to compile for: the GPU's own (H100/H200 -> 9.0, A100 -> 8.0)."""
    cc = getattr(gpu, "compute_capability", None)
    if isinstance(cc, (tuple, list)) and len(cc) == 2:
        return (int(cc[0]), int(cc[1]))
    return cc_for_gpu(getattr(gpu, "name", gpu))


# -- device memory at the IR binding's addresses ------------------------------------------
_PROGRAM_MEMORY: list = [None]      # simgpu.host's launch memory (its device arrays), while installed


def set_program_memory(factory):
    """Make every compiled-path launch's global memory with ``factory(places)`` (simgpu.host's
    install(): the program's device arrays mapped at their addresses, so a plain
    ``simgpu.launch`` reaches them as a numba launch does), or the arguments alone again (None)."""
    _PROGRAM_MEMORY[0] = factory


def program_facts(facts, ck, var_types=None):
    """ProgramFacts of the compiled kernel: its local frame is the PTX .local frame (16-byte
    rounded, at least 16 B, as for the IR), its reductions the atomics ptxas compiled to RED
    (by PTX line, the id of the observers' PtxInst)."""
    module = parse_cached(ck.ptx)
    kernel = kernel_for(module, module.entry(ck.entry))
    local = kernel.local_size
    reds = frozenset(ln for ln, ops in facts.sass.items()
                     if any(base_opcode(op).startswith("RED") for op in ops))
    widths = [_access_bytes(ins.types[0]) for ins in kernel.linked.code
              if ins.opcode in ("ld", "ldu", "st", "atom", "red") and ins.types
              and not any(m in ("global", "local", "const", "param") for m in ins.mods)]
    return ProgramFacts(max(16, -(-int(local) // 16) * 16), reds,
                        shared_access_bytes=max(1, min(widths, default=1)),
                        shared_symbols=dict(kernel.shared_off),
                        source_lines=dict(facts.source or {}), var_types=dict(var_types or {}))


def _access_bytes(t):
    """Bytes one lane's access of PTX type ``t`` moves (1 for a type without a numpy form)."""
    try:
        return max(1, bits(t) // 8)
    except SimGPUError:
        return 1


# -- the executor ------------------------------------------------------------------------
@dataclass(eq=False)
class PtxLaunchState:
    compiled: object
    facts: SassFacts
    counter: InstCounter
    args: list
    image: object = None        # the launch's runner.Image, once it runs


class PTXExecutor:
    """Runs the kernel's compiled PTX (numba-cuda -> PTX, ptxas' SASS for the counts)."""

    name = "ptx"
    supports_timing = True
    binds_python = True     # launch binds from the Python signature, not simgpu's frontend
    bare_pointers = False   # arrays as numba's array structs; PTX from C or Triton takes bare pointers

    def __init__(self, use_cache=True):
        self.use_cache = use_cache

    # -- launch hooks (runtime/launch.py) ---------------------------------------------------
    def prepare(self, program, launch, values=None):
        """Compile for the launch's GPU; set the launch's registers and shared memory from
        ptxas.  Called after binding, before the models are built."""
        args = launch_args(launch)
        warn_lint(program.py_func)          # mistakes numba compiles (a barrier not called)
        dispatcher = getattr(program, "numba_dispatcher", None)
        sig = explicit_signature(dispatcher, args) if dispatcher is not None else None
        if sig is not None:         # cuda.jit("void(...)"): numba casts to the signature's types
            args = cast_to_signature(sig, args)
        try:
            ck = self.compile_program(program, args if sig is None else sig, cc_for(launch.gpu))
        except ToolFailedError as e:
            raise unlinked_extern_error(e, program.name) or too_much_shared_error(e, program.name, launch.gpu) or e
        except SimGPUError:
            raise
        except Exception as e:
            if type(e).__module__.startswith("numba"):
                note_kernel_location(e, program.py_func)
                note_learner_reading(e, program, values)
                raise               # numba's typing/lowering errors reach the user unchanged
            mine = learner_error(program, values)
            if mine is not None and type(e) in (TypeError, NotImplementedError, AttributeError):
                raise mine from e   # numba's Python failed outside its typing: say what was written
            err = LaunchError(f"executor='ptx': compiling {program.name} with numba-cuda failed: "
                              f"{type(e).__name__}: {e}")
            if mine is not None:
                err.add_note(f"simgpu's reading of this mistake: {mine}")
            raise err from e
        return self.adopt(ck, launch, program.name, program.py_func.__code__.co_filename, args)

    def adopt(self, ck, launch, program_name, kernel_file, args):
        """The launch runs CompiledKernel `ck` with `args` (its parameters in order): the SASS
        facts, the counter, ptxas' registers and shared memory, the checks."""
        check_externs(ck, program_name)
        res = ck.resources
        facts = SassFacts(ck, kernel_file)
        counter = InstCounter(CompiledSass(facts, res), max_steps=launch.max_loop_iterations, kernel=program_name)
        launch.ptx = PtxLaunchState(ck, facts, counter, args)
        launch.facts = program_facts(facts, ck, getattr(launch.fn, "var_types", None))
        if launch.registers_per_thread is None and res.registers is not None:
            launch.registers_per_thread = int(res.registers)
        dyn = int(launch.dynamic_smem_bytes or 0)
        if res.shared_bytes or dyn:
            launch.smem_bytes = int(res.shared_bytes or 0) + dyn
        check_shared_memory(launch, int(res.shared_bytes or 0), dyn, program_name)
        check_cooperative(launch, ck, program_name)
        check_launch_bounds(launch, ck, program_name)
        add_source = getattr(launch.fn, "add_source", None)
        if add_source is not None:          # device functions' lines, from the PTX's .loc
            add_source({(s.file, s.line) for s in ck.ptx_source.values() if s is not None})
        return launch.ptx

    def compile_program(self, program, args, cc):
        """The CompiledKernel to run: numba-cuda's PTX for these arguments (or numba types) and
        ptxas' facts; a numba dispatcher's with its options.  (simgpu.host runs the PTX
        numba-cuda's own dispatcher compiled: it overrides this.)"""
        kernel = getattr(program, "numba_dispatcher", None) or program.py_func
        return compile_kernel(kernel, args, cc=cc, use_cache=self.use_cache)

    def make_memory(self, places):
        """The launch's global memory: the arguments at their places, and where simgpu.host is
        installed the program's device arrays at their own addresses (``set_program_memory``:
        a kernel reaches them through captured or passed pointers, as on the GPU)."""
        factory = _PROGRAM_MEMORY[0]
        return factory(places) if factory is not None else DeviceMemory(places)

    def make_counter(self, launch):
        st = launch.ptx
        return st.counter if st is not None else InstCounter(CompiledSass())

    # -- Executor.run ------------------------------------------------------------------------
    def run(self, program, launch, observers) -> int:
        st = launch.ptx
        if st is None:
            st = self.prepare(_program_of(launch, program), launch)
        observers = list(observers)
        counter = st.counter
        if launch.cooperative:     # grid.sync(): the whole grid in one chunk
            launch.blocks_per_chunk = max(launch.blocks_per_chunk, launch.n_blocks)
        places = [(h.base_addr, h.name) for h in launch.handles]
        values, memory, copies = flatten_args(st.args, memory=self.make_memory(places),
                                              pointers=self.bare_pointers)
        module = parse_cached(st.compiled.ptx)
        entry = module.entry(st.compiled.entry)
        image = Image(module, entry, launch.grid, launch.block, values, memory,
                      int(launch.dynamic_smem_bytes or 0), MAX_STEPS,
                      display_name=launch.kernel_name,      # the Python name, not the mangled one
                      poison=launch.poison)    # shared/local memory's first byte
        launch.ptx.image = image
        counter.attach_output(image.printed)    # print(): written to sys.stdout chunk by chunk
        loops, watch = PtxLoops(image), LaunchWatch(launch.budget, launch.kernel_name)
        others = [o for o in observers if o is not counter]
        code, facts = image.linked.code, st.facts

        def insts(pc, space=None):      # the observers' PtxInst of a pc (one per PTX line)
            c = code[pc]
            return facts.inst(c.line, c.opcode, c.text, space)
        executed = 0
        try:
            for index, first, n in launch.chunks():
                chunk = PtxChunk(first, n, launch.grid, launch.block, index=index)
                for o in observers:
                    o.chunk_begin(chunk)
                em = Emitter([counter, PtxLoopWatch(loops, watch)] + others, chunk, code, insts,
                             launch.handles, local_issued=st.facts.issues_local())
                ex = PtxChunkExecutor(image, chunk, em)
                ex.run()
                counter.add_grid_barriers(ex.grid_barriers)
                for o in observers:
                    o.chunk_end(chunk)
                executed += n
                launch.chunk_done(index)
        finally:
            if image.overruns:      # past an end, inside the driver's rounding: run, reported
                report_overruns(image.overruns, launch.kernel_name, observers)
        for orig, buf in copies:
            orig[...] = buf
        return executed


def report_overruns(records, kernel, observers):
    """Accesses past an array's end inside cuMemAlloc's rounding (sanitize/overrun.py): a
    warning per source line; memcheck findings for a sanitizer among the observers."""
    overrun.warn(records, kernel, stacklevel=5)
    for o in observers:
        o.add_overruns(records)


def _program_of(launch, program):
    p = launch.program
    if p is None:
        raise LaunchError("PTXExecutor.run needs the kernel (launch.program) to compile it")
    return p


def check_shared_memory(launch, static, dynamic, name):
    """ptxas' static shared memory against the static limit; static + dynamic (the launch's
    shared_bytes) against the per-block limit with opt-in."""
    gpu = launch.gpu
    if static > gpu.static_shared_mem_per_block_bytes:
        raise LaunchError(f"kernel {name!r} declares {static:,} B of static shared memory per block; "
                          f"the limit for static shared arrays is {gpu.static_shared_mem_per_block_bytes:,} B "
                          "(static_shared_mem_per_block_bytes)")
    if static + dynamic > gpu.max_shared_mem_per_block_bytes:
        raise LaunchError(f"kernel {name!r} uses {static:,} B static + {dynamic:,} B dynamic shared memory "
                          f"per block; the {gpu.name} allows at most {gpu.max_shared_mem_per_block_bytes:,} B "
                          "per block (max_shared_mem_per_block_bytes)")


def check_cooperative(launch, ck, name):
    """A kernel that synchronises its grid (cooperative groups' grid.sync()) is launched
    cooperatively, as numba does (cuLaunchCooperativeKernel): every block must be resident at
    once, else the launch fails with CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE.  Resident blocks
    come from the occupancy calculator with ptxas' registers (32 where ptxas did not run).
    Marks the launch ``cooperative`` (run() then executes the grid as one chunk)."""
    if not devrt.uses_grid_sync(ck.ptx):
        return
    launch.cooperative = True
    regs = launch.registers_per_thread or 32
    occ = occupancy(launch.gpu, launch.threads_per_block, regs, launch.smem_bytes)
    most = occ.blocks_per_sm * launch.gpu.sm_count
    if launch.n_blocks > most:
        raise LaunchError(f"kernel {name!r} synchronises its grid (grid.sync()), so it is launched "
                          f"cooperatively: all {launch.n_blocks:,} blocks must be resident at once, and the "
                          f"{launch.gpu.name} holds at most {most:,} of them ({occ.blocks_per_sm} per SM x "
                          f"{launch.gpu.sm_count} SMs at {launch.threads_per_block} threads, {regs} registers, "
                          f"{launch.smem_bytes:,} B shared per block; CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE). "
                          "Launch at most max_cooperative_grid_blocks() blocks")


_MAXNTID = re.compile(r"^\s*\.maxntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", re.M)


def check_launch_bounds(launch, ck, name):
    """A block of more threads than the kernel's launch bounds (``.maxntid``:
    ``cuda.jit(launch_bounds=...)``) does not launch on a GPU: the driver's
    CUDA_ERROR_INVALID_VALUE."""
    m = _MAXNTID.search(ck.ptx)
    if m is None:
        return
    limit = 1
    for g in m.groups():
        if g:
            limit *= int(g)
    if launch.threads_per_block > limit:
        raise LaunchError(f"CUDA_ERROR_INVALID_VALUE: kernel {name!r} launched with {launch.threads_per_block} "
                          f"threads per block; its launch bounds (.maxntid) allow {limit}")


def launch_args(launch):
    """The kernel's arguments in parameter order: the working arrays the binding made (the
    user's arrays or C-contiguous copies, copied back by binding.copy_back), scalars, tuples."""
    return kernel_args(launch.fn, launch.bindings)


# -- runaway loops on the compiled path (exec/budget.py says what and why) -------------------
