#!/usr/bin/env python3
"""Which kernels' code numba-cuda's LTO link changes: each case compiled both ways (simgpu's
compiled path, ``SIMGPU_LTO`` on and off), compared by PTX instructions (names, comments,
line information and where shared arrays are declared aside) and by ptxas' SASS (the opcode
sequence, registers).  No launch:
a compile-only scan that says which kernels a comparison with card data needs LTO for.

    SIMGPU_TOOLCHAIN=<card toolchain with nvidia-nvjitlink> PYTHONPATH=. \\
        python validation/lto_effect.py [--kernels validation/holdout] [--only REGEX] [--json OUT]
"""
import argparse
import json
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_timing as ct  # noqa: E402

_SKIP = re.compile(r"^\s*(\.common\s+\.global\s+\.align 8 \.u64 _ZN08NumbaEnv|(\.visible\s+)?\.shared\s|\.loc|"
                   r"\.file|//|\.target|\.version|\.section|\$L__|\.b8|\.b32|\.b64|\.debug|\}|\{)")


def instructions(ptx):
    """The PTX's instruction lines, with mangled names and numba's shared arrays' numbers replaced
    (numba numbers them per compile); the NumbaEnv global (unused: the LTO link drops it) and the
    shared arrays' declarations (the LTO link moves them into the kernel) left out."""
    return [re.sub(r"_cudapy_smem_\d+", "_cudapy_smem", re.sub(r"_ZN\w+", "_Z", ln.strip()))
            for ln in ptx.splitlines() if ln.strip() and not _SKIP.match(ln)]


def compiled(case, lto):
    from simgpu import settings
    from simgpu.sass.kernel import compile_kernel
    args = case["args"](np.random.default_rng(0))
    with settings.override(lto="on" if lto else "off"):
        ck = compile_kernel(case["kernel"], args, use_cache=False)
    k = ck.facts.kernels[ck.entry]
    res = ck.facts.ptxas.functions.get(ck.entry)
    return {"ptx": instructions(ck.ptx), "sass": len(k.instructions), "opcodes": [i.opcode for i in k.instructions],
            "registers": getattr(res, "registers", None)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    rows, seen = [], {}
    for c in ct.load_cases(a.only, a.kernels):
        key = (id(c["kernel"]), tuple(str(np.asarray(x).dtype) for x in c["args"](np.random.default_rng(0))))
        if key in seen:             # the same kernel and argument types (an L2 and a DRAM size)
            rows.append(dict(seen[key], name=c["name"]))
            continue
        try:
            on, off = compiled(c, True), compiled(c, False)
        except Exception as exc:  # noqa: BLE001 - reported per kernel
            print(f"{c['name']:36s} FAILED {type(exc).__name__}: {str(exc)[:200]}", flush=True)
            continue
        row = {"name": c["name"], "ptx_same": on["ptx"] == off["ptx"], "ptx_lines": [len(off["ptx"]), len(on["ptx"])],
               "sass": [off["sass"], on["sass"]], "sass_opcodes_same": on["opcodes"] == off["opcodes"],
               "registers": [off["registers"], on["registers"]]}
        seen[key] = row
        rows.append(row)
        print(f"{c['name']:36s} PTX {'same   ' if row['ptx_same'] else 'changed'}  lines {row['ptx_lines']}  "
              f"SASS {row['sass']} {'same' if row['sass_opcodes_same'] else 'other'} opcodes  "
              f"regs {row['registers']}", flush=True)
    changed = [r["name"] for r in rows if not r["ptx_same"]]
    summary = {"kernels": len(rows), "ptx_changed": len(changed), "ptx_changed_kernels": changed,
               "sass_opcodes_changed": [r["name"] for r in rows if not r["sass_opcodes_same"]],
               "registers_changed": [r["name"] for r in rows if r["registers"][0] != r["registers"][1]]}
    print(json.dumps(summary))
    if a.json:
        from simgpu.sass import toolchain_versions, nvjitlink
        with open(a.json, "w") as fh:
            json.dump({"summary": summary, "toolchain": toolchain_versions(), "nvjitlink": nvjitlink.version(),
                       "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
