"""Nsight Compute: run a kernel under `ncu` and read its `--csv --page raw` output."""
from __future__ import annotations

import glob
import inspect
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

from .. import _compat
from .ncu_csv import parse_csv, rows_to_dicts

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

def parse_ncu_csv(text):
    """Parse `ncu --csv --page raw` text (warning and ==PROF== lines allowed) into a list of
    dicts, one per profiled launch: {'kernel': name, 'id': n, metric: value, ...}; values in
    plain units (bytes, ns, %, counts).  The parsing is ncu_csv.py's, which the validation
    suite shares."""
    out = []
    for rec in rows_to_dicts(*parse_csv(text)):
        meta = rec["_meta"]
        d = {"id": int(meta["ID"]), "kernel": meta.get("Kernel Name", "")}
        d.update((h, v) for h, v in rec["metrics"].items() if "__" in h and v is not None)
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


# argv: kernel file, kernel name, args .npz, kernel module, simgpu/_compat.py (loaded by its path:
# the child may not have simgpu on its path, and numba.cuda must load through it with numpy >= 2.5)
_DRIVER = r'''
import sys, numpy as np
import importlib, importlib.util, os
_spec = importlib.util.spec_from_file_location("simgpu_compat", sys.argv[5])
_compat = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(_compat)
_compat.load_numba_cuda()
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
               getattr(kernel_py_func, "__module__", "") or "", os.path.abspath(_compat.__file__)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, f"ncu did not finish within {timeout} s"
        rows = parse_ncu_csv(r.stdout)
        if not rows:
            tail = (r.stdout + r.stderr).strip().splitlines()[-5:]
            return None, "ncu returned no counters: " + " | ".join(tail)
        return rows[-1], "ok"
