"""Run every generated kernel (validation/generated/gen_kernels/) with numba.cuda on the GPU and save
what it wrote (device only; NUMBA_ENABLE_CUDASIM=1 runs it on the CPU as a dry run).

    python3 validation/generated/device_run.py OUTDIR [--workers 8] [--only batch_00,...]

One worker process per batch module.  Each kernel: cuda.jit, inputs = gen.make_inputs(), outputs
poisoned first (0xA5 bytes; bool arrays False), acc = int64 zeros(4), launch [grid, block],
synchronize, copy back.  Writes OUTDIR/h200_generated.npz (keys ``<kernel>/o<k>``,
``<kernel>/acc``, ``inputs/<name>``; compressed) and OUTDIR/h200_generated.json (versions, date,
per-kernel status ``ok`` / ``compile_error`` / ``launch_error`` with the message, seconds).
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


def run_batch(batch):
    """(batch, {key: array}, {kernel: status dict}) for one batch module, run on the GPU."""
    patch_numpy_for_numba()                            # in each worker process too
    import importlib
    import gen
    from numba import cuda
    mod = importlib.import_module(f"gen_kernels.{batch}")
    inputs = gen.make_inputs()
    d_in = {k: cuda.to_device(v) for k, v in inputs.items()}
    arrays, status = {}, {}
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
    return batch, arrays, status


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
    import gen_kernels as kernels
    batches = list(kernels.BATCHES)
    if "--only" in argv:
        batches = argv[argv.index("--only") + 1].split(",")
    t0 = time.time()
    arrays = {f"inputs/{k}": v for k, v in gen.make_inputs().items()}
    status = {}
    if workers <= 1:
        results = map(run_batch, batches)
    else:
        ex = cf.ProcessPoolExecutor(max_workers=min(workers, len(batches)), mp_context=mp.get_context("spawn"))
        futs = {ex.submit(run_batch, b): b for b in batches}
        results = []
        for f in cf.as_completed(futs):
            try:
                results.append(f.result())
            except Exception as exc:  # noqa: BLE001 - a whole batch failed (process died)
                b = futs[f]
                status[f"batch:{b}"] = {"status": "batch_error", "error": repr(exc)[:4000]}
                print(f"batch {b} failed: {exc!r}", flush=True)
    for batch, arr, st in results:
        arrays.update(arr)
        status.update(st)
        n_ok = sum(1 for s in st.values() if s["status"] == "ok")
        print(f"{batch}: {n_ok}/{len(st)} ok ({time.time() - t0:.1f}s)", flush=True)
    os.makedirs(outdir, exist_ok=True)
    np.savez_compressed(os.path.join(outdir, "h200_generated.npz"), **arrays)
    meta = {"versions": versions(), "simulated": os.environ.get("NUMBA_ENABLE_CUDASIM") == "1",
            "seed": gen.SEED, "L": gen.L, "batches": batches, "seconds": round(time.time() - t0, 1),
            "kernels": status}
    with open(os.path.join(outdir, "h200_generated.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    counts = {}
    for s in status.values():
        counts[s["status"]] = counts.get(s["status"], 0) + 1
    print("status counts:", counts, f"total {time.time() - t0:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
