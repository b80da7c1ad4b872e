"""launch: one kernel launch on the modelled GPU, as a list of named steps

    specialise -> bind -> plan -> run chunks -> collect -> report

Each step is a function below; `launch` is their composition.  The executor is chosen
behind one small interface (runtime/executor.py); the memory and timing models are
observers of the executor (exec/state.py's contract) that fill the Report at the end.
"""
from __future__ import annotations

import numbers
import time
import warnings

import numpy as np

from .. import settings
from ..errors import ArgumentError, KernelError, LaunchError
from ..tracebacks import user_facing
from ..exec.budget import as_budget
from ..exec.counters import InstCounter
from ..exec.state import POISON
from ..hardware import get_gpu
from ..ir import types as ir_types
from ..events import Launch, Observer, ProgramFacts  # noqa: F401  (Launch: re-exported; it lives in events)
from ..memory import MemoryModel
from ..memory.model import ir_local_frame
from ..memory.reductions import reduction_ids
from ..memory.per_thread import PerThreadCounts
from ..model.occupancy import occupancy
from ..sanitize import Sanitizer, current_collector, parse_tools
from ..sanitize.hazards import HazardCheck
from ..sanitize.hazards import warn as hazard_warn
from ..sanitize.scratch import launch_done
from ..timing import TimingModel
from ..timing.sampling import plan_waves, stratum_weights
from .binding import bind_args, bind_memory, check_launch, copy_back, dim3, shared_layout
from .compile_errors import readable_error
from .executor import get_executor
from .gcpolicy import fewer_full_collections
from .foreign import ForeignProgram, ForeignPTXExecutor
from .ptx_path import cc_for
from .program import as_program
from .progress import LaunchProgress
from .ptx_binding import bind_args_python, bind_memory_python, python_signature
from .report import Report, kernel_title
from .triton_door import (TIME_METRIC, apply_heuristics, config_meta, is_triton, layers, named_args,
                          pruned_configs, triton_function, triton_ptxas, tune_key)

DEFAULT_CHUNK_LANES = 1 << 19
SANITIZE_CHUNK_LANES = 1 << 15       # smaller chunks bound the sanitizer's shadow memory


# -- the steps ----------------------------------------------------------------------------
def specialise(kernel, grid, block, args):
    """Type the kernel for these arguments (numba's rules) -> (program, IR, arg values)."""
    k = as_program(kernel)
    if not isinstance(args, (tuple, list)):
        args = (args,)
    types_, values = bind_args(k.lower(), k.name, args)
    return k, k.specialize(types_), values


def bind(k, fn, gpu, grid, block, values, registers_per_thread, max_loop_iterations):
    """Check the launch against the GPU and place the arguments at device addresses."""
    layout, smem = shared_layout(fn)
    check_launch(gpu, grid, block, smem, k.name)
    bindings, handles = bind_memory(fn, values)
    return Launch(k.name, fn, gpu, grid, block, handles, smem, bindings=bindings, smem_layout=layout,
                  registers_per_thread=registers_per_thread, max_loop_iterations=max_loop_iterations)


DYNAMIC_SMEM_IR = ("dynamic shared memory is not supported yet on the IR path; use cuda.shared.array "
                   "with a constant shape, or executor='ptx' (the compiled code) which supports it")


def specialise_python(kernel, args):
    """The compiled path's first step: no simgpu frontend -- the parameters from the Python
    signature, the argument values as given (numba-cuda types them when it compiles)."""
    if not isinstance(args, (tuple, list)):
        args = (args,)
    if isinstance(kernel, ForeignProgram):      # PTX from Triton or NVRTC (runtime/foreign.py)
        return kernel, kernel.signature(), kernel.bind_args(args)
    k = as_program(kernel)
    sig = python_signature(k.py_func)
    return k, sig, bind_args_python(sig, args)


def bind_python(k, sig, gpu, grid, block, values, registers_per_thread, max_loop_iterations,
                shared_bytes=0):
    """bind() for the compiled path: arrays placed as bind() places them; the static shared
    memory is ptxas' (set, and checked, when the executor compiles: PTXExecutor.prepare)."""
    check_launch(gpu, grid, block, 0, k.name)
    bindings, handles = bind_memory_python(sig, values, keep_offsets=isinstance(k, ForeignProgram))
    return Launch(k.name, sig, gpu, grid, block, handles, shared_bytes, bindings=bindings,
                  registers_per_thread=registers_per_thread, max_loop_iterations=max_loop_iterations,
                  dynamic_smem_bytes=shared_bytes)


def check_shared_bytes(shared_bytes):
    try:
        n = int(shared_bytes)
    except (TypeError, ValueError):
        raise LaunchError(f"shared_bytes (dynamic shared memory per block) must be an int, "
                          f"not {shared_bytes!r}") from None
    if n < 0 or n != shared_bytes:
        raise LaunchError(f"shared_bytes (dynamic shared memory per block) must be an int >= 0, "
                          f"not {shared_bytes!r}")
    return n


def make_models(info, memory, timing, timing_detail, sample, executor=None):
    """The instruction counter (the executor's own, if it has one) and the memory and timing
    models, as observers.  (sample=True without the timing model runs the waves planned from
    the occupancy and scales the instruction counts: sampled_blocks, make_report.)"""
    counter = executor.make_counter(info) if executor is not None else InstCounter()
    memory_model = memory if isinstance(memory, type) and issubclass(memory, MemoryModel) else MemoryModel
    mm = memory_model(info.gpu, info) if memory else None
    tm = (TimingModel(info.gpu, info, memory_model=mm, registers_per_thread=info.registers_per_thread,
                      detail=timing_detail) if timing else None)
    return counter, mm, tm


def sample_plan(info, tm):
    """The WavePlan of a sampled launch: the timing model's or, without it, the same waves
    planned from the occupancy."""
    if tm is not None:
        return tm.plan
    occ = occupancy(info.gpu, info.threads_per_block, info.registers_per_thread or 32, info.smem_bytes)
    return plan_waves(info.n_blocks, occ.blocks_per_sm, info.gpu.sm_count)


def sampled_blocks(info, tm):
    """What a sampled launch runs: (SM 0's blocks -- a chunk runs only if it holds one --,
    the (first block, blocks) runs a chunk is cut to: the slices of the sampled full waves
    that hold SM 0's main blocks, one wave's worth in all, and the partial last wave
    (sampling.sample_runs), the blocks of a wave: a slice's share of the caches), from the
    timing model's plan or, without it, the same waves planned from the occupancy."""
    plan = sample_plan(info, tm)
    return set(plan.main_blocks) | set(plan.tail_blocks), plan.runs, plan.wave_size


class ChunkCounts(Observer):
    """Sampled execution: the counter's smsp__ totals after each chunk, so that each chunk's
    counts are scaled by the blocks of its stratum it stands for (stratified_counts)."""

    def __init__(self, counter):
        self.counter, self.rows = counter, []

    def chunk_end(self, chunk):
        m = self.counter.metrics()
        self.rows.append((chunk.first_block, chunk.n_blocks,
                          {k: v for k, v in m.items() if k.startswith("smsp__")}))


def stratified_counts(plan, rows):
    """{smsp__ metric: its estimate over all blocks}: each chunk's counts (the differences of
    ChunkCounts' totals) times the blocks each of its blocks stands for in its stratum
    (sampling.stratum_weights); None where the strata do not apply (a grid under one wave)."""
    weights = stratum_weights(plan, [(first, n) for first, n, _ in rows])
    if weights is None:
        return None
    est, before = {}, {}
    for (_, _, m), w in zip(rows, weights):
        for key, v in m.items():
            est[key] = est.get(key, 0.0) + (v - before.get(key, 0.0)) * w
        before = m
    return est


def plan_chunks(info, chunk_lanes, mm, tm, sample, progress):
    """How many blocks each chunk holds (the memory model may ask for fewer), and which run."""
    per_chunk = max(1, chunk_lanes // (info.warps_per_block * 32))
    if mm is not None:
        per_chunk = mm.chunk_blocks(per_chunk)
    info.blocks_per_chunk = per_chunk
    if sample:
        info.wanted_blocks, info.wanted_runs, info.sampled_wave_blocks = sampled_blocks(info, tm)
    info.show_progress = progress       # None: shown when the launch is estimated slow (runtime/progress.py)
    if progress is not False:           # the estimate and progress, from the first chunk on
        info.progress = LaunchProgress(info.kernel_name, progress, sampled=info.wanted_blocks is not None,
                                       launch_text=f"{info.n_blocks:,} blocks x {info.threads_per_block} threads")


def qualname_of(k):
    """The kernel's Python __qualname__ ('map_test.<locals>.call'), else its name."""
    return getattr(getattr(k, "py_func", None), "__qualname__", k.name)


def make_report(k, info, counter, models, executed, sample, chunk_counts=None):
    """The Report: instruction counts, launch facts, then each model's metrics."""
    rep = Report(k.name, info.gpu, info.grid, info.block, source=dict(info.fn.source_lines),
                 qualname=qualname_of(k))
    rep.metrics.update(counter.metrics())
    rep.lines = {key: dict(v) for key, v in counter.by_line().items()}
    counter.fill_report(rep)                               # what ran (the PTX path: the SASS)
    rep.metrics["launch__grid_size"] = float(info.n_blocks)
    rep.metrics["launch__block_size"] = float(info.threads_per_block)
    rep.metrics["launch__shared_mem_per_block_static"] = float(info.smem_bytes - info.dynamic_smem_bytes)
    if info.dynamic_smem_bytes:
        rep.metrics["launch__shared_mem_per_block_dynamic"] = float(info.dynamic_smem_bytes)
    if sample:
        scale = info.n_blocks / max(1, executed)
        tm = models[-1] if models and isinstance(models[-1], TimingModel) else None
        est = stratified_counts(sample_plan(info, tm), chunk_counts.rows) if chunk_counts is not None else None
        raw = rep.metrics.get("smsp__inst_executed.sum", 0.0)
        if est is not None and raw > 0:     # one scale for what is not counted per chunk: the warp instructions'
            scale = est.get("smsp__inst_executed.sum", raw * scale) / raw
        if tm is not None:
            tm.set_count_scale(scale)
        else:                       # no timing model to extrapolate: scale the instruction counts
            for key in [key for key in rep.metrics if key.startswith("smsp__")]:
                rep.metrics[key] = est[key] if est is not None and key in est else rep.metrics[key] * scale
        rep.extras["sampled_execution"] = {"executed_blocks": executed, "scale": scale}
    rep.extras["compile_seconds"] = info.prepare_seconds     # wall time; ~0 once the kernel is cached
    for m in models:
        m.fill_report(rep)
    return rep


def check_timing(ex, timing):
    """timing=None: on where the executor can feed the timing model."""
    supported = ex.supports_timing
    if timing is None:
        return supported
    if timing and not supported:
        raise LaunchError(f"executor={ex.name!r} cannot feed the timing model; use timing=False")
    return bool(timing)


def prepare(ex, k, info, values):
    """The executor's own preparation (the PTX executor compiles the kernel here and sets the
    launch's registers and shared memory from ptxas) before the models are built."""
    info.program = k
    t0 = time.perf_counter()
    ex.prepare(k, info, values)
    info.prepare_seconds = time.perf_counter() - t0
    if info.facts is None:                  # simgpu's IR is the program that runs
        shared = getattr(info.fn, "shared", None) or {}
        widths = [ir_types.np_dtype(dt).itemsize for _, dt in shared.values()]
        info.facts = ProgramFacts(ir_local_frame(info.fn), frozenset(reduction_ids(info.fn)),
                                  shared_access_bytes=max(1, min(widths, default=1)),
                                  var_types=dict(info.fn.var_types))


def budget_of(budget, max_loop_iterations):
    """launch's budget (exec.budget.as_budget); max_loop_iterations is deprecated."""
    if max_loop_iterations is not None:
        warnings.warn("max_loop_iterations is deprecated: loops without progress are stopped at once, "
                      "and budget=simgpu.Budget(seconds=..., instructions=...) bounds a launch",
                      DeprecationWarning, stacklevel=3)
    return as_budget(budget)


@user_facing(translate=readable_error)
@fewer_full_collections()
def launch(kernel, grid, block, args, gpu=None, observers=(), memory=True, timing=None,
           chunk_lanes=DEFAULT_CHUNK_LANES, max_loop_iterations=None, progress=None,
           registers_per_thread=None, sample=False, timing_detail="auto", executor="auto", shared_bytes=0,
           budget=None, check=None, poison=POISON, **meta):
    """Run `kernel` on the modelled GPU and return a Report.  Arrays in `args` are updated in place.

    kernel: a simgpu or numba.cuda kernel, a ``@triton.jit`` function (then `block` is None,
        `grid` is Triton's -- a tuple or a callable of the meta-parameters -- and `meta` holds
        the constexprs, num_warps and num_stages: docs/triton.md) or ``simgpu.cuda_source(...)``.

    gpu: a preset name ("H200", "H100", "A100", "V100") or a simgpu.hardware.GPU; default H200.
    memory / timing: switch the memory and timing models on or off (timing=None: on).  memory
        may also be a MemoryModel class, e.g. simgpu.memory.PerfectMemory for a what-if.
    registers_per_thread: override ptxas' count (or, on the IR path, the estimate); occupancy and
        timing use it.
    sample: run only the blocks the timing model samples (the first wave, up to 3 more full
        waves spread over the grid, the partial last wave: timing/sampling.py) and scale the
        counts up, each stratum's by the blocks it stands for: fast predictions for big
        launches, outputs only partly computed.  The error this adds is measured in docs/timing.md.
    timing_detail: "auto" (sampled loops and waves) or "full" (see simgpu/timing/model.py).
    executor: "auto" (the default: "ptx" where numba-cuda and ptxas are installed, else "ir";
        $SIMGPU_EXECUTOR overrides), "ptx" (the code numba-cuda compiles for the GPU, executed
        as PTX and costed with ptxas' SASS; runtime/ptx_path.py: numba-cuda types the kernel
        and its errors reach the caller with simgpu's reading first: runtime/compile_errors.py),
        "ir" (simgpu's own IR interpreter, for machines without the toolchain) or an object
        with Executor's `run`.
    shared_bytes: dynamic shared memory per block (``kernel[grid, block, stream, N]``;
        ``cuda.shared.array(0, dtype)`` in the kernel).  PTX path only.
    check: the sanitizer (docs/sanitizer.md): True for compute-sanitizer's four tools
        (memcheck, racecheck, initcheck, synccheck), a tool's name or a list of names; the
        findings are ``report.sanitizer`` and part of ``print(report)``.  A fault that stops
        the kernel (an out-of-bounds access) is a finding too: the launch returns the report
        (its counts cover the work before the fault, ``report.extras["fault"]`` says where it
        stopped) instead of raising.  Off by default (it costs several times the launch);
        None: on inside ``simgpu.sanitize.collecting()`` (``simgpu run --check``), where a
        fault is raised to the program, as the GPU's launch fails.
    poison: the byte shared and local memory start as: 0xFF (default: NaN for every float
        width, -1 for integers), any 0..255, or None for zeros.
    budget: what the launch may spend before it is stopped as a runaway: a
        ``simgpu.Budget(seconds=..., instructions=...)`` (default: 3600 s, 10**11 warp
        instructions), a number of seconds, or False for no limit.  A loop whose deciding state
        repeats is stopped at once whatever the budget (exec/budget.py).
    max_loop_iterations: deprecated: a cap on the iterations of any one loop (per chunk).
    progress: None (default): a launch estimated (from its first chunk) to take longer than
        simgpu.settings' slow_launch_seconds (10 s) says so on stderr at once, with how to make
        it faster, and shows a progress bar with its ETA (runtime/progress.py); True: the
        progress always; False: silent.
    """
    if is_triton(kernel):
        opts = dict(gpu=gpu, observers=observers, memory=memory, timing=timing, chunk_lanes=chunk_lanes,
                    max_loop_iterations=max_loop_iterations, progress=progress,
                    registers_per_thread=registers_per_thread, sample=sample, timing_detail=timing_detail,
                    executor=executor, shared_bytes=shared_bytes, budget=budget, check=check, poison=poison)
        return launch_triton(kernel, grid, block, args, meta, opts)
    if meta:
        raise ArgumentError(f"launch() got unexpected keyword argument(s) {', '.join(map(repr, meta))} "
                            "(meta-parameters are for Triton kernels)")
    budget = budget_of(budget, max_loop_iterations)
    config = settings.current()                 # what is in force for this launch (rep.extras["config"])
    ex = foreign_executor(executor) if isinstance(kernel, ForeignProgram) else get_executor(executor)
    timing = check_timing(ex, timing)
    gpu = get_gpu(gpu)
    grid, block = dim3(grid, "grid"), dim3(block, "block")
    shared_bytes = check_shared_bytes(shared_bytes)
    tools, collector = sanitizer_tools(check)
    poison = check_poison(poison)
    if ex.binds_python:                        # the compiled path: no simgpu frontend
        k, fn, values = specialise_python(kernel, args)
        info = bind_python(k, fn, gpu, grid, block, values, registers_per_thread, max_loop_iterations,
                           shared_bytes)
    else:
        if shared_bytes:
            raise LaunchError(DYNAMIC_SMEM_IR)
        k, fn, values = specialise(kernel, grid, block, args)
        info = bind(k, fn, gpu, grid, block, values, registers_per_thread, max_loop_iterations)
    info.poison = poison
    info.budget = budget
    info.kernel_name = kernel_title(qualname_of(k))     # errors name the kernel as the report's title
    prepare(ex, k, info, values)
    counter, mm, tm = make_models(info, memory, timing, timing_detail, sample, ex)
    pt = PerThreadCounts() if memory else None              # report.per_thread (learners' scores)
    models = [m for m in (pt, mm, tm) if m is not None]    # fill_report: memory first, then timing
    san = Sanitizer(tools, k.name) if tools else None
    hz = HazardCheck() if (config.race_check and ex.binds_python
                           and "racecheck" not in tools) else None
    chunk_counts = ChunkCounts(counter) if sample else None     # after the counter: its totals per chunk
    obs = ([counter, *models, *observers] + ([san] if san is not None else []) + ([hz] if hz is not None else [])
           + ([chunk_counts] if chunk_counts is not None else []))
    try:
        for o in obs:
            o.launch_begin(info)
        plan_chunks(info, min(chunk_lanes, SANITIZE_CHUNK_LANES) if san is not None else chunk_lanes,
                    mm, tm, sample, progress)
        try:
            executed = ex.run(fn, info, obs)
        except KernelError as e:
            if san is None:
                raise
            sanitizer_fault(san, e, collector)
            if check is None:       # simgpu run --check: the program's launch fails, as on the GPU
                raise
            return faulted_report(k, info, counter, san, e)
        finally:        # device_array memory this launch wrote (docs/sanitizer.md, initcheck)
            launch_done(info.handles, san.scratch if san is not None else None)
        copy_back(info.handles)
        for o in obs:
            o.launch_end(info)
        rep = make_report(k, info, counter, models, executed, sample, chunk_counts)
        rep.extras["config"] = {**config.record(), "executor_ran": ex.name}
        if hz is not None:          # the light hazard check (docs/sanitizer.md)
            rep.races = hz.races()
            if rep.races:
                hazard_warn(rep.races, info.kernel_name)
        if san is not None:
            rep.sanitizer = san.report
            if collector is not None:
                collector.add(san.report)
        return rep
    finally:                # the arrays go with the launch, not with its models' reference cycles
        release_launch(info)


def release_launch(info):
    """The launch is over (results copied back, report made): drop what it held of the data.
    The models' per-launch state forms reference cycles (simpy's environment binds its own
    methods; the trace recorder holds the timing model's), which only Python's full collection
    frees -- rare while a launch defers it (gcpolicy) and rarer the bigger the heap.  They hold
    this Launch, and it held the arguments (the user's arrays and the launch's copies, in its
    handles, bindings and executor state): the 85 suite launches of test_validation_accuracy
    grew one process to 11 GB (tests/test_gcpolicy.py)."""
    for h in info.handles:
        h.data = h.work = h.host = h.orig = None
    info.bindings = {}
    if info.ptx is not None:        # the compiled path's arguments and memory image (its facts stay:
        info.ptx.args = info.ptx.image = None       # the timing model predicts from them later)


def faulted_report(k, info, counter, san, err):
    """launch(check=...) stopped by a fault: the report of the work before it (instruction
    counts; no memory or timing model), with the sanitizer's findings, the fault among them."""
    copy_back(info.handles)
    rep = make_report(k, info, counter, [], 0, False)
    rep.sanitizer = san.report
    rep.extras["fault"] = str(err).split("\n", 1)[0]
    return rep


def sanitizer_tools(check):
    """(tools, collector): check=None follows an active simgpu.sanitize.collecting()."""
    collector = current_collector()
    if check is None:
        return (collector.tools if collector is not None else ()), collector
    try:
        return parse_tools(check), collector
    except ValueError as e:
        raise LaunchError(str(e)) from None


def sanitizer_fault(san, err, collector):
    """A fault stopped a sanitized launch: it becomes a finding (memcheck, or synccheck for a
    warp collective's member mask), and the error carries the summary so far."""
    san.add_fault(err)
    err.sanitizer = san.report
    if hasattr(err, "add_note"):
        err.add_note(san.report.summary())
    if collector is not None:
        collector.add(san.report)


def check_poison(poison):
    if poison is None:
        return None
    if isinstance(poison, bool) or not isinstance(poison, numbers.Integral) or not 0 <= int(poison) <= 255:
        raise LaunchError(f"poison (the byte shared and local memory start as) must be an int "
                          f"0..255 or None for zeros, not {poison!r}")
    return int(poison)


@user_facing(translate=readable_error)
def predict(kernel, grid, block, args, gpu=None, registers_per_thread=None, detail="auto", sample=False,
            **launch_options):
    """Run `kernel` like simgpu.launch and return its Report, timed with these options.

    sample=True runs only the waves the timing model simulates (the first and the partial
    last one): much faster for big grids, but the outputs are only partly computed and the
    memory counters cover the executed waves; DRAM bytes for the roofline are scaled by
    (all blocks / executed blocks).  The difference is measured in tests/test_timing_sampling.py."""
    return launch(kernel, grid, block, args, gpu=gpu, registers_per_thread=registers_per_thread,
                  timing=True, timing_detail=detail, sample=sample, **launch_options)


# -- PTX from other compilers (runtime/foreign.py, triton_door.py, cuda_source.py) ----------
def foreign_executor(executor):
    """The executor of a ForeignProgram: the PTX executor (there is no IR of Triton or C)."""
    if isinstance(executor, ForeignPTXExecutor):
        return executor
    if executor in ("auto", "ptx", None):
        return ForeignPTXExecutor()
    raise LaunchError(f"PTX from Triton or CUDA C runs on the PTX executor; executor={executor!r} cannot run it")


def launch_triton(fn, grid, block, args, meta, opts):
    """A ``@triton.jit`` function (under any @triton.autotune / @triton.heuristics) launched
    as Triton's JIT would launch it, on the modelled GPU (runtime/triton_door.py)."""
    if block is not None:
        raise LaunchError("a Triton kernel's block is 32 x num_warps threads: launch it as "
                          "simgpu.launch(fn, grid, None, args, **meta) or simgpu.jit(fn)[grid](*args, **meta)")
    if not isinstance(args, (tuple, list)):
        args = (args,)
    outer, jf = layers(fn)
    with triton_ptxas(cc_for(get_gpu(opts.get("gpu")))):        # ptxas as Triton's JIT assembles
        return _triton_layers(outer, triton_function(jf), grid, tuple(args), dict(meta), opts)


def _triton_layers(outer, tf, grid, args, meta, opts):
    if not outer:
        prog = tf.program(args, meta)
        rep = launch(prog, prog.grid_of(grid), prog.block, prog.runtime_values, **opts)
        rep.extras["triton_launch"] = prog.launch_facts()      # validate.dobench_seconds reads them
        return rep
    (kind, w), rest = outer[0], outer[1:]
    if kind == "heuristics":
        return _triton_layers(rest, tf, grid, args, apply_heuristics(w, named_args(w, args, meta), meta), opts)
    if kind != "autotune":
        raise LaunchError(f"simgpu does not know Triton's {kind} wrapper")
    return autotune(w, rest, tf, grid, args, meta, opts)


_TUNED: dict = {}


def autotune(tuner, rest, tf, grid, args, meta, opts):
    """@triton.autotune on the model: every config launched with the timing model, the
    shortest predicted time picked (remembered per value of the tuner's key), then the best
    config launched again so the outputs and the Report are its own."""
    key = (id(tuner), tune_key(tuner, args, meta))
    hit = _TUNED.get(key)
    trials = None
    if hit is None or hit[0] is not tuner:
        configs = pruned_configs(tuner, args, meta)
        if not configs:
            raise LaunchError(f"@triton.autotune of {tf.name!r} has no configs to try")
        named = named_args(tuner, args, meta)
        keep = {n: np.array(named[n], copy=True) for n in (getattr(tuner, "restore_value", None) or [])
                if isinstance(named.get(n), np.ndarray)}
        trials = []
        trial_opts = {**opts, "timing": True, "observers": (), "check": False, "progress": False}
        for c in configs:
            for n in getattr(tuner, "reset_to_zero", None) or []:
                if isinstance(named.get(n), np.ndarray):
                    named[n][...] = 0
            rep = _triton_layers(rest, tf, grid, args, {**meta, **config_meta(c)}, trial_opts)
            trials.append((c, float(rep.metrics[TIME_METRIC])))
            for n, v in keep.items():
                named[n][...] = v
        best = min(trials, key=lambda t: t[1])[0]
        hit = _TUNED[key] = (tuner, best, trials)
    _, best, _ = hit
    rep = _triton_layers(rest, tf, grid, args, {**meta, **config_meta(best)}, opts)
    rep.extras["autotune"] = {"best": str(best), "predicted_ns": {str(c): t for c, t in hit[2]}}
    return rep
