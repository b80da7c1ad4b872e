"""Run every case of cases.py on the GPU through inline PTX and save the result bits (device only).

    python3 validation/ptx_semantics/device_run.py OUTDIR [--only-source FILE]

One CUDA C kernel per case: load the raw input bits, run the PTX instruction in an ``asm volatile``
block (predicates through a local ``.reg .pred`` with setp/selp), store the raw result bits.
All kernels are built together with nvcc -cubin -arch=sm_90 (cupy's NVRTC as a fallback); if the
whole module fails, each kernel is built alone and the failing ones are recorded and skipped.
Writes OUTDIR/h200_ptx_semantics_partK.npz (keys ``<i>_in<k>``, ``<i>_out``; compressed, split so
each file stays small) and OUTDIR/h200_ptx_semantics_meta.json (cases, status, versions, date).
``--only-source`` writes the generated CUDA C and exits (used locally to check it compiles).
"""
from __future__ import annotations

import concurrent.futures as cf
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as C  # noqa: E402

N_RAND = 1000
CTYPE = {8: "unsigned char", 16: "unsigned short", 32: "unsigned int", 64: "unsigned long long"}


def reg(t):
    """(C type, constraint letter, load expression template, store expression template) for PTX type t."""
    if t == "f32":
        return "float", "f", "__uint_as_float({})", "__float_as_uint({})"
    if t == "f64":
        return "double", "d", "__longlong_as_double((long long){})", "(unsigned long long)__double_as_longlong({})"
    w = C.WIDTH[t]
    if t == "pred":
        return "unsigned int", "r", "(unsigned int){}", "(unsigned char){}"
    if w <= 16:
        return "unsigned short", "h", "(unsigned short){}", "({})"
    if w == 32:
        return "unsigned int", "r", "{}", "{}"
    return "unsigned long long", "l", "{}", "{}"


def asm_text(case):
    """The asm template: setp for predicate sources, the instruction, selp for a predicate result."""
    srcs, dst = case["srcs"], case["dst"]
    pre, ops = [], []
    for k, t in enumerate(srcs):
        if t == "pred":
            pre.append(f"setp.ne.u32 q{k}, %{k + 1}, 0;")
            ops.append(f"q{k}")
        else:
            ops.append(f"%{k + 1}")
    if case["imm"] is not None:
        ops.append(f"{case['imm']:#x}")
    d = "p" if dst == "pred" else "%0"
    body = f"{case['instr']} {d}, {', '.join(ops)};"
    post = ["selp.u32 %0, 1, 0, p;"] if dst == "pred" else []
    decl = [f".reg .pred q{k};" for k, t in enumerate(srcs) if t == "pred"] + ([".reg .pred p;"] if dst == "pred" else [])
    return "{ " + " ".join(decl + pre + [body] + post) + " }"


def kernel_source(i, case):
    srcs, dst = case["srcs"], case["dst"]
    params = [f"const {CTYPE[C.WIDTH[t]]}* __restrict__ in{k}" for k, t in enumerate(srcs)]
    params.append(f"{CTYPE[C.WIDTH[dst]]}* __restrict__ out")
    lines = [f'extern "C" __global__ void k{i}({", ".join(params)}, int n) {{',
             "  int i = blockIdx.x * blockDim.x + threadIdx.x;", "  if (i >= n) return;"]
    for k, t in enumerate(srcs):
        ct, _, ld, _ = reg(t)
        lines.append(f"  {ct} a{k} = {ld.format(f'in{k}[i]')};")
    ct, cl, _, st = reg(dst)
    lines.append(f"  {ct} d;")
    ins = ", ".join(f'"{reg(t)[1]}"(a{k})' for k, t in enumerate(srcs))
    lines.append(f'  asm volatile("{asm_text(case)}" : "={cl}"(d) : {ins});')
    lines.append(f"  out[i] = ({CTYPE[C.WIDTH[dst]]})({st.format('d')});")
    lines.append("}")
    return "\n".join(lines)


def module_source(items):
    return "\n\n".join(kernel_source(i, c) for i, c in items) + "\n"


def nvcc_build(src, tag, workdir):
    cu = os.path.join(workdir, f"{tag}.cu")
    cubin = os.path.join(workdir, f"{tag}.cubin")
    with open(cu, "w") as f:
        f.write(src)
    p = subprocess.run(["nvcc", "-cubin", "-arch=sm_90", "-o", cubin, cu], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-3000:])
    return cubin


def load_module(items, workdir, tag="all"):
    import cupy as cp
    src = module_source(items)
    try:
        return cp.RawModule(path=nvcc_build(src, tag, workdir)), "nvcc"
    except Exception as e:  # noqa: BLE001
        nvcc_err = str(e)
    try:
        return cp.RawModule(code=src, options=("-arch=sm_90",)), "nvrtc"
    except Exception as e:  # noqa: BLE001
        raise RuntimeError(f"nvcc: {nvcc_err[-1500:]}\nnvrtc: {str(e)[-1500:]}") from None


def versions():
    info = {"date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat()}
    try:
        import cupy as cp
        info["cupy"] = cp.__version__
        info["cuda_runtime"] = cp.cuda.runtime.runtimeGetVersion()
        info["cuda_driver_api"] = cp.cuda.runtime.driverGetVersion()
        props = cp.cuda.runtime.getDeviceProperties(0)
        info["device"] = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        info["cc"] = f"{props['major']}.{props['minor']}"
        info["sm_count"] = props["multiProcessorCount"]
    except Exception as e:  # noqa: BLE001
        info["cupy_error"] = repr(e)
    info["numpy"] = np.__version__
    for cmd, key in ((["nvidia-smi", "--query-gpu=name,driver_version,vbios_version,clocks.sm,clocks.max.sm",
                       "--format=csv,noheader"], "nvidia_smi"), (["nvcc", "--version"], "nvcc")):
        try:
            info[key] = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
        except Exception as e:  # noqa: BLE001
            info[key] = repr(e)
    return info


def main(argv):
    outdir = argv[1] if len(argv) > 1 else "."
    cases = C.CASES
    items = list(enumerate(cases))
    if "--only-source" in argv:
        with open(argv[argv.index("--only-source") + 1], "w") as f:
            f.write(module_source(items))
        return 0
    import cupy as cp
    t0 = time.time()
    meta = {"versions": versions(), "n_rand": N_RAND, "cases": []}
    status = {i: "ok" for i, _ in items}
    errors = {}
    work = tempfile.mkdtemp()
    try:
        mod, how = load_module(items, work)
        mods = {i: mod for i, _ in items}
        meta["build"] = how
    except Exception as e:  # noqa: BLE001
        print("whole-module build failed, building each kernel alone:", str(e)[:2000], flush=True)
        meta["build"] = "per-kernel"
        mods = {}

        def one(item):
            try:
                return item[0], load_module([item], work, f"k{item[0]}")[0], None
            except Exception as e2:  # noqa: BLE001
                return item[0], None, str(e2)[-1500:]
        with cf.ThreadPoolExecutor(16) as ex:
            for i, m, err in ex.map(one, items):
                if m is None:
                    status[i], errors[i] = "compile_failed", err
                else:
                    mods[i] = m
    print(f"built in {time.time() - t0:.1f}s ({meta['build']})", flush=True)
    arrays, part, part_bytes, nparts = {}, 0, 0, 0

    def flush():
        nonlocal arrays, part_bytes, nparts
        if arrays:
            np.savez_compressed(os.path.join(outdir, f"h200_ptx_semantics_part{nparts}.npz"), **arrays)
            nparts += 1
        arrays, part_bytes = {}, 0

    for i, case in items:
        entry = {"i": i, "name": case["name"], "instr": case["instr"], "dst": case["dst"], "srcs": case["srcs"],
                 "imm": case["imm"], "part": None}
        if status[i] == "ok":
            try:
                ins = C.make_inputs(case, N_RAND)
                n = len(ins[0])
                d_in = [cp.asarray(x) for x in ins]
                d_out = cp.full(n, 0xA5, dtype=C.bits_dtype(case["dst"]))   # poison
                k = mods[i].get_function(f"k{i}")
                k(((n + 255) // 256,), (256,), (*d_in, d_out, np.int32(n)))
                cp.cuda.runtime.deviceSynchronize()
                out = cp.asnumpy(d_out)
                for j, x in enumerate(ins):
                    arrays[f"{i}_in{j}"] = x
                arrays[f"{i}_out"] = out
                entry["n"] = n
                entry["part"] = nparts
                part_bytes += sum(x.nbytes for x in ins) + out.nbytes
                if part_bytes > 16_000_000:
                    flush()
            except Exception as e:  # noqa: BLE001
                status[i], errors[i] = "run_failed", repr(e)[-1500:]
        entry["status"] = status[i]
        if i in errors:
            entry["error"] = errors[i]
        meta["cases"].append(entry)
    flush()
    meta["seconds"] = time.time() - t0
    with open(os.path.join(outdir, "h200_ptx_semantics_meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    bad = [(c["name"], c["status"]) for c in meta["cases"] if c["status"] != "ok"]
    print(json.dumps(meta["versions"], indent=1))
    print(f"{len(items)} cases, {len(items) - len(bad)} ran, {len(bad)} failed: {bad[:40]}")
    print(f"{nparts} npz parts, {meta['seconds']:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
