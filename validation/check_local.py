#!/usr/bin/env python3
"""Local checks without a GPU.

  VALIDATION_TINY=1 NUMBA_ENABLE_CUDASIM=1 python3 validation/check_local.py sim [--only REGEX]
      runs every case at tiny sizes in numba's CUDA simulator and compares with its reference
      (kernels using warp shuffles are skipped: the simulator has no shfl).
  python3 validation/check_local.py ptx [--only REGEX]
      compiles every case's kernel to PTX for sm_90 at the real argument types (needs NVVM/NVRTC,
      e.g. pip install --target /tmp/nvlibs nvidia-cuda-nvcc nvidia-cuda-nvrtc, then
      PYTHONPATH=/tmp/nvlibs LD_LIBRARY_PATH=/tmp/nvlibs/nvidia/cu13/lib); with ptxas on PATH
      also reports registers per thread (ptxas -v).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402
import numpy as np  # noqa: E402
from run_suite import collect_cases  # noqa: E402


def sim(cases):
    from numba import cuda
    nbad = 0
    for c in cases:
        src = open(c["kernel"].__code__.co_filename).read()
        if "shfl_" in src and c["kernel"].__name__.startswith("reduce_shuffle"):
            print(f"SKIP {c['name']} (shuffle not in simulator)")
            continue
        host = c["args"](np.random.default_rng(0))
        dargs = [cuda.to_device(x) if isinstance(x, np.ndarray) else x for x in host]
        try:
            cuda.jit(c["kernel"])[tuple(c["grid"]), tuple(c["block"])](*dargs)
            r = C.check_case(c, host, dargs)
            ok = r["ok"] if r else None
            print(f"{'OK  ' if ok is not False else 'FAIL'} {c['name']} {r}", flush=True)
            nbad += ok is False
        except Exception as e:  # noqa: BLE001
            nbad += 1
            print(f"ERR  {c['name']}: {C.fmt_exc(e)}", flush=True)
    print(f"{nbad} failures")


def ptx(cases):
    from numba import cuda, typeof
    seen = {}
    for c in cases:
        host = c["args"](np.random.default_rng(0)) if os.environ.get("VALIDATION_TINY") == "1" else None
        if host is None:
            # real sizes are big: build the types from tiny stand-ins with the same dtypes/ndim
            os.environ["VALIDATION_TINY"] = "1"
        host = c["args"](np.random.default_rng(0))
        sig = tuple(typeof(x) for x in host)
        key = (c["kernel"].__name__, sig)
        if key in seen:
            continue
        try:
            code, _ = cuda.compile_ptx(c["kernel"], sig, cc=(9, 0))
            regs = "?"
            with tempfile.TemporaryDirectory() as d:
                p = os.path.join(d, "k.ptx")
                # the pip NVVM may be newer than the local ptxas: lower the .version line for ptxas only
                open(p, "w").write(re.sub(r"^\.version \d+\.\d+", ".version 9.0", code, flags=re.M))
                r = subprocess.run(["ptxas", "-arch=sm_90", "-v", p, "-o", os.path.join(d, "k.cubin")],
                                   capture_output=True, text=True)
                m = re.findall(r"Used (\d+) registers", r.stderr)
                regs = m[-1] if m else ("ptxas error: " + r.stderr[-300:] if r.returncode else "?")
                sm = re.findall(r"(\d+) bytes smem", r.stderr)
                st = re.findall(r"(\d+) bytes stack frame", r.stderr)
            ops = sorted(set(re.findall(r"^\s*((?:ld|st|atom|red|fma|mul|add|sin|cos|ex2|shfl)\.[\w.]+)",
                                        code, re.M)))
            print(f"OK  {c['name']:40s} regs={regs} smem={sm[-1] if sm else '?'} stack={st[-1] if st else '?'} "
                  f"{' '.join(ops)[:200]}")
            seen[key] = True
        except Exception as e:  # noqa: BLE001
            print(f"ERR {c['name']}: {C.fmt_exc(e)[-1500:]}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("sim", "ptx"))
    ap.add_argument("--only")
    a = ap.parse_args()
    cs = collect_cases(None, a.only)
    sim(cs) if a.what == "sim" else ptx(cs)
