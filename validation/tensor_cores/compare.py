"""Fit and check simgpu's tensor-core accumulation model against the H200's stored results.

    python validation/tensor_cores/compare.py [NPZ] [--no-write]

For every float mma form and input family in the NPZ (device_run.py's output), unpacks the
fragments with the PTX ISA layouts (kernels.py), and compares the H200's D with

* the exact sum (float64, rounded once to f32): how far the hardware is from exact;
* simgpu.ptx.ops_mma's model (MODEL): bits equal, and the largest difference in f32 ulps
  (``simulate(..., model=...)`` tries another model: how the candidates were compared).
Writes validation/data/h200_tensor_cores.json (the report) unless --no-write.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, ROOT)
import kernels as K  # noqa: E402
from simgpu.ptx import ops_mma as M  # noqa: E402
from simgpu.ptx import sem_fp as fp  # noqa: E402

NPZ = os.path.join(ROOT, "validation", "data", "h200_tensor_cores.npz")
REPORT = os.path.join(ROOT, "validation", "data", "h200_tensor_cores.json")


def load(path=NPZ):
    z = np.load(path)
    cases = {}
    for key in z.files:
        parts = key.split("/")
        if len(parts) == 3:
            cases.setdefault((parts[0], parts[1]), {})[parts[2]] = z[key]
    return cases, z


def matrices(name, words):
    """Fragment words -> element bits (A, B, C, D) as logical matrices."""
    Kk, e, c16 = K.form_geometry(name)
    A = K.unpack(words["A"], K.a_index(Kk, e), e, 16, Kk)
    B = K.unpack(words["B"], K.b_index(Kk, e), e, Kk, 8)
    C = K.unpack(words["C"], K.c_index(c16), 2 if c16 else 1, 16, 8)
    D = K.unpack_d(name, words["D"])
    return A, B, C, D


def simulate(name, A, B, C, model=None):
    """The model's D bits for logical A, B, C bits (``model``: a MODEL entry to try instead)."""
    shape, d, ta, tb, tc, extra = K.MMA_FORMS[name]
    if ta in ("s8", "u8"):
        return M._int_mma("satfinite" in extra, ta, tb)(A, B, C)
    saved = M.MODEL[ta]
    M.MODEL[ta] = model or saved
    try:
        return M._float_mma(ta, tb, tc, d)(A, B, C)
    finally:
        M.MODEL[ta] = saved


def scale(name, A, B, C):
    """|C| + sum |a_k b_k| per output: the scale of the sum's error bound."""
    shape, d, ta, tb, tc, extra = K.MMA_FORMS[name]
    Av, Bv = M.values(ta, A), M.values(tb, B)
    Cv = M.values("f16" if tc == "f16" else "f32", C)
    with np.errstate(all="ignore"):
        return np.matmul(np.abs(Av), np.abs(Bv)) + np.abs(Cv)


def exact(name, A, B, C):
    shape, d, ta, tb, tc, extra = K.MMA_FORMS[name]
    Av, Bv = M.values(ta, A), M.values(tb, B)
    Cv = M.values("f16" if tc == "f16" else "f32", C)
    with np.errstate(all="ignore"):
        r = np.matmul(Av, Bv) + Cv          # float64: exact enough as a reference
    fmt = fp.FMT["f16" if d == "f16" else "f32"]
    return fp.bits_of(fmt, fp.round_f64(fmt, r, fp.RN)).astype(np.uint32)


def ulps(d, got, bits_dt):
    """|difference| in units in the last place of the destination format (bits as ordered
    integers: -0 and +0 are 0 apart)."""
    sign = 1 << (bits_dt - 1)

    def ordered(u):
        u = u.astype(np.int64)
        return np.where(u & sign, -(u & (sign - 1)), u)
    return np.abs(ordered(d) - ordered(got))


def compare(cases):
    report = {}
    for (name, fam), words in sorted(cases.items()):
        A, B, C, D = matrices(name, words)
        width = 16 if K.MMA_FORMS[name][1] == "f16" else 32
        sim = simulate(name, A, B, C)
        entry = {"n": int(D.size), "model_equal": int((sim == D).sum()),
                 "model_max_ulp": int(ulps(D, sim, width).max())}
        if K.MMA_FORMS[name][2] not in ("s8", "u8"):
            fmt = "f16" if width == 16 else "f32"
            hv, sv = M.values(fmt, D), M.values(fmt, sim)
            sc = scale(name, A, B, C)
            with np.errstate(all="ignore"):
                rel = np.abs(hv - sv) / sc
            ok = np.isfinite(hv) & np.isfinite(sv) & (sc > 0)
            same_special = (~np.isfinite(hv) | ~np.isfinite(sv)) & (hv.astype(str) == sv.astype(str))
            entry["model_max_err_over_scale"] = float(rel[ok].max()) if ok.any() else 0.0
            entry["nonfinite_mismatches"] = int(((~np.isfinite(hv) | ~np.isfinite(sv)) & ~same_special).sum())
            ex = exact(name, A, B, C)
            entry["exact_equal"] = int((ex == D).sum())
            entry["exact_max_ulp"] = int(ulps(D, ex, width).max())
        report[f"{name}/{fam}"] = entry
        line = f"{name:16s} {fam:8s} model {entry['model_equal']}/{entry['n']} max {entry['model_max_ulp']} ulp"
        if "exact_equal" in entry:
            line += (f" err/scale {entry['model_max_err_over_scale']:.2e}"
                     f" nonfinite-mismatches {entry['nonfinite_mismatches']}"
                     f"   exact-RN {entry['exact_equal']} max {entry['exact_max_ulp']} ulp")
        print(line)
    return report


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    cases, _ = load(args[0] if args else NPZ)
    rep = compare(cases)
    if "--no-write" not in sys.argv:
        with open(REPORT, "w") as f:
            json.dump(rep, f, indent=1, sort_keys=True)
