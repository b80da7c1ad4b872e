"""Run every generated kernel (validation/generated/gen_kernels/) with numba.cuda on the GPU and save
what it wrote (device only; NUMBA_ENABLE_CUDASIM=1 runs it on the CPU as a dry run).

    python3 validation/generated/device_run.py OUTDIR [--workers 8] [--only batch_00,...] [--campaign c2]

One worker process per batch module.  Each kernel: cuda.jit, inputs = gen.make_inputs(), outputs
poisoned first (0xA5 bytes; bool arrays False), acc = int64 zeros(4), launch [grid, block],
synchronize, copy back.  Writes OUTDIR/h200_generated.npz (keys ``<kernel>/o<k>``,
``<kernel>/acc``, ``inputs/<name>``; compressed) and OUTDIR/h200_generated.json (versions, date,
per-kernel status ``ok`` / ``compile_error`` / ``launch_error`` with the message, seconds).
With ``--campaign c2`` (gen.CAMPAIGNS) the files are OUTDIR/c2_outputs.npz and OUTDIR/c2_device.json,
and OUTDIR/c2_ptx.json.gz holds the PTX numba-cuda made for each kernel on the device (to tell a
toolchain difference from a semantics difference).
"""
from __future__ import annotations

import concurrent.futures as cf
import datetime
import json
import multiprocessing as mp
import os
import subprocess
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))              # validation/: its one numpy patch
from _common import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()                                # numba 0.68.0 calls np.row_stack


def poisoned(n, dtype):
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return np.zeros(n, dtype=dt)
    return np.frombuffer(b"\xa5" * (n * dt.itemsize), dtype=dt).copy()


def run_batch(job):
    """(batch, {key: array}, {kernel: status dict}, {kernel: PTX}) for one batch module, run on the GPU."""
    batch, campaign = job if isinstance(job, tuple) else (job, "c1")
    patch_numpy_for_numba()                            # in each worker process too
    import importlib
    import gen
    from numba import cuda
    mod = importlib.import_module(batch if "." in batch else f"gen_kernels.{batch}")
    inputs = gen.make_inputs(gen.CAMPAIGNS[campaign][1], campaign)
    d_in = {k: cuda.to_device(v) for k, v in inputs.items()}
    arrays, status, ptx = {}, {}, {}
    for spec in mod.KERNELS:
        name, t0 = spec["name"], time.time()
        n = spec["grid"] * spec["block"]
        try:
            k = cuda.jit(spec["fn"])
            outs = [cuda.to_device(poisoned(n, dt)) for dt in spec["out_dtypes"]]
            acc = cuda.to_device(np.zeros(4, np.int64))
            args = [d_in[x] for x in gen.INPUTS] + [acc] + outs
            k[spec["grid"], spec["block"]](*args)
            cuda.synchronize()
        except Exception as exc:  # noqa: BLE001
            kind = "compile_error" if "Typing" in type(exc).__name__ or "Lowering" in type(exc).__name__ else "launch_error"
            status[name] = {"status": kind, "error": f"{type(exc).__name__}: {exc}"[:4000],
                            "trace": traceback.format_exc()[-2000:], "s": round(time.time() - t0, 3)}
            continue
        for kk, o in enumerate(outs):
            arrays[f"{name}/o{kk}"] = o.copy_to_host()
        arrays[f"{name}/acc"] = acc.copy_to_host()
        status[name] = {"status": "ok", "s": round(time.time() - t0, 3)}
        if campaign != "c1":
            try:
                ptx[name] = next(iter(k.inspect_asm().values()))
            except Exception as exc:  # noqa: BLE001
                ptx[name] = f"(no PTX: {exc!r})"
    return batch, arrays, status, ptx


def versions():
    info = {"date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(), "numpy": np.__version__,
            "python": sys.version.split()[0]}
    try:
        import numba
        info["numba"] = numba.__version__
    except Exception as e:  # noqa: BLE001
        info["numba"] = repr(e)
    try:
        from importlib.metadata import version
        info["numba_cuda"] = version("numba-cuda")
    except Exception as e:  # noqa: BLE001
        info["numba_cuda"] = repr(e)
    try:
        from numba import cuda
        dev = cuda.get_current_device()
        info["device"] = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        info["cc"] = list(dev.compute_capability)
        info["cuda_driver"] = cuda.cudadrv.driver.driver.get_version()
        info["cuda_runtime"] = cuda.runtime.get_version()
    except Exception as e:  # noqa: BLE001
        info["device_error"] = repr(e)
    try:
        from numba.cuda.cudadrv import nvvm
        info["nvvm"] = list(nvvm.NVVM().get_version())
    except Exception as e:  # noqa: BLE001
        info["nvvm"] = repr(e)
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib
        lib = load_nvidia_dynamic_lib("nvvm")
        info["libnvvm"] = [lib.abs_path, lib.found_via]
    except Exception as e:  # noqa: BLE001
        info["libnvvm"] = repr(e)
    from importlib.metadata import version as _v
    for pkg in ("cuda-toolkit", "nvidia-cuda-nvcc", "nvidia-nvvm", "cuda-bindings", "nvidia-cuda-runtime",
                "nvidia-nvjitlink", "llvmlite"):
        try:
            info["pkg_" + pkg] = _v(pkg)
        except Exception:  # noqa: BLE001
            pass
    try:
        info["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception as e:  # noqa: BLE001
        info["nvidia_smi"] = repr(e)
    return info


def main(argv):
    outdir = argv[1] if len(argv) > 1 and not argv[1].startswith("--") else "."
    workers = int(argv[argv.index("--workers") + 1]) if "--workers" in argv else 8
    import gen
    campaign = argv[argv.index("--campaign") + 1] if "--campaign" in argv else "c1"
    batches = [b for b, _ in gen.load_batches(campaign)]
    if "--only" in argv:
        batches = argv[argv.index("--only") + 1].split(",")
    t0 = time.time()
    seed = gen.CAMPAIGNS[campaign][1]
    arrays = {f"inputs/{k}": v for k, v in gen.make_inputs(seed, campaign).items()}
    status, ptx = {}, {}
    if workers <= 1:
        results = map(run_batch, [(b, campaign) for b in batches])
    else:
        ex = cf.ProcessPoolExecutor(max_workers=min(workers, len(batches)), mp_context=mp.get_context("spawn"))
        futs = {ex.submit(run_batch, (b, campaign)): b for b in batches}
        results = []
        for f in cf.as_completed(futs):
            try:
                results.append(f.result())
            except Exception as exc:  # noqa: BLE001 - a whole batch failed (process died)
                b = futs[f]
                status[f"batch:{b}"] = {"status": "batch_error", "error": repr(exc)[:4000]}
                print(f"batch {b} failed: {exc!r}", flush=True)
    for batch, arr, st, px in results:
        arrays.update(arr)
        status.update(st)
        ptx.update(px)
        n_ok = sum(1 for s in st.values() if s["status"] == "ok")
        print(f"{batch}: {n_ok}/{len(st)} ok ({time.time() - t0:.1f}s)", flush=True)
    os.makedirs(outdir, exist_ok=True)
    stem = "h200_generated" if campaign == "c1" else f"{campaign}_outputs"
    np.savez_compressed(os.path.join(outdir, f"{stem}.npz"), **arrays)
    meta = {"versions": versions(), "simulated": os.environ.get("NUMBA_ENABLE_CUDASIM") == "1",
            "campaign": campaign, "seed": seed, "L": gen.L, "batches": batches,
            "seconds": round(time.time() - t0, 1), "kernels": status}
    with open(os.path.join(outdir, "h200_generated.json" if campaign == "c1" else f"{campaign}_device.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    if ptx:
        import gzip
        with gzip.open(os.path.join(outdir, f"{campaign}_ptx.json.gz"), "wt") as f:
            json.dump(ptx, f, sort_keys=True)
    counts = {}
    for s in status.values():
        counts[s["status"]] = counts.get(s["status"], 0) + 1
    print("status counts:", counts, f"total {time.time() - t0:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
