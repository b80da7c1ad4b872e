"""Helpers shared by validation/run_suite.py and validation/microbench/run_micro.py.

Import this module BEFORE numba.cuda: it patches np.row_stack (numba 0.68.0 calls it, numpy 2.5
removed it).  Every validation script that needs the patch and runs without simgpu gets it here
(`import _common`); scripts that import simgpu get simgpu/_compat.py's.
"""
import datetime
import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
import traceback

import numpy as np



def patch_numpy_for_numba():
    """numba 0.68.0 calls np.row_stack, which numpy 2.5 removed; give it back (as vstack).
    This is a copy of simgpu/_compat.py's patch on purpose: the suite runs on the GPU machine
    without simgpu installed, so it cannot import simgpu._compat.  It is validation/'s one copy."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack


patch_numpy_for_numba()

HERE = os.path.dirname(os.path.abspath(__file__))


def log(*a):
    print(*a, flush=True)


def load_module(path, prefix="vk"):
    stem = os.path.splitext(os.path.basename(path))[0]
    name = f"{prefix}_{stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def kernel_modules(directory, only_modules=None):
    paths = sorted(glob.glob(os.path.join(directory, "*.py")))
    paths = [p for p in paths if not os.path.basename(p).startswith("_")]
    if only_modules:
        keep = set(only_modules)
        paths = [p for p in paths if os.path.splitext(os.path.basename(p))[0] in keep]
    return paths


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, default=_json_default)
    os.replace(tmp, path)


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (tuple, set)):
        return list(o)
    return repr(o)


def _run(cmd, timeout=30):
    try:
        r = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=timeout)
        return (r.stdout + r.stderr).strip()
    except Exception as e:  # noqa: BLE001
        return f"ERROR: {e!r}"


def provenance(argv=None):
    """Card, driver, CUDA, numba, numba-cuda, numpy, ncu versions; date; command line."""
    p = {"date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
         "command": " ".join(argv if argv is not None else sys.argv),
         "python": sys.version.split()[0], "numpy": np.__version__}
    try:
        import numba
        p["numba"] = numba.__version__
    except Exception as e:  # noqa: BLE001
        p["numba"] = f"ERROR {e!r}"
    try:
        from importlib.metadata import version
        p["numba_cuda"] = version("numba-cuda")
    except Exception as e:  # noqa: BLE001
        p["numba_cuda"] = f"unknown ({e!r})"
    p["nvidia_smi"] = _run("nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,"
                           "clocks.max.mem,power.limit,compute_mode,persistence_mode --format=csv,noheader")
    p["cuda_version_smi"] = _run("nvidia-smi | grep -o 'CUDA Version: [0-9.]*'")
    ncu = find_ncu()
    p["ncu_path"] = ncu
    p["ncu_version"] = _run(f"{ncu} --version | tail -1") if ncu else None
    try:
        from numba import cuda
        dev = cuda.get_current_device()
        p["device_name"] = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        p["compute_capability"] = list(dev.compute_capability)
        p["multiprocessors"] = dev.MULTIPROCESSOR_COUNT
        rt = cuda.runtime.get_version() if hasattr(cuda, "runtime") else None
        p["cuda_runtime_version"] = list(rt) if rt else None
        drv = cuda.cudadrv.driver.driver.get_version() if hasattr(cuda.cudadrv.driver.driver, "get_version") else None
        p["cuda_driver_api_version"] = list(drv) if drv else None
    except Exception as e:  # noqa: BLE001
        p["device_error"] = repr(e)
    return p


def find_ncu():
    n = shutil.which("ncu")
    if n:
        return n
    c = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu")) + sorted(glob.glob("/usr/local/cuda*/bin/ncu"))
    return c[-1] if c else None


# ----------------------------------------------------------------------------------------------
# device side helpers (import numba.cuda lazily so that this module can be imported anywhere)

from numba import cuda  # noqa: E402  (after the np.row_stack patch above)


def setup_flush_read(buf, out):
    # read-only flush: leaves the L2 full of clean lines of `buf` (a write flush would leave
    # dirty lines whose write-back would then be charged to the next, timed kernel)
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    acc = np.float32(0.0)
    while i < buf.size:
        acc += buf[i]
        i += stride
    if acc == np.float32(-1.0):
        out[0] = acc


def setup_spin(out, iters):
    # one warp, a long dependent FMA chain, no memory traffic: keeps the GPU busy while the
    # host enqueues the timed kernel, so the start event is not early
    a = out[cuda.threadIdx.x]
    it = 0
    while it < iters:
        a = a * np.float32(0.999999) + np.float32(1e-7)
        it += 1
    if a == np.float32(-1.0):
        out[0] = a


_helpers = {}


def _helper_kernels():
    if not _helpers:
        _helpers["flush"] = cuda.jit(setup_flush_read)
        _helpers["spin"] = cuda.jit(setup_spin)
    return _helpers


class Timer:
    """Event timing of one launch at a time, each preceded by an optional L2 flush and a spin."""

    def __init__(self, flush_bytes=512 * 1024 * 1024, spin_iters=40000):
        self.cuda = cuda
        self.sim = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
        if self.sim:  # local runner tests only: tiny flush, host clock instead of events
            flush_bytes, spin_iters = 4096, 4
        h = _helper_kernels()
        n = flush_bytes // 4
        self.flush_buf = cuda.device_array(n, np.float32)
        # fill with ones through a host copy of a small pattern repeated on device
        self.flush_buf.copy_to_device(np.ones(n, np.float32))
        self.sink = cuda.to_device(np.zeros(32, np.float32))
        self.spin_iters = np.int32(spin_iters)
        self._flush = h["flush"][132 * 8 if not self.sim else 1, 256 if not self.sim else 32]
        self._spin = h["spin"][1, 32]
        self.s = _HostEvent() if self.sim else cuda.event(timing=True)
        self.e = _HostEvent() if self.sim else cuda.event(timing=True)
        self.flush()
        self.spin()
        cuda.synchronize()

    def flush(self):
        self._flush(self.flush_buf, self.sink)

    def spin(self):
        self._spin(self.sink, self.spin_iters)

    def time_once(self, launch, flush):
        if flush:
            self.flush()
        self.spin()
        self.s.record()
        launch()
        self.e.record()
        self.e.synchronize()
        if self.sim:
            return (self.e.t - self.s.t) * 1e6
        return self.cuda.event_elapsed_time(self.s, self.e) * 1000.0  # microseconds

    def measure(self, launch, reps=50, budget_s=1.0):
        """Returns dict with flushed and warm (no flush) statistics in microseconds."""
        t1 = self.time_once(launch, True)
        est = max(t1, 1.0) * 1e-6
        n = int(min(reps, max(5, budget_s / 2 / (est + 3e-4))))
        out = {"reps": n, "first_flushed_us": t1}
        for mode, fl in (("flushed", True), ("warm", False)):
            ts = [self.time_once(launch, fl) for _ in range(n)]
            out[mode] = stats(ts)
        return out


class _HostEvent:
    t = 0.0

    def record(self, stream=0):
        self.t = time.perf_counter()

    def synchronize(self):
        pass


def stats(ts):
    a = np.array(ts, dtype=np.float64)
    return {"median_us": float(np.median(a)), "min_us": float(a.min()), "max_us": float(a.max()),
            "mean_us": float(a.mean()), "p10_us": float(np.percentile(a, 10)),
            "p90_us": float(np.percentile(a, 90)), "n": int(a.size), "all_us": [round(float(x), 3) for x in a]}


# ----------------------------------------------------------------------------------------------
# compiled-kernel introspection

def argtypes_of(disp, dargs):
    return tuple(disp.typeof_pyval(a) for a in dargs)


def compile_for(disp, dargs):
    """Compile (without launching) and return the _Kernel overload for these arguments."""
    if not hasattr(disp, "typeof_pyval"):      # CUDA simulator: nothing to compile
        return _SimKernel(), ()
    at = argtypes_of(disp, dargs)
    return disp.compile(at), at


class _SimKernel:
    """Stand-in for a compiled kernel under NUMBA_ENABLE_CUDASIM (local tests of the runners)."""

    def inspect_sass(self):
        raise RuntimeError("simulator: no SASS")

    def inspect_asm(self, cc=None):
        return "// simulator: no PTX"



def resources(ker):
    r = {}
    for attr in ("regs_per_thread", "shared_mem_per_block", "local_mem_per_thread", "const_mem_size",
                 "max_threads_per_block"):
        try:
            r[attr] = int(getattr(ker, attr))
        except Exception as e:  # noqa: BLE001
            r[attr] = None
            r[attr + "_error"] = repr(e)[:200]
    return r


def get_sass(ker):
    """SASS text via nvdisasm (numba) or cuobjdump on the cubin; returns (text, method)."""
    errs = []
    try:
        return ker.inspect_sass(), "inspect_sass"
    except Exception as e:  # noqa: BLE001
        errs.append(f"inspect_sass: {e!r}"[:300])
    try:
        lib = getattr(ker, "_codelibrary", None) or getattr(ker, "library", None)
        cubin = lib.get_cubin()
        import tempfile
        with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
            f.write(cubin)
            fn = f.name
        cuobj = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
        r = subprocess.run([cuobj, "-sass", fn], capture_output=True, text=True, timeout=60)
        os.unlink(fn)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout, "cuobjdump"
        errs.append("cuobjdump: " + r.stderr[:300])
    except Exception as e:  # noqa: BLE001
        errs.append(f"cubin: {e!r}"[:300])
    return None, "; ".join(errs)


def get_ptx(ker, cc=(9, 0)):
    try:
        return ker.inspect_asm(cc)
    except Exception:  # noqa: BLE001
        try:
            return ker.inspect_asm()
        except Exception as e:  # noqa: BLE001
            return f"// PTX unavailable: {e!r}"


_SASS_LINE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")


def sass_opcodes(sass):
    """Histogram of SASS opcodes (with modifiers, e.g. LDG.E.128) and a short list of memory ops."""
    hist = {}
    if not sass:
        return hist
    for line in sass.splitlines():
        m = _SASS_LINE.search(line)
        if not m:
            continue
        ins = m.group(1).strip()
        toks = ins.split()
        if not toks:
            continue
        if toks[0].startswith("@"):
            toks = toks[1:]
        if not toks:
            continue
        op = toks[0]
        hist[op] = hist.get(op, 0) + 1
    return dict(sorted(hist.items()))


def compare(got, exp, tol):
    """Relative L2 error in float64 (tol 0 means exact)."""
    got = np.asarray(got).ravel()
    exp = np.asarray(exp).ravel()
    if got.shape != exp.shape:
        return False, float("nan"), f"shape {got.shape} vs {exp.shape}"
    if tol == 0.0:
        if got.dtype != exp.dtype:
            exp = exp.astype(got.dtype)
        nbad = int(np.count_nonzero(got != exp))
        return nbad == 0, float(nbad), f"{nbad} mismatching elements"
    g = got.astype(np.float64)
    e = exp.astype(np.float64)
    if not np.all(np.isfinite(g)):
        return False, float("nan"), "non-finite output"
    den = np.linalg.norm(e)
    err = float(np.linalg.norm(g - e) / (den if den > 0 else 1.0))
    return err <= tol, err, f"rel L2 err {err:.3e} (tol {tol:g})"


def check_case(case, host_args, dargs):
    ref = case.get("ref")
    if ref is None:
        return None
    tol = case.get("tol", 1e-5)
    res = {}
    expected = ref(host_args)
    ok_all = True
    for idx, exp in expected.items():
        got = dargs[idx].copy_to_host() if hasattr(dargs[idx], "copy_to_host") else dargs[idx]
        if isinstance(exp, tuple):
            sl, exp = exp
            got = got.ravel()[sl]
        ok, err, msg = compare(got, exp, tol)
        res[str(idx)] = {"ok": bool(ok), "err": err, "msg": msg}
        ok_all &= ok
    res["ok"] = bool(ok_all)
    return res


def fmt_exc(e):
    return "".join(traceback.format_exception(type(e), e, e.__traceback__))[-3000:]


def now():
    return time.time()
