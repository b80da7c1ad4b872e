"""Run seqs.CASES on the card (device only): nvcc -cubin -arch=sm_90, cuobjdump -sass, cupy.

    python3 device_nan_seq.py OUTDIR

Writes OUTDIR/nan_seq.npz (``<case>_in<k>``, ``<case>_out``, raw bits as uint64), nan_seq.ptx (the PTX
nvcc made: the same text simgpu runs here), nan_seq.sass (cuobjdump -sass), nan_seq_meta.json.
Then the same PTX again as numba-cuda loads a kernel (its linker, ``numba.cuda.cudadrv.driver._Linker``:
nvJitLink where installed, else the driver's JIT): ``<case>_out_jit`` in the npz, nan_seq_jit.cubin,
nan_seq_jit.sass, and which linker ran in the meta (``jit_linker``)."""
import datetime
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import seqs  # noqa: E402

CT = {"f32": "float", "f64": "double"}
LD = {"f32": "__uint_as_float((unsigned int){})", "f64": "__longlong_as_double((long long){})"}
ST = {"f32": "(unsigned long long)__float_as_uint({})", "f64": "(unsigned long long)__double_as_longlong({})"}
CON = {"f32": "f", "f64": "d"}


def source():
    out = []
    for name, dst, srcs, body in seqs.CASES:
        ps = ", ".join(f"const unsigned long long* __restrict__ in{k}" for k in range(len(srcs)))
        lines = [f'extern "C" __global__ void {name}({ps}, unsigned long long* __restrict__ out, int n) {{',
                 "  int i = blockIdx.x * blockDim.x + threadIdx.x;", "  if (i >= n) return;"]
        for k, t in enumerate(srcs):
            lines.append(f"  {CT[t]} a{k} = {LD[t].format(f'in{k}[i]')};")
        lines.append(f"  {CT[dst]} d;")
        ins = ", ".join(f'"{CON[t]}"(a{k})' for k, t in enumerate(srcs))
        lines.append(f'  asm volatile("{{ {body} }}" : "={CON[dst]}"(d) : {ins});')
        lines.append(f"  out[i] = {ST[dst].format('d')};")
        lines.append("}")
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"


def run_all(cp, mod, res, suffix):
    for case in seqs.CASES:
        name = case[0]
        ins = seqs.inputs(case)
        n = len(ins[0])
        dev = [cp.asarray(a) for a in ins]
        out = cp.zeros(n, cp.uint64)
        mod.get_function(name)(((n + 127) // 128,), (128,), (*dev, out, np.int32(n)))
        for k, a in enumerate(ins):
            res[f"{name}_in{k}"] = a
        res[f"{name}_out{suffix}"] = cp.asnumpy(out)


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    cu = os.path.join(outdir, "nan_seq.cu")
    with open(cu, "w") as f:
        f.write(source())
    ptx = os.path.join(outdir, "nan_seq.ptx")
    subprocess.run(["nvcc", "-ptx", "-arch=sm_90", "-o", ptx, cu], check=True)
    cubin = os.path.join(outdir, "nan_seq.cubin")
    subprocess.run(["ptxas", "-arch=sm_90", "-o", cubin, ptx], check=True)   # the PTX above, as simgpu reads it
    sass = subprocess.run(["cuobjdump", "-sass", cubin], capture_output=True, text=True).stdout
    with open(os.path.join(outdir, "nan_seq.sass"), "w") as f:
        f.write(sass)
    import cupy as cp
    res = {}
    run_all(cp, cp.RawModule(path=cubin), res, "")
    jit_linker = None
    try:                                    # the PTX as numba-cuda links it (what campaign c2 ran)
        from numba.cuda.cudadrv import driver as nd
        lk = nd._Linker(max_registers=None, lineinfo=False, cc=(9, 0))
        with open(ptx, "rb") as f:
            lk.add_ptx(f.read(), "nan_seq.ptx")
        obj = lk.complete()
        from cuda.core import Linker
        jit_linker = str(Linker.which_backend())  # nvJitLink (its version: pip's nvidia-nvjitlink) or the driver
        jcub = os.path.join(outdir, "nan_seq_jit.cubin")
        with open(jcub, "wb") as f:
            f.write(bytes(obj.code))
        with open(os.path.join(outdir, "nan_seq_jit.sass"), "w") as f:
            f.write(subprocess.run(["cuobjdump", "-sass", jcub], capture_output=True, text=True).stdout)
        run_all(cp, cp.RawModule(path=jcub), res, "_jit")
    except Exception as e:  # noqa: BLE001 -- the ptxas results stand alone
        jit_linker = f"failed: {type(e).__name__}: {e}"
    np.savez_compressed(os.path.join(outdir, "nan_seq.npz"), **res)
    ver = lambda c: subprocess.run(c, capture_output=True, text=True).stdout.strip().splitlines()[-1:]  # noqa: E731
    meta = {"date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
            "nvcc": ver(["nvcc", "--version"]), "ptxas": ver(["ptxas", "--version"]),
            "driver": cp.cuda.runtime.driverGetVersion(), "cupy": cp.__version__,
            "jit_linker": jit_linker, "cases": [c[0] for c in seqs.CASES]}
    with open(os.path.join(outdir, "nan_seq_meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print("ok", len(seqs.CASES), "cases")


if __name__ == "__main__":
    main(sys.argv[1])
