"""simgpu beside the H200 for validation/triton: the same kernels, the same arguments, the same
inputs (the H200's, from h200/), launched through simgpu's Triton front door on the modelled H200.

    PYTHONPATH=. python validation/triton/compare.py      # writes validation/triton/results.json

For each case: is simgpu's PTX byte-identical to what Triton's JIT compiled on the card; are the
outputs equal (bit for bit, else the largest difference in ulp); registers (ptxas beside the
card's n_regs); predicted time beside do_bench's median.  Autotune: simgpu's pick beside the
card's, with each config's predicted and measured time."""
import hashlib
import json
import os
import re
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs("/tmp/simgpu_triton", exist_ok=True)
shutil.copy(os.path.join(HERE, "kernels.py"), "/tmp/simgpu_triton/kernels.py")
sys.path.insert(0, "/tmp/simgpu_triton")

import triton  # noqa: E402

import kernels as K  # noqa: E402
import simgpu  # noqa: E402
from simgpu.validate import dobench_seconds, unprofiled  # noqa: E402

GPU = unprofiled("H200")   # do_bench ran the card outside a profiler (validation/tensor_cores/clock/)
from simgpu.runtime.triton_door import triton_function  # noqa: E402

DEV = os.environ.get("H200_DIR", os.path.join(HERE, "h200"))
RESULTS = os.environ.get("RESULTS", os.path.join(HERE, "results.json"))


def ulps(a, b):
    ai, bi = a.view(np.int32).astype(np.int64), b.view(np.int32).astype(np.int64)
    ai = np.where(ai < 0, -(ai & 0x7FFFFFFF), ai)
    bi = np.where(bi < 0, -(bi & 0x7FFFFFFF), bi)
    return int(np.abs(ai - bi).max())


TRITON_DIR = re.compile(r'"[^"]*/triton/language/')   # site-packages/triton/ or a private target dir


def normalised(ptx):
    """The PTX with the path of Triton's own installation (the .file of tl.max/tl.sum's source,
    triton/language/standard.py) made the same on both machines."""
    return TRITON_DIR.sub('"<triton>/triton/language/', ptx)


def inputs(name, kind, size):
    """The card's inputs: h200/NAME_in.npy when present, else made again from h200_run.py's seed."""
    path = os.path.join(DEV, f"{name}_in.npy")
    if os.path.exists(path):
        return np.load(path)
    rng = np.random.default_rng(1234)
    if kind == "add":
        return np.stack([rng.random(size, np.float32), rng.random(size, np.float32)])
    return rng.standard_normal(size).astype(np.float32)


def sha(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def main():
    dev = json.load(open(os.path.join(DEV, "h200.json")))
    hashes = json.load(open(os.path.join(DEV, "sha256.json")))
    out = {"simgpu_side": {"triton": triton.__version__, "numpy": np.__version__}, "h200": {k: dev[k] for k in dev
                                                                                          if k != "cases"},
           "cases": {}}
    for name, kind, size, meta in K.cases():
        inp = inputs(name, kind, size)
        ref_path = os.path.join(DEV, f"{name}_out.npy")
        ref = np.load(ref_path) if os.path.exists(ref_path) else None
        row = {"inputs_sha256_match": sha(inp) == hashes[f"{name}_in.npy"]}
        err = None
        if kind == "add":
            x, y = inp[0].copy(), inp[1].copy()
            o = np.full_like(x, np.nan)
            fn = K.add_kernel
            try:
                rep = simgpu.launch(fn, (triton.cdiv(size, meta["BLOCK_SIZE"]),), None, (x, y, o, size), gpu=GPU, **meta)
            except simgpu.SimGPUError as e:
                err, rep = e, None
        else:
            R, C = size
            a = inp.copy()
            o = np.full_like(a, np.nan)
            fn = K.softmax_kernel
            try:
                rep = simgpu.launch(fn, (min(R, 132 * 4),), None, (o, a, a.strides[0] // 4, o.strides[0] // 4, R, C),
                                    BLOCK_SIZE=triton.next_power_of_2(C), gpu=GPU, **meta)
            except simgpu.SimGPUError as e:
                err, rep = e, None
        compiled = list(triton_function(fn).compiled.values())[-1].ck if rep is None else rep.extras["ptx"]["compiled"]
        ptx_dev = open(os.path.join(DEV, f"{name}.ptx")).read()
        row["ptx_identical"] = compiled.ptx == ptx_dev
        row["ptx_identical_but_tritons_install_path"] = normalised(compiled.ptx) == normalised(ptx_dev)
        if not row["ptx_identical_but_tritons_install_path"]:
            a_l, b_l = compiled.ptx.splitlines(), ptx_dev.splitlines()
            diff = [i for i, (p, q) in enumerate(zip(a_l, b_l)) if p != q]
            row["ptx_first_difference"] = (diff[0] + 1, a_l[diff[0]], b_l[diff[0]]) if diff else \
                ("length", len(a_l), len(b_l))
        row["h200_time_ns"] = dev["cases"][name]["time_ms"] * 1e6
        row["h200_n_regs"] = dev["cases"][name]["n_regs"]
        if rep is None:
            row["simgpu"] = f"not run: {str(err).splitlines()[0]}"
        else:
            row["outputs_bit_identical"] = sha(o) == hashes[f"{name}_out.npy"]
            if ref is not None:
                row["max_ulp"] = ulps(o, ref)
                row["fraction_of_elements_bit_identical"] = float(np.mean(o.view(np.uint32) == ref.view(np.uint32)))
            row["simgpu_registers"] = rep.metrics.get("launch__registers_per_thread")
            row["simgpu_time_ns"] = rep.metrics["gpu__time_duration.sum"]
            row["simgpu_dobench_ns"] = dobench_seconds(rep) * 1e9
            row["time_ratio_simgpu_over_h200"] = row["simgpu_dobench_ns"] / row["h200_time_ns"]
            row["smsp__inst_executed.sum"] = rep.metrics["smsp__inst_executed.sum"]
        out["cases"][name] = row
        print(name, row)
    out["simgpu_side"]["gpu"] = "unprofiled('H200')"
    out["simgpu_side"]["time"] = "simgpu_dobench_ns = dobench_seconds(rep) (kernel + floor) vs the card's do_bench median"
    if "--no-autotune" in sys.argv:   # keep the stored autotune comparison (its configs take minutes)
        out["autotune"] = json.load(open(RESULTS))["autotune"]
        json.dump(out, open(RESULTS, "w"), indent=1)
        return
    # autotune
    at = dev["autotune"]
    n = at["n"]
    x = np.random.default_rng(7).random(n, np.float32)
    o = np.zeros_like(x)
    rep = simgpu.jit(K.scale_kernel)[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, o, n)
    pred = rep.extras["autotune"]["predicted_ns"]
    out["autotune"] = {"n": n, "simgpu_best": rep.extras["autotune"]["best"], "h200_best": at["best"],
                       "same_pick": rep.extras["autotune"]["best"] == at["best"],
                       "configs": {c: {"simgpu_ns": pred.get(c), "h200_ns": at["time_ms"][c] * 1e6} for c in at["time_ms"]},
                       "outputs_equal": bool(np.array_equal(o, x * np.float32(3)))}
    best_dev = at["time_ms"][at["best"]]
    out["autotune"]["h200_time_of_simgpu_pick_over_best"] = at["time_ms"][rep.extras["autotune"]["best"]] / best_dev
    print("autotune", out["autotune"])
    json.dump(out, open(RESULTS, "w"), indent=1)


if __name__ == "__main__":
    main()
