"""How many of the H100's MUFU measurements of approx_tables2.py simgpu reproduces bit for bit.

    python validation/ptx_semantics/approx2_check.py [DATADIR] [--quick]

DATADIR (default approx/h100_20261208) holds approx2_tables.npz and approx2_samples.npz.  For each
table (exhaustive ranges) and each sampled form it prints: entries, bit-equal entries, the
largest difference in ulp (ordered bit patterns; huge where results straddle zero) and the largest
absolute difference (log2) among the finite others.
``--quick`` checks every 64th table entry (the samples are always checked in full).
"""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from approx_tables2 import OPS, _fake_run, sample_inputs  # noqa: E402

DEFAULT = os.path.join(HERE, "approx", "h100_20261208")
FIRST = os.path.join(HERE, "approx", "approx_samples.npz")     # approx_tables.py's H100 samples (2026-12-07)

# table key -> (op of OPS, first input bits, count)
TABLES = {
    "sqrtftz_1_4": ("sqrtftz", 0x3F800000, 1 << 24),
    "rsqftz_1_4": ("rsqftz", 0x3F800000, 1 << 24),
    "lg2ftz_1_2": ("lg2ftz", 0x3F800000, 1 << 23),
    "lg2ftz_2_4": ("lg2ftz", 0x40000000, 1 << 23),
    "lg2ftz_05_1": ("lg2ftz", 0x3F000000, 1 << 23),
    "ex2f16_all": ("ex2f16", 0, 1 << 16),
    "ex2bf16_all": ("ex2bf16", 0, 1 << 16),
    "tanhf16_all": ("tanhf16", 0, 1 << 16),
    "tanhbf16_all": ("tanhbf16", 0, 1 << 16),
}


# Four of the measured tables are stored once, as the package's data (the rules read them there):
# table -> (file in simgpu/ptx/data, its key).  Their sha256 as measured: approx2_meta.json "stored_in".
PACKAGE_DATA = os.path.join(os.path.dirname(os.path.dirname(HERE)), "simgpu", "ptx", "data")
IN_PACKAGE = {"sqrtftz_1_4": ("mufu_sqrt_f32.npz", "sqrt"), "rsqftz_1_4": ("mufu_sqrt_f32.npz", "rsq"),
              "lg2ftz_1_2": ("mufu_lg2_f32.npz", "one"), "lg2ftz_05_1": ("mufu_lg2_f32.npz", "half")}


class MeasuredTables:
    """approx2_tables.npz's entries, those kept in simgpu/ptx/data read from there: z[f"{key}_first"]."""

    def __init__(self, d):
        self.own = np.load(os.path.join(d, "approx2_tables.npz"))
        self.pkg = {}

    def __getitem__(self, name):
        key, part = name.rsplit("_", 1)
        if key in IN_PACKAGE:
            fname, k = IN_PACKAGE[key]
            if fname not in self.pkg:
                self.pkg[fname] = np.load(os.path.join(PACKAGE_DATA, fname))
            return self.pkg[fname][f"{k}_{part}"]
        return self.own[name]


def unpack(z, key):
    first, d = np.int64(z[f"{key}_first"]), z[f"{key}_diff"]
    return np.concatenate([[first], first + np.cumsum(d, dtype=np.int64)])


def table_case(z, key, step=1):
    """(op, input bits, measured output bits) of one table, every ``step``-th entry."""
    op, start, n = TABLES[key]
    dt = np.uint32 if OPS[op][1] == 32 else np.uint16
    inputs = (np.int64(start) + np.arange(0, n, step)).astype(dt)
    return op, inputs, unpack(z, key)[::step].astype(dt)


def first_lg2ftz():
    """(inputs, outputs) of lg2.approx.ftz.f32 in approx_tables.py's H100 samples (2^17 random)."""
    import approx_tables as A
    return A.sample_inputs()["lg2ftz_in"], np.load(FIRST)["lg2ftz_out"]


def ordered(bits, width):
    """Bit patterns mapped to integers monotone in the float value (for ulp distances)."""
    b = bits.astype(np.int64)
    sign = np.int64(1) << (width - 1)
    return np.where(b & sign, -(b & (sign - 1)), b)


def compare(op, inputs, measured):
    got = _fake_run(op, inputs)
    width = OPS[op][1]
    eq = got == measured
    d = np.abs(ordered(got, width) - ordered(measured, width))[~eq]
    if width == 32:
        g, m = got.view(np.float32).astype(np.float64), measured.view(np.float32).astype(np.float64)
    else:
        g, m = got.view(np.uint16).astype(np.uint32) << 16, measured.astype(np.uint32) << 16
        g, m = g.view(np.float32).astype(np.float64), m.view(np.float32).astype(np.float64)   # magnitude only
    with np.errstate(invalid="ignore"):
        a = np.abs(g - m)[~eq & np.isfinite(g) & np.isfinite(m)]
    ab = f"2^{np.log2(a.max()):.2f}" if a.size and a.max() > 0 else "-"
    return int(eq.size), int(eq.sum()), (int(d.max()) if d.size else 0), ab


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    d = args[0] if args else DEFAULT
    step = 64 if "--quick" in argv else 1
    tabs = MeasuredTables(d)
    samp = np.load(os.path.join(d, "approx2_samples.npz"))
    print(f"{'set':<16}{'form':<28}{'n':>10}{'equal':>10}{'max ulp':>12}{'max abs':>10}")
    for key in TABLES:
        op, inputs, measured = table_case(tabs, key, step)
        n, ok, mx, ab = compare(op, inputs, measured)
        print(f"{key:<16}{OPS[op][0].split()[0]:<28}{n:>10}{ok:>10}{mx:>12}{ab:>10}")
    for k, inputs in sample_inputs().items():
        op = k[:-3]
        n, ok, mx, ab = compare(op, inputs, samp[f"{op}_out"])
        print(f"{'samples':<16}{OPS[op][0].split()[0]:<28}{n:>10}{ok:>10}{mx:>12}{ab:>10}")
    n, ok, mx, ab = compare("lg2ftz", *first_lg2ftz())
    print(f"{'samples 12-07':<16}{'lg2.approx.ftz.f32':<28}{n:>10}{ok:>10}{mx:>12}{ab:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
