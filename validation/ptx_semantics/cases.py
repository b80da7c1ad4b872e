"""Cases for checking simgpu.ptx.semantics against an H200, bit for bit (numpy only).

Runs here (compare.py, tests) and on the device (device_run.py) with nothing but numpy: every
case is a PTX instruction text (``div.rn.f32``, ``cvt.rzi.s32.f32``, ``lop3.b32`` with an
immediate), its operand types, and a deterministic set of inputs (special bit patterns, their
cartesian products, seeded random bit patterns and seeded random values in the instruction's
interesting range).  Inputs and outputs travel as raw bits: uint8/16/32/64 by width, predicates
as uint8 0/1.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

SEED = 20261117

INT_TYPES = {f"{k}{w}" for k in "usb" for w in (8, 16, 32, 64)}
FLOAT_TYPES = {"f16", "bf16", "f32", "f64", "f16x2", "bf16x2"}
ALL_TYPES = INT_TYPES | FLOAT_TYPES | {"pred"}
WIDTH = {**{t: int(t[1:]) for t in INT_TYPES}, "f16": 16, "bf16": 16, "f32": 32, "f64": 64,
         "f16x2": 32, "bf16x2": 32, "pred": 8}
BITS = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def bits_dtype(t):
    return np.dtype(BITS[WIDTH[t]])


def parse(instr):
    """'cvt.rzi.s32.f32' -> ('cvt', ('rzi',), ('s32', 'f32'))."""
    parts = instr.split(".")
    return parts[0], tuple(p for p in parts[1:] if p not in ALL_TYPES), tuple(p for p in parts[1:] if p in ALL_TYPES)


_UNARY = {"abs", "neg", "not", "cnot", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh",
          "brev", "popc", "clz", "bfind", "testp"}
_TERNARY = {"fma", "mad", "prmt", "shf", "sad", "mad24", "selp", "slct"}
_BOOLOPS = {"and", "or", "xor"}


def signature(op, mods, types):
    """(dst type, [src types]) of an instruction."""
    t = types[0]
    if op == "cvt":
        if types[0] in ("f16x2", "bf16x2"):
            return types[0], ["f32", "f32"]
        return types[0], [types[1]]
    if op == "setp":
        srcs = [t, t] + (["pred"] if set(mods) & _BOOLOPS else [])
        return "pred", srcs
    if op == "set":
        return types[0], [types[1], types[1]] + (["pred"] if set(mods) & _BOOLOPS else [])
    if op == "testp":
        return "pred", [t]
    if op == "slct":
        return types[0], [types[0], types[0], types[1]]
    if op == "selp":
        return t, [t, t, "pred"]
    if op in ("mul", "mad") and "wide" in mods:
        wt = t[0] + str(2 * WIDTH[t])
        return wt, [t, t] + ([wt] if op == "mad" else [])
    if op in ("clz", "popc", "bfind"):
        return "u32", [t]
    if op in ("shl", "shr"):
        return t, [t, "u32"]
    if op == "bfe":
        return t, [t, "u32", "u32"]
    if op == "bfi":
        return t, [t, t, "u32", "u32"]
    if op == "lop3":
        return t, [t, t, t]
    if op in _UNARY:
        return t, [t]
    if op in _TERNARY:
        return t, [t, t, t]
    return t, [t, t]


# ----------------------------------------------------------------- special bit patterns
def _f32(*vals):
    return [int(np.float32(v).view(np.uint32)) for v in vals]


F32_SPECIAL = [
    0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00400000,
    0x00800000, 0x80800000, 0x00800001, 0x00FFFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F000000,
    0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC12345, 0x7F800001, 0x7FA00000,
    0xFF812345, 0x7FFFFFFF, 0xFFFFFFFF,
    *_f32(1, -1, 2, -2, 0.5, 3, -3, 1.5, 2.5, -2.5, 0.49999997, 7, -7, 1e-3, 100, -100,
          2 ** 23, 2 ** 23 + 1, 2 ** 24, 2 ** 31, -2 ** 31, 2 ** 31 - 128, 2 ** 32, 2 ** 63, -2 ** 63, 2 ** 64,
          65504, 65519.996, 65520, 2 ** -14, 2 ** -24, 2 ** -25, 2 ** -126 * 0.5 * 3, 255.5, 127.5, -128.5,
          1 + 2 ** -23, 1 - 2 ** -24, 2 ** 126, 2 ** 127, 3 * 2 ** 126, 2 ** -125, math.pi, -math.pi),
    0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF, 0x7F7F8000, 0x477FF000, 0x33000001,
]
F64_SPECIAL = [
    0x0, 0x8000000000000000, 0x1, 0x8000000000000001, 0x000FFFFFFFFFFFFF, 0x0010000000000000,
    0x8010000000000000, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000,
    0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000012345678, 0x7FF0000000000001, 0x7FF4000000000000,
    0xFFF0000000000123, 0x7FFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF,
    *[int(np.float64(v).view(np.uint64)) for v in (
        1, -1, 2, 0.5, 3, -3, 1.5, 2.5, -2.5, 7, -7, 1e-300, 1e300, 2 ** 31, -2 ** 31, 2 ** 32, 2 ** 63,
        -2 ** 63, 2 ** 64, 2 ** 53 + 2, 1 + 2 ** -52, 1 - 2 ** -53, 2 ** -1022 * 1.5, 3.4028234663852886e38,
        3.4028235677973366e38, 1.1754943508222875e-38, 1.401298464324817e-45, 7.006492321624085e-46,
        7.006492321624086e-46, 1 + 2 ** -24, 1 + 2 ** -24 + 2 ** -50, 2 ** -149 * 1.5, 65520.0, 1e-8,
        2 ** 1023, 2 ** -1074 * 3, math.pi)],
]
F16_SPECIAL = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x8400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00,
               0x7E00, 0xFE00, 0x7E12, 0x7C01, 0x7D00, 0x7FFF, 0x3C00, 0xBC00, 0x4000, 0x3800, 0x4200,
               0xC200, 0x3E00, 0x4100, 0x3C01, 0x5640, 0xD640]
BF16_SPECIAL = [0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x8080, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80,
                0x7FC0, 0xFFC0, 0x7FC5, 0x7F81, 0x7FA0, 0x7FFF, 0x3F80, 0xBF80, 0x4000, 0x3F00, 0x4040,
                0xC040, 0x3FC0, 0x4020, 0x3F81, 0x42FF, 0xC300]


def _int_special(w, signed):
    m = (1 << w) - 1
    vals = [0, 1, 2, 3, 7, 8, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000,
            0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000, 0xFFFFFF, 0x800000,
            (1 << (w - 1)) - 1, 1 << (w - 1), (1 << (w - 1)) + 1, m, m - 1, m - 6, 0x12345678, 0x89ABCDEF,
            0x0123456789ABCDEF, 0xFEDCBA9876543210]
    return sorted({v & m for v in vals})


SPECIAL = {"f32": F32_SPECIAL, "f64": F64_SPECIAL, "f16": F16_SPECIAL, "bf16": BF16_SPECIAL}


def specials(t):
    if t in SPECIAL:
        return sorted(set(SPECIAL[t]))
    if t in ("f16x2", "bf16x2"):
        s = SPECIAL[t[:-2]]
        return sorted({(a << 16) | b for a in s[:12] for b in s[::3]})
    if t == "pred":
        return [0, 1]
    return _int_special(WIDTH[t], t[0] == "s")


# ----------------------------------------------------------------- random inputs
def _rand_bits(rng, t, n):
    if t == "pred":
        return rng.integers(0, 2, n).astype(np.uint8)
    w = WIDTH[t]
    return rng.integers(0, 1 << 64, n, dtype=np.uint64, endpoint=False).astype(BITS[w]) if w < 64 else \
        rng.integers(0, 2 ** 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)


def _floats_to_bits(t, x):
    x = np.asarray(x, np.float64)
    if t == "f64":
        return x.view(np.uint64)
    if t == "f32":
        return x.astype(np.float32).view(np.uint32)
    if t == "f16":
        return x.astype(np.float16).view(np.uint16)
    if t == "bf16":
        return (x.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    raise ValueError(t)


def _rand_values(rng, t, n, lo=-40, hi=40):
    """Random floats sign * 2^U(lo, hi) with full random mantissas (moderate magnitudes)."""
    if t in ("f16x2", "bf16x2"):
        a = _rand_values(rng, t[:-2], n, lo, hi).astype(np.uint32)
        b = _rand_values(rng, t[:-2], n, lo, hi).astype(np.uint32)
        return (a << np.uint32(16)) | b
    if t not in SPECIAL:
        # integers: small magnitudes, both signs
        w = WIDTH[t]
        v = rng.integers(-300, 300, n).astype(np.int64)
        return (v.astype(np.uint64) & np.uint64((1 << w) - 1 if w < 64 else 0xFFFFFFFFFFFFFFFF)).astype(BITS[w])
    if t in ("f16", "bf16"):
        lo, hi = max(lo, -16), min(hi, 15)
    e = rng.uniform(lo, hi, n)
    s = rng.choice([-1.0, 1.0], n)
    return _floats_to_bits(t, s * np.exp2(e))


def _uniform(t, rng, n, a, b):
    return _floats_to_bits(t, rng.uniform(a, b, n))


# per-case domain generators for .approx and other range-sensitive instructions
def _domain(op, mods, t, rng, n):
    if t in ("f16", "bf16", "f16x2", "bf16x2"):
        return None
    if op == "ex2":
        return np.concatenate([_uniform(t, rng, n // 2, -130, 130), _uniform(t, rng, n // 2, -1, 1)])
    if op in ("sin", "cos"):
        return np.concatenate([_uniform(t, rng, n // 2, -math.pi, math.pi),
                               _uniform(t, rng, n // 2, -100 * math.pi, 100 * math.pi)])
    if op == "tanh":
        return np.concatenate([_uniform(t, rng, n // 2, -10, 10), _rand_values(rng, t, n // 2, -30, 3)])
    if op in ("lg2", "sqrt", "rsqrt", "rcp"):
        v = _rand_values(rng, t, n, -150 if t == "f32" else -1000, 128 if t == "f32" else 1000)
        m = np.array(0x7FFFFFFF if t == "f32" else 0x7FFFFFFFFFFFFFFF, v.dtype)
        return v & m        # positive
    if op == "cvt" and t in ("f32", "f64", "f16"):
        # around integers and rounding ties
        k = rng.integers(-70000, 70000, n).astype(np.float64)
        frac = rng.choice([0.0, 0.5, 0.25, 0.75, -0.5, 1e-3, 0.4999999], n)
        return _floats_to_bits(t, k + frac)
    return None


def _product(cols, limit):
    rows = list(itertools.product(*cols))
    return rows[:limit]


def n_special(case):
    """How many leading inputs of make_inputs(case) are the special patterns (or exhaustive)."""
    srcs = case["srcs"]
    if len(srcs) == 1:
        if srcs[0] in ("f16", "bf16"):
            return 65536
        if WIDTH[srcs[0]] == 8:
            return 256
        return len(specials(srcs[0]))
    sps = [specials(t) for t in srcs]
    if len(srcs) >= 3:
        sps = [s if len(s) <= 8 else s[:: max(1, len(s) // 12)] for s in sps]
    return min(math.prod(len(s) for s in sps), 6000)


def make_inputs(case, n_rand=1000):
    """Tuple of bit arrays (one per source operand) for a case, deterministic."""
    srcs = case["srcs"]
    op, mods = case["op"], case["mods"]
    seed = SEED + sum(ord(c) * (i + 1) for i, c in enumerate(case["name"]))
    rng = np.random.default_rng(seed)
    n_src = len(srcs)
    # exhaustive for one-operand 16-bit
    if n_src == 1 and WIDTH[srcs[0]] == 16 and srcs[0] in ("f16", "bf16"):
        return (np.arange(65536, dtype=np.uint16),)
    if n_src == 1 and WIDTH[srcs[0]] == 8:
        return (np.arange(256, dtype=np.uint8),)
    if n_src == 1:
        sp = np.array(specials(srcs[0]), dtype=BITS[WIDTH[srcs[0]]])
        n = n_rand * (8 if case["approx"] else 1)
        dom = _domain(op, mods, srcs[0], rng, n)
        parts = [sp, _rand_bits(rng, srcs[0], n), _rand_values(rng, srcs[0], n)]
        if dom is not None:
            parts.append(dom.astype(sp.dtype))
        return (np.concatenate(parts),)
    # several operands: product of specials (capped), then random bits / random values
    sps = [specials(t) for t in srcs]
    if n_src >= 3:
        sps = [s if len(s) <= 8 else s[:: max(1, len(s) // 12)] for s in sps]
    rows = _product(sps, 6000)
    cols = [np.array([r[k] for r in rows], dtype=BITS[WIDTH[t]]) for k, t in enumerate(srcs)]
    out = []
    for k, t in enumerate(srcs):
        dt = BITS[WIDTH[t]]
        parts = [cols[k], _rand_bits(rng, t, n_rand), _rand_values(rng, t, n_rand)]
        if op in ("shl", "shr", "bfe", "bfi") and t == "u32" and k >= 1:
            parts[2] = rng.integers(0, 80, n_rand).astype(dt)
        if op == "shf" and k == 2:
            parts[2] = rng.integers(0, 70, n_rand).astype(dt)
        if op in ("div", "rem") and t in INT_TYPES and k == 1:
            parts[2] = np.where(rng.random(n_rand) < 0.1, 0, parts[2]).astype(dt)
        if op == "div" and case["approx"] and k == 1:
            parts.append(_rand_values(rng, t, n_rand, 100, 128))
        elif op == "div" and case["approx"]:
            parts.append(_rand_values(rng, t, n_rand, -40, 40))
        elif case["approx"]:
            parts.append(_rand_values(rng, t, n_rand))
        out.append(np.concatenate(parts).astype(dt))
    return tuple(out)


# ----------------------------------------------------------------- the case list
def _f(op, *variants):
    return [f"{op}.{v}" if v else op for v in variants]


def _instrs():
    L = []
    R = ("rn", "rz", "rm", "rp")
    # ---- float add/sub/mul/fma/mad
    for op in ("add", "sub", "mul"):
        L += [f"{op}.{r}.f32" for r in R] + [f"{op}.f32", f"{op}.rn.ftz.f32", f"{op}.rz.ftz.f32",
                                              f"{op}.rn.sat.f32", f"{op}.rn.ftz.sat.f32"]
        L += [f"{op}.{r}.f64" for r in R]
        L += [f"{op}.rn.f16", f"{op}.rn.ftz.f16", f"{op}.rn.sat.f16", f"{op}.rn.bf16", f"{op}.rn.f16x2",
              f"{op}.rn.bf16x2"]
    L += [f"fma.{r}.f32" for r in R] + ["fma.rn.ftz.f32", "fma.rn.sat.f32", "fma.rn.ftz.sat.f32"]
    L += [f"fma.{r}.f64" for r in R]
    L += ["fma.rn.f16", "fma.rn.ftz.f16", "fma.rn.sat.f16", "fma.rn.relu.f16", "fma.rn.bf16",
          "fma.rn.relu.bf16", "fma.rn.f16x2", "fma.rn.bf16x2", "fma.rn.relu.f16x2"]
    L += ["mad.rn.f32", "mad.rn.ftz.f32", "mad.rz.f32", "mad.rn.f64"]
    # ---- div / rcp / sqrt
    L += [f"div.{r}.f32" for r in R] + ["div.rn.ftz.f32", "div.rz.ftz.f32"]
    L += [f"div.{r}.f64" for r in R]
    L += ["div.approx.f32", "div.approx.ftz.f32", "div.full.f32", "div.full.ftz.f32"]
    L += [f"rcp.{r}.f32" for r in R] + ["rcp.rn.ftz.f32"] + [f"rcp.{r}.f64" for r in R]
    L += [f"sqrt.{r}.f32" for r in R] + ["sqrt.rn.ftz.f32"] + [f"sqrt.{r}.f64" for r in R]
    # ---- approx
    L += ["rcp.approx.f32", "rcp.approx.ftz.f32", "rcp.approx.ftz.f64", "sqrt.approx.f32",
          "sqrt.approx.ftz.f32", "rsqrt.approx.f32", "rsqrt.approx.ftz.f32", "rsqrt.approx.f64",
          "rsqrt.approx.ftz.f64", "ex2.approx.f32", "ex2.approx.ftz.f32", "lg2.approx.f32",
          "lg2.approx.ftz.f32", "sin.approx.f32", "sin.approx.ftz.f32", "cos.approx.f32",
          "cos.approx.ftz.f32", "tanh.approx.f32", "ex2.approx.f16", "ex2.approx.ftz.bf16",
          "tanh.approx.f16", "tanh.approx.bf16", "ex2.approx.f16x2", "tanh.approx.bf16x2"]
    # ---- min/max/abs/neg/copysign/testp
    for op in ("min", "max"):
        L += _f(op, "f32", "ftz.f32", "NaN.f32", "ftz.NaN.f32", "f64", "f16", "NaN.f16", "bf16", "NaN.bf16",
                "f16x2", "bf16x2", "s32", "u32", "s64", "u64", "s16", "u16")
    for op in ("abs", "neg"):
        L += _f(op, "f32", "ftz.f32", "f64", "f16", "bf16", "f16x2", "bf16x2", "s32", "s64", "s16")
    L += ["copysign.f32", "copysign.f64"]
    for t in ("f32", "f64"):
        L += [f"testp.{w}.{t}" for w in ("finite", "infinite", "number", "notanumber", "normal", "subnormal")]
    # ---- comparisons / selects
    cmps = ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")
    L += [f"setp.{c}.f32" for c in cmps] + ["setp.lt.ftz.f32", "setp.eq.ftz.f32"]
    L += [f"setp.{c}.f64" for c in ("eq", "ne", "lt", "geu", "nan")]
    L += ["setp.lt.f16", "setp.neu.bf16"]
    L += ["setp.lt.s32", "setp.lt.u32", "setp.ge.s64", "setp.lo.u32", "setp.hs.u64", "setp.hi.u16",
          "setp.eq.b32", "setp.ne.b64", "setp.gt.s16"]
    L += ["setp.lt.and.f32", "setp.ge.or.s32", "setp.ne.xor.u32", "setp.gtu.and.f64"]
    L += ["set.lt.u32.f32", "set.eq.f32.s32", "set.ltu.s32.f32", "set.gt.u32.u32", "set.ne.and.u32.f32",
          "set.nan.f32.f32"]
    L += ["selp.b32", "selp.f32", "selp.b64", "selp.f64", "selp.b16", "slct.f32.f32", "slct.s32.f32",
          "slct.b32.f32", "slct.f32.s32", "slct.b32.s32", "slct.ftz.f32.f32"]
    # ---- integer arithmetic
    for op in ("add", "sub"):
        L += _f(op, "u32", "s32", "u64", "s64", "u16", "s16", "sat.s32")
    for m in ("lo", "hi"):
        L += [f"mul.{m}.{t}" for t in ("u32", "s32", "u64", "s64", "u16", "s16")]
        L += [f"mad.{m}.{t}" for t in ("u32", "s32", "u64", "s64")]
    L += ["mul.wide.s32", "mul.wide.u32", "mul.wide.s16", "mul.wide.u16", "mad.wide.s32", "mad.wide.u32",
          "mad.wide.s16", "mad.hi.sat.s32"]
    L += [f"{op}.{t}" for op in ("div", "rem") for t in ("u32", "s32", "u64", "s64", "u16", "s16")]
    L += ["mul24.lo.s32", "mul24.lo.u32", "mul24.hi.s32", "mul24.hi.u32", "mad24.lo.s32", "mad24.hi.u32",
          "mad24.hi.s32", "sad.s32", "sad.u32", "sad.s64", "sad.u16"]
    # ---- bits
    L += ["shl.b32", "shl.b64", "shl.b16", "shr.s32", "shr.u32", "shr.b32", "shr.s64", "shr.u64", "shr.s16",
          "shr.u16", "shf.l.wrap.b32", "shf.l.clamp.b32", "shf.r.wrap.b32", "shf.r.clamp.b32"]
    L += ["brev.b32", "brev.b64", "clz.b32", "clz.b64", "popc.b32", "popc.b64"]
    L += ["bfind.u32", "bfind.s32", "bfind.u64", "bfind.s64", "bfind.shiftamt.u32", "bfind.shiftamt.s32",
          "bfind.shiftamt.s64"]
    L += ["bfe.u32", "bfe.s32", "bfe.u64", "bfe.s64", "bfi.b32", "bfi.b64"]
    L += ["prmt.b32"] + [f"prmt.b32.{m}" for m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")]
    L += ["and.b32", "or.b32", "xor.b32", "not.b32", "cnot.b32", "and.b64", "xor.b16", "not.b64", "cnot.b16",
          "and.pred", "or.pred", "xor.pred", "not.pred"]
    # ---- cvt
    ints = ("s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64")
    L += [f"cvt.{r}.{d}.f32" for r in ("rni", "rzi", "rmi", "rpi") for d in ints]
    L += ["cvt.rzi.ftz.s32.f32", "cvt.rni.ftz.u32.f32"]
    L += [f"cvt.{r}.{d}.f64" for r in ("rni", "rzi") for d in ints]
    L += [f"cvt.{r}.{d}.f64" for r in ("rmi", "rpi") for d in ("s32", "u64", "s64")]
    L += [f"cvt.{r}.{d}.f16" for r in ("rni", "rzi") for d in ("s32", "u32", "s16", "u8", "s64")]
    L += ["cvt.rzi.s32.bf16", "cvt.rni.u16.bf16"]
    L += [f"cvt.{r}.f32.{s}" for r in R for s in ("s32", "u32", "s64", "u64")]
    L += ["cvt.rn.f32.s16", "cvt.rn.f32.u8", "cvt.rn.f32.s8"]
    L += [f"cvt.{r}.f64.{s}" for r in R for s in ("s64", "u64")] + ["cvt.rn.f64.s32", "cvt.rn.f64.u32"]
    L += [f"cvt.{r}.f16.{s}" for r in ("rn", "rz", "rm", "rp") for s in ("s32", "u32")]
    L += ["cvt.rn.f16.s16", "cvt.rn.f16.u64", "cvt.rn.bf16.s32", "cvt.rz.bf16.u32", "cvt.rn.f16.s64"]
    L += ["cvt.f64.f32", "cvt.ftz.f64.f32", "cvt.f32.f16", "cvt.f32.bf16", "cvt.f64.f16", "cvt.f64.bf16",
          "cvt.ftz.f32.f16"]
    L += [f"cvt.{r}.f32.f64" for r in R] + ["cvt.rn.ftz.f32.f64", "cvt.rn.sat.f32.f64", "cvt.rz.ftz.sat.f32.f64"]
    L += [f"cvt.{r}.f16.f32" for r in R] + ["cvt.rn.ftz.f16.f32", "cvt.rn.sat.f16.f32", "cvt.rn.relu.f16.f32",
                                             "cvt.rn.satfinite.f16.f32"]
    L += [f"cvt.{r}.bf16.f32" for r in R] + ["cvt.rn.relu.bf16.f32", "cvt.rn.satfinite.bf16.f32"]
    L += ["cvt.rn.f16.f64", "cvt.rz.f16.f64", "cvt.rn.bf16.f64", "cvt.rn.bf16.f16", "cvt.rn.f16.bf16"]
    L += ["cvt.rn.f16x2.f32", "cvt.rz.f16x2.f32", "cvt.rn.relu.f16x2.f32", "cvt.rn.bf16x2.f32",
          "cvt.rz.bf16x2.f32", "cvt.rn.relu.satfinite.bf16x2.f32"]
    L += [f"cvt.{r}.f32.f32" for r in ("rni", "rzi", "rmi", "rpi")] + ["cvt.rni.ftz.f32.f32", "cvt.sat.f32.f32",
                                                                        "cvt.ftz.sat.f32.f32", "cvt.ftz.f32.f32"]
    L += [f"cvt.{r}.f64.f64" for r in ("rni", "rzi", "rmi", "rpi")] + ["cvt.sat.f64.f64"]
    L += ["cvt.rni.f16.f16", "cvt.rzi.f16.f16", "cvt.sat.f16.f16"]
    L += ["cvt.s32.s8", "cvt.u32.u8", "cvt.s32.u8", "cvt.u32.s8", "cvt.s8.s32", "cvt.u8.s32", "cvt.s16.s32",
          "cvt.u16.u64", "cvt.s64.s32", "cvt.u64.u32", "cvt.s64.u32", "cvt.u64.s32", "cvt.u32.u64",
          "cvt.s32.s64", "cvt.sat.u8.s32", "cvt.sat.s8.s32", "cvt.sat.s16.s32", "cvt.sat.u16.s32",
          "cvt.sat.s32.u32", "cvt.sat.u32.s32", "cvt.sat.s32.s64", "cvt.sat.u32.u64", "cvt.sat.s32.u64",
          "cvt.sat.u64.s64", "cvt.sat.s64.u64", "cvt.sat.u8.u32", "cvt.sat.s8.u16", "cvt.sat.u32.s8"]
    out, seen = [], set()
    for s in L:
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


LOP3_LUTS = (0x96, 0xE8, 0xF8, 0x1E, 0x6A, 0x00, 0xFF, 0xCA)


def make_cases():
    cases = []
    for instr in _instrs():
        op, mods, types = parse(instr)
        dst, srcs = signature(op, mods, types)
        cases.append(dict(name=instr, instr=instr, op=op, mods=mods, types=types, dst=dst, srcs=srcs, imm=None,
                          approx=("approx" in mods or "full" in mods)))
    for lut in LOP3_LUTS:
        cases.append(dict(name=f"lop3.b32#{lut:#04x}", instr="lop3.b32", op="lop3", mods=(), types=("b32",),
                          dst="b32", srcs=["b32", "b32", "b32"], imm=lut, approx=False))
    return cases


CASES = make_cases()
