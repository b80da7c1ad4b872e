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
* instructions: :class:`SassInstCounter` counts, per executed PTX instruction, the warps and
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

import bisect
import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from ..errors import KernelError, LaunchError, SimGPUError
from ..exec.budget import LaunchWatch, RunawayLoopError, loop_words, no_progress_message, progress_check
from ..exec.counters import inst_metrics
from ..events import Observer, ProgramFacts
from ..frontend.lint import warn_lint
from ..model.occupancy import occupancy
from ..ptx.args import flatten_args
from ..ptx.emit import Emitter
from ..ptx.executor import Chunk as PtxChunk
from ..ptx.executor import Executor as PtxChunkExecutor
from ..ptx.memory import DeviceMemory, driver_span, next_place
from ..ptx.parser import parse_cached
from ..ptx.analysis import PtxLoops
from ..ptx.runner import Image, kernel_for
from ..ptx.types import bits
from ..sanitize import overrun
from ..sass import compile_kernel
from ..sass.facts import SassFacts
from ..sass.opclasses import base_opcode
from ..sass import devrt
from ..sass.toolchain import ToolFailedError, cc_for_gpu
from .compile_errors import learner_error, note_kernel_location, note_learner_reading
from .ptx_binding import kernel_args

MAX_STEPS = 10 ** 9


def cc_for(gpu):
    """Compute capability to compile for: the GPU's own (H100/H200 -> 9.0, A100 -> 8.0)."""
    cc = getattr(gpu, "compute_capability", None)
    if isinstance(cc, (tuple, list)) and len(cc) == 2:
        return (int(cc[0]), int(cc[1]))
    return cc_for_gpu(getattr(gpu, "name", gpu))


class SassInstCounter(Observer):
    """smsp__inst_executed & co. on the PTX path: every SASS instruction counted at its SASS
    basic block's executions (sass/flow.py), derived from the PTX lines' warp executions, the
    PTX loops' trip counts per warp entry and the divergent branches counted here; threads
    likewise.  Exposes ``metrics()`` and ``by_line()`` like exec.counters.InstCounter."""

    def __init__(self):
        self.facts = None
        self.per_line = {}          # PTX line -> [warp execs, thread execs]
        self.opcode = {}            # PTX line -> PTX opcode
        self.branches = defaultdict(lambda: [0, 0, 0])   # PTX line -> [warps, divergent, threads]
        self.resources = None
        self.cur_line = 0
        self.printed = []           # print()'s lines (the launch's Image.printed)
        self.max_steps = None       # launch.max_loop_iterations: steps of one PTX line per chunk
        self._steps = defaultdict(int)
        self.chunk = None
        self.kernel = ""
        self.grid_barriers = 0      # grid.sync() barriers the grid passed (cooperative groups)
        self.plan = None            # sass.flow.KernelPlan: SASS block counts from PTX loop trips
        self._watch = ()            # PTX lines where a watched loop's header or exit starts
        self._heads, self._exits = {}, {}
        self._cur = {}              # (function, PTX loop) -> per-warp iterations of the trip under way
        self.trips = defaultdict(lambda: defaultdict(int))   # (fn, loop) -> {trip: warp entries}
        self._rows = None
        self._wl = self._ww = None  # the last lanes array seen at a watched line, its warps

    def chunk_begin(self, chunk):
        """A new chunk: the loop budget counts its steps afresh."""
        self._steps.clear()
        self.chunk = chunk
        self._flush_all()

    def chunk_end(self, chunk):
        self._flush_all()

    # -- PTX loop trips per warp (sass/flow.py derives the SASS block counts from them) ----
    def _watch_loop(self, line, lanes):
        if lanes is self._wl:       # the executor passes one array while the chunk is converged
            w = self._ww
        else:
            w = lanes >> 5
            if len(w) > 1:
                w = w[np.flatnonzero(np.r_[True, w[1:] != w[:-1]])]
            self._wl, self._ww = lanes, w
        top = int(w[-1]) + 1
        for key in self._exits.get(line, ()):
            cur = self._cur.get(key)
            if cur is not None:
                self._flush(key, cur, w[w < len(cur)])
        for key in self._heads.get(line, ()):
            cur = self._cur.get(key)
            if cur is None or len(cur) < top:
                new = np.zeros(max(top, 2 * len(cur) if cur is not None else top), np.int64)
                if cur is not None:
                    new[:len(cur)] = cur
                cur = self._cur[key] = new
            cur[w] += 1

    def _flush(self, key, cur, w=None):
        """The trips of warps ``w`` (all: None) of loop ``key`` that are under way end."""
        v = cur if w is None else cur[w]
        v = v[v > 0]
        if len(v):
            h = self.trips[key]
            for n, c in zip(*np.unique(v, return_counts=True)):
                h[int(n)] += int(c)
            if w is None:
                cur[:] = 0
            else:
                cur[w] = 0

    def _flush_all(self):
        for key, cur in self._cur.items():
            self._flush(key, cur)

    def runaway(self, line, lanes):
        """A KernelError when one PTX instruction ran more than max_loop_iterations steps in a
        chunk: a loop around it iterated that often (the IR path's loop budget)."""
        s = self.facts.source.get(line) if self.facts else None
        loc = f"{s.file}:{s.line}" if s is not None else None
        c, lane = self.chunk, int(lanes[0])
        blk = c.block_of(lane) if c is not None else None
        thr = c.thread_of(lane) if c is not None else None
        raise KernelError(f"loop ran more than {self.max_steps} iterations (max_loop_iterations, "
                          "deprecated: use budget=simgpu.Budget(...))", loc=loc, kernel=self.kernel,
                          block=blk, thread=thr)

    def set_facts(self, facts, resources):
        self.facts, self.resources = facts, resources
        self.plan = facts.plan if facts is not None else None
        if self.plan is not None:
            self._heads, self._exits = self.plan.heads, self.plan.exits
            self._watch = set(self._heads) | set(self._exits)

    # -- the records of the PTX executor (ptx/emit.py) -----------------------------------
    def inst(self, ev):
        self.count(ev.ins.id, ev.ins.attrs["opcode"], ev.lanes, ev.warps)

    def branch(self, ev):
        """A bra whose lanes split: its warps with lanes on both sides are divergent."""
        if ev.taken is not None and ev.taken is not ev.mask:
            d = ev.divergent_warps
            if d:
                self.branches[ev.node.id][1] += d

    def count(self, line, opcode, lanes, warps=None):
        """`lanes`: the chunk lanes that executed PTX line `line` at one step (sorted);
        `warps`: how many warps they fill, if the caller knows."""
        self.cur_line = line
        n = len(lanes)
        if n == 0:
            return
        steps = self._steps[line] = self._steps[line] + 1
        if self.max_steps is not None and steps > self.max_steps:
            self.runaway(line, lanes)
        if warps is None:
            w = lanes >> 5
            warps = 1 + int(np.count_nonzero(w[1:] != w[:-1]))
        e = self.per_line.get(line)
        if e is None:
            e = self.per_line[line] = [0, 0]
            self.opcode[line] = opcode
        e[0] += warps
        e[1] += n
        if line in self._watch:
            self._watch_loop(line, lanes)
        if opcode == "bra":
            b = self.branches[line]
            b[0] += warps
            b[2] += n

    # -- results --------------------------------------------------------------------------
    def _n(self, line):
        return self.facts.count.get(line, 0) if self.facts else 1

    def sass_rows(self):
        """{PTX line (None: no line): [SASS warp executions, thread executions, undecided
        warp executions]} and {pipe: warp executions}: each SASS instruction counted at its
        block's executions (sass/flow.py), or, for code without a plan, a line's executions
        times its SASS instructions (sass/facts.py)."""
        if self._rows is not None and self._rows[0] == self._version():
            return self._rows[1], self._rows[2]
        self._flush_all()
        rows = defaultdict(lambda: [0.0, 0.0, 0.0])
        by_pipe = defaultdict(float)
        covered = set()
        if self.plan is not None:
            execs = {ln: w for ln, (w, _) in self.per_line.items()}
            tpw = {ln: t / w for ln, (w, t) in self.per_line.items() if w}
            covered = self.plan.lines
            div = {ln: d for ln, (_, d, _) in self.branches.items() if d}
            for ins, c, und, line, bline in self.plan.sass_executions(execs, self.trips, div):
                if not c:
                    continue
                r = rows[line]
                r[0] += c
                r[1] += c * tpw.get(bline, tpw.get(line, 0.0))
                if und:
                    r[2] += c
                by_pipe[ins.pipe] += c
        for line, (w, t) in self.per_line.items():
            if line in covered:
                continue
            n = self._n(line)
            r = rows[line]
            r[0] += w * n
            r[1] += t * n
            if self.facts:
                for p, k in self.facts.pipes.get(line, {}).items():
                    by_pipe[p] += w * k
        self._rows = (self._version(), dict(rows), dict(by_pipe))
        return self._rows[1], self._rows[2]

    def _version(self):
        return (len(self.per_line), sum(w for w, _ in self.per_line.values()))

    def totals(self):
        rows, by_pipe = self.sass_rows()
        warp = sum(r[0] for r in rows.values())
        thread = sum(r[1] for r in rows.values())
        return _int(warp), _int(thread), {p: _int(v) for p, v in by_pipe.items()}

    def metrics(self):
        warp, thread, by_pipe = self.totals()
        m = inst_metrics(warp, thread, self.branches, by_pipe)
        m["simgpu__ptx_inst_executed.sum"] = float(sum(w for w, _ in self.per_line.values()))
        if self.grid_barriers:
            m["simgpu__grid_barriers.sum"] = float(self.grid_barriers)
        for p, v in sorted(by_pipe.items()):
            m[f"smsp__inst_executed_pipe_{p}.sum"] = float(v)
        if self.facts:
            rows, _ = self.sass_rows()
            m["simgpu__inst_executed_no_source_line.sum"] = float(_int(sum(
                r[0] for ln, r in rows.items() if ln is None or self.facts.source.get(ln) is None)))
            m["simgpu__sass_inst_undecided.sum"] = float(_int(sum(r[2] for r in rows.values())))
        r = self.resources
        if r is not None:
            if r.registers is not None:
                m["launch__registers_per_thread"] = float(r.registers)
            m["simgpu__ptxas_spill_stores_bytes"] = float(r.spill_stores)
            m["simgpu__ptxas_spill_loads_bytes"] = float(r.spill_loads)
            m["simgpu__ptxas_stack_frame_bytes"] = float(r.stack_frame)
        return m

    def fill_report(self, rep):
        """What ran: the compiled kernel (rep.extras["ptx"]) and a line in print(report)."""
        if self.facts is None:
            return
        ck, r = self.facts.compiled, self.resources
        rep.extras["ptx"] = {"compiled": ck, "entry": ck.entry, "arch": ck.arch,
                             "registers": r.registers, "spill_stores": r.spill_stores,
                             "spill_loads": r.spill_loads, "stack_frame": r.stack_frame,
                             "shared_bytes": r.shared_bytes}
        rep.extras["executor"] = "ptx"
        rows, _ = self.sass_rows()
        total = sum(r[0] for r in rows.values())
        und = sum(r[2] for r in rows.values())
        rep.extras["sass_counts"] = {
            "method": "SASS basic blocks from PTX loop trips (sass/flow.py)" if self.plan is not None
            else "PTX executions x SASS per line (sass/facts.py)",
            "inst_executed": _int(total), "undecided_inst_executed": _int(und),
            "undecided_fraction": (und / total) if total else 0.0}
        rep.extras["printed"] = list(self.printed)     # print(): one line per thread per call

    def by_line(self):
        """(file, line) -> {inst_executed, thread_inst_executed[, divergent_branches]};
        code with no user line (the final ret) is left out (see the no_source_line metric)."""
        rows = defaultdict(lambda: {"inst_executed": 0, "thread_inst_executed": 0})
        src = self.facts.source if self.facts else {}
        sass, _ = self.sass_rows()
        for line, (w, t, _) in sass.items():
            s = src.get(line) if line is not None else None
            if s is None:
                continue
            r = rows[(s.file, s.line)]
            r["inst_executed"] += _int(w)
            r["thread_inst_executed"] += _int(t)
        for line, (w, d, t) in self.branches.items():
            s = src.get(line)
            if s is not None and d:
                r = rows[(s.file, s.line)]
                r["divergent_branches"] = r.get("divergent_branches", 0) + d
        return rows


def _int(x):
    """A count: an int where the block counts' shares made it fractional (rounded)."""
    return int(round(x))


# -- device memory at the IR binding's addresses ------------------------------------------
class PlacedMemory(DeviceMemory):
    """simgpu.ptx's device memory, with the argument arrays at the addresses the IR path's
    binding gave them (runtime/binding.bind_memory), named after their parameters.  Other
    allocations (the module's .global variables) follow the last one after a gap, as the
    arrays are placed: an access just past an array faults instead of landing in them."""

    def __init__(self, places):
        super().__init__()
        self.places = list(places)          # [(address, name)] in argument order

    def alloc(self, buf, name=""):
        if self.places:
            base, name = self.places.pop(0)
        else:
            base = next_place(max([self.next - 512] + [b + driver_span(u.size)
                                                        for b, u in zip(self.bases, self.bufs)]), buf.size)
        return self.add(base, buf, name)

    def add(self, base, buf, name=""):
        """Map the writable uint8 buffer `buf` at device address `base` (e.g. memory the
        program allocated before the launch, which the compiled code reaches by address)."""
        k = bisect.bisect(self.bases, base)
        self.bases.insert(k, base)
        self.bufs.insert(k, buf)
        self.names.insert(k, name)
        self.next = max(self.next, base + driver_span(buf.size) + 512)
        self._bases_arr = np.array(self.bases, np.uint64)
        return base


def program_facts(facts, ck):
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
                        source_lines=dict(facts.source or {}))


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
    counter: SassInstCounter
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
        try:
            ck = self.compile_program(program, args, cc_for(launch.gpu))
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
        counter = SassInstCounter()
        counter.set_facts(facts, res)
        counter.max_steps, counter.kernel = launch.max_loop_iterations, program_name
        launch.ptx = PtxLaunchState(ck, facts, counter, args)
        launch.facts = program_facts(facts, ck)
        if launch.registers_per_thread is None and res.registers is not None:
            launch.registers_per_thread = int(res.registers)
        dyn = int(launch.dynamic_smem_bytes or 0)
        if res.shared_bytes or dyn:
            launch.smem_bytes = int(res.shared_bytes or 0) + dyn
        check_shared_memory(launch, int(res.shared_bytes or 0), dyn, program_name)
        check_cooperative(launch, ck, program_name)
        add_source = getattr(launch.fn, "add_source", None)
        if add_source is not None:          # device functions' lines, from the PTX's .loc
            add_source({(s.file, s.line) for s in ck.ptx_source.values() if s is not None})
        return launch.ptx

    def compile_program(self, program, args, cc):
        """The CompiledKernel to run: numba-cuda's PTX for these arguments and ptxas' facts.
        (simgpu.host runs the PTX numba-cuda's own dispatcher compiled: it overrides this.)"""
        return compile_kernel(program.py_func, args, cc=cc, use_cache=self.use_cache)

    def make_memory(self, places):
        """The launch's global memory: the arguments at their places (simgpu.host adds the
        program's other device arrays, which kernels may reach through captured pointers)."""
        return PlacedMemory(places)

    def make_counter(self, launch):
        st = launch.ptx
        return st.counter if st is not None else SassInstCounter()

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
        counter.printed = image.printed     # print(): written to sys.stdout chunk by chunk
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
                counter.grid_barriers += getattr(ex, "grid_barriers", 0)
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
        add = getattr(o, "add_overruns", None)
        if add is not None:
            add(records)


def _program_of(launch, program):
    p = launch.program
    if p is None:
        raise LaunchError("PTXExecutor.run needs the kernel (launch.program) to compile it")
    return p


_UNRESOLVED = re.compile(r"Unresolved extern function '([^']+)'")
_EXTERN_FUNC = re.compile(r"^\s*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?([\w$]+)", re.M)
# extern functions the compiled code may call and simgpu.ptx does not provide: name -> why
# (vprintf, which print() compiles to, is implemented: simgpu/ptx/printf.py)
EXTERN_GAPS: dict[str, str] = {}


def _demangle(name):
    """'_ZL6__hadd6__halfS_' -> '__hadd' (the first Itanium-mangled name; `name` otherwise)."""
    m = re.match(r"_Z[LN]?(\d+)", name)
    return name[m.end():m.end() + int(m.group(1))] if m else name


def unlinked_extern_error(err, kernel):
    """A clear LaunchError for ptxas' 'Unresolved extern function' (numba's cuda.fp16 shims
    and other linked-in C functions: numba links them when it loads the module; the PTX that
    compile_ptx returns does not contain them), or None for any other tool failure."""
    names = _UNRESOLVED.findall(str(err))
    if not names:
        return None
    shown = ", ".join(sorted({_demangle(n) for n in names}))
    fp16 = any("half" in n or "hadd" in n or "hmul" in n for n in names)
    why = ("numba's cuda.fp16 operations (hadd, hmul, ...) call C shims that numba links in when it "
           "loads the module; " if fp16 else "the compiled code calls functions that numba links in "
           "when it loads the module; ")
    return LaunchError(f"executor='ptx': kernel {kernel!r} calls {shown}, which the PTX does not define: "
                       f"{why}simgpu does not link them yet, so ptxas cannot assemble the kernel "
                       f"(ptxas: {names[0]!r} unresolved)")


_TOO_MUCH_SHARED = re.compile(r"uses too much shared data \((0x[0-9a-fA-F]+) bytes, (0x[0-9a-fA-F]+) max\)")


def too_much_shared_error(err, kernel, gpu):
    """ptxas' 'uses too much shared data' as the LaunchError the IR path gives (or None)."""
    m = _TOO_MUCH_SHARED.search(str(err))
    if not m:
        return None
    used, limit = int(m.group(1), 16), int(m.group(2), 16)
    return LaunchError(f"kernel {kernel!r} declares {used:,} B of static shared memory per block; "
                       f"the limit for static shared arrays is {limit:,} B on the {gpu.name} "
                       "(static_shared_mem_per_block_bytes; ptxas refuses it)")


def check_externs(ck, kernel):
    """A clear LaunchError naming the user's line if the compiled code calls an extern
    function that simgpu.ptx does not implement (EXTERN_GAPS; none today)."""
    lines = ck.ptx.splitlines()
    for name in _EXTERN_FUNC.findall(ck.ptx):
        why = EXTERN_GAPS.get(name)
        if why is None:
            continue
        where = ""
        for n, text in enumerate(lines, 1):
            if text.strip().rstrip(",") == name and n > 1 and "call" in lines[n - 2]:
                src = ck.ptx_source.get(n - 1) or ck.ptx_source.get(n)
                if src is not None:
                    where = f" at {src.file}:{src.line}"
                    break
        raise LaunchError(f"executor='ptx': kernel {kernel!r} calls {name}{where}: {why}")


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


def launch_args(launch):
    """The kernel's arguments in parameter order: the working arrays the binding made (the
    user's arrays or C-contiguous copies, copied back by binding.copy_back), scalars, tuples."""
    return kernel_args(launch.fn, launch.bindings)


# -- runaway loops on the compiled path (exec/budget.py says what and why) -------------------
def _same_reg(a, b):
    if a is None or b is None:
        return a is b
    if a.shape != b.shape:
        if a.ndim and b.ndim:
            return False
        a, b = np.broadcast_arrays(a, b)
    return a.dtype == b.dtype and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


class _LoopRun:
    __slots__ = ("loop", "n", "snap_n", "snap")

    def __init__(self, loop):
        self.loop, self.n, self.snap_n, self.snap = loop, 0, -1, None


class PtxLoopWatch(Observer):
    """Per chunk, an observer of every executed instruction's record: which loops the running lanes
    are in (a stack: loops nest as contiguous pc ranges), their visits of the loop head, the
    no-progress check at visits 2, 3, 5, 9, ... (cycles: 17..24, 33..40, ...; exec.budget.progress_check) and the launch's budget (exec.budget)."""

    def __init__(self, loops, watch):
        self.loops, self.watch = loops, watch     # loops: head pc -> PtxLoop (lazily built)
        self.stack = []

    def inst(self, ev):
        self.step(ev, ev.warps)

    def step(self, ev, warps):
        w = self.watch
        w.instructions += warps
        pc, st = ev.pc, self.stack
        while st:
            top = st[-1].loop
            if top.head <= pc <= top.end or self.loops.func_of[pc] != top.fn:
                break
            st.pop()
        if pc not in self.loops.heads:
            return
        if not st or st[-1].loop.head != pc:
            st.append(_LoopRun(self.loops.get(pc)))
        run = st[-1]
        run.n += 1
        n = run.n
        if n > 1:
            w.tick(run.loop.loc, n - 1, lambda: _where(ev))
        check, snap = progress_check(n, run.snap_n, run.loop.full)     # exec/budget.py
        if check or snap:
            state = self.state(run.loop, ev)
            if check and len(state) == len(run.snap) and all(_same_reg(a, b) for a, b in zip(state, run.snap)):
                self.stuck(run.loop, ev, n - run.snap_n)
            if snap:
                run.snap_n, run.snap = n, state

    def state(self, loop, ev):
        ex = ev.state
        lanes = np.asarray(ev.lanes)
        s = [lanes.copy()]
        keys = sorted(ex.regs, key=str) if loop.full else loop.deciding
        for k in keys:
            a = ex.regs.get(k)
            s.append(None if a is None else np.array(a, copy=True))
        if loop.full:
            s.append(str(keys))
            pcs = ex.pc.copy()
            pcs[lanes] = ev.pc
            s += [pcs, ex.status.copy(), ex.depth.copy(), ex.shared.buf.copy(), ex.local.buf.copy()]
        return [x if isinstance(x, np.ndarray) or x is None else np.frombuffer(x.encode(), np.uint8)
                for x in s]

    def stuck(self, loop, ev, period=1):
        regs = [r for _, r in loop.deciding]
        names = f"registers {', '.join(regs[:8])}{' ...' if len(regs) > 8 else ''}" if regs else \
            "none of its registers change"
        msg = no_progress_message(loop.loc, [], memory=loop.reads_memory, period=period)
        blk, thr = _where(ev)
        _, ls = loop_words(loop.loc)
        raise RunawayLoopError(f"{msg} (compiled path: {names})",
                               loc=f"{ls.file}:{ls.line}" if ls is not None else loop.loc,
                               kernel=self.watch.kernel, block=blk, thread=thr)


def _where(ev):
    lanes = ev.lanes
    return ev.state.ch.where(int(lanes[0])) if len(lanes) else (None, None)
