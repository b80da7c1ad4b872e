"""Every kernel launch of numba-cuda's tests as a plain ``simgpu.launch`` (issue 25).

Imported by validation/numba_suite/plugin.py when ``SIMGPU_NUMBA_SUITE=plain``: simgpu is
installed (numba.cuda's host API on the modelled GPU, results only, for the tests' device
arrays, streams and transfers), and then numba's compiled-kernel class launches each kernel
*not* through the host API's compiled-PTX path but as a user's plain launch would:

    simgpu.launch(dispatcher, griddim, blockdim, args, shared_bytes=sharedmem)

with simgpu's defaults (the H200, the memory and timing models on, the PTX executor: simgpu
compiles the kernel with numba-cuda itself -- the test's ``cuda.jit`` dispatcher, so with its
options and explicit signatures -- binds the arguments from Python, runs ptxas for the SASS
facts).  The arguments are the test's own, as numba's ``_Kernel`` would pass
them (``cuda.In``/``Out`` unwrapped, scalars cast to the overload's types), and the test's own
assertions are the expected values.

Kernels whose launch is host API rather than kernel (``debug=True``: exceptions raised on the
host; a kernel numba rebuilt from its disk cache, which has no Python function) run through the
host API's path, and are counted so (``host_path``).

Per test, :func:`record` writes one JSON line to ``$SIMGPU_NUMBA_KERNELS_LOG``: the launches,
and for a failure the exception's type, whether simgpu marks it a user's error, and where it
was raised (the innermost frame), from which run.py classifies it.
"""
from __future__ import annotations

import enum
import json
import os
import traceback

import simgpu
from simgpu.host import kernels as host_kernels
from simgpu.tracebacks import is_user_error

SIMGPU_DIR = os.path.dirname(os.path.abspath(simgpu.__file__)) + os.sep
STATE = {"plain": 0, "host_path": 0, "kernels": set(), "dispatcher": []}


def plain_launch(kernel_code, args, griddim, blockdim, stream=0, sharedmem=0):
    py_func = getattr(kernel_code, "py_func", None)
    if py_func is None or getattr(kernel_code, "debug", False):
        STATE["host_path"] += 1
        return host_kernels.run_on_simgpu(kernel_code, args, griddim, blockdim, stream, sharedmem)
    retr = []
    pairs = list(zip(kernel_code.argument_types, args))
    for ext in reversed(kernel_code.extensions or []):
        pairs = [ext.prepare_args(t, v, stream=stream, retr=retr) for t, v in pairs]
    values = [as_passed(host_kernels.prepare_value(t, v, retr), v) for t, v in pairs]
    STATE["plain"] += 1
    STATE["kernels"].add(f"{py_func.__module__}.{py_func.__qualname__}")
    dispatcher = STATE["dispatcher"][-1] if STATE["dispatcher"] else None
    if getattr(dispatcher, "py_func", None) is not py_func:
        dispatcher = py_func
    try:
        rep = simgpu.launch(dispatcher, griddim, blockdim, values, shared_bytes=sharedmem)
    except simgpu.errors.LaunchError as e:
        if str(e).startswith("CUDA_ERROR_"):    # refused as the driver refuses the launch: numba's error
            err = driver_error(str(e))
            err._simgpu_plain_launch = True
            raise err from e
        e._simgpu_plain_launch = True
        raise
    except BaseException as e:
        e._simgpu_plain_launch = True
        raise
    for fn in retr:
        fn()
    kernel_code.last_report = rep
    return rep


def driver_error(msg):
    """The exception numba.cuda raises for a launch the driver refuses (cuda.core's CUDAError,
    or numba's CudaAPIError without cuda.core), as simgpu.host raises it."""
    try:
        from cuda.core._utils.cuda_utils import CUDAError
    except ImportError:
        from numba.cuda.cudadrv.driver import CudaAPIError
        return CudaAPIError(1, msg)
    return CUDAError(msg)


def as_passed(value, given):
    """The prepared value with the test's namedtuples kept namedtuples and its enum members
    kept members (numba types them by their class: ``t.x``, ``a is b`` in the kernel)."""
    given = getattr(given, "value", given) if type(given).__name__ in ("In", "Out", "InOut") else given
    if isinstance(given, enum.Enum):
        return given                # an enum member as the test passes it (numba types it by its class)
    if isinstance(value, tuple) and isinstance(given, tuple):
        items = [as_passed(v, g) for v, g in zip(value, given)]
        return type(given)(*items) if hasattr(given, "_fields") else tuple(items)
    return value


def install_plain():
    """simgpu.install() (results only), then numba's kernels launched as plain simgpu.launch."""
    simgpu.install(memory=False, sass=False)
    from numba.cuda import dispatcher
    dispatcher._Kernel.launch = plain_launch
    call = dispatcher.CUDADispatcher.call

    def call_noting_dispatcher(self, *args, **kwargs):     # the launch gets the test's dispatcher
        STATE["dispatcher"].append(self)
        try:
            return call(self, *args, **kwargs)
        finally:
            STATE["dispatcher"].pop()
    dispatcher.CUDADispatcher.call = call_noting_dispatcher


def reset():
    STATE.update(plain=0, host_path=0, kernels=set())


def failure_facts(excinfo):
    """What classifies a failing test: the exception, whether simgpu marks it a user's error,
    whether a plain launch raised it, and the innermost frame (in simgpu or not)."""
    if excinfo is None:
        return None
    e = excinfo.value
    tb = traceback.extract_tb(excinfo.tb)
    inner = tb[-1] if tb else None
    in_simgpu = bool(inner) and os.path.abspath(inner.filename).startswith(SIMGPU_DIR)
    return {"type": f"{type(e).__module__}.{type(e).__qualname__}",
            "message": str(e).split("\n", 1)[0][:300],
            "user_error": bool(is_user_error(e)),
            "from_launch": bool(getattr(e, "_simgpu_plain_launch", False)),
            "assertion": isinstance(e, AssertionError),
            "innermost": f"{os.path.relpath(inner.filename, os.path.dirname(SIMGPU_DIR))}:{inner.lineno} "
                         f"({inner.name})" if inner else None,
            "innermost_in_simgpu": in_simgpu}


def record(item, report, excinfo):
    path = os.environ.get("SIMGPU_NUMBA_KERNELS_LOG")
    if not path:
        return
    with open(path, "a") as f:
        f.write(json.dumps({"test": item.nodeid, "when": report.when, "outcome": report.outcome,
                            "xfail": hasattr(report, "wasxfail"),
                            "plain_launches": STATE["plain"], "host_path_launches": STATE["host_path"],
                            "kernels": sorted(STATE["kernels"]),
                            "failure": failure_facts(excinfo) if report.outcome == "failed" else None,
                            "cpu_s": round(report.duration, 2)}) + "\n")
