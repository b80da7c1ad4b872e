"""jit / launch: the user's entry points.  A launch lowers the kernel (once), types it for
the arguments' types (once per signature), checks the launch against the modelled GPU,
then runs the grid in chunks of whole blocks through the executor and its observers."""
from __future__ import annotations

import sys
import types as pytypes

import numpy as np

from .errors import ArgumentError, DSLError, LaunchError, SimGPUError
from .exec.interp import Interpreter
from .exec.state import ArrayHandle, Chunk
from .frontend.lower import Lowerer
from .hardware import get_gpu
from .ir import types as T
from .ir.infer import infer
from .ir.opinfo import contract
from .ir.printer import format_function

DEFAULT_CHUNK_LANES = 1 << 19
ALIGN = 512          # cudaMalloc returns addresses aligned to at least 256 B; we use 512


def _dim3(v, what):
    if isinstance(v, (int, np.integer)):
        v = (int(v),)
    try:
        v = tuple(int(x) for x in v)
    except TypeError:
        raise LaunchError(f"{what} must be an int or a tuple of up to 3 ints, not {v!r}") from None
    if not 1 <= len(v) <= 3:
        raise LaunchError(f"{what} must have 1 to 3 dimensions, not {len(v)}")
    if any(x < 1 for x in v):
        raise LaunchError(f"{what} {v} has a dimension below 1")
    return v + (1,) * (3 - len(v))


def _py_func(fn):
    py = getattr(fn, "py_func", None)
    if isinstance(py, pytypes.FunctionType):
        return py
    if isinstance(fn, pytypes.FunctionType):
        return fn
    raise SimGPUError(f"expected a Python function or a numba.cuda kernel, got {type(fn).__name__}")


class Kernel:
    """A kernel (or device function) that simgpu can run.  Use ``k[grid, block](*args)``."""

    def __init__(self, fn, device=False, gpu=None, **options):
        self.py_func = _py_func(fn)
        self.__name__ = self.name = self.py_func.__name__
        self.__doc__ = self.py_func.__doc__
        self.device = device
        self.gpu = gpu
        self.options = options
        self._untyped = None
        self._typed = {}

    def __repr__(self):
        return f"<simgpu.Kernel {self.name}{' (device)' if self.device else ''}>"

    def lower(self):
        if self._untyped is None:
            self._untyped = Lowerer(self.py_func).lower_function()
        return self._untyped

    def specialize(self, param_types):
        key = tuple(param_types)
        fn = self._typed.get(key)
        if fn is None:
            fn = Lowerer(self.py_func).lower_function()
            infer(fn, dict(zip(fn.params, param_types)))
            contract(fn)          # mark multiply-adds the compiler fuses, memory spaces
            self._typed[key] = fn
        return fn

    @property
    def ir(self):
        """The kernel's IR with source lines (typed for the last launch, if any)."""
        fn = next(reversed(self._typed.values())) if self._typed else self.lower()
        return format_function(fn)

    def __getitem__(self, config):
        if self.device:
            raise LaunchError(f"{self.name} is a device function; call it from a kernel")
        if not isinstance(config, tuple) or len(config) < 2:
            raise LaunchError("launch as kernel[grid, block](*args)")
        grid, block = config[0], config[1]
        smem = config[3] if len(config) > 3 else 0
        if smem:
            raise LaunchError("dynamic shared memory is not supported yet; use cuda.shared.array "
                              "with a constant shape")
        return lambda *args, **kw: launch(self, grid, block, args, gpu=kw.pop("gpu", self.gpu),
                                          **{**self.options, **kw})

    def __call__(self, *args):
        if self.device:
            return self.py_func(*args)
        raise LaunchError(f"launch kernel {self.name} with a configuration: {self.name}[grid, block](...)")


def jit(fn=None, device=False, gpu=None, **options):
    """Make a function runnable on the modelled GPU: ``simgpu.jit(f)`` or ``@simgpu.jit``."""
    if fn is None:
        return lambda f: Kernel(f, device=device, gpu=gpu, **options)
    if isinstance(fn, Kernel):
        return fn
    if isinstance(fn, str) or isinstance(fn, (list, tuple)):     # numba-style signature string
        return lambda f: Kernel(f, device=device, gpu=gpu, **options)
    return Kernel(fn, device=device, gpu=gpu, **options)


# -- arguments -----------------------------------------------------------------------
def _bind_args(fn, kernel_name, args):
    if len(args) != len(fn_params := fn.params):
        raise ArgumentError(f"kernel {kernel_name!r} takes {len(fn_params)} argument(s) "
                            f"({', '.join(p for p in fn_params)}), got {len(args)}")
    types_, values = [], []
    for name, a in zip(fn_params, args):
        host = a
        if hasattr(a, "copy_to_host") and not isinstance(a, np.ndarray):    # numba DeviceNDArray
            host = a.copy_to_host()
        if isinstance(host, np.ndarray):
            if host.dtype.kind not in "biuf":
                raise ArgumentError(f"argument {name!r}: arrays of dtype {host.dtype} are not supported "
                                    "(use a numeric dtype)")
            if host.ndim == 0:
                raise ArgumentError(f"argument {name!r}: pass a 0-d array as a scalar")
            types_.append(T.ArrayType(T.from_numpy(host.dtype), host.ndim, "global"))
            values.append((host, a))
        elif isinstance(host, (bool, np.bool_, int, float, np.integer, np.floating)):
            types_.append(T.typeof_value(host))
            values.append(host)
        else:
            raise ArgumentError(f"argument {name!r} of kernel {kernel_name!r}: cannot pass a "
                                f"{type(a).__name__}; pass numpy arrays and numbers")
    return types_, values


def _check_launch(gpu, grid, block, smem_bytes, name):
    tpb = block[0] * block[1] * block[2]
    if tpb > gpu.max_threads_per_block:
        raise LaunchError(f"block {block} has {tpb} threads; the {gpu.name} allows at most "
                          f"{gpu.max_threads_per_block} threads per block (max_threads_per_block)")
    for k, (b, lim) in enumerate(zip(block, gpu.max_block_dim)):
        if b > lim:
            raise LaunchError(f"block dimension {'xyz'[k]} = {b} exceeds the {gpu.name}'s limit "
                              f"{lim} (max_block_dim)")
    for k, (g, lim) in enumerate(zip(grid, gpu.max_grid_dim)):
        if g > lim:
            raise LaunchError(f"grid dimension {'xyz'[k]} = {g} exceeds the {gpu.name}'s limit "
                              f"{lim} (max_grid_dim)")
    if smem_bytes > gpu.static_shared_mem_per_block_bytes:
        raise LaunchError(f"kernel {name!r} declares {smem_bytes:,} B of static shared memory per block; "
                          f"the limit for static shared arrays is {gpu.static_shared_mem_per_block_bytes:,} B "
                          "(static_shared_mem_per_block_bytes)")


def _shared_layout(fn):
    layout, off = {}, 0
    for key, (shape, dtype) in fn.shared.items():
        dt = T.np_dtype(dtype)
        off = -(-off // max(dt.itemsize, 16)) * max(dt.itemsize, 16) if off else 0
        layout[key] = off
        off += int(np.prod(shape)) * dt.itemsize
    return layout, off


def _memory_model():
    try:
        from .memory import MemoryModel
    except ImportError:
        return None
    return MemoryModel


def _timing_model():
    try:
        from .timing import TimingModel
    except ImportError:
        return None
    return TimingModel


class Launch:
    """Everything about one launch that observers may want."""

    def __init__(self, kernel_name, fn, gpu, grid, block, handles, smem_bytes):
        self.kernel_name, self.fn, self.gpu = kernel_name, fn, gpu
        self.grid, self.block = grid, block
        self.handles = handles
        self.smem_bytes = smem_bytes
        self.n_blocks = grid[0] * grid[1] * grid[2]
        self.threads_per_block = block[0] * block[1] * block[2]
        self.warps_per_block = -(-self.threads_per_block // 32)


def _progress(done, total, name, stream):
    width = 30
    k = int(width * done / total)
    stream.write(f"\r  simgpu {name}: [{'#' * k}{'.' * (width - k)}] {done}/{total} chunks")
    if done == total:
        stream.write("\n")
    stream.flush()


def _bind_memory(fn, values):
    """Give each argument array a device address (aligned like cudaMalloc) and a handle."""
    bindings, handles, next_addr = {}, [], 1 << 40
    for name, v in zip(fn.params, values):
        if isinstance(v, tuple):
            host, orig = v
            work = host if host.flags.c_contiguous and host.flags.writeable else np.ascontiguousarray(host)
            h = ArrayHandle(name.split(".")[-1], "global", host.shape, host.dtype, work.reshape(-1),
                            base_addr=next_addr, user_array=(host, orig, work))
            next_addr += -(-work.nbytes // ALIGN) * ALIGN + ALIGN
            bindings[name] = h
            handles.append(h)
        else:
            bindings[name] = v
    for key, arr in fn.consts.items():
        bindings[key] = ArrayHandle("const", "const", arr.shape, arr.dtype, arr.reshape(-1),
                                    base_addr=next_addr)
        next_addr += -(-arr.nbytes // ALIGN) * ALIGN + ALIGN
    return bindings, handles


def _copy_back(handles):
    for h in handles:
        host, orig, work = h.user_array
        if work is not host:
            host[...] = work.reshape(host.shape)
        if orig is not host and hasattr(orig, "copy_from_host"):
            orig.copy_from_host(host)


def launch(kernel, grid, block, args, gpu=None, observers=(), memory=True, timing=True,
           chunk_lanes=DEFAULT_CHUNK_LANES, max_loop_iterations=1 << 22, progress=None,
           registers_per_thread=None, sample=False):
    """Run `kernel` on the modelled GPU and return a Report.  Arrays in `args` are updated in place.

    gpu: a preset name ("H200", "H100", "A100", "V100") or a simgpu.hardware.GPU; default H200.
    memory / timing: switch the memory and timing models on or off.
    registers_per_thread: override the estimate from the IR (occupancy and timing use it).
    sample: run only the blocks the timing model samples (the first and the partial last
        wave) and scale counts up: fast predictions for big launches, outputs only partly
        computed.  The error this adds is measured in docs/timing.md.
    """
    from .report import Report
    from .counters import InstCounter
    k = kernel if isinstance(kernel, Kernel) else Kernel(kernel)
    gpu = get_gpu(gpu)
    grid = _dim3(grid, "grid")
    block = _dim3(block, "block")
    if not isinstance(args, (tuple, list)):
        args = (args,)
    types_, values = _bind_args(k.lower(), k.name, args)
    fn = k.specialize(types_)
    layout, smem = _shared_layout(fn)
    _check_launch(gpu, grid, block, smem, k.name)
    bindings, handles = _bind_memory(fn, values)

    info = Launch(k.name, fn, gpu, grid, block, handles, smem)
    info.registers_per_thread = registers_per_thread
    counter = InstCounter()
    obs, models, tm = [counter], [], None
    if memory and _memory_model() is not None:
        mm = _memory_model()(gpu, info)
        obs.append(mm)
        models.append(mm)
    if sample and not (timing and _timing_model() is not None):
        raise LaunchError("sample=True needs the timing model (timing=True)")
    if timing and _timing_model() is not None:
        tm = _timing_model()(gpu, info, memory_model=models[0] if models else None,
                             registers_per_thread=registers_per_thread)
        obs.append(tm)
        models.append(tm)          # fill_report runs after the memory model's
    obs.extend(observers)
    for o in obs:
        o.launch_begin(info)

    interp = Interpreter(fn, k.name, obs, max_loop_iterations=max_loop_iterations)
    per_chunk = max(1, chunk_lanes // (info.warps_per_block * 32))
    for m in models:
        per_chunk = m.chunk_blocks(per_chunk) if hasattr(m, "chunk_blocks") else per_chunk
    wanted = sorted(set(tm.plan.main_blocks) | set(tm.plan.tail_blocks)) if sample else None
    n_chunks = -(-info.n_blocks // per_chunk)
    show = progress if progress is not None else (n_chunks >= 8 and sys.stderr.isatty())
    executed = 0
    for c in range(n_chunks):
        first = c * per_chunk
        n = min(per_chunk, info.n_blocks - first)
        if wanted is not None and not any(first <= b < first + n for b in wanted):
            continue
        interp.run_chunk(Chunk(first, n, block, grid, index=c), bindings, layout)
        executed += n
        if show:
            _progress(c + 1, n_chunks, k.name, sys.stderr)
    _copy_back(handles)
    for o in obs:
        o.launch_end(info)

    rep = Report(k.name, gpu, grid, block, source=dict(fn.source_lines))
    rep.metrics.update(counter.metrics())
    rep.lines = {key: dict(v) for key, v in counter.by_line().items()}
    rep.metrics["launch__grid_size"] = float(info.n_blocks)
    rep.metrics["launch__block_size"] = float(info.threads_per_block)
    rep.metrics["launch__shared_mem_per_block_static"] = float(smem)
    if sample:
        tm.scale_counts = info.n_blocks / max(1, executed)
        rep.extras["sampled_execution"] = {"executed_blocks": executed, "scale": tm.scale_counts}
    for m in models:
        m.fill_report(rep)
    return rep
