"""Exhaustive measurement of the .approx PTX instructions whose result depends on few input bits
(device only: numpy + cupy).  Issue 25 item 3.

    python3 validation/ptx_semantics/approx_tables.py OUTDIR

What the hardware function reads, and so what "exhaustive" means here:

* rcp.approx.ftz.f64 / rsqrt.approx.ftz.f64 (SASS MUFU.RCP64H / MUFU.RSQ64H) read only the input's
  high word (the earlier 24,055-input measurement, validation/ptx_semantics/README.md).  For a
  normal input the result's mantissa is then a function of the 20 mantissa bits of that word (rcp)
  or of them and the exponent's parity (rsqrt).  Tables: every high word 0x3FF00000|m (rcp, 2^20)
  and 0x3FF00000|m, 0x40000000|m (rsqrt, 2^21), low word 0.  Checks: the same high words with
  random low words (counted where the result changes), and 2^16 random 64-bit inputs (every
  exponent, specials) to test the exponent-shift rule offline.
* rcp.approx.ftz.f32 (MUFU.RCP): every x in [1, 2) (2^23) and 2^17 random bit patterns, with and
  without .ftz; div.approx{,.ftz}.f32 and div.full.f32: 2^17 random pairs each.
* ex2.approx.ftz.f32 (MUFU.EX2): every x in [1,2), [0.5,1), [-1,-0.5), [-2,-1) (4 x 2^23) and 2^17
  random inputs (random bits, and uniform in [-130, 130]); lg2.approx.ftz.f32: 2^17 random.

``--fake`` runs the script here with simgpu's table in place of the GPU (tests the script, not the
hardware).

A table is stored as its first value and the first differences (int8/int16 where they fit), which
compress to little: OUTDIR/approx_tables.npz.  Samples (raw bits, inputs and outputs):
OUTDIR/approx_samples.npz (the outputs; sample_inputs() draws the inputs again from SEED).  OUTDIR/approx_meta.json: device, versions, date, counts, seconds.
"""
from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import time

import numpy as np

N_SAMPLE32 = 1 << 17
N_SAMPLE64 = 1 << 16

SRC = r'''
extern "C" __global__ void k_{name}({T} const* a, {T} const* b, {T}* out, long long n) {{
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  {F} x = {LD}(a[i]);
  {F} y = {LD}(b[i]);
  {F} r;
  asm volatile("{{ {INSTR} }}" : "={C}"(r) : "{C}"(x), "{C}"(y));
  out[i] = {ST}(r);
}}
'''

OPS = {
    # name: (ptx instruction text with %0 dst, %1 a, %2 b, width)
    "rcp64ftz": ("rcp.approx.ftz.f64 %0, %1;", 64),
    "rsq64ftz": ("rsqrt.approx.ftz.f64 %0, %1;", 64),
    "rcp32ftz": ("rcp.approx.ftz.f32 %0, %1;", 32),
    "rcp32": ("rcp.approx.f32 %0, %1;", 32),
    "ex2ftz": ("ex2.approx.ftz.f32 %0, %1;", 32),
    "ex2": ("ex2.approx.f32 %0, %1;", 32),
    "lg2ftz": ("lg2.approx.ftz.f32 %0, %1;", 32),
    "divapprox": ("div.approx.f32 %0, %1, %2;", 32),
    "divapproxftz": ("div.approx.ftz.f32 %0, %1, %2;", 32),
    "divfull": ("div.full.f32 %0, %1, %2;", 32),
    "divfullftz": ("div.full.ftz.f32 %0, %1, %2;", 32),
}


def source():
    parts = []
    for name, (instr, w) in OPS.items():
        if w == 64:
            fmt = dict(T="unsigned long long", F="double", LD="__longlong_as_double", ST="__double_as_longlong", C="d")
        else:
            fmt = dict(T="unsigned int", F="float", LD="__uint_as_float", ST="__float_as_uint", C="f")
        parts.append(SRC.format(name=name, INSTR=instr, **fmt))
    return "\n".join(parts)


def diff_pack(vals):
    """(first value, first differences as the narrowest of int8/int16/int32/int64 that holds them)."""
    v = vals.astype(np.int64)
    d = np.diff(v)
    for dt in (np.int8, np.int16, np.int32, np.int64):
        info = np.iinfo(dt)
        if d.size == 0 or (d.min() >= info.min and d.max() <= info.max):
            return np.int64(v[0]), d.astype(dt)
    raise AssertionError


def _fake_run(name, a, b=None):
    """simgpu's semantics of the op on raw bits (``--fake``)."""
    from simgpu.ptx import semantics
    instr, w = OPS[name]
    parts = instr.split()[0].split(".")
    fn = semantics.lookup(parts[0], tuple(parts[1:-1]), (parts[-1],))
    ft, it = (np.float64, np.uint64) if w == 64 else (np.float32, np.uint32)
    args = [np.asarray(a, it).view(ft)] + ([] if "%2" not in instr else [np.asarray(b, it).view(ft)])
    return np.asarray(fn(*args), ft).view(it)


SEED = 20261207
SAMPLED = ("rcp64ftz", "rsq64ftz", "rcp32ftz", "rcp32", "ex2ftz", "ex2", "lg2ftz",
           "divapprox", "divapproxftz", "divfull", "divfullftz")
SPEC64 = np.array([0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x0000000000000001,
                   0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0x3FF0000000000000,
                   0x7FF0000000000001, 0x7FE0000000000000, 0x0020000000000000, 0x0010000100000000,
                   0x7FD0000000000000, 0x7FDFFFFF00000000], dtype=np.uint64)
SPEC32 = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7FC12345, 0xFF812345, 1, 0x007FFFFF,
                   0x00800000, 0x7F7FFFFF, 0x3F800000, 0x7E800000, 0x7F000000, 0x80000001, 0x00400000,
                   0x43000000, 0xC3000000, 0x42FE0000, 0xC2FC0000, 0xC3160000, 0x42FFFFFF],
                  dtype=np.uint32)


def low_words(rng):
    """The random low words of the f64 tables' check (the generator's first draws)."""
    return [rng.integers(0, 1 << 32, n, dtype=np.uint64) for n in (1 << 20, 1 << 21)]


def sample_inputs(rng=None):
    """The sampled inputs, bits by name (``<op>_in``, or ``<op>_in0``/``_in1`` for div): drawn
    from ``rng`` after the tables' low words (None: a new generator of SEED, the low words
    drawn first, as main() draws them: the stored outputs are for these inputs)."""
    if rng is None:
        rng = np.random.default_rng(SEED)
        low_words(rng)
    out = {}
    for name in ("rcp64ftz", "rsq64ftz"):
        a = rng.integers(0, np.iinfo(np.uint64).max, N_SAMPLE64, dtype=np.uint64, endpoint=True)
        # also: every exponent with a random mantissa (both signs)
        ex = np.arange(2048, dtype=np.uint64).repeat(8)
        a[:ex.size] = (ex << np.uint64(52)) | (a[:ex.size] & np.uint64(0x800FFFFFFFFFFFFF))
        a[ex.size:ex.size + SPEC64.size] = SPEC64
        out[f"{name}_in"] = a
    for name in ("rcp32ftz", "rcp32", "ex2ftz", "ex2", "lg2ftz"):
        a = rng.integers(0, 1 << 32, N_SAMPLE32, dtype=np.uint32)
        if name.startswith("ex2"):
            half = N_SAMPLE32 // 2
            a[:half] = rng.uniform(-130, 130, half).astype(np.float32).view(np.uint32)
        ex = np.arange(256, dtype=np.uint32).repeat(16)
        a[-ex.size:] = (ex << np.uint32(23)) | (a[-ex.size:] & np.uint32(0x807FFFFF))
        a[:SPEC32.size] = SPEC32
        out[f"{name}_in"] = a
    for name in ("divapprox", "divapproxftz", "divfull", "divfullftz"):
        a = rng.integers(0, 1 << 32, N_SAMPLE32, dtype=np.uint32)
        b = rng.integers(0, 1 << 32, N_SAMPLE32, dtype=np.uint32)
        q = N_SAMPLE32 // 2     # half of them: moderate exponents (the common case)
        a[:q] = (rng.standard_normal(q) * 100).astype(np.float32).view(np.uint32)
        b[:q] = (rng.standard_normal(q) * 3).astype(np.float32).view(np.uint32)
        out[f"{name}_in0"], out[f"{name}_in1"] = a, b
    return out


def write_meta(meta, outdir, stem, t0, cp=None):
    """Date, device (cp: cupy; None: --fake), versions, nvidia-smi and nvcc, seconds into
    OUTDIR/<stem>_meta.json; the tables' summary printed."""
    meta["date_utc"] = datetime.datetime.now(datetime.timezone.utc).isoformat()
    if cp is None:
        meta["device"] = "fake (simgpu's table)"
    else:
        dev = cp.cuda.runtime.getDeviceProperties(0)
        meta["device"] = dev["name"].decode() if isinstance(dev["name"], bytes) else str(dev["name"])
        meta["cupy"] = cp.__version__
        meta["cuda_runtime"] = cp.cuda.runtime.runtimeGetVersion()
        meta["cuda_driver"] = cp.cuda.runtime.driverGetVersion()
    for key, cmd in (("nvidia_smi", ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm", "--format=csv,noheader"]),
                     ("nvcc", ["nvcc", "--version"])):
        try:
            meta[key] = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout.strip()
        except Exception as e:  # noqa: BLE001 - recorded, not fatal
            meta[key] = repr(e)
    meta["seconds"] = round(time.time() - t0, 1)
    with open(os.path.join(outdir, f"{stem}_meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
    print(f"{stem} tables done", meta["seconds"], "s", json.dumps(meta["tables"])[:2000], flush=True)


def main(argv):
    outdir = argv[1] if len(argv) > 1 else "."
    os.makedirs(outdir, exist_ok=True)
    t0 = time.time()
    if "--fake" not in argv:
        import cupy as cp
        mod = cp.RawModule(code=source(), options=("-arch=sm_90",))
        fns = {n: mod.get_function(f"k_{n}") for n in OPS}

    def run(name, a, b=None, _fake="--fake" in argv):
        if _fake:
            return _fake_run(name, a, b)
        w = OPS[name][1]
        dt = np.uint64 if w == 64 else np.uint32
        a = np.ascontiguousarray(a, dtype=dt)
        b = np.zeros_like(a) if b is None else np.ascontiguousarray(b, dtype=dt)
        da, db = cp.asarray(a), cp.asarray(b)
        out = cp.empty_like(da)
        n = a.size
        fns[name](((n + 255) // 256,), (256,), (da, db, out, np.int64(n)))
        return cp.asnumpy(out)

    rng = np.random.default_rng(SEED)
    tables, samples, meta = {}, {}, {"tables": {}, "samples": {}}

    def table(key, name, inputs):
        out = run(name, inputs)
        if OPS[name][1] == 64:
            lo = out & np.uint64(0xFFFFFFFF)
            meta["tables"][key + "_low_words_nonzero"] = int(np.count_nonzero(lo))
            out = (out >> np.uint64(32)).astype(np.uint32)
        first, d = diff_pack(out)
        tables[f"{key}_first"] = first
        tables[f"{key}_diff"] = d
        meta["tables"][key] = {"n": int(inputs.size), "diff_dtype": str(d.dtype),
                               "first_input": int(inputs[0]), "last_input": int(inputs[-1])}

    m20 = np.arange(1 << 20, dtype=np.uint64)
    hi_rcp = (np.uint64(0x3FF00000) | m20) << np.uint64(32)
    table("rcp64ftz_hi", "rcp64ftz", hi_rcp)
    hi_rsq = np.concatenate([(np.uint64(0x3FF00000) | m20), (np.uint64(0x40000000) | m20)]) << np.uint64(32)
    table("rsq64ftz_hi", "rsq64ftz", hi_rsq)
    # low words: does the result change?
    for (name, hi), lo in zip((("rcp64ftz", hi_rcp), ("rsq64ftz", hi_rsq)), low_words(rng)):
        a0, a1 = run(name, hi), run(name, hi | lo)
        meta["tables"][f"{name}_changed_by_low_word"] = int(np.count_nonzero(a0 != a1))
    m23 = np.arange(1 << 23, dtype=np.uint32)
    table("rcp32ftz_1_2", "rcp32ftz", np.uint32(0x3F800000) | m23)
    for key, base in (("ex2ftz_1_2", 0x3F800000), ("ex2ftz_05_1", 0x3F000000), ("ex2ftz_m1_m05", 0xBF000000),
                      ("ex2ftz_m2_m1", 0xBF800000)):
        table(key, "ex2ftz", np.uint32(base) | m23)

    # samples: raw bits, inputs and outputs (the inputs: sample_inputs, from the same generator)
    for key, a in sample_inputs(rng).items():
        samples[key] = a
    for name in SAMPLED:
        if f"{name}_in" in samples:
            samples[f"{name}_out"] = run(name, samples[f"{name}_in"])
        else:
            samples[f"{name}_out"] = run(name, samples[f"{name}_in0"], samples[f"{name}_in1"])
    # the inputs are not stored: sample_inputs() makes them again (seed SEED), saving 6 MB
    samples = {k: v for k, v in samples.items() if k.endswith("_out")}
    meta["samples"] = {k: int(v.size) for k, v in samples.items()}
    np.savez_compressed(os.path.join(outdir, "approx_tables.npz"), **tables)
    np.savez_compressed(os.path.join(outdir, "approx_samples.npz"), **samples)
    write_meta(meta, outdir, "approx", t0, None if "--fake" in argv else cp)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
