"""The PTX a campaign kernel runs as on the card: numba-cuda's default launch links through
nvJitLink with link-time optimisation (numba-cuda 0.30: ``lto`` defaults to on when nvJitLink is
installed, and the card had nvidia-nvjitlink 13.0.88), so the code that ran is NVVM's LTO-IR
optimised again and lowered by nvJitLink's libNVVM -- not the PTX ``inspect_asm()`` returns
(c2_ptx.json.xz, NVVM without LTO).  This makes that PTX here, without a GPU (issue 25 item 3):

    SIMGPU_TOOLCHAIN=<CUDA 13.0.88 wheels, with nvidia-nvjitlink 13.0.88> PYTHONPATH=. \\
        python validation/generated/lto_ptx.py [--campaign c2] [--only k0015,...] [--jobs 2] OUT.json.gz

Each kernel through simgpu's own LTO compile (simgpu.sass.toolchain.kernel_lto_ptx, which
``simgpu.launch`` uses where LTO is on): numba-cuda's LTO-IR (NVVM ``-gen-lto``, the options the
dispatcher uses: opt 3, cc 9.0), then nvJitLink ``-arch=sm_90 -lto -ptx`` (what
``Dispatcher.inspect_lto_ptx`` asks; simgpu/sass/nvjitlink.py, the toolchain folder's library:
its version must be the card's) -- here without line information, as the card's launch.
OUT: {kernel: PTX text} plus ``_versions``."""
from __future__ import annotations

import argparse
import gzip
import json
import multiprocessing as mp
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)


def lto_ptx(fn, argtypes, cc=(9, 0)):
    """(PTX, error): simgpu's LTO compile of kernel ``fn`` (simgpu.sass.toolchain.kernel_lto_ptx,
    what ``simgpu.launch`` runs with LTO on), without line information, as the card's launch."""
    from simgpu.sass import toolchain
    try:
        ptx, _entry, _linked = toolchain.compile_ptx_linked(fn, argtypes, cc, lineinfo=False, lto=True)
    except Exception as exc:  # noqa: BLE001
        return None, f"{type(exc).__name__}: {exc}"
    return ptx, None


def _one(job):
    import importlib
    import numpy as np
    import numba
    import gen
    batch, name = job
    mod = importlib.import_module(batch)
    spec = next(s for s in mod.KERNELS if s["name"] == name)
    n = spec["grid"] * spec["block"]
    args = [np.zeros(gen.L, dt) for dt in gen.IN_DTYPES] + [np.zeros(4, np.int64)] + \
        [np.zeros(n, dt) for dt in spec["out_dtypes"]]
    ptx, err = lto_ptx(spec["fn"], [numba.typeof(a) for a in args])
    return name, ptx if ptx is not None else "ERROR " + err


def _init():
    from simgpu.sass.toolchain import _numba_cuda
    _numba_cuda()           # numba-cuda, with $SIMGPU_TOOLCHAIN's libnvvm


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--campaign", default="c2")
    ap.add_argument("--only", default="")
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args(argv)
    import gen
    only = set(a.only.split(",")) if a.only else None
    jobs = [(b, s["name"]) for b, ks in gen.load_batches(a.campaign) for s in ks
            if only is None or s["name"] in only]
    res = {}
    if a.jobs > 1:
        with mp.get_context("fork").Pool(a.jobs, initializer=_init) as pool:
            for i, (name, ptx) in enumerate(pool.imap_unordered(_one, jobs, chunksize=4)):
                res[name] = ptx
                if i % 100 == 0:
                    print(i, len(jobs), flush=True)
    else:
        _init()
        for j in jobs:
            name, ptx = _one(j)
            res[name] = ptx
    from simgpu.sass.toolchain import frontend_versions
    try:
        fv = frontend_versions()
    except Exception as exc:  # noqa: BLE001
        fv = repr(exc)
    from simgpu.sass import nvjitlink
    res["_versions"] = {"nvjitlink": f"{nvjitlink.version()} ({nvjitlink.library()})", "frontend": fv,
                        "options": ["-arch=sm_90", "-lto", "-ptx"]}
    with gzip.open(a.out, "wt") as f:
        json.dump(res, f, sort_keys=True)
    bad = [k for k, v in res.items() if isinstance(v, str) and v.startswith("ERROR")]
    print(f"{len(res) - 1} kernels, {len(bad)} errors", bad[:5])


if __name__ == "__main__":
    main()
