"""What numba-cuda's default launch compiled on the card, for campaign c2 (issue 25 item 3).

numba-cuda 0.30 turns link-time optimisation on by default where nvJitLink is installed
(``cuda.jit(lto=None)`` -> ``_have_nvjitlink() and not debug``); the card had nvidia-nvjitlink
13.0.88.  Then the kernel that runs is NVVM's LTO-IR optimised again and lowered by nvJitLink,
not the PTX ``inspect_asm()`` returns (c2_ptx.json.xz).  This re-runs every c2 kernel exactly as
device_run.py does and records, per kernel, the dispatcher's ``lto`` option, ``inspect_lto_ptx()``
(the PTX after LTO), whether ``inspect_asm()`` is the stored c2_ptx.json.xz text, the linked
cubin's sha256, and the outputs again (to tie them to the same launch).

    python3 validation/generated/device_lto.py OUTDIR [--workers 15] [--sass k0015,k0037,...]

Writes OUTDIR/c2_lto_ptx.json.gz ({kernel: LTO PTX}), OUTDIR/c2_lto_meta.json (versions, per
kernel: lto, have_nvjitlink, asm_sha256, cubin_sha256, status, seconds), OUTDIR/c2_lto_outputs.npz
and, for the ``--sass`` kernels, OUTDIR/c2_lto_sass.json.gz (``inspect_sass()`` text).
"""
from __future__ import annotations

import concurrent.futures as cf
import gzip
import hashlib
import json
import multiprocessing as mp
import os
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from _common import patch_numpy_for_numba  # noqa: E402
from device_run import poisoned, versions  # noqa: E402

patch_numpy_for_numba()
CAMPAIGN = "c2"


def _sha(x):
    return hashlib.sha256(x.encode() if isinstance(x, str) else bytes(x)).hexdigest()


def run_batch(job):
    batch, want_sass = job
    patch_numpy_for_numba()
    import importlib
    import gen
    from numba import cuda
    from numba.cuda.cudadrv import driver
    mod = importlib.import_module(batch)
    inputs = gen.make_inputs(gen.CAMPAIGNS[CAMPAIGN][1], CAMPAIGN)
    d_in = {k: cuda.to_device(v) for k, v in inputs.items()}
    arrays, meta, lto_ptx, sass = {}, {}, {}, {}
    have = bool(driver._have_nvjitlink())
    for spec in mod.KERNELS:
        name, t0 = spec["name"], time.time()
        n = spec["grid"] * spec["block"]
        rec = {"have_nvjitlink": have}
        try:
            k = cuda.jit(spec["fn"])
            rec["lto"] = k.targetoptions.get("lto")
            outs = [cuda.to_device(poisoned(n, dt)) for dt in spec["out_dtypes"]]
            acc = cuda.to_device(np.zeros(4, np.int64))
            args = [d_in[x] for x in gen.INPUTS] + [acc] + outs
            k[spec["grid"], spec["block"]](*args)
            cuda.synchronize()
            for kk, o in enumerate(outs):
                arrays[f"{name}/o{kk}"] = o.copy_to_host()
            arrays[f"{name}/acc"] = acc.copy_to_host()
            sig = next(iter(k.overloads))
            rec["asm_sha256"] = _sha(k.inspect_asm(sig))
            try:
                lto_ptx[name] = k.inspect_lto_ptx(sig).rstrip("\x00")   # nvJitLink's C terminator
            except Exception as exc:  # noqa: BLE001 -- LTO off: no LTO PTX
                rec["lto_ptx_error"] = f"{type(exc).__name__}: {exc}"[:500]
            try:
                rec["cubin_sha256"] = _sha(k.overloads[sig].library.get_cubin())
            except Exception as exc:  # noqa: BLE001
                rec["cubin_error"] = f"{type(exc).__name__}: {exc}"[:300]
            if name in want_sass:
                try:
                    sass[name] = k.inspect_sass(sig)
                except Exception as exc:  # noqa: BLE001
                    sass[name] = f"(no SASS: {type(exc).__name__}: {exc})"
            rec["status"] = "ok"
        except Exception as exc:  # noqa: BLE001
            rec.update(status="error", error=f"{type(exc).__name__}: {exc}"[:2000], trace=traceback.format_exc()[-1500:])
        rec["s"] = round(time.time() - t0, 3)
        meta[name] = rec
    return batch, arrays, meta, lto_ptx, sass


def main(argv):
    outdir = argv[1]
    workers = int(argv[argv.index("--workers") + 1]) if "--workers" in argv else 15
    want = set(argv[argv.index("--sass") + 1].split(",")) if "--sass" in argv else set()
    import gen
    batches = [b for b, _ in gen.load_batches(CAMPAIGN)]
    t0 = time.time()
    arrays, meta, lto_ptx, sass = {}, {}, {}, {}
    with cf.ProcessPoolExecutor(max_workers=min(workers, len(batches)), mp_context=mp.get_context("spawn")) as ex:
        futs = {ex.submit(run_batch, (b, want)): b for b in batches}
        for f in cf.as_completed(futs):
            try:
                b, a, m, p, s = f.result()
            except Exception as exc:  # noqa: BLE001
                meta[f"batch:{futs[f]}"] = {"status": "batch_error", "error": repr(exc)[:2000]}
                continue
            arrays.update(a), meta.update(m), lto_ptx.update(p), sass.update(s)
            print(f"{b}: {sum(1 for r in m.values() if r.get('status') == 'ok')}/{len(m)} ok, "
                  f"lto {sum(1 for r in m.values() if r.get('lto'))} ({time.time() - t0:.0f}s)", flush=True)
    os.makedirs(outdir, exist_ok=True)
    np.savez_compressed(os.path.join(outdir, "c2_lto_outputs.npz"), **arrays)
    with gzip.open(os.path.join(outdir, "c2_lto_ptx.json.gz"), "wt") as f:
        json.dump(lto_ptx, f, sort_keys=True)
    if sass:
        with gzip.open(os.path.join(outdir, "c2_lto_sass.json.gz"), "wt") as f:
            json.dump(sass, f, sort_keys=True)
    with open(os.path.join(outdir, "c2_lto_meta.json"), "w") as f:
        json.dump({"versions": versions(), "seconds": round(time.time() - t0, 1), "kernels": meta}, f,
                  indent=1, sort_keys=True)
    st = {}
    for r in meta.values():
        key = (r.get("status"), r.get("lto"))
        st[str(key)] = st.get(str(key), 0) + 1
    print("(status, lto) counts:", st, f"total {time.time() - t0:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
