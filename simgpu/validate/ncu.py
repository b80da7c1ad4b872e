"""Nsight Compute: run a kernel under `ncu` and read its `--csv --page raw` output."""
from __future__ import annotations

import csv
import glob
import inspect
import io
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

# the metrics the Report names (memory, timing, launch)
METRICS = [
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "lts__t_bytes.sum", "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
    "lts__t_sector_hit_rate.pct", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sector_hit_rate.pct",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "smsp__inst_executed.sum",
    "smsp__thread_inst_executed.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct", "launch__waves_per_multiprocessor",
    "launch__occupancy_limit_blocks", "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps", "launch__registers_per_thread",
]

# ncu's units use SI (1000-based) prefixes; values are returned in base units
_SCALE = {"byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12,
          "nsecond": 1, "usecond": 1e3, "msecond": 1e6, "second": 1e9,
          "byte/second": 1, "kbyte/second": 1e3, "mbyte/second": 1e6, "gbyte/second": 1e9,
          "tbyte/second": 1e12, "hz": 1, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}
_PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}   # auto-scaled counts: Kinst, Msector, Gcycle
_COUNTS = ("inst", "sector", "request", "cycle", "warp", "block", "thread", "wavefront")


def _number(text, unit):
    t = str(text).replace(",", "").strip()
    if t in ("", "n/a", "N/A", "-", "nan"):
        return None
    try:
        v = float(t)
    except ValueError:
        return None
    u = unit.strip()
    if u.lower() in _SCALE:
        return v * _SCALE[u.lower()]
    if len(u) > 1 and u[0] in _PREFIX and u[1:] in _COUNTS:
        return v * _PREFIX[u[0]]
    return v


def parse_ncu_csv(text):
    """Parse `ncu --csv --page raw` text (warning and ==PROF== lines allowed) into a list of
    dicts, one per profiled launch: {'kernel': name, 'id': n, metric: value, ...}; values in
    plain units (bytes, ns, %, counts)."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith('"ID"')), None)
    if start is None:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = rows[0]
    units = rows[1] if len(rows) > 1 and (not rows[1] or rows[1][0] == "") else [""] * len(header)
    body = rows[2:] if units is not rows[0] and len(rows) > 1 and rows[1][:1] == [""] else rows[1:]
    out = []
    for r in body:
        if len(r) != len(header) or not r[0].strip().isdigit():
            continue
        d = {"id": int(r[0]), "kernel": r[header.index("Kernel Name")] if "Kernel Name" in header else ""}
        for h, u, v in zip(header, units, r):
            if "__" in h or h.startswith(("gpu__", "sm__", "dram__", "lts__", "l1tex__", "launch__", "smsp__")):
                num = _number(v, u)
                if num is not None:
                    d[h] = num
        out.append(d)
    return out


def load_ncu_csv(path):
    """Read a file of Nsight Compute's `--csv --page raw` output into one metrics dict per
    profiled kernel launch (list, in launch order)."""
    with open(path, errors="replace") as f:
        return parse_ncu_csv(f.read())


def ncu_path():
    p = shutil.which("ncu")
    if p:
        return p
    cands = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu") + glob.glob("/usr/local/cuda*/bin/ncu"))
    return cands[-1] if cands else None


_DRIVER = r'''
import sys, numpy as np
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack   # numba 0.68.0 calls it; numpy 2.5 removed it
import importlib, importlib.util, os
try:                                     # a module of an installed package (relative imports)
    mod = importlib.import_module(sys.argv[4]) if sys.argv[4] not in ("__main__", "") else None
except Exception:
    mod = None
if mod is None or not hasattr(mod, sys.argv[2]):
    sys.path.append(os.path.dirname(os.path.abspath(sys.argv[1])))   # its neighbours
    spec = importlib.util.spec_from_file_location("simgpu_ncu_target", sys.argv[1])
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
from numba import cuda
fn = getattr(mod, sys.argv[2]); fn = getattr(fn, "py_func", fn)
try:
    from simgpu.validate.runner import as_numba_function
    fn = as_numba_function(fn)
except ImportError:
    pass
d = np.load(sys.argv[3])
grid = tuple(int(v) for v in d["grid"]); block = tuple(int(v) for v in d["block"])
args = []
for k in range(int(d["nargs"])):
    a = d[f"arg{k}"]
    args.append(cuda.to_device(a) if a.ndim else a[()])
k = cuda.jit(fn)
k[grid, block](*args)
cuda.synchronize()
'''


def profile(kernel_py_func, grid, block, args, metrics=None, timeout=600):
    """Profile one launch with ncu --clock-control none; return (metrics dict, message)."""
    exe = ncu_path()
    if exe is None:
        return None, "ncu (Nsight Compute) was not found on PATH"
    try:
        src = inspect.getsourcefile(kernel_py_func)
    except TypeError:
        src = None
    if not src or not os.path.exists(src):
        return None, "the kernel is not defined in a file that ncu's child process can import"
    metrics = metrics or METRICS
    with tempfile.TemporaryDirectory() as tmp:
        npz = os.path.join(tmp, "args.npz")
        np.savez(npz, grid=np.array(grid), block=np.array(block), nargs=len(args),
                 **{f"arg{k}": np.asarray(a) for k, a in enumerate(args)})
        drv = os.path.join(tmp, "driver.py")
        with open(drv, "w") as f:
            f.write(_DRIVER)
        cmd = [exe, "--clock-control", "none", "--csv", "--page", "raw", "--metrics", ",".join(metrics),
               sys.executable, drv, src, kernel_py_func.__name__, npz,
               getattr(kernel_py_func, "__module__", "") or ""]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, f"ncu did not finish within {timeout} s"
        rows = parse_ncu_csv(r.stdout)
        if not rows:
            tail = (r.stdout + r.stderr).strip().splitlines()[-5:]
            return None, "ncu returned no counters: " + " | ".join(tail)
        return rows[-1], "ok"
