#!/usr/bin/env python3
"""Registers per thread: ptxas (simgpu.sass, no GPU) and the IR path's estimate, beside what
Nsight Compute measured on the H200 for every suite kernel (launch__registers_per_thread in
validation/data).

    python validation/compare_registers.py [--only REGEX] [--json out.json]

The PTX is compiled by numba-cuda's NVVM on this machine (the installed CUDA 13.5 wheels, or
with --toolchain DIR the toolchain in DIR, e.g. the 13.0.88 wheels) and assembled by ptxas for
sm_90; on the card, numba compiled the same source with its NVVM and the driver's JIT
assembled it (CUDA 13.0, driver 580).  Both versions go into the JSON ("toolchains").

    python validation/compare_registers.py --kernels validation/holdout     (the holdout: its
        registers are in validation/data/h200_holdout.json)
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_timing as ct  # noqa: E402

from simgpu.runtime.program import as_program  # noqa: E402
from simgpu.runtime.binding import bind_args  # noqa: E402
from simgpu.sass import compile_kernel  # noqa: E402
from simgpu.timing import estimate_registers  # noqa: E402
from simgpu.hardware import get_gpu  # noqa: E402


def ir_estimate(kernel, args):
    k = as_program(kernel)
    types_, _ = bind_args(k.lower(), k.name, args)
    return estimate_registers(k.specialize(types_), get_gpu("H200"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--kernels", default=None, help="folder of case modules (default validation/kernels)")
    ap.add_argument("--toolchain", default=None, help="compile with the CUDA toolchain in this folder")
    ap.add_argument("--no-ir", action="store_true", help="ptxas only (no IR estimate)")
    ap.add_argument("--lto", default="record", choices=("record", "on", "off"),
                    help="compile with numba-cuda's LTO program where the card's run did (validation/card_lto.py: "
                         "from the data's recorded versions; default), or on/off")
    a = ap.parse_args(argv)
    ct.use_toolchain(a.toolchain)
    cases = ct.load_cases(a.only, a.kernels)
    measured = ct.load_measured(os.path.join(HERE, "data"), {c["name"] for c in cases})
    lto = ct.use_lto(a.lto, sorted({os.path.join(ct.ROOT, r["file"]) for r in measured.values() if r.get("file")}))
    rows, failed = [], []
    for c in cases:
        m = measured.get(c["name"], {}).get("registers")
        if m is None:
            continue
        args = c["args"](np.random.default_rng(0))
        try:
            ptxas = compile_kernel(c["kernel"], args, gpu="H200").resources.registers
        except Exception as e:  # noqa: BLE001 - reported per kernel, the rest go on
            failed.append((c["name"], f"{type(e).__name__}: {str(e)[:200]}"))
            print(f"{c['name']:40s} FAILED: {failed[-1][1]}", flush=True)
            continue
        try:
            ir = -1 if a.no_ir else ir_estimate(c["kernel"], args)
        except Exception:  # noqa: BLE001 - the IR path refuses some kernels
            ir = -1
        rows.append({"name": c["name"], "ncu": m, "ptxas": ptxas, "ir_estimate": ir})
        r = rows[-1]
        print(f"{r['name']:40s} ncu {r['ncu']:4d}  ptxas {r['ptxas']:4d}  IR estimate {r['ir_estimate']:4d}", flush=True)
    n = len(rows)
    within = lambda key, d: sum(abs(r[key] - r["ncu"]) <= d for r in rows)
    summary = {"kernels": n, "ptxas_exact": within("ptxas", 0), "ptxas_within_2": within("ptxas", 2),
               "ir_exact": within("ir_estimate", 0), "ir_within_2": within("ir_estimate", 2),
               "compile_failed": [name for name, _ in failed]}
    print(json.dumps(summary))
    if a.json:
        with open(a.json, "w") as fh:
            files = sorted({os.path.join(ct.ROOT, measured[r["name"]]["file"]) for r in rows})
            json.dump({"summary": summary, "toolchains": ct.toolchain_record(files), "lto": lto, "rows": rows,
                       "failed": failed}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
