"""Kernels on the modelled GPU: numba-cuda's own dispatcher, launching on simgpu.

``cuda.jit`` stays numba's: its ``CUDADispatcher`` types the arguments, picks or compiles the
overload (eager signatures and their casts, ``specialize``, ``cache=True``, ``inspect_types``,
``inspect_llvm``, ``inspect_asm``, ``device=True`` functions, ``declare_device``) exactly as on
a GPU.  What install() swaps is the compiled kernel's class, ``numba.cuda.dispatcher._Kernel``:
:func:`kernel_class` derives a class from it whose

* ``bind()`` does nothing (numba would link a cubin and load it through the driver), and
* ``launch(args, grid, block, stream, sharedmem)`` runs the PTX this very object holds (NVVM's
  output for the modelled GPU's compute capability) on simgpu:
  ``runtime.launch(..., executor=CompiledPTXExecutor(kernel))``, writes the results into the
  device and host arrays passed, records the launch in the session and advances the
  stream's modelled clock by the predicted time.

So numba-cuda compiles each kernel once, as it would for a GPU, and simgpu runs that code.
"""
from __future__ import annotations

import bisect
import ctypes
import gc
import inspect
import keyword
import os
import re
import sys
import warnings

import numpy as np

from ..model.occupancy import OccupancyError, occupancy
from ..runtime.executor import get_executor
from ..runtime.launch import launch
from ..runtime.program import KernelProgram
from ..ptx.memory import DeviceMemory
from ..runtime.ptx_path import PTXExecutor
from ..errors import LaunchError
from ..tracebacks import user_facing
from ..sass import analyze_ptx, devrt
from ..sass.kernel import CompiledKernel, PtxFacts
from ..sass.ptxas import FunctionResources, PtxasReport, assemble, elf_section_sizes
from ..sass.ptxlines import number_ptx_lines
from ..sass.toolchain import entry_name, library_link_ptx, library_lto, link_ptx
from . import devicearray as da
from .driver import module_globals
from .session import current_session, initialise



class CompiledPTXExecutor(PTXExecutor):
    """The PTX executor, given the PTX that numba-cuda's dispatcher compiled (no second
    compile); ptxas and nvdisasm still give the SASS facts (cached on disk)."""

    def __init__(self, kernel_code, use_cache=True):
        super().__init__(use_cache)
        self.kernel_code = kernel_code
        self.supports_timing = bool(getattr(get_executor("ptx"), "supports_timing", False))

    image = None                # the launch's runner.Image, once run (its globals: debug=True errors)

    def run(self, program, launch, observers):
        try:
            return super().run(program, launch, observers)
        finally:
            self.image = launch.ptx.image if launch.ptx is not None else None

    def make_memory(self, places):
        return program_memory(places, module_globals(self.kernel_code))

    def compile_program(self, program, args, cc):
        """The CompiledKernel of this numba kernel for `cc`, made at its first launch and kept
        on the kernel (a kernel launched a thousand times reads its PTX's facts once)."""
        sass = current_session().sass
        done = self.kernel_code.__dict__.setdefault("_simgpu_compiled", {})
        key = (tuple(cc), bool(sass), program.name)
        if key not in done:
            ptx = kernel_ptx(self.kernel_code, cc, sass)
            facts = (analyze_ptx(ptx, cc, use_cache=self.use_cache) if sass
                     else ptx_only_facts(ptx, cc, program.name))
            done[key] = CompiledKernel(name=program.name, entry=entry_name(ptx), cc=tuple(cc),
                                       argtypes=[str(t) for t in self.kernel_code.argument_types],
                                       ptx=ptx, facts=facts)
        return done[key]


def program_memory(places, globals_=None):
    """The arguments at their places, and every device array of the program at its own
    address: a kernel that captured one (numba embeds its pointer) or was passed its address
    reaches it; a device array argument is at its own address too (runtime/binding.global_array
    asks the array), inside its allocation's mapping.  install() makes it every compiled-path
    launch's memory (runtime/ptx_path.set_program_memory), plain ``simgpu.launch`` calls too.
    ``globals_``: the module's kept ``.global`` variables (host/driver.ModuleGlobals), for a
    numba kernel's launch (None: placed afresh, as a plain launch places them)."""
    memory = HostMemory(places, globals_)
    for base, buf, name in da.live_allocations():
        memory.add_allocation(base, buf, name)
    return memory


class HostMemory(DeviceMemory):
    """A launch's global memory on the host path: the program's allocations at their own
    addresses; an argument placed inside one of them (a device array or a view of it) is
    that allocation's bytes, not a second mapping."""

    def __init__(self, places, globals_=None):
        super().__init__(places)
        self.allocations = []           # (base, size) of the program's device arrays
        self.module_globals = globals_

    def place_global(self, name, init):
        """The module's variable: kept from launch to launch where the kernel has its store."""
        if self.module_globals is None:
            return super().place_global(name, init)
        return self.module_globals.place(self, name, init)

    def add_allocation(self, base, buf, name=""):
        self.allocations.append((base, buf.size))
        pad = da.allocation_pad(base)       # the bytes past its end, kept with the array
        if pad is not None:
            self.pads[base] = pad
        return self.add(base, buf, name)

    def alloc(self, buf, name=""):
        if self.places:
            base = self.places[0][0]
            if any(b <= base and base + buf.size <= b + n for b, n in self.allocations):
                self.places.pop(0)
                return base
        return super().alloc(buf, name)


def kernel_ptx(kernel_code, cc, sass=True):
    """The kernel's PTX for compute capability `cc`.  numba-cuda compiled it when it made the
    kernel, for the current device's architecture (9.0 and above: the arch-specific
    ``sm_90a``, as numba loads it on a GPU); results-only (`sass` False) runs that very PTX,
    so NVVM does not compile the kernel a second time.  ptxas' facts, and the files numba links
    (``link=``, compiled by NVRTC for the plain ``sm_XY``), take PTX for the plain ``sm_XY``
    that simgpu.sass assembles for: one more NVVM compile, cached by numba per cc.  A kernel
    numba-cuda links with LTO (its ``lto``, as on a GPU with nvJitLink; ``SIMGPU_LTO``) runs
    nvJitLink's LTO program for the plain ``sm_XY`` (``library_link_ptx``)."""
    lib = kernel_code.library
    cc = tuple(cc)
    if not sass and not getattr(lib, "_linking_files", ()) and not library_lto(lib):
        own = tuple(lib._ensure_cc(None))   # numba's key: (major, minor, "a" or "")
        if own[:2] == cc[:2]:
            return link_ptx(lib.get_asm_str(cc=own), [])     # + the device runtime it calls
    return library_link_ptx(lib, cc)        # with what numba links at load


_SHARED_DECL = re.compile(r"^\s*\.shared\s+(?:\.align\s+(\d+)\s+)?\.\w+\s+[\w$]+\[(\d+)\]", re.M)
_EXTERN_FUNC = re.compile(r"^\s*\.extern\s+\.func\s+(?:\([^)]*\)\s*)?([\w$]+)", re.M)
_DEFINED_FUNC = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.func\s+(?:\([^)]*\)\s*)?([\w$]+)", re.M)
PROVIDED = devrt.SYSCALLS       # extern functions ptxas resolves and simgpu.ptx implements


def ptx_only_facts(ptx, cc, name=None):
    """PtxFacts without ptxas and nvdisasm (Session(sass=False): a run that wants results, not
    counts): the PTX's own line table, static shared memory from its declarations, no SASS.
    An extern function that neither the PTX nor simgpu.ptx defines is the LaunchError that
    ptxas' 'unresolved extern' gives on the full path."""
    entry = entry_name(ptx)
    missing = sorted(set(_EXTERN_FUNC.findall(ptx)) - set(_DEFINED_FUNC.findall(ptx)) - PROVIDED)
    if missing:
        raise LaunchError(f"executor='ptx': kernel {name or entry!r} calls {', '.join(missing)}, which the PTX "
                          "does not define, and neither do the files numba links when it loads the module "
                          "(simgpu links CUDA C++ and PTX files, numba's shims and the device runtime's "
                          "cooperative groups; not libraries of machine code)")
    shared = sum(int(n) for _, n in _SHARED_DECL.findall(ptx))
    fr = FunctionResources(name=entry, kind="entry", shared_bytes=shared)
    report = PtxasReport(arch=f"sm_{cc[0]}{cc[1]}", ptxas_version="not run", functions={entry: fr})
    return PtxFacts(ptxas=report, kernels={}, ptx_source=dict(number_ptx_lines(ptx).source))


def prepare_value(ty, value, retr=None):
    """An argument as numba's _Kernel._prepare_args would pass it, for simgpu's binding:
    cuda.In/Out/InOut unwrapped, scalars cast to the compiled type, foreign CUDA arrays
    looked up in simgpu's memory (a host array or record in ``cuda.In`` as a copy that is not
    written back), tuples element by element, an enum member as its value (records are passed
    by pointer by the binding: runtime/ptx_binding.py)."""
    from numba.cuda import types
    from numba.cuda.np.numpy_support import as_dtype
    hint = type(value).__name__ if type(value).__name__ in ("In", "Out", "InOut") else None
    value = value.value if hint else value
    if hint == "In" and isinstance(value, (np.ndarray, np.void)):
        value = np.array(value, order="K") if isinstance(value, np.ndarray) else np.array(value)[()]
        # cuda.In: copied to the device, never back (a copy the kernel may write)
    if isinstance(ty, types.EnumMember):
        return prepare_value(ty.dtype, value.value, retr)
    if isinstance(ty, types.Array):
        if isinstance(value, np.ndarray) and not isinstance(value, da.MappedArray) and hint != "Out":
            warn_implicit_copy()
        if not isinstance(value, (np.ndarray, da.DeviceNDArray)):
            value = da.as_cuda_array(value) if da.is_cuda_array(value) else np.asarray(value)
        want = as_dtype(ty.dtype)
        if value.dtype == want and value.ndim == ty.ndim:
            return value
        if value.ndim == ty.ndim and value.dtype.itemsize == want.itemsize:
            return value.view(want)     # numba.cuda passes the bytes unchecked: reinterpreted
        raise TypeError(f"No matching definition: the kernel was compiled for {ty}, and got an "
                        f"array of {value.dtype} with {value.ndim} dimension(s) (numba.cuda would "
                        "pass its bytes unchecked; simgpu refuses a different element size or rank)")
    if isinstance(ty, types.Integer):       # numba: ctypes.c_<ty>(value): wraps; a float is a TypeError
        return as_dtype(ty).type(getattr(ctypes, f"c_{ty}")(value).value)
    if ty in (types.float32, types.float64):    # ctypes.c_float / c_double(value)
        return as_dtype(ty).type((ctypes.c_float if ty == types.float32 else ctypes.c_double)(value).value)
    if ty in (types.complex64, types.complex128):   # real and imaginary parts through ctypes
        part = ctypes.c_float if ty == types.complex64 else ctypes.c_double
        return as_dtype(ty).type(complex(part(value.real).value, part(value.imag).value))
    if isinstance(ty, (types.Float, types.Boolean)):
        return as_dtype(ty).type(value)
    if isinstance(ty, types.BaseTuple):
        return tuple(prepare_value(t, v, retr) for t, v in zip(ty, value))
    return value



def warn_implicit_copy():
    """numba's NumbaPerformanceWarning for a host array passed to a kernel (it is copied to
    the device and back), under numba's CUDA_WARN_ON_IMPLICIT_COPY."""
    from numba.cuda.core import config
    from numba.cuda.core.errors import NumbaPerformanceWarning
    if config.CUDA_WARN_ON_IMPLICIT_COPY and not config.DISABLE_PERFORMANCE_WARNINGS:
        warnings.warn(NumbaPerformanceWarning("Host array used in CUDA kernel will incur copy overhead "
                                              "to/from device."), stacklevel=4)


def run_on_simgpu(kernel_code, args, griddim, blockdim, stream=0, sharedmem=0):
    """_Kernel.launch on the modelled GPU (see the module docstring)."""
    initialise()
    session = current_session()
    s = session.stream_of(stream)
    check_devices(kernel_code, args, session)
    retr = []
    pairs = list(zip(kernel_code.argument_types, args))
    for ext in reversed(kernel_code.extensions or []):
        pairs = [ext.prepare_args(t, v, stream=stream, retr=retr) for t, v in pairs]
    values = [prepare_value(t, v, retr) for t, v in pairs]
    check_launch_bounds(kernel_code, blockdim, session)
    program = kernel_code.__dict__.get("_simgpu_program")
    if program is None:
        program = kernel_code._simgpu_program = KernelProgram(python_function(kernel_code))
    module_globals(kernel_code).zero("__errcode__")      # numba zeroes a debug kernel's before each launch
    ex = CompiledPTXExecutor(kernel_code)
    timed = ex.supports_timing and session.sass       # the timing model costs ptxas' SASS
    collecting = gc.isenabled()
    gc.disable()        # a launch makes thousands of short-lived closures (one per PTX instruction):
    try:                # without this the cyclic collector walks numba's whole heap over and over
        rep = launch(program, griddim, blockdim, values, gpu=session.gpu, executor=ex,
                     timing=timed, memory=session.memory or timed,
                     shared_bytes=sharedmem)
    finally:
        if collecting:
            gc.enable()
    if getattr(kernel_code, "debug", False):
        raise_kernel_exception(kernel_code, ex.image, rep, session, s)
    for fn in retr:
        fn()
    session.record_launch(program.name, rep.grid, rep.block, rep, s)
    kernel_code.last_report = rep
    return rep


def check_devices(kernel_code, args, session):
    """A launch runs on the current GPU; a device array of another GPU of the modelled system
    is reachable only with peer access enabled (on the card, a kernel that dereferences it
    otherwise stops with an illegal address)."""
    if session.devices == 1:
        return
    dev = session.current_device()
    for k, a in enumerate(args):
        alloc = getattr(a, "_alloc", None) if isinstance(a, da.DeviceNDArray) else None
        home = getattr(alloc, "_device_id", dev)
        if home != dev and (dev, home) not in session.peer_access:
            fn = getattr(kernel_code, "py_func", None)
            names = list(inspect.signature(fn).parameters) if fn is not None else []
            what = f"argument {names[k]!r}" if k < len(names) else f"argument {k}"
            raise LaunchError(f"kernel {getattr(fn, '__name__', 'kernel')!r}: {what} is a device array on GPU {home}, but the launch runs on GPU {dev} "
                              f"(the current device): copy it to GPU {dev}, or enable peer access first "
                              f"(with cuda.gpus[{dev}]: cuda.current_context().enable_peer_access("
                              f"cuda.gpus[{home}].get_primary_context()))")


_MAXNTID = re.compile(r"^\s*\.maxntid\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", re.M)


def max_threads(kernel_code, session):
    """The most threads per block the kernel launches with: the device's limit, or less where
    the kernel's PTX says ``.maxntid`` (``cuda.jit(launch_bounds=...)``)."""
    done = kernel_code.__dict__.setdefault("_simgpu_max_threads", {})
    cc = tuple(session.gpu.compute_capability)
    if cc not in done:
        limit = session.gpu.max_threads_per_block
        m = _MAXNTID.search(kernel_ptx(kernel_code, cc, session.sass))
        if m:
            limit = min(limit, int(np.prod([int(g) for g in m.groups() if g])))
        done[cc] = limit
    return done[cc]


def check_launch_bounds(kernel_code, blockdim, session):
    """A block larger than the kernel's launch bounds (``.maxntid``) does not launch on a
    GPU: the driver's CUDA_ERROR_INVALID_VALUE, raised as cuda.core raises it for numba."""
    threads = int(np.prod(blockdim))
    limit = max_threads(kernel_code, session)
    if threads > limit:
        name = getattr(getattr(kernel_code, "py_func", None), "__name__", "kernel")
        msg = (f"CUDA_ERROR_INVALID_VALUE: kernel {name!r} launched with {threads} threads per block; "
               f"its launch bounds (.maxntid) allow {limit}")
        try:
            from cuda.core._utils.cuda_utils import CUDAError
        except ImportError:         # cuda.core absent: numba's own driver error
            from numba.cuda.cudadrv.driver import CudaAPIError
            raise CudaAPIError(1, msg) from None
        raise CUDAError(msg)


def python_function(kernel_code):
    """The kernel's Python function; for a kernel numba rebuilt from its disk cache
    (``cache=True``: ``_Kernel._rebuild`` keeps the PTX, not the function), a stand-in with the
    kernel's name and one positional parameter per argument, which is all the launch binds by."""
    fn = getattr(kernel_code, "py_func", None)
    if fn is not None:
        return fn
    lib = getattr(kernel_code, "_codelibrary", None)
    name = re.sub(r"\W", "_", str(getattr(lib, "name", "") or "kernel").rsplit(".", 1)[-1]) or "kernel"
    if not name.isidentifier() or keyword.iskeyword(name):
        name = f"kernel_{name}"
    params = ", ".join(f"arg{i}" for i in range(len(kernel_code.argument_types)))
    scope = {}
    exec(f"def {name}({params}):\n    pass\n", scope)
    return scope[name]


def read_global_u32(image, name):
    """The u32 module variable `name` after the launch (0 where the PTX has none)."""
    addr = image.global_addr.get(name) if image is not None else None
    if addr is None:
        return 0
    mem = image.memory
    k = bisect.bisect_right(mem.bases, addr) - 1
    off = addr - mem.bases[k]
    return int(np.frombuffer(mem.bufs[k][off:off + 4].tobytes(), np.int32)[0])


def raise_kernel_exception(kernel_code, image, rep, session, stream):
    """An exception raised in a debug=True kernel, raised on the host as numba.cuda raises it:
    numba's debug kernels record the exception's code, thread and block in the module
    variables ``<entry>__errcode__``, ``__tid{x,y,z}__``, ``__ctaid{x,y,z}__`` (the first
    thread to raise wins); numba reads them after the launch and raises the exception class
    with the message prefixed by the source location and the thread position."""
    entry = image.kernel_name if image is not None else ""
    code = read_global_u32(image, f"{entry}__errcode__")
    if code == 0:
        return
    session.record_launch(kernel_code._simgpu_program.name, rep.grid, rep.block, rep, stream)
    kernel_code.last_report = rep
    tid = [read_global_u32(image, f"{entry}__tid{c}__") for c in "zyx"]
    ctaid = [read_global_u32(image, f"{entry}__ctaid{c}__") for c in "zyx"]
    exccls, exc_args, loc = kernel_code.call_helper.get_exception(code)
    locinfo = ""
    if loc is not None:
        sym, filepath, lineno = loc
        locinfo = f"In function {sym!r}, file {os.path.abspath(filepath)}, line {lineno}, "
    prefix = f"{locinfo}tid={tid} ctaid={ctaid}"
    exc_args = ((f"{prefix}: {exc_args[0]}",) + tuple(exc_args[1:])) if exc_args else (prefix,)
    raise exccls(*exc_args)


def nrt_stats_on():
    """numba's ``config.CUDA_NRT_STATS`` (NRT's allocation statistics switched on)."""
    return bool(getattr(sys.modules["numba.cuda"].config, "CUDA_NRT_STATS", False))


def kernel_class(base):
    """numba's _Kernel, bound and launched on simgpu (installed as dispatcher._Kernel)."""
    class SimGPUKernel(base):
        __doc__ = base.__doc__
        last_report = None

        def bind(self):
            """numba's bind loads the module; with NRT statistics on, it also points the
            module's ``TheMSys`` at NRT's memory system (host/nrt.py), once."""
            context = getattr(self, "target_context", None)
            if context is not None and context.enable_nrt and nrt_stats_on():
                rtsys = sys.modules["numba.cuda.memory_management.nrt"].rtsys
                rtsys.ensure_initialized()
                rtsys.set_memsys_to_module(module_globals(self))

        @classmethod
        def _rebuild(cls, *args, **kwargs):
            """numba's disk cache rebuilds a kernel with _Kernel._rebuild: ours, not a driver's."""
            inst = base._rebuild.__func__(base, *args, **kwargs)
            inst.__class__ = cls
            return inst

        @user_facing        # a user's error: the program's frames, numba's launch and this one
        def launch(self, args, griddim, blockdim, stream=0, sharedmem=0):
            run_on_simgpu(self, args, griddim, blockdim, stream, sharedmem)

        # what numba reads from the loaded cufunc's attributes, from ptxas instead
        regs_per_thread = property(lambda self: resources(self).registers or 0)
        shared_mem_per_block = property(lambda self: resources(self).shared_bytes)
        local_mem_per_thread = property(lambda self: resources(self).stack_frame)
        const_mem_size = property(lambda self: const_bytes(self))
        max_threads_per_block = property(lambda self: max_threads(self, current_session()))

        def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0):
            return cooperative_blocks(self, blockdim, dynsmemsize)

    SimGPUKernel.__name__ = SimGPUKernel.__qualname__ = base.__name__
    SimGPUKernel.__module__ = base.__module__
    return SimGPUKernel


def resources(kernel_code):
    """ptxas' resources of the compiled kernel (registers, shared, stack)."""
    cc = tuple(current_session().gpu.compute_capability)
    ptx = library_link_ptx(kernel_code.library, cc)
    return analyze_ptx(ptx, cc).ptxas.functions[entry_name(ptx)]


def const_bytes(kernel_code):
    """The kernel's user constant memory (CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: ``.const``
    data such as ``cuda.const.array_like`` and print's format strings): the size of the
    cubin's user constant bank (``.nv.constant3``; CUDA 13's ptxas no longer prints
    ``cmem[3]``).  Assembled once per kernel and cc, kept on the kernel."""
    cc = tuple(current_session().gpu.compute_capability)
    done = kernel_code.__dict__.setdefault("_simgpu_const_bytes", {})
    if cc not in done:
        ptx = library_link_ptx(kernel_code.library, cc)
        cubin, report = assemble(ptx, cc, lineinfo=False)
        sizes = elf_section_sizes(cubin)
        done[cc] = int(sizes.get(".nv.constant3", report.cmem.get(3, 0)))
    return done[cc]


def cooperative_blocks(kernel_code, blockdim, dynsmemsize=0):
    """The most blocks a cooperative launch may have: resident blocks per SM x SMs."""
    gpu = current_session().gpu
    threads = int(np.prod(blockdim)) if isinstance(blockdim, tuple) else int(blockdim)
    r = resources(kernel_code)
    occ = occupancy(gpu, threads, r.registers or 32, r.shared_bytes + int(dynsmemsize))
    return occ.blocks_per_sm * gpu.sm_count


def forall_block(self, dispatcher):
    """ForAll's block size without tpb: numba asks the driver's occupancy API
    (cuOccupancyMaxPotentialBlockSize, block size limit 1024); here the same search over the
    modelled GPU's occupancy with the kernel's registers and shared memory from ptxas."""
    if self.thread_per_block:
        return self.thread_per_block
    kernel = next(iter(dispatcher.overloads.values()))
    return max_potential_block_size(kernel, self.sharedmem, 1024)


def max_potential_block_size(kernel_code, dynamic_shared=0, limit=1024):
    """The block size with the most resident threads per SM (the CUDA occupancy API's
    search: from the largest warp multiple down, a larger block wins a tie, stop at full
    occupancy), within `limit`, the device's and the kernel's (launch bounds) limits."""
    session = current_session()
    gpu = session.gpu
    r = resources(kernel_code)
    limit = min(int(limit), max_threads(kernel_code, session))
    warp = gpu.warp_size
    best, most = 0, 0
    for aligned in range(-(-limit // warp) * warp, 0, -warp):
        threads = min(limit, aligned)
        try:
            occ = occupancy(gpu, threads, r.registers or 1, r.shared_bytes + int(dynamic_shared or 0))
        except OccupancyError:      # this block size does not fit on an SM
            continue
        if occ.blocks_per_sm * threads > most:
            best, most = threads, occ.blocks_per_sm * threads
        if most >= gpu.max_threads_per_sm:
            break
    if not best:
        raise LaunchError(f"kernel.forall: no block size of at most {limit} threads fits on an SM of the "
                          f"modelled {gpu.name} ({r.registers} registers, {r.shared_bytes} B shared per block)")
    return best


def to_core_stream(stream):
    """driver._to_core_stream on the model: a stream of the session (0 / None: the default
    stream; an int: the stream of that handle, as numba's launch configuration unpickles it)."""
    session = current_session()
    if not stream:
        return session.stream_of(0)
    if isinstance(stream, (int, np.integer)):
        return session.streams.get(int(stream)) or session.external_stream(stream)
    return stream
