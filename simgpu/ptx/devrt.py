"""The CUDA device runtime functions numba-cuda calls, executed as intrinsics.

``cuda.cg.this_grid()`` compiles to ``call cudaCGGetIntrinsicHandle(1)`` and ``grid.sync()``
to ``call cudaCGSynchronize(handle, 0)``.  The module that simgpu runs defines both
(simgpu/sass/devrt.py links PTX definitions so that ptxas can cost the call), but a call of
them never runs that PTX -- its poll loop would wait for blocks that the executor runs after
it.  Here instead:

* ``cudaCGGetIntrinsicHandle(scope)`` returns the address of the grid's arrival counter
  (scope 1, the grid); the multi-grid scope (2, multi-device launches) is an error;
* ``cudaCGSynchronize`` / ``cudaCGSynchronizeGrid`` return 0 (cudaSuccess) and hold the
  calling threads at a grid-wide barrier (status GRID_WAIT): the executor releases them only
  when every thread of the grid that has not exited is there (executor.release_grid_barrier),
  so all memory written before the barrier by any block is visible after it, exactly.

``malloc``/``free`` (the device heap, which numba's NRT uses) and ``__assertfail`` (assert()
in linked CUDA C++) are intrinsics too.  Every other call goes to printf.build_call (vprintf,
then ordinary calls).
"""
from __future__ import annotations

import numpy as np

from simgpu.ptx import printf
from simgpu.ptx.executor import GRID_WAIT
from simgpu.ptx.instrs import guard_mask, guarded, unsupported
from simgpu.sass import devrt as _defs

SCOPE_GRID = _defs.SCOPE_GRID


def _call_parts(ins):
    ops = ins.operands
    rets = ops[0][1] if ops and ops[0][0] == "list" else []
    rest = ops[1:] if ops and ops[0][0] == "list" else ops
    name = rest[0][1] if rest and rest[0][0] == "sym" else None
    args = rest[1][1] if len(rest) > 1 and rest[1][0] == "list" else []
    return name, rets, args


def _param_int(ex, key, idx, size):
    raw = np.ascontiguousarray(ex.param_store(key, size)[idx, :size])
    return raw.view(np.uint64 if size == 8 else np.uint32)[:, 0]


def _set_ret(ex, key, idx, value, size):
    v = np.full(len(idx), value, np.uint64 if size == 8 else np.uint32)
    ex.param_store(key, size)[idx, :size] = v.view(np.uint8).reshape(len(idx), size)


def build_get_handle(ctx, ins, rets, args):
    if len(args) != 1 or len(rets) != 1 or args[0][0] != "sym" or rets[0][0] != "sym":
        return unsupported(ctx, ins, "cudaCGGetIntrinsicHandle takes one .param (the scope) and returns one")
    akey, rkey = (ctx.func, args[0][1]), (ctx.func, rets[0][1])
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        idx = ex.all_lanes(guard(ex, lanes))
        if len(idx):
            scope = _param_int(ex, akey, idx, 4)
            bad = scope != SCOPE_GRID
            if bad.any():
                k = int(np.argmax(bad))
                ex.fault(ins, f"cooperative group scope {int(scope[k])} is not supported (simgpu "
                         "models one device: the grid group only, not a multi-grid group)", idx[k])
            _set_ret(ex, rkey, idx, ex.im.global_addr.get(_defs.WORKSPACE, 1), 8)   # the launch's
        ex.advance(lanes)
    return run


def build_grid_sync(ctx, ins, rets, args):
    if len(args) != 2 or any(a[0] != "sym" for a in args):
        return unsupported(ctx, ins, "cudaCGSynchronize takes two .param arguments (handle, flags)")
    rkey = (ctx.func, rets[0][1]) if rets and rets[0][0] == "sym" else None
    mask = guard_mask(ctx, ins)

    def run(ex, lanes, pc):
        m = mask(ex, lanes)
        if m is not None and not m.any():
            return ex.advance(lanes)
        idx = ex.all_lanes(lanes)
        if m is not None:
            idx = idx[m]
        if rkey is not None:
            _set_ret(ex, rkey, idx, 0, 4)               # cudaSuccess
        ex.leave(lanes, m, GRID_WAIT, pc + 1)
    return run


HEAP_ALIGN = 16                 # CUDA's device malloc returns 16-byte aligned blocks


def build_malloc(ctx, ins, rets, args):
    """``malloc(size)`` on the device heap (numba's NRT allocates with it): the calling lanes'
    blocks are carved from one new allocation in device memory, each 16-byte aligned and
    padded by 16 bytes, so a block's overrun faults instead of reaching its neighbour's.
    Never reused (``free`` does not return memory; the heap limit is not modelled)."""
    if len(args) != 1 or len(rets) != 1 or args[0][0] != "sym" or rets[0][0] != "sym":
        return unsupported(ctx, ins, "malloc takes one .param (the size) and returns one")
    akey, rkey = (ctx.func, args[0][1]), (ctx.func, rets[0][1])
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        idx = ex.all_lanes(guard(ex, lanes))
        if len(idx):
            size = _param_int(ex, akey, idx, 8).astype(np.int64)
            span = (size + HEAP_ALIGN - 1) // HEAP_ALIGN * HEAP_ALIGN + HEAP_ALIGN
            off = np.concatenate([[0], np.cumsum(span)[:-1]])
            base = ex.im.memory.alloc(np.zeros(int(span.sum()), np.uint8), name="<device malloc>")
            ptr = np.where(size > 0, np.uint64(base) + off.astype(np.uint64), np.uint64(0))
            ex.param_store(rkey, 8)[idx, :8] = ptr.astype(np.uint64).view(np.uint8).reshape(len(idx), 8)
        ex.advance(lanes)
    return run


def build_free(ctx, ins, rets, args):
    """``free(ptr)``: nothing to do (device-heap blocks are not reused)."""
    return lambda ex, lanes, pc: ex.advance(lanes)


def build_assertfail(ctx, ins, rets, args):
    """``__assertfail(message, file, line, function, charsize)`` (a failed ``assert`` in linked
    CUDA C++): the kernel stops with a KernelError carrying the assertion's text, as the GPU
    stops with cudaErrorAssert."""
    if len(args) < 3 or any(a[0] != "sym" for a in args[:3]):
        return unsupported(ctx, ins, "__assertfail takes (message, file, line, ...)")
    keys = [(ctx.func, a[1]) for a in args[:3]]
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        idx = ex.all_lanes(guard(ex, lanes))
        if len(idx):
            lane = int(idx[0])
            msg, file = (printf.read_cstring(ex, int(_param_int(ex, k, idx[:1], 8)[0]), lane)
                         .decode("utf-8", "replace") for k in keys[:2])
            line = int(_param_int(ex, keys[2], idx[:1], 4)[0])
            ex.fault(ins, f"device assertion failed: {msg} ({file}:{line})", lane)
        ex.advance(lanes)
    return run


INTRINSICS = {"cudaCGGetIntrinsicHandle": build_get_handle,
              "cudaCGSynchronize": build_grid_sync, "cudaCGSynchronizeGrid": build_grid_sync,
              "malloc": build_malloc, "free": build_free, "__assertfail": build_assertfail}


def build_call(ctx, ins):
    """A call of a device-runtime function -> its intrinsic; any other -> printf.build_call."""
    name, rets, args = _call_parts(ins)
    build = INTRINSICS.get(name)
    if build is not None:
        return build(ctx, ins, rets, args)
    return printf.build_call(ctx, ins)
