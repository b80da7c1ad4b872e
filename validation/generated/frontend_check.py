"""Which campaign kernels this machine's numba front end compiles to the card's PTX (issue 25 item 3).

    SIMGPU_TOOLCHAIN=<CUDA 13.0.88 wheels> PYTHONPATH=. python validation/generated/frontend_check.py OUT.json [--jobs 2] [--only k0001,...]

For each c2 kernel: numba-cuda's PTX here (``inspect_asm``'s: no LTO, the same NVVM build as the
card's) against the card's (c2_ptx.json.xz), names and register numbering aside.  Where they
differ, this machine's front end (Python/numpy versions: the card ran Python 3.12, numpy 2.5) made
other LLVM IR, so the LTO PTX lto_ptx.py makes here is not the card's code either.  OUT:
{kernel: true (same PTX) / false}."""
import json
import multiprocessing as mp
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
from store import load_json  # noqa: E402
_CARD = None
_NAME = re.compile(r"_ZN[^\s\[\];,()]*")
_REG = re.compile(r"%(r|rd|f|fd|p|rs|h|hh)\d+")


def normalise(ptx):
    """The instructions of ``ptx`` with mangled names and register numbers blanked."""
    out = []
    for ln in ptx.splitlines():
        t = ln.strip()
        if not t or t.startswith(("//", ".reg", ".common", ".extern", ".visible", ".global", ".file", ".loc")):
            continue
        out.append(_REG.sub(r"%\1", _NAME.sub("N", t)))
    return out


def _init():
    global _CARD
    from simgpu.sass.toolchain import _numba_cuda
    _numba_cuda()
    _CARD = load_json(os.path.join(HERE, "c2_ptx.json.xz"))


def _one(job):
    import importlib
    import numpy as np
    import numba
    import gen
    from numba import cuda
    from simgpu.ptx.runner import _numba_device_cc
    batch, name = job
    spec = next(s for s in importlib.import_module(batch).KERNELS if s["name"] == name)
    n = spec["grid"] * spec["block"]
    args = [np.zeros(gen.L, dt) for dt in gen.IN_DTYPES] + [np.zeros(4, np.int64)] + \
        [np.zeros(n, dt) for dt in spec["out_dtypes"]]
    try:
        with _numba_device_cc():
            ptx, _ = cuda.compile(spec["fn"], tuple(numba.typeof(a) for a in args), device=False, abi="numba",
                                  cc=(9, 0), output="ptx")
    except Exception as exc:  # noqa: BLE001
        return name, f"error: {type(exc).__name__}"
    return name, normalise(ptx) == normalise(_CARD[name])


def main(argv):
    import gen
    out = argv[0]
    jobs_n = int(argv[argv.index("--jobs") + 1]) if "--jobs" in argv else 1
    only = set(argv[argv.index("--only") + 1].split(",")) if "--only" in argv else None
    jobs = [(b, s["name"]) for b, ks in gen.load_batches("c2") for s in ks if only is None or s["name"] in only]
    res = {}
    with mp.get_context("fork").Pool(jobs_n, initializer=_init) as pool:
        for i, (name, same) in enumerate(pool.imap_unordered(_one, jobs, chunksize=8)):
            res[name] = same
            if i % 200 == 0:
                print(i, flush=True)
    with open(out, "w") as f:
        json.dump(dict(sorted(res.items())), f, indent=0)
    print(sum(1 for v in res.values() if v is True), "of", len(res), "the card's PTX")


if __name__ == "__main__":
    main(sys.argv[1:])
