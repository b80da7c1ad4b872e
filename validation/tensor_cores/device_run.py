"""Run the tensor-core test kernels of kernels.py on the GPU and save inputs + result bits.

    python3 device_run.py OUTDIR

Every kernel is assembled with the device's ptxas (-arch=sm_90) and loaded with cupy; if that
fails the PTX is loaded directly (the driver JIT).  Writes OUTDIR/h200_tensor_cores.npz (keys
``<form>/<family>/{A,B,C,D}``: fragment words per thread; ``ldmatrix/{src,off,out}``,
``cp_async/{src,out}``) and OUTDIR/h200_tensor_cores_meta.json (card, driver, versions, date,
failures).
"""
from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels as K  # noqa: E402

import cupy as cp  # noqa: E402

W = 32          # warps per (form, family): 4096 dot products


def module(ptx, tmp, name):
    p = os.path.join(tmp, name + ".ptx")
    with open(p, "w") as f:
        f.write(ptx)
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    cub = os.path.join(tmp, name + ".cubin")
    r = subprocess.run([ptxas, "-arch=sm_90", p, "-o", cub], capture_output=True, text=True)
    if r.returncode == 0:
        return cp.RawModule(path=cub), "ptxas sm_90 cubin"
    return cp.RawModule(path=p), "driver JIT (ptxas failed: " + r.stderr[:200] + ")"


def main(out):
    os.makedirs(out, exist_ok=True)
    data, meta = {}, {"forms": {}, "failures": {}}
    tmp = tempfile.mkdtemp()
    for name, form in K.MMA_FORMS.items():
        try:
            mod, how = module(K.mma_ptx(*form), tmp, name)
            fn = mod.get_function("k")
            meta["forms"][name] = {"form": form, "load": how, "families": []}
            for fam in K.families(name):
                A, B, C = K.inputs(name, fam, W)
                a, b, c = K.pack_case(name, A, B, C)
                nd = 2 if form[1] == "f16" else 4
                da, db, dc = cp.asarray(a), cp.asarray(b), cp.asarray(c)
                dd = cp.full((W * 32, nd), 0xDEADBEEF, dtype=cp.uint32)
                fn((W,), (32,), (da, db, dc, dd))
                cp.cuda.runtime.deviceSynchronize()
                for k, v in zip("ABCD", (a, b, c, cp.asnumpy(dd))):
                    data[f"{name}/{fam}/{k}"] = v
                meta["forms"][name]["families"].append(fam)
        except Exception as e:                          # record, go on with the others
            meta["failures"][name] = repr(e)[:500]
    rng = np.random.default_rng(20261202)
    try:
        mod, how = module(K.LDMATRIX_PTX, tmp, "ldmatrix")
        src = rng.integers(0, 1 << 32, (4, 256), dtype=np.uint64).astype(np.uint32)
        off = (rng.integers(0, 64, (4, 32)) * 16).astype(np.uint32)
        dout = cp.zeros((4 * 32, 14), cp.uint32)
        mod.get_function("k")((4,), (32,), (cp.asarray(src), cp.asarray(off), dout))
        cp.cuda.runtime.deviceSynchronize()
        data["ldmatrix/src"], data["ldmatrix/off"], data["ldmatrix/out"] = src, off, cp.asnumpy(dout)
        meta["ldmatrix"] = how
    except Exception as e:
        meta["failures"]["ldmatrix"] = repr(e)[:500]
    try:
        mod, how = module(K.CP_ASYNC_PTX, tmp, "cp_async")
        src = rng.integers(0, 1 << 32, 512, dtype=np.uint64).astype(np.uint32)
        dout = cp.zeros(384, cp.uint32)
        mod.get_function("k")((1,), (32,), (cp.asarray(src), dout))
        cp.cuda.runtime.deviceSynchronize()
        data["cp_async/src"], data["cp_async/out"] = src, cp.asnumpy(dout)
        meta["cp_async"] = how
    except Exception as e:
        meta["failures"]["cp_async"] = repr(e)[:500]
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    pv = subprocess.run([shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas", "--version"],
                        capture_output=True, text=True).stdout.strip().splitlines()[-1:]
    meta.update(date=datetime.datetime.utcnow().isoformat() + "Z", gpu=smi, ptxas=pv,
                cupy=cp.__version__, numpy=np.__version__,
                cuda_runtime=cp.cuda.runtime.runtimeGetVersion(),
                driver=cp.cuda.runtime.driverGetVersion(), warps_per_family=W)
    np.savez_compressed(os.path.join(out, "h200_tensor_cores.npz"), **data)
    with open(os.path.join(out, "h200_tensor_cores_meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(json.dumps({k: v for k, v in meta.items() if k != "forms"}, indent=1))
    print("forms:", {k: len(v["families"]) for k, v in meta["forms"].items()})


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "out")
