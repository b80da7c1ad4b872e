"""Triton's front door: ``simgpu.jit(fn)[grid](*args, **meta)`` for a ``@triton.jit`` function.

Triton's own JIT (``fn[grid](...)``) needs a driver; this one needs none.  Each launch is what
Triton's JIT does on a GPU, step by step, with the modelled GPU in the driver's place:

* the arguments are bound to the function's parameters (Triton's binder, made by
  ``triton.runtime.jit.create_function_from_signature`` for the modelled GPU's target);
* pointers are specialised as Triton specialises them -- 16-divisibility of the data pointer and
  of integers, integers equal to 1 as constexprs, ``None`` as a constexpr -- against the device
  addresses simgpu placed the arrays at (cudaMalloc-aligned, runtime/binding.DeviceAddresses),
  so the signature, the attributes and therefore the PTX are those a GPU would get;
* ``triton.compile`` compiles it for the GPU's compute capability (kept in memory per
  specialisation and options, and on disk by Triton's own cache);
* the PTX is assembled (SASS, registers) with the ptxas Triton's JIT assembles with on a GPU:
  ``triton.knobs.nvidia.ptxas`` (``$TRITON_PTXAS_PATH``, else the one bundled with Triton: CUDA
  12.8's for Triton 3.6), not the CUDA toolchain's (:func:`triton_ptxas`; ``$SIMGPU_PTXAS``
  still overrides).  Releases differ in their SASS: ptxas 13.0 compiles the tutorial matmul at
  100 x 200 x 80 to 6 % fewer instructions than 12.8, which the H100 ran;
* the launch is ``launch()``'s, with a :class:`TritonProgram` (runtime/foreign.py): block =
  32 x num_warps threads, dynamic shared memory = Triton's ``metadata.shared``, the PTX's
  trailing scratch pointers (global and profile scratch) passed as Triton's launcher passes
  them (null, or a zeroed buffer of ``size x programs`` bytes);
* a host ``TensorDescriptor`` (triton.tools.tensor_descriptor; its base a numpy array through
  :func:`as_tensor`, or a CPU torch tensor) is expanded as Triton's launcher expands it: for a
  kernel Triton lowered to TMA, the 128-byte tensor map (encoded by ``ptx.ops_tma.encode_tiled``
  from Triton's ``tensordesc_meta``, as its launcher calls cuTensorMapEncodeTiled), then the
  shape (i32) and strides (i64); otherwise the base pointer, shape, strides, the NaN-padding
  flag, shape and strides again.

``@triton.autotune``: every config (after Triton's pruning) is launched on the model, and the
one with the shortest predicted time (``gpu__time_duration.sum``) is picked and remembered per
value of the autotuner's key; ``rep.extras["autotune"]`` lists each config's prediction.
``@triton.heuristics`` are applied as Triton applies them.
"""
from __future__ import annotations

import inspect
import os
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .. import settings
from ..errors import ArgumentError, LaunchError, SimGPUError
from ..ptx.args import MappedOnly
from ..ptx.ops_tma import TENSORMAP_BYTES, encode_tiled, tensormap_param
from ..sass import analyze_ptx
from ..sass.kernel import CompiledKernel
from ..sass.toolchain import find_tool
from .foreign import ForeignParam, ForeignProgram, element_address, host_array
from .ptx_binding import HostArray, python_signature
from .ptx_path import cc_for

TIME_METRIC = "gpu__time_duration.sum"


def is_triton(fn):
    """A ``@triton.jit`` function, or one wrapped by ``@triton.autotune`` / ``@triton.heuristics``."""
    mod = type(fn).__module__ or ""
    return mod.startswith("triton.runtime") and hasattr(fn, "run") and hasattr(fn, "fn")


def jit_function(fn):
    """The JITFunction under any autotune/heuristics wrappers."""
    while not hasattr(fn, "params") or not hasattr(fn, "signature"):
        fn = fn.fn
    return fn


def _triton():
    try:
        import triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource, make_backend
        from triton.runtime.jit import create_function_from_signature
    except ImportError as e:       # pragma: no cover - only without triton
        raise SimGPUError("running a Triton kernel needs triton (pip install triton)") from e
    return triton, GPUTarget, ASTSource, make_backend, create_function_from_signature


def triton_ptxas_path(cc):
    """The ptxas Triton's JIT would assemble PTX for ``cc`` with (its NVIDIA backend's
    ``get_ptxas(arch)``, which also set the PTX's ``.version``: ``knobs.nvidia.ptxas``, or
    ``ptxas_blackwell`` from sm_100 in Triton 3.6 and from sm_90 in 3.9), or None."""
    arch = int(cc[0]) * 10 + int(cc[1])
    try:
        try:    # the backend's own choice (Triton 3.9 takes ptxas_blackwell from sm_90 on)
            from triton.backends.nvidia.compiler import get_ptxas
            tool = get_ptxas(arch)
        except ImportError:
            import triton
            tool = triton.knobs.nvidia.ptxas_blackwell if arch >= 100 else triton.knobs.nvidia.ptxas
        path = tool.path
    except Exception:  # noqa: BLE001 -- a Triton without knobs / without a bundled ptxas
        return None
    return path if path and os.access(path, os.X_OK) else None


@contextmanager
def triton_ptxas(cc):
    """Inside the block, simgpu's ptxas is Triton's (:func:`triton_ptxas_path`) -- for the
    SASS facts of the compile and for the executor's SASS-order rules alike -- unless
    ``$SIMGPU_PTXAS`` (or settings.override(ptxas=...)) names one, or Triton has none."""
    path = None if settings.current().ptxas else triton_ptxas_path(cc)
    if path is None:
        yield
        return
    with settings.override(ptxas=path):
        yield


def target_for(cc):
    _, GPUTarget, *_ = _triton()
    return GPUTarget("cuda", int(cc[0]) * 10 + int(cc[1]), 32)


class DeviceTensor(np.ndarray):
    """A numpy array as Triton's host-side code wants a tensor: ``data_ptr()`` (16-byte
    divisible where the array is) and ``stride()`` in elements.  ``as_tensor(a)`` is a view of
    ``a`` (shares its memory: results land in ``a``)."""

    def data_ptr(self):
        return self.__array_interface__["data"][0]

    def stride(self, dim=None):
        s = tuple(st // self.itemsize for st in self.strides)
        return s if dim is None else s[dim]


def as_tensor(a):
    """`a` (a numpy array) viewed as a tensor for ``TensorDescriptor(base, ...)`` /
    ``TensorDescriptor.from_tensor``."""
    return np.asarray(a).view(DeviceTensor)


def is_tensor_descriptor(v):
    return type(v).__name__ == "TensorDescriptor" and hasattr(v, "block_shape") and hasattr(v, "base")


class _Base:
    """A TensorDescriptor's base as Triton's binder sees it: the modelled device address."""

    def __init__(self, address, dtype):
        self.address, self.dtype = int(address), np.dtype(dtype)

    def data_ptr(self):
        return self.address


def _device_descriptor(desc, address, dtype):
    """A copy of `desc` whose base is at the modelled device address (no re-validation: the
    user's descriptor was checked when it was made)."""
    out = object.__new__(type(desc))
    out.__dict__.update(desc.__dict__)
    out.base = _Base(address, dtype)
    return out


class PtrArg:
    """What Triton's binder sees for an array: its data pointer (the modelled device address
    of element 0) and its dtype, as a torch tensor would show them on a GPU."""

    def __init__(self, address, dtype):
        self.address, self.dtype = int(address), dtype

    def data_ptr(self):
        return self.address


def triton_dtype(dtype):
    """A numpy dtype as Triton's binder names it (numpy's names are Triton's, except bool)."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return "int1"
    return dt.name


class TritonFunction:
    """One ``@triton.jit`` function on the modelled GPU: the binder per target, the compiled
    kernels per specialisation."""

    def __init__(self, jitfn):
        self.jitfn = jitfn
        self.py_func = jitfn.fn
        self.name = jitfn.fn.__name__
        self.sig = python_signature(jitfn.fn)
        self.constexpr = {p.name for p in jitfn.params if p.is_constexpr}
        self.param_names = [p.name for p in jitfn.params]
        self._binders = {}
        self.compiled = {}          # (target, specialisation, options) -> triton CompiledKernel
        self._facts = {}

    def binder(self, cc):
        key = tuple(cc)
        if key not in self._binders:
            _, _, _, make_backend, create_function_from_signature = _triton()
            backend = make_backend(target_for(cc))
            self._binders[key] = (backend, create_function_from_signature(self.jitfn.signature,
                                                                          self.jitfn.params, backend))
        return self._binders[key]

    def split(self, args, meta):
        """(runtime args by name, constexprs by name, Triton options): what the caller passed,
        checked against the signature; parameter defaults filled in."""
        params = inspect.signature(self.py_func).parameters
        names = list(params)
        if len(args) > len(names):
            raise ArgumentError(f"Triton kernel {self.name!r} takes {len(names)} parameter(s) "
                                f"({', '.join(names)}), got {len(args)} positional argument(s)")
        bound = dict(zip(names, args))
        options = {}
        for k, v in meta.items():
            if k in params:
                if k in bound:
                    raise ArgumentError(f"Triton kernel {self.name!r}: {k!r} given twice")
                bound[k] = v
            else:
                options[k] = v
        for n, p in params.items():
            if n not in bound and p.default is not inspect.Parameter.empty:
                bound[n] = p.default
        missing = [n for n in names if n not in bound]
        if missing:
            raise ArgumentError(f"Triton kernel {self.name!r} takes {len(names)} argument(s) "
                                f"({', '.join(names)}); missing {', '.join(missing)}")
        return bound, options

    def program(self, args, meta):
        bound, options = self.split(args, meta)
        runtime = [n for n in self.param_names if n not in self.constexpr]
        constexprs = {n: bound[n] for n in self.param_names if n in self.constexpr}
        return TritonProgram(self, [bound[n] for n in runtime], runtime, constexprs, options, bound)


@dataclass
class _Compiled:
    kernel: object          # triton.compiler.CompiledKernel
    ck: CompiledKernel
    runtime: list           # indices (into the runtime parameters) that are PTX parameters


class TritonProgram(ForeignProgram):
    """One call of a Triton function: its runtime arguments bound to parameters, its
    constexprs and options; compiled (in prepare) against the arrays' device addresses."""

    def __init__(self, tf, values, runtime, constexprs, options, bound):
        params = [ForeignParam(n, "any") for n in runtime]
        super().__init__(tf.name, params, tf.py_func.__code__.co_filename,
                         tf.py_func.__code__.co_firstlineno, tf.py_func.__qualname__)
        self.py_func = tf.py_func
        self.tf, self.runtime_values, self.constexprs = tf, values, constexprs
        self.triton_options, self.bound = options, bound
        self.num_warps = int(options.get("num_warps", 4))
        self.last = None

    def bind_one(self, p, a):
        if is_tensor_descriptor(a):
            arr = host_array(a.base)
            if arr is None:
                raise ArgumentError(f"argument {p.name!r} of kernel {self.name!r}: the TensorDescriptor's "
                                    "base must be a numpy array (simgpu.as_tensor(a)) or a CPU torch tensor")
            return (HostArray(arr, a.base),)        # placed like an array; the descriptor is self.bound's
        return super().bind_one(p, a)

    def signature(self):
        return self.tf.sig.__class__(self.name, [p.name for p in self.params], dict(self.tf.sig.source_lines),
                                     self.tf.sig.loc)

    @property
    def block(self):
        return (32 * self.num_warps, 1, 1)

    def grid_of(self, grid):
        """Triton's grid: a tuple, or a callable of the launch's arguments and meta-parameters."""
        if callable(grid):
            grid = grid(dict(self.bound))
        if isinstance(grid, int):
            grid = (grid,)
        if not isinstance(grid, (tuple, list)) or not 1 <= len(grid) <= 3:
            raise LaunchError(f"Triton grid must be 1 to 3 ints, or a callable returning them; got {grid!r}")
        return tuple(int(g) for g in grid) + (1,) * (3 - len(grid))

    def compiled(self, launch, use_cache=True):
        triton, _, ASTSource, _, _ = _triton()
        cc = cc_for(launch.gpu)
        backend, binder = self.tf.binder(cc)
        given = dict(zip((p.name for p in self.params), self.values(launch)))
        call = {}
        for name, v in given.items():
            h = launch.bindings.get(name)
            if isinstance(v, tuple) and is_tensor_descriptor(self.bound.get(name)):
                call[name] = _device_descriptor(self.bound[name], element_address(h[0]), v[0].dtype)
                continue
            call[name] = PtrArg(element_address(h), triton_dtype(v.dtype)) if isinstance(v, np.ndarray) else v
        kwargs = dict(self.triton_options)
        knobs = getattr(triton, "knobs", None)
        kwargs["debug"] = kwargs.get("debug", self.tf.jitfn.debug) or bool(knobs and knobs.runtime.debug)
        if knobs is not None:
            kwargs["instrumentation_mode"] = knobs.compilation.instrumentation_mode
        kwargs.update(self.constexprs)
        try:
            bound_args, specialization, options = binder(**call, **kwargs)
        except TypeError as e:
            raise ArgumentError(f"Triton kernel {self.name!r}: {e}") from None
        key = (tuple(cc), str(specialization), str(options), find_tool("ptxas"))   # the SASS is that ptxas'
        done = self.tf.compiled.get(key)
        if done is None:
            if not hasattr(self.tf.jitfn, "_pack_args"):
                raise SimGPUError(f"simgpu's Triton front door was written against Triton 3.6, whose JIT "
                                  f"packs a call's signature with JITFunction._pack_args; Triton "
                                  f"{triton.__version__} has none")
            opts, signature, constexprs, attrs = self.tf.jitfn._pack_args(backend, kwargs, bound_args,
                                                                          specialization, options)
            kernel = triton.compile(ASTSource(self.tf.jitfn, signature, constexprs, attrs),
                                    target=target_for(cc), options=opts.__dict__)
            ptx = kernel.asm["ptx"]
            md = kernel.metadata
            facts = analyze_ptx(ptx, cc, use_cache=use_cache)
            ck = CompiledKernel(name=self.name, entry=md.name, cc=tuple(cc),
                                argtypes=[str(s[0]) for s in specialization], ptx=ptx, facts=facts,
                                versions={"triton": triton.__version__})
            runtime = [(n, s[0]) for n, s in zip(self.tf.param_names, specialization) if s[0] != "constexpr"]
            done = self.tf.compiled[key] = _Compiled(kernel, ck, runtime)
        self.last = done
        md = done.kernel.metadata
        if int(md.num_warps) * 32 != launch.threads_per_block:
            raise LaunchError(f"Triton compiled {self.name!r} for {md.num_warps} warps; the launch has "
                              f"{launch.threads_per_block} threads per block")
        launch.dynamic_smem_bytes = int(md.shared)
        args = []
        metas = list(getattr(md, "tensordesc_meta", None) or [])
        k_desc = 0
        for n, ty in done.runtime:
            if ty.startswith("tensordesc"):
                meta = metas[k_desc] if k_desc < len(metas) else None
                k_desc += 1
                args.extend(self.descriptor_args(self.bound[n], given[n][0], call[n].base.address, meta))
            else:
                args.append(self.ptx_value(ty, given[n]))
        n_programs = launch.n_blocks
        for size in (md.global_scratch_size, getattr(md, "profile_scratch_size", 0)):
            args.append(np.zeros(int(size) * n_programs, np.uint8) if size else None)
        return done.ck, args

    def launch_facts(self):
        """What Triton's launcher does on the host per call of the last compiled launch:
        ``host_tensor_descriptors`` (each a tensor map encoded per call, driver.make_tensordesc_arg)
        and ``device_tensor_descriptors`` (tl.make_tensor_descriptor: Triton 3.6 keeps each one's
        128-byte tensor map in the global scratch its launcher allocates per call)."""
        md = self.last.kernel.metadata
        return {"host_tensor_descriptors": sum(ty.startswith("tensordesc") for _, ty in self.last.runtime),
                "device_tensor_descriptors": int(md.global_scratch_size or 0) // TENSORMAP_BYTES,
                "global_scratch_bytes": int(md.global_scratch_size or 0)}

    @staticmethod
    def descriptor_args(desc, work, address, meta):
        """A host TensorDescriptor as Triton's launcher passes it (driver.make_tensordesc_arg):
        with TMA metadata the tensor map, shape (i32), strides (i64); else base, shape, strides
        (i64), the NaN-padding flag, shape (i32), strides (i64)."""
        shape, strides = [int(s) for s in desc.shape], [int(s) for s in desc.strides]
        nan = getattr(desc, "padding", "zero") == "nan"
        tail = [np.int32(s) for s in shape] + [np.int64(s) for s in strides]
        if meta is None:
            return [work, *(np.int64(s) for s in shape), *(np.int64(s) for s in strides), np.uint8(nan), *tail]
        es = int(meta["elem_size"])
        dims = list(shape)
        if meta.get("fp4_padded"):
            dims[-1] *= 2
        raw = encode_tiled(address, int(meta["elem_type"]), dims[::-1], [es * s for s in strides[:-1]][::-1],
                           [int(b) for b in meta["block_size"]][::-1], swizzle=int(meta["swizzle"]),
                           fill=1 if nan else 0)
        return [MappedOnly(work), tensormap_param(raw), *tail]

    @staticmethod
    def ptx_value(ty, v):
        if isinstance(v, np.ndarray) or v is None:
            return v
        if ty.startswith("*"):
            raise ArgumentError(f"a pointer parameter got {v!r}")
        if ty == "bf16":
            bits = np.float32(v).view(np.uint32)
            return np.uint16((int(bits) + 0x7FFF + ((int(bits) >> 16) & 1)) >> 16)
        dt = {"i1": np.uint8, "u1": np.uint8, "i8": np.int8, "u8": np.uint8, "i16": np.int16,
              "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64,
              "fp16": np.float16, "fp32": np.float32, "fp64": np.float64}.get(ty)
        if dt is None:
            raise ArgumentError(f"cannot pass a {ty} scalar to a Triton kernel")
        if dt is np.float16:
            return np.float16(v).view(np.uint16)
        return dt(v)


_FUNCTIONS: dict[int, tuple] = {}


def triton_function(fn):
    """The TritonFunction of a JITFunction, made once (its compiled kernels are kept)."""
    jf = jit_function(fn)
    hit = _FUNCTIONS.get(id(jf))
    if hit is None or hit[0] is not jf:
        hit = _FUNCTIONS[id(jf)] = (jf, TritonFunction(jf))
    return hit[1]


# -- autotune and heuristics ---------------------------------------------------------------
def layers(fn):
    """(kind, wrapper) from the outside in: "autotune", "heuristics", then the JITFunction."""
    out = []
    while not (hasattr(fn, "params") and hasattr(fn, "signature")):
        kind = type(fn).__name__
        out.append(("autotune" if kind == "Autotuner" else "heuristics" if kind == "Heuristics" else kind, fn))
        fn = fn.fn
    return out, fn


def apply_heuristics(h, bound_by_name, meta):
    """Triton's Heuristics.run: each value computed from the arguments (named) and meta."""
    out = dict(meta)
    for name, f in h.values.items():
        out[name] = f({**bound_by_name, **out})
    return out


def named_args(fn, args, meta):
    names = list(inspect.signature(jit_function(fn).fn).parameters)
    return {**dict(zip(names, args)), **meta}


def config_meta(config):
    """A triton.Config's meta-parameters and options, as a call's keyword arguments."""
    meta = dict(config.kwargs)
    for k in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        v = getattr(config, k, None)
        if v is not None:
            meta[k] = v
    return meta


def tune_key(tuner, args, meta):
    """Triton's Autotuner key: the values of its `key` arguments, then every array's dtype."""
    named = named_args(tuner, args, meta)
    key = [named[k] for k in tuner.keys if k in named]
    key += [str(v.dtype) for v in named.values() if hasattr(v, "dtype")]
    return tuple(v if isinstance(v, (int, float, str, bool, type(None))) else repr(v) for v in key)


def pruned_configs(tuner, args, meta):
    """Triton's early pruning (prune_configs_by's early_config_prune), when it is given."""
    configs = list(tuner.configs)
    prune = getattr(tuner, "early_config_prune", None)
    if prune:
        configs = list(prune(configs, named_args(tuner, args, meta)))
    return configs
