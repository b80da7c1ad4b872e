"""Launching PTX: ``run(ptx_text, entry, grid, block, args)`` and ``launch_numba``.

:class:`Kernel` prepares a kernel once per (module, entry) and is kept for the next launch
(``kernel_for``, least recently used of KERNEL_CACHE_SIZE): it analyses and links the entry
and the functions it calls, assigns register storage, static shared and local layouts
(shared: module and function ``.shared`` variables, then the ``extern .shared`` array;
local: every function's ``.local`` variables, one static frame per function, one per call
depth for a function on a call cycle), the ``.const`` bank's initial bytes, and compiles
every instruction.  :class:`Image` is one launch of it: it places the module's ``.global``
variables in the launch's device memory, copies the const bank, adds ``dynamic_shared_bytes``
to the shared size, packs the kernel parameters and fills the per-launch values the
compiled code reads (``launch_values``).  :func:`run` then executes the grid in chunks of
whole blocks (``max_lanes`` lanes at most per chunk, so memory stays bounded), updating the
numpy arrays in place.
"""
from __future__ import annotations

import collections
import types as _types

import numpy as np

from simgpu import patches, settings
from simgpu._compat import load_numba_cuda
from simgpu.errors import SimGPUError
from simgpu.ptx.compile import compile_instr
from simgpu.ptx.instrs import imm_value
from simgpu.ptx import args as argmod
from simgpu.ptx import printf, uninit
from simgpu.ptx.blocks import compile_runs
from simgpu.ptx.jitloop import find_loops, loop_at
from simgpu.ptx.emit import Emitter, PlainInsts, memory_handles
from simgpu.ptx.executor import Chunk, Executor
from simgpu.ptx.frames import RECURSION_FRAMES
from simgpu.ptx.memory import POISON, DeviceMemory, RowMemory
from simgpu.ptx.ops_tma import param_offsets
from simgpu.ptx.parser import parse_cached
from simgpu.ptx.program import analyse, link
from simgpu.ptx.types import CC_REG

MAX_LANES = 1 << 18
FUNC_BASE = 0xF0000000000          # where function addresses (indirect calls) point: no memory


def _dims(d):
    d = (d,) if isinstance(d, int) else tuple(d)
    return tuple(int(x) for x in d) + (1,) * (3 - len(d))


def _callees(module, name, seen, stack=(), recursive=None):
    """Add to `seen` the functions `name` calls or takes the address of, transitively; the
    functions on a call cycle go into `recursive` (frames.py saves their frames)."""
    recursive = set() if recursive is None else recursive
    fn = module.functions[name]
    if fn.body is None:
        return
    for st in fn.body:
        if isinstance(st, tuple):
            continue
        if st.opcode == "call":
            tgt = next((o[1] for o in st.operands if o[0] == "sym"), None)
            tgts = [tgt] if tgt is not None else []
        else:                       # a function whose address is taken (mov r, func): callable
            tgts = [o[1] for o in st.operands if o[0] == "sym" and o[1] in module.functions]
        for tgt in tgts:
            if tgt not in module.functions or module.functions[tgt].body is None:
                continue
            if tgt in stack or tgt == name:     # a cycle: every function on it
                path = stack + (name,)
                recursive.update(path[path.index(tgt):])
                continue
            if tgt not in seen:
                seen.append(tgt)
                _callees(module, tgt, seen, stack + (name,), recursive)
    return recursive


def _layout(vars_, start=0):
    offs, off = {}, start
    for v in vars_:
        al = max(v.align, 1)
        off = (off + al - 1) // al * al
        offs[v.name] = off
        off += v.size
    return offs, off


KERNEL_CACHE_SIZE = 32     # (module, entry) pairs whose Kernel is kept for the next launch
_KERNELS: collections.OrderedDict = collections.OrderedDict()    # (id(module), entry) -> Kernel (which holds the module)


def cache_enabled():
    """Whether launches reuse a cached :class:`Kernel` (``SIMGPU_PTX_KERNEL_CACHE=0``: every
    launch builds its own, as before the cache; benchmarks/bench_launch_overhead.py)."""
    return settings.current().ptx_kernel_cache


def kernel_for(module, entry):
    """The :class:`Kernel` of ``entry`` in ``module``, built once per module object and entry
    (least recently used of KERNEL_CACHE_SIZE kept).  The key is the module object: it stays
    alive in the cache, so its id cannot be reused meanwhile; nothing changes a parsed Module
    (parser.parse_cached shares them too)."""
    if not cache_enabled():
        return Kernel(module, entry)
    key = (id(module), entry)
    k = _KERNELS.get(key)
    if k is not None and k.module is module:
        _KERNELS.move_to_end(key)
        return k
    k = Kernel(module, entry)
    _KERNELS[key] = k
    while len(_KERNELS) > KERNEL_CACHE_SIZE:
        _KERNELS.popitem(last=False)
    return k


class Kernel:
    """What every launch of ``entry`` in ``module`` shares: the analysed and linked program,
    register dtypes, the static shared/local/const layouts, parameter sizes and the compiled
    instructions.  Nothing here depends on a launch: the compiled code reads what does
    (kernel parameter values, ``.global`` variables' addresses) from the launch's
    :class:`Image` (``ex.im.launch_values[k]``, one slot per value, filled by
    ``launch_slots[k](image)`` when the Image is made), and grid, block, dynamic shared size,
    memory and const bank from the Image's attributes at run time."""

    def __init__(self, module, entry):
        if entry not in module.functions or module.functions[entry].kind != "entry":
            entries = [n for n, f in module.functions.items() if f.kind == "entry"]
            raise SimGPUError(f"no kernel {entry!r} in the PTX (kernels: {entries})")
        self.module, self.kernel_name = module, entry
        names = [entry]
        recursive = _callees(module, entry, names)
        self.recursive = frozenset(recursive)
        self.infos = {n: analyse(module.functions[n]) for n in names}
        self.linked = link(self.infos, entry)
        self.entry_pc = self.linked.entry_pc[entry]
        self.recursive_entries = {self.linked.entry_pc[n] for n in recursive}
        self._registers(names)
        self._spaces(names)
        self.local_frame = self.local_size     # one lane's frames; recursion: one per call depth
        if any(f for (f, _) in self.local_off if f in self.recursive):
            self.local_size *= RECURSION_FRAMES
        self.kernel_param_specs = list(module.functions[entry].params)
        self.kernel_param_names = {p.name for p in self.kernel_param_specs}
        self.kernel_param_offsets = param_offsets(self.kernel_param_specs)
        self.call_rets = {}         # call site -> (callee's .param, caller's, size) of its returns
        self.launch_slots = []      # image -> a per-launch value the compiled code reads
        self.compiled = [compile_instr(self, pc) for pc in range(len(self.linked.code))]
        self.uninitialised_reads = uninit.watch(self)   # reads of registers nothing writes: warned
        self.runs = compile_runs(self)      # straight-line runs as one function each (blocks.py)
        self.loops = find_loops(self)       # innermost loops compiled whole (jitloop.py)

    def loop(self, pc):
        """The compiled innermost loop whose head is ``pc`` (jitloop.py), or None."""
        return loop_at(self, pc)

    def _registers(self, names):
        self.reg_dtype = {}
        for n in names:
            for r, t in self.module.functions[n].regs.items():
                self.reg_dtype[(n, r)] = np.dtype(np.bool_) if t == "pred" else \
                    np.dtype(f"u{max(1, int(t[1:]) // 8)}") if t[1:].isdigit() else np.dtype("u4")
            self.reg_dtype[(n, CC_REG)] = np.dtype(np.uint32)    # the carry chain's CC.CF

    def _spaces(self, names):
        mv = self.module.vars
        fvars = [(n, v) for n in names for v in self.module.functions[n].vars]
        shared = [v for v in mv if v.space == "shared" and not v.extern] + \
                 [v for _, v in fvars if v.space == "shared" and not v.extern]
        self.shared_off, end = _layout(shared)
        for v in [v for v in mv if v.space == "shared" and v.extern]:
            end = (end + 15) // 16 * 16
            self.shared_off[v.name] = end
        self.shared_static = end            # + the launch's dynamic shared bytes
        self.local_off, self.local_size = {}, 0
        for n in names:
            loc = [v for v in self.module.functions[n].vars if v.space == "local"]
            offs, self.local_size = _layout(loc, self.local_size)
            self.local_off.update({(n, k): o for k, o in offs.items()})
        consts = [v for v in mv if v.space == "const"]
        self.const_off, self.const_size = _layout(consts)
        self.const_init = RowMemory("const", 1, self.const_size).buf
        for v in consts:
            o = self.const_off[v.name]
            _init(self.const_init[o:o + v.size], v)
        self.global_init = {}           # .global variables: their initial bytes, placed per launch
        for v in mv:
            if v.space == "global":
                buf = np.zeros(max(v.size, 1), np.uint8)
                _init(buf, v)
                self.global_init[v.name] = buf
        self.param_size = {}
        for n in names:
            fn = self.module.functions[n]
            for v in fn.params + fn.rets + [v for v in fn.vars if v.space == "param"]:
                k = (n, v.name)
                self.param_size[k] = max(self.param_size.get(k, 0), v.size)

    def launch_symbol(self, func, name):
        """Whether the address ``mov r, name`` gives in ``func`` is the launch's (a ``.global``
        variable, placed in each launch's memory) rather than the kernel's."""
        return name not in self.module.functions and name not in self.shared_off and \
            (func, name) not in self.local_off and name in self.global_init

    def function_address(self, name):
        """The address ``mov r, func`` gives a function (for indirect calls): FUNC_BASE + its
        place among the module's functions, in no memory (a load from it faults)."""
        return FUNC_BASE + 16 * list(self.module.functions).index(name)

    def function_at(self, addr):
        """The function at address `addr` (function_address), or None."""
        k, r = divmod(addr - FUNC_BASE, 16)
        names = list(self.module.functions)
        return names[k] if r == 0 and 0 <= k < len(names) else None

    def symbol_address(self, func, name):
        """The state-space address that ``mov r, name`` gives (a ``.global`` variable's:
        Image.symbol_address, per launch)."""
        if name in self.module.functions:
            return self.function_address(name)
        if name in self.shared_off:
            return self.shared_off[name]
        if (func, name) in self.local_off:
            return self.local_off[(func, name)]
        if name in self.global_init:
            raise SimGPUError(f".global variable {name}: its address is the launch's "
                              "(Kernel.launch_symbol)")
        if name in self.const_off:
            return self.const_off[name]
        if func == self.kernel_name and name in self.kernel_param_offsets:
            return self.kernel_param_offsets[name]      # a kernel parameter's param-space address
        raise SimGPUError(f"unknown symbol {name}")


# what an Image shares with its Kernel (the same objects)
_SHARED_ATTRS = ("module", "kernel_name", "recursive", "infos", "linked", "entry_pc",
                 "recursive_entries", "reg_dtype", "shared_off", "local_off", "local_size",
                 "local_frame", "const_off", "param_size", "compiled")


class Image:
    """One launch of a :class:`Kernel`: grid, block, memory (its ``.global`` variables placed
    in it), dynamic shared size, const bank, kernel parameters and print() output, beside the
    kernel's shared program (the same attributes as before the cache: ``linked``,
    ``compiled``, ``reg_dtype``, layouts ...)."""

    def __init__(self, module, entry, grid, block, param_values, memory, dyn_shared=0,
                 max_steps=10 ** 8, display_name=None, poison=POISON):
        k = self.kernel = kernel_for(module, entry)
        self.linked = k.linked
        self.poison = poison        # the byte shared and local memory start as (None: zeros)
        for a in _SHARED_ATTRS:
            setattr(self, a, getattr(k, a))
        self.display_name = display_name or entry      # the kernel's name in messages
        self.grid, self.block = grid, block
        self.memory, self.dyn_shared, self.max_steps = memory, dyn_shared, max_steps
        self.shared_size = k.shared_static + dyn_shared
        self.const_mem = RowMemory("const", 1, k.const_size)
        self.const_mem.buf[...] = k.const_init
        self.global_addr = {name: memory.place_global(name, buf) for name, buf in k.global_init.items()}
        self._kernel_params(param_values)
        self.call_rets = dict(k.call_rets)     # indirect calls add theirs as they run
        self.printed = []           # print(): one entry per thread per call, in output order
        self.overruns = {}          # (PTX line, allocation) -> accesses past an end inside its
                                    # rounding (ops_mem._file_overruns; memcheck reports them)
        self.print_file = None      # where print() writes (None: sys.stdout at the time)
        self.launch_values = [make(self) for make in k.launch_slots]

    def _kernel_params(self, values):
        params = self.kernel.kernel_param_specs
        if len(values) != len(params):
            raise SimGPUError(f"kernel {self.kernel_name} takes {len(params)} parameter values "
                              f"(numba's flattening), got {len(values)}")
        self.kernel_params = {p.name: argmod.pack_param(v, p.size) for p, v in zip(params, values)}

    def flush_prints(self, records):
        """Write a chunk's print() records (see printf.emit for the order)."""
        printf.emit(records, self.printed, self.print_file)

    def function_address(self, name):
        return self.kernel.function_address(name)

    def function_at(self, addr):
        return self.kernel.function_at(addr)

    def symbol_address(self, func, name):
        """The state-space address that ``mov r, name`` gives."""
        if self.kernel.launch_symbol(func, name):
            return self.global_addr[name]
        return self.kernel.symbol_address(func, name)


def _init(buf, var):
    if not var.init:
        return
    T = np.dtype(f"u{max(1, int(var.type[1:]) // 8)}") if var.type[1:].isdigit() else None
    if T is None:
        raise SimGPUError(f"initializer of .{var.type} variable {var.name} is not supported")
    vals = [imm_value(op, var.type).view(T) for op in var.init if op[0] in ("imm", "fimm")]
    raw = np.array(vals, T).view(np.uint8)
    buf[:min(len(raw), len(buf))] = raw[:len(buf)]


def run(ptx_text, entry_name, grid, block, args, dynamic_shared_bytes=0, observers=(),
        max_lanes=MAX_LANES, max_steps=10 ** 8, module=None):
    """Execute kernel ``entry_name`` of ``ptx_text`` like a launch ``[grid, block]`` with
    ``args`` (numpy arrays updated in place; scalars).  ``observers``: simgpu.events.Observer
    instances, given the records of every chunk (ptx/emit.py).  ``entry_name`` may also be a unique
    substring of the mangled name (e.g. the Python function's name).  Arrays are flattened
    as numba.cuda passes them; if that does not match the kernel's parameter count but one
    parameter per argument does, arrays are passed as bare device pointers."""
    module = module or parse_cached(ptx_text)
    entry = module.entry(entry_name)
    grid, block = _dims(grid), _dims(block)
    nparams = len(module.functions[entry].params)
    values, memory, copies = argmod.flatten_args(args)
    if len(values) != nparams and len(args) == nparams:      # hand-written PTX: pointers
        values, memory, copies = argmod.flatten_args(args, pointers=True)
    image = Image(module, entry, grid, block, values, memory, dynamic_shared_bytes, max_steps)
    run_image(image, observers, max_lanes)
    argmod.write_back(copies)
    return image


def run_image(image, observers=(), max_lanes=MAX_LANES):
    """Execute the launch ``image`` (a :class:`Image`: grid, block, memory and parameter
    values placed) block chunk by block chunk, giving ``observers`` every chunk's records."""
    module, memory, grid, block = image.module, image.memory, image.grid, image.block
    nthreads = block[0] * block[1] * block[2]
    if nthreads > 1024 or nthreads == 0:
        raise SimGPUError(f"block of {nthreads} threads cannot be launched (1..1024)")
    padded = (nthreads + 31) // 32 * 32
    per_chunk = max(1, max_lanes // padded)
    nblocks = grid[0] * grid[1] * grid[2]
    insts = PlainInsts(image.linked.code, module) if observers else None
    for index, first in enumerate(range(0, nblocks, per_chunk)):
        n = min(per_chunk, nblocks - first)
        chunk, em = Chunk(first, n, grid, block, index), None
        if observers:
            for o in observers:
                o.chunk_begin(chunk)
            em = Emitter(observers, chunk, image.linked.code, insts, memory_handles(memory))
        Executor(image, chunk, em).run()
        for o in observers:
            o.chunk_end(chunk)


def _numba_device_cc():
    """numba-cuda compiles device functions for the current device's compute capability;
    without a GPU there is none, so pin it to sm_90 for compile_ptx (a ``with`` block)."""

    import numba.cuda.dispatcher as disp
    real = disp.get_current_device

    def current():
        try:
            return real()
        except Exception:
            return _types.SimpleNamespace(compute_capability=(9, 0))
    return patches.swapped("numba.cuda.dispatcher:get_current_device", current)


def compile_numba(py_func, args, cc=(9, 0), **kw):
    """PTX text for ``py_func`` with the numba types of ``args`` (numba.typeof)."""
    load_numba_cuda()
    import numba
    from numba import cuda
    sig = tuple(numba.typeof(a) for a in args)
    fn = getattr(py_func, "py_func", py_func)
    with _numba_device_cc():
        ptx, _ = cuda.compile_ptx(fn, sig, cc=cc, lineinfo=True, **kw)
    return ptx, fn.__name__


def launch_numba(py_func, grid, block, args, dynamic_shared_bytes=0, observers=(), **kw):
    """Compile ``py_func`` (a Python function or numba.cuda.jit kernel) with numba.cuda for
    the argument types and run it: the arrays in ``args`` are updated in place."""
    opt = kw.pop("opt", None)
    ptx, name = compile_numba(py_func, args, **({} if opt is None else {"opt": opt}))
    return run(ptx, name, grid, block, args, dynamic_shared_bytes, observers, **kw)
