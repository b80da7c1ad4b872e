"""Exhaustive measurement of the other MUFU units (device only: numpy + cupy), after approx_tables.py
(rcp/rsqrt f64, rcp/ex2 f32).

    python3 validation/ptx_semantics/approx_tables2.py OUTDIR [--fake]

ptxas 13.0 (sm_90) compiles these PTX instructions to one MUFU op each (read from its SASS):
sqrt.approx.ftz.f32 -> MUFU.SQRT, rsqrt.approx.ftz.f32 -> MUFU.RSQ, lg2.approx.ftz.f32 -> MUFU.LG2,
tanh.approx.f32 -> MUFU.TANH; without .ftz it wraps the unit (a subnormal input times 2^24, the
result times 2^-12 / 2^12, or minus 24 for lg2); sin/cos.approx are FMUL.RZ by 1/(2 pi) then
MUFU.SIN / MUFU.COS.

What "exhaustive" means:
* sqrt / rsqrt: the result's mantissa depends on the input's mantissa and the exponent's parity:
  every x in [1, 4) (2^24 inputs) each.
* lg2: every x in [1, 2), [2, 4) and [0.5, 1) (3 x 2^23): the unit's value of log2 of the mantissa,
  and how the exponent is added to it (the two neighbouring binades test the rule offline).
* f16 / bf16 ex2 and tanh: every 16-bit input (65,536 each).
* samples (2^17 each, the inputs drawn again from SEED): the f32 forms with and without .ftz, and
  tanh, sin, cos (which have no small exhaustive domain: these settle nothing alone but test a rule).

Tables are stored as first value + first differences (approx_tables.diff_pack) in
OUTDIR/approx2_tables.npz; samples' outputs in OUTDIR/approx2_samples.npz; OUTDIR/approx2_meta.json:
device, versions, date, seconds.
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from approx_tables import SPEC32, diff_pack, write_meta  # noqa: E402

N_SAMPLE = 1 << 17
SEED = 20261208

SRC32 = r'''
extern "C" __global__ void k_{name}(unsigned int const* a, unsigned int* out, long long n) {{
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = __uint_as_float(a[i]);
  float r;
  asm volatile("{{ {INSTR} }}" : "=f"(r) : "f"(x));
  out[i] = __float_as_uint(r);
}}
'''
SRC16 = r'''
extern "C" __global__ void k_{name}(unsigned short const* a, unsigned short* out, long long n) {{
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned short x = a[i];
  unsigned short r;
  asm volatile("{{ {INSTR} }}" : "=h"(r) : "h"(x));
  out[i] = r;
}}
'''

OPS = {
    "sqrtftz": ("sqrt.approx.ftz.f32 %0, %1;", 32),
    "sqrt": ("sqrt.approx.f32 %0, %1;", 32),
    "rsqftz": ("rsqrt.approx.ftz.f32 %0, %1;", 32),
    "rsq": ("rsqrt.approx.f32 %0, %1;", 32),
    "lg2ftz": ("lg2.approx.ftz.f32 %0, %1;", 32),
    "lg2": ("lg2.approx.f32 %0, %1;", 32),
    "tanh": ("tanh.approx.f32 %0, %1;", 32),
    "sinftz": ("sin.approx.ftz.f32 %0, %1;", 32),
    "sin": ("sin.approx.f32 %0, %1;", 32),
    "cosftz": ("cos.approx.ftz.f32 %0, %1;", 32),
    "cos": ("cos.approx.f32 %0, %1;", 32),
    "ex2f16": ("ex2.approx.f16 %0, %1;", 16),
    "ex2bf16": ("ex2.approx.ftz.bf16 %0, %1;", 16),
    "tanhf16": ("tanh.approx.f16 %0, %1;", 16),
    "tanhbf16": ("tanh.approx.bf16 %0, %1;", 16),
}
SAMPLED = ("sqrtftz", "sqrt", "rsqftz", "rsq", "lg2", "tanh", "sinftz", "sin", "cosftz", "cos")


def source():
    return "\n".join((SRC32 if w == 32 else SRC16).format(name=n, INSTR=i) for n, (i, w) in OPS.items())


def sample_inputs():
    """The sampled inputs' bits by name (``<op>_in``): random bit patterns, half of them from the
    range people use (sin/cos: [-pi, pi] and [-100 pi, 100 pi]; tanh: [-10, 10]; the others: every
    exponent with a random mantissa), specials first."""
    rng = np.random.default_rng(SEED)
    out = {}
    for name in SAMPLED:
        a = rng.integers(0, 1 << 32, N_SAMPLE, dtype=np.uint32)
        q = N_SAMPLE // 4
        if name.startswith(("sin", "cos")):
            a[:q] = rng.uniform(-np.pi, np.pi, q).astype(np.float32).view(np.uint32)
            a[q:2 * q] = rng.uniform(-100 * np.pi, 100 * np.pi, q).astype(np.float32).view(np.uint32)
        elif name == "tanh":
            a[:2 * q] = rng.uniform(-10, 10, 2 * q).astype(np.float32).view(np.uint32)
        ex = np.arange(256, dtype=np.uint32).repeat(16)
        a[-ex.size:] = (ex << np.uint32(23)) | (a[-ex.size:] & np.uint32(0x807FFFFF))
        a[:SPEC32.size] = SPEC32
        out[f"{name}_in"] = a
    return out


def _fake_run(name, a):
    from simgpu.ptx import semantics
    instr, w = OPS[name]
    parts = instr.split()[0].split(".")
    fn = semantics.lookup(parts[0], tuple(parts[1:-1]), (parts[-1],))
    if w == 32:
        return np.asarray(fn(np.asarray(a, np.uint32).view(np.float32)), np.float32).view(np.uint32)
    store = np.float16 if parts[-1] == "f16" else np.uint16
    return np.asarray(fn(np.asarray(a, np.uint16).view(store)), store).view(np.uint16)


def main(argv):
    outdir = argv[1] if len(argv) > 1 else "."
    os.makedirs(outdir, exist_ok=True)
    fake = "--fake" in argv
    t0 = time.time()
    if not fake:
        import cupy as cp
        mod = cp.RawModule(code=source(), options=("-arch=sm_90",))
        fns = {n: mod.get_function(f"k_{n}") for n in OPS}

    def run(name, a):
        if fake:
            return _fake_run(name, a)
        dt = np.uint32 if OPS[name][1] == 32 else np.uint16
        da = cp.asarray(np.ascontiguousarray(a, dtype=dt))
        out = cp.empty_like(da)
        n = da.size
        fns[name](((n + 255) // 256,), (256,), (da, out, np.int64(n)))
        return cp.asnumpy(out)

    tables, meta = {}, {"tables": {}}

    def table(key, name, inputs):
        first, d = diff_pack(run(name, inputs))
        tables[f"{key}_first"], tables[f"{key}_diff"] = first, d
        meta["tables"][key] = {"n": int(inputs.size), "diff_dtype": str(d.dtype),
                               "first_input": int(inputs[0]), "last_input": int(inputs[-1])}

    m24 = np.arange(1 << 24, dtype=np.uint32)
    one_to_four = np.uint32(0x3F800000) + m24                  # [1, 2) then [2, 4)
    table("sqrtftz_1_4", "sqrtftz", one_to_four)
    table("rsqftz_1_4", "rsqftz", one_to_four)
    m23 = np.arange(1 << 23, dtype=np.uint32)
    for key, base in (("lg2ftz_1_2", 0x3F800000), ("lg2ftz_2_4", 0x40000000), ("lg2ftz_05_1", 0x3F000000)):
        table(key, "lg2ftz", np.uint32(base) | m23)
    all16 = np.arange(1 << 16, dtype=np.uint16)
    for name in ("ex2f16", "ex2bf16", "tanhf16", "tanhbf16"):
        table(f"{name}_all", name, all16)

    samples = {f"{k[:-3]}_out": run(k[:-3], a) for k, a in sample_inputs().items()}
    np.savez_compressed(os.path.join(outdir, "approx2_tables.npz"), **tables)
    np.savez_compressed(os.path.join(outdir, "approx2_samples.npz"), **samples)
    meta["samples"] = {k: int(v.size) for k, v in samples.items()}
    write_meta(meta, outdir, "approx2", t0, None if fake else cp)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
