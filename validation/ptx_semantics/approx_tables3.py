"""Exhaustive MUFU.SIN / MUFU.COS over the first quarter turn (device only: numpy + cupy), after
approx_tables2.py, whose random samples showed (sem_fmisc.sincos_approx_f32): ptxas 13.0.88 emits
FMUL.RZ x * float32(1/(2 pi)) = y (turns) then MUFU.SIN / COS; the unit drops whole turns, reads
the rest truncated to 25 fraction bits and is exact zero at quarter turns.  If so, the unit has
2^25 inputs per turn, and (if it is symmetric, which the samples then test) the 2^23 of [0, 1/4)
give all of it.

    python3 validation/ptx_semantics/approx_tables3.py OUTDIR [--fake]

For every k < 2^23 an x whose FMUL.RZ product lands in [k 2^-25, (k + 1) 2^-25) (found here on
the host, asserted), then sin.approx.ftz.f32 and cos.approx.ftz.f32 of it.  Writes
OUTDIR/approx3_tables.npz (sin_q1 / cos_q1: first value + first differences, and the inputs'
first value + differences as x_q1) and OUTDIR/approx3_meta.json.  About 1 s of device time.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from approx_tables import diff_pack, write_meta  # noqa: E402
from approx_tables2 import SRC32  # noqa: E402

INV_2PI = np.float32(0.15915493667125701904)       # the FMUL.RZ constant in ptxas' SASS
OPS = {"sin": "sin.approx.ftz.f32 %0, %1;", "cos": "cos.approx.ftz.f32 %0, %1;"}
FRAC = 25
N = 1 << (FRAC - 2)


def rz_product(x):
    """FMUL.RZ(x, INV_2PI) for float32 x (exact product in float64, then toward zero)."""
    p = x.astype(np.float64) * np.float64(INV_2PI)
    r = p.astype(np.float32)
    return np.where(np.abs(r.astype(np.float64)) > np.abs(p), np.nextafter(r, np.float32(0)), r)


def quarter_inputs():
    """x (float32 bits) with FMUL.RZ(x, INV_2PI) in [k 2^-25, (k + 1) 2^-25), k < 2^23."""
    k = np.arange(N, dtype=np.float64)
    x = ((k + 0.5) * 2.0 ** -FRAC / np.float64(INV_2PI)).astype(np.float32)
    y = rz_product(x).astype(np.float64)
    got = np.floor(y * 2.0 ** FRAC)
    for step in (1, -1, 2, -2):                       # nudge the few that miss their cell
        miss = got != k
        if not miss.any():
            break
        xs = x.copy()
        xs[miss] = np.nextafter(x[miss], np.float32(np.inf * step))
        ys = np.floor(rz_product(xs).astype(np.float64) * 2.0 ** FRAC)
        fix = miss & (ys == k)
        x[fix] = xs[fix]
        got[fix] = k[fix]
    assert np.array_equal(got, k), int((got != k).sum())
    return x.view(np.uint32)


def source():
    return "\n".join(SRC32.format(name=n, INSTR=i) for n, i in OPS.items())


def main(argv):
    outdir = argv[1] if len(argv) > 1 else "."
    os.makedirs(outdir, exist_ok=True)
    fake = "--fake" in argv
    t0 = time.time()
    a = quarter_inputs()
    tables, meta = {}, {"tables": {}}
    if not fake:
        import cupy as cp
        mod = cp.RawModule(code=source(), options=("-arch=sm_90",))
    first, d = diff_pack(a)
    tables["x_q1_first"], tables["x_q1_diff"] = first, d
    for name in OPS:
        if fake:
            from simgpu.ptx import semantics
            fn = semantics.lookup(name, ("approx", "ftz"), ("f32",))
            out = np.asarray(fn(a.view(np.float32)), np.float32).view(np.uint32)
        else:
            da = cp.asarray(a)
            dout = cp.empty_like(da)
            mod.get_function(f"k_{name}")(((a.size + 255) // 256,), (256,), (da, dout, np.int64(a.size)))
            out = cp.asnumpy(dout)
        first, d = diff_pack(out)
        tables[f"{name}_q1_first"], tables[f"{name}_q1_diff"] = first, d
        meta["tables"][f"{name}_q1"] = {"n": int(a.size), "diff_dtype": str(d.dtype)}
    np.savez_compressed(os.path.join(outdir, "approx3_tables.npz"), **tables)
    write_meta(meta, outdir, "approx3", t0, None if fake else cp)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
