"""Seeded generator of small numba.cuda kernels that mix integer and float types.

    python validation/generated/gen.py [--campaign c1|c2] [--n N] [--batch B] [--seed S] [--jobs J] [--no-types]

Writes validation/generated/gen_kernels/batch_XX.py (one module per batch).  Plain ``random.Random``
with a seed derived from (seed, kernel index, attempt): the output is reproducible for a given
numba-cuda version.  Each module holds plain (undecorated) kernel functions, their device
functions (``@cuda.jit(device=True)``), and ``KERNELS``: a list of dicts

    name, fn, grid, block, out_dtypes (numpy dtype names, one per output array), source

Every kernel has the signature ``(ai32, ai64, au32, au64, af32, af64, acc, o0, o1, ...)``:
six input arrays of length ``L`` (make_inputs(); edge values first), an int64 ``acc`` of
length 4 (integer cuda.atomic.add: the order of the adds does not matter), and one output per
expression ``e<k>``, written at ``i = cuda.grid(1)`` by every thread (grid*block <= L, no guard,
so that every shuffle has the full warp).

The output dtypes are numba's own types for ``e<k>`` (the type map of numba-cuda's typing, read
at generation: compiler.compile_cuda for cc 9.0, no GPU needed); a kernel numba refuses is
redrawn (next attempt) so every stored kernel compiles.
"""
from __future__ import annotations

import argparse
import os
import random
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
KDIR = os.path.join(HERE, "gen_kernels")
L = 128
SEED = 20261130
# campaign name -> (kernel package folder, seed, default kernel count, version of inputs and ops).
# c1: the first 400 (2026-11-30, H200).  c2: issue 25 item 3's campaign (2,000 kernels): v2 adds
# float64/int64 mixing, math.fmod, // and % of negative floats and ints, NaN inputs with distinct
# payloads and the operations that carry them, conversions float32<->float64<->int at the edges
# (inf, -0.0, huge, subnormal; float->int casts allowed: the compiled path runs the same PTX as the
# card, so the cast's PTX semantics decide, not C's undefined behaviour).
CAMPAIGNS = {"c1": ("gen_kernels", SEED, 400, 1), "c2": ("gen_c2", 20261207, 2000, 2)}
INPUTS = ("ai32", "ai64", "au32", "au64", "af32", "af64")
IN_DTYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64")

# --- inputs -------------------------------------------------------------------------------------
_INT_EDGES = [0, 1, -1, 2, -2, 7, -7, 31, 32, 63, 64, 3, -3, 1000, -1000, 0x7FFF, 5, -5]
_F_EDGES = [0.0, -0.0, 1.0, -1.0, float("nan"), float("inf"), float("-inf"), 0.5, -0.5, 2.5, -2.5,
            1.5, 3.0, -7.0, 1e10, -1e10, 1e-40, 65504.0, 0.1, 100.25, 2.0 ** 31, -2.0 ** 63, 123456.789]


# campaign c2: more edges.  NaNs with distinct payloads (quiet and signalling, both signs, payload
# bits in the high and the low half so that narrowing f64 -> f32 keeps or drops them), subnormals,
# values at the integer conversion limits, and integers that do not fit float32/float64 exactly.
_F32_NAN_BITS = [0x7FC00000, 0x7FC00001, 0xFFC12345, 0x7F812345, 0x7FFFFFFF, 0xFFA00F00]
_F64_NAN_BITS = [0x7FF8000000000000, 0x7FF8000000000001, 0xFFF8DEAD0000BEEF, 0x7FF0000000000001,
                 0x7FF4000012345678, 0xFFF7FFFFFFFFFFFF, 0x7FF8000020000000, 0xFFFC0000E0000000]
_F2_EDGES = [1.4e-45, 5.9e-39, -1.1e-38, 5e-324, -2.5e-310, 1e-300, 3.4e38, -3.0e38, 1.7e308, -1e300,
             2.0 ** 63, 2.0 ** 64, -2.0 ** 63 - 4096.0, 9.3e18, 1.8e19, 2.0 ** 32, 2.0 ** 31 - 0.5,
             -2.0 ** 31 - 1.0, 4294967295.5, 16777217.0, 2.0 ** 53 + 2.0, -0.75, -1.5, -2.0, 7.5, -7.5,
             1e-8, -3.5e-5, 0.3, -5.0]
_INT2_EDGES = [2 ** 53 + 1, -(2 ** 53) - 1, 2 ** 24 + 1, -(2 ** 24) - 1, 2 ** 31 - 1, -(2 ** 31), 2 ** 32 + 3,
               2 ** 62, -(2 ** 62) - 7, 10 ** 18 + 1, 2 ** 63 - 513, -6, -8, -10, 9, 10, 100, -100]


def _nan_values(d):
    bits = _F32_NAN_BITS if d == np.float32 else _F64_NAN_BITS
    return list(np.array(bits, dtype=np.uint32 if d == np.float32 else np.uint64).view(d))


def make_inputs(seed=SEED, campaign="c1"):
    """The six input arrays (length L): edge values first (0, +-1, MIN, MAX, NaN, inf, -0.0, ...),
    then seeded random values.  Campaign c2 (CAMPAIGNS) adds more edges first (NaN payloads,
    subnormals, conversion limits); its random part is drawn the same way."""
    v2 = CAMPAIGNS[campaign][3] >= 2
    rng = np.random.default_rng(seed)
    out = {}
    for name, dt in zip(INPUTS, IN_DTYPES):
        d = np.dtype(dt)
        if d.kind in "iu":
            info = np.iinfo(d)
            edges = [info.min, info.max, info.min + 1, info.max - 1] + _INT_EDGES
            if v2:
                edges = edges[:4] + _INT2_EDGES + _INT_EDGES
            edges = [e % (1 << (8 * d.itemsize)) if d.kind == "u" else e for e in edges]
            edges = [e for e in edges if info.min <= e <= info.max]
            nrand = L - len(edges)
            small = rng.integers(-100, 100, nrand // 2)
            big = rng.integers(info.min, info.max, nrand - nrand // 2, dtype=d, endpoint=True)
            if d.kind == "u":
                small = np.abs(small)
            vals = np.concatenate([np.array(edges, dtype=object).astype(d), small.astype(d), big])
        else:
            info = np.finfo(d)
            edges = [float(info.max), float(-info.max), float(info.tiny), float(info.eps)] + _F_EDGES
            if v2:
                edges = edges[:4] + _F2_EDGES + _F_EDGES
            nrand = L - len(edges) - (len(_nan_values(d)) if v2 else 0)
            r = rng.standard_normal(nrand) * np.exp(rng.uniform(-8, 12, nrand))
            with np.errstate(over="ignore"):
                vals = np.concatenate([np.array(edges, dtype=d)] + ([np.array(_nan_values(d), dtype=d)] if v2 else [])
                                      + [r.astype(d)])
        assert vals.shape == (L,), (name, vals.shape)
        out[name] = np.ascontiguousarray(vals.astype(d))
    return out


# --- expressions --------------------------------------------------------------------------------
class G:
    """One kernel's generator state.  Kinds: 'i' (integer), 'f' (float), 'b' (bool)."""

    def __init__(self, rnd, idx, version=1):
        self.r = rnd
        self.idx = idx
        self.v2 = version >= 2
        self.vars = []            # (name, kind) usable as leaves
        self.devfns = []          # module-level device function sources
        self.features = set()

    def pick(self, *opts):
        return self.r.choice(opts)

    def leaf(self, want=None):
        r = self.r
        choices = []
        if want in (None, "i"):
            choices += [("ai32[i]", "i"), ("ai64[i]", "i"), ("au32[i]", "i"), ("au64[i]", "i"),
                        ("ai32[j]", "i"), ("ai64[j]", "i"), ("au32[j]", "i"), ("au64[j]", "i"),
                        ("i", "i"),
                        (str(r.choice([0, 1, 2, 3, 5, 7, 31, -1, -3, 100])), "i"),
                        (f"{self.pick('int32', 'int64', 'uint32', 'uint64')}({r.choice([1, 3, 7, 255, 0])})", "i")]
        if want in (None, "f"):
            choices += [("af32[i]", "f"), ("af64[i]", "f"), ("af32[j]", "f"), ("af64[j]", "f"),
                        (self.pick("0.5", "-0.0", "1.5", "2.0", "0.0", "-3.25"), "f"),
                        (f"float32({self.pick('0.5', '1.0', '-2.0', '3.1')})", "f")]
        if self.v2:
            # m indexes the edge values (NaN payloads, subnormals, limits) at every thread
            if want in (None, "i"):
                choices += [("ai64[m]", "i"), ("au64[m]", "i"), ("ai32[m]", "i"), ("au32[m]", "i")]
            if want in (None, "f"):
                choices += [("af32[m]", "f"), ("af64[m]", "f"), ("af32[m]", "f"), ("af64[m]", "f"),
                            (self.pick("-2.5", "-0.5", "-7.0", "1e300", "-1e-310", "3e38"), "f"),
                            (f"float32({self.pick('-0.0', '-1.5', '1e-40', '3e38')})", "f")]
        vs = [v for v in self.vars if want is None or v[1] == want]
        if vs and r.random() < 0.45:
            return r.choice(vs)
        return r.choice(choices)

    def expr(self, depth, want=None):
        """A random expression; want='i' asks for an integer-kind result (no floats inside)."""
        r = self.r
        if depth <= 0 or r.random() < 0.25:
            return self.leaf(want)
        if want == "i":
            op = r.choice(["arith", "arith", "bit", "bit", "shift", "divmod", "neg", "abs", "minmax",
                           "cmpneg", "pow", "cast_i", "andor", "cond", "floor"])
        else:
            op = r.choice(["arith", "arith", "arith", "bit", "shift", "divmod", "divmod", "neg", "abs", "minmax",
                           "minmax", "cmp", "cmpneg", "pow", "andor", "cond", "cast_i", "cast_f", "math",
                           "math", "floor", "truediv", "round"])
        if self.v2 and r.random() < 0.45:
            # campaign c2's classes, drawn about as often as all the others together
            if want == "i":
                op = r.choice(["divmod_neg", "divmod_neg", "mix64", "cvt_f2i", "cvt_f2i"])
            else:
                op = r.choice(["fmod", "fmod", "divmod_neg", "divmod_neg", "mix64", "mix64", "cvt_f2i",
                               "cvt_ff", "cvt_ff", "cvt_if", "nanprop", "nanprop", "nanprop"])
        self.features.add(op)
        d = depth - 1
        if op == "fmod":
            a, _ = self.expr(d, "f" if r.random() < 0.7 else None)
            if r.random() < 0.4:
                b = self.pick("2.5", "-2.5", "-0.5", "3.0", "-7.0", "1e-300", "0.0", "-0.0", "float32(-1.5)", "-3")
            else:
                b, _ = self.expr(d)
            return f"math.fmod({a}, {b})", "f"
        if op == "divmod_neg":
            a, ka = self.expr(d, want)
            if want == "i" or r.random() < 0.4:
                b = self.pick("-1", "-2", "-3", "-7", "-10", "int64(-5)", "int32(-4)", "-2147483648")
                if want != "i" and r.random() < 0.5:
                    b = f"({b} * {self.expr(d, 'i')[0]})"
                kb = "i"
            elif r.random() < 0.5:
                b, kb = self.pick("-2.5", "-0.5", "-3.0", "-0.0", "float32(-1.25)", "-1e-30", "-1e300"), "f"
            else:
                b, kb = f"(-{self.expr(d)[0]})", "f"
                a, ka = f"(-abs({a}))", ka
            return f"({a} {self.pick('//', '%')} {b})", self.join(ka, kb if want != "i" else "i")
        if op == "mix64":
            # int64 and float64 in one expression (numba: int64 op float64 -> float64; int64 op uint64 -> float64)
            a, _ = self.expr(d, "i")
            b, _ = self.expr(d, "f")
            t = self.pick("int64", "uint64", "int64", "int32")
            if want == "i":
                return f"({t}({a}) {self.pick('+', '-', '*', '//', '%')} {self.pick('ai64[i]', 'au64[m]', 'ai64[m]')})", "i"
            form = r.randint(0, 3)
            if form == 0:
                return f"({t}({a}) {self.pick('+', '-', '*', '/', '//', '%')} {b})", "f"
            if form == 1:
                return f"({b} {self.pick('+', '-', '*', '/')} {self.pick('ai64[i]', 'au64[i]', 'ai64[m]', 'au64[m]')})", "f"
            if form == 2:
                return f"(ai64[{self.pick('i', 'm', 'j')}] {self.pick('+', '-', '*', '//')} au64[{self.pick('i', 'm', 'j')}])", "f"
            return f"float64({t}({a}) * {self.pick('3', '-1', '1000003')} + {b})", "f"
        if op == "cvt_f2i":
            # float -> int at the edges (inf, NaN, huge, -0.0): PTX cvt.rzi saturates, NaN -> 0
            a, _ = self.expr(d, "f")
            t = self.pick("int32", "int64", "uint32", "uint64", "int64")
            return f"{t}({a})", "i"
        if op == "cvt_ff":
            a, _ = self.expr(d, "f")
            chain = self.pick("float32({a})", "float64(float32({a}))", "float32(float64({a}) * 3.0)",
                              "float64({a})", "float32({a}) * float32(2.0)", "float32(float32({a}) + float32(1e-45))")
            return chain.format(a=a), "f"
        if op == "cvt_if":
            a, _ = self.expr(d, "i")
            t = self.pick("int64", "uint64", "int32", "uint32")
            return f"{self.pick('float32', 'float64')}({t}({a}))", "f"
        if op == "nanprop":
            # operations that carry a NaN input's payload (or make a new NaN) on at least some threads
            a = self.pick("af32[m]", "af64[m]", "af32[i]", "af64[i]")
            b, _ = self.expr(d, "f")
            form = self.pick("({a} + {b})", "({b} * {a})", "({a} - {b})", "(-{a})", "abs({a})", "({a} / {b})",
                             "min({a}, {b})", "max({b}, {a})", "math.sqrt({a})", "math.copysign({a}, {b})",
                             "float64({a})", "float32({a})", "({a} * 0.0)", "math.fabs({a})", "math.fmod({a}, {b})",
                             "({a} if {a} != {a} else {b})", "({a} ** 2)", "({b} + 0.0 * {a})")
            return form.format(a=a, b=b), "f"
        if op == "arith":
            a, ka = self.expr(d, want)
            b, kb = self.expr(d, want)
            return f"({a} {self.pick('+', '-', '*')} {b})", self.join(ka, kb)
        if op == "bit":
            a, _ = self.expr(d, "i")
            b, _ = self.expr(d, "i")
            if r.random() < 0.5:     # int64 op uint64 has no bitwise typing in numba: same type both sides
                t = self.pick("int32", "int64", "uint32", "uint64")
                a, b = f"{t}({a})", f"{t}({b})"
            return f"({a} {self.pick('&', '|', '^')} {b})", "i"
        if op == "shift":
            a, _ = self.expr(d, "i")
            if r.random() < 0.5:
                s = str(r.choice([0, 1, 3, 7, 15, 31]))
            else:
                s = f"({self.expr(d, 'i')[0]} & {self.pick(7, 15, 31)})"
            return f"({a} {self.pick('<<', '>>')} {s})", "i"
        if op == "divmod":
            a, ka = self.expr(d, want)
            if r.random() < 0.6:
                b, kb = str(r.choice([1, 2, 3, 7, -1, -2, -7, 10])), "i"
                if want != "i" and r.random() < 0.3:
                    b, kb = self.pick("2.5", "-0.5", "3.0"), "f"
            else:
                b, kb = self.expr(d, want)
            self.features.add("divmod_var" if not b.lstrip("-").replace(".", "").isdigit() else "divmod_const")
            return f"({a} {self.pick('//', '%')} {b})", self.join(ka, kb)
        if op == "neg":
            a, ka = self.expr(d, want)
            return f"(-{a})", "i" if ka == "b" else ka
        if op == "abs":
            a, ka = self.expr(d, want)
            return f"abs({a})", "i" if ka == "b" else ka
        if op == "minmax":
            a, ka = self.expr(d, want)
            b, kb = self.expr(d, want)
            return f"{self.pick('min', 'max')}({a}, {b})", self.join(ka, kb)
        if op in ("cmp", "cmpneg"):
            a, ka = self.expr(d, want)
            b, kb = self.expr(d, want)
            c = f"({a} {self.pick('<', '<=', '>', '>=', '==', '!=')} {b})"
            if op == "cmpneg":
                return f"(-{c})", "i"
            return c, "b"
        if op == "pow":
            a, ka = self.expr(d, want)
            if ka == "f" or want != "i" and r.random() < 0.3:
                b = self.pick("2", "3", "0.5", "-1", "2.0", "-2")
                return f"({a} ** {b})", "f" if (ka == "f" or "." in b) else "i"
            b = self.pick("0", "1", "2", "3", "-1", "-2")
            self.features.add("ipow_neg" if b.startswith("-") else "ipow")
            return f"({a} ** {b})", "i"
        if op == "andor":
            a, ka = self.expr(d, want)
            b, kb = self.expr(d, want)
            return f"({a} {self.pick('and', 'or')} {b})", self.join(ka, kb, boolean=True)
        if op == "cond":
            c, _ = self.expr(d)
            a, ka = self.expr(d, want)
            b, kb = self.expr(d, want)
            return f"({a} if {c} else {b})", self.join(ka, kb, boolean=True)
        if op == "cast_i":
            a, _ = self.expr(d, "i")
            return f"{self.pick('int32', 'int64', 'uint32', 'uint64')}({a})", "i"
        if op == "cast_f":
            a, _ = self.expr(d)
            return f"{self.pick('float32', 'float64')}({a})", "f"
        if op == "math":
            a, _ = self.expr(d, "f")
            fn = self.pick("sqrt", "exp", "fabs", "sqrt")
            return f"math.{fn}({a})", "f"
        if op == "floor":
            # math.floor of a float is an int64 in numba: only of finite small values (cast of
            # NaN/inf to int is undefined), so clamp first
            a, _ = self.expr(d, "f")
            return f"math.floor(min(max({a}, -1e6), 1e6) if {a} == {a} else 0.0)", "i"
        if op == "truediv":
            a, _ = self.expr(d)
            b, _ = self.expr(d)
            return f"({a} / {b})", "f"
        if op == "round":
            a, _ = self.expr(d, "f")
            return f"round({a}, {self.pick(0, 1, 2, -1)})", "f"
        raise AssertionError(op)

    @staticmethod
    def join(ka, kb, boolean=False):
        if "f" in (ka, kb):
            return "f"
        if boolean and ka == kb == "b":
            return "b"
        return "i"

    # --- statements -----------------------------------------------------------------------------
    def devfn(self):
        """A device function of two arguments (sometimes calling a second one: nested)."""
        r = self.r
        n = len(self.devfns)
        name = f"d{self.idx:04d}_{n}"
        ops = ["({a} + {b})", "({a} * {b} - {a})", "min({a}, {b})", "max({a}, {b}) - {b}",
               "({a} if {a} > {b} else {b} + 1)", "abs({a} - {b})", "({a} - ({b} > {a}))", "(({a} > {b}) and {a})",
               "({a} * 3 + {b} * 2)", "({a} // 3 + {b} % 5)"]
        body = r.choice(ops)
        inner = ""
        if r.random() < 0.5:
            self.features.add("nested_devfn")
            sub = f"d{self.idx:04d}_{n}_in"
            self.devfns.append(f"@cuda.jit(device=True)\ndef {sub}(x, y):\n    return {r.choice(ops).format(a='x', b='y')}\n")
            inner = f"    t = {sub}(b, a)\n"
            body = body.format(a="a", b="t") if r.random() < 0.7 else body.format(a="t", b="b")
        else:
            body = body.format(a="a", b="b")
        self.devfns.append(f"@cuda.jit(device=True)\ndef {name}(a, b):\n{inner}    return {body}\n")
        return name

    def stmt(self, k):
        """Lines computing e<k> and its kind."""
        r = self.r
        name = f"e{k}"
        kind_roll = r.random()
        if kind_roll < 0.12:
            self.features.add("loop")
            if r.random() < 0.5:
                body, _ = self.expr(2, "i")
                n = self.pick("3", "(i % 5)", "4")
                lines = [f"s{k} = int64(0)", f"for t in range({n}):",
                         f"    s{k} = (s{k} * 3) ^ (int64({body}) + t)", f"{name} = s{k}"]
                return lines, "i"
            body, _ = self.expr(2)
            lines = [f"s{k} = 0.0", f"for t in range({self.pick('3', '(i % 4)')}):",
                     f"    s{k} = s{k} * 0.5 + float64({body})", f"{name} = s{k}"]
            return lines, "f"
        if kind_roll < 0.24:
            self.features.add("devfn")
            fn = self.devfn()
            want = self.pick(None, "i", "f")
            a, ka = self.expr(2, want)
            b, kb = self.expr(2, want)
            return [f"{name} = {fn}({a}, {b})"], self.join(ka, kb)
        if kind_roll < 0.36 and self.vars:
            self.features.add("shfl")
            v, kv = r.choice(self.vars)
            if kv == "b":
                v, kv = f"int32({v})", "i"
            fn = self.pick("shfl_down_sync", "shfl_xor_sync", "shfl_down_sync", "shfl_up_sync", "shfl_sync")
            delta = r.choice([0, 1, 2, 5, 16, 31, 32, 33, 40, -1, 63, 64])
            if fn == "shfl_sync":
                delta = f"(i * {r.choice([3, 5, 7])} + {r.choice([0, 1, 9])}) % 32"
            if not (isinstance(delta, int) and 0 <= delta <= 31):
                self.features.add("shfl_delta_out_of_range")
            return [f"{name} = cuda.{fn}(0xFFFFFFFF, {v}, {delta})"], kv
        want = self.pick(None, None, "i")
        e, kind = self.expr(r.randint(2, 4), want)
        return [f"{name} = {e}"], kind

    def kernel(self):
        r = self.r
        n = r.randint(3, 8)
        body = ["i = cuda.grid(1)", f"j = (i * {r.choice([7, 13, 37])} + {r.choice([1, 3, 5])}) % {L}"]
        if self.v2:
            body.append(f"m = (i * {r.choice([5, 11, 13])} + {r.choice([0, 2, 7])}) % 72")
        for k in range(n):
            lines, kind = self.stmt(k)
            body += lines
            self.vars.append((f"e{k}", kind))
        if r.random() < 0.6:
            self.features.add("atomic")
            v, _ = self.expr(2, "i")
            body.append(f"cuda.atomic.add(acc, i % 4, int64({v}))")
        for k in range(n):
            body.append(f"o{k}[i] = e{k}")
        name = f"k{self.idx:04d}"
        outs = ", ".join(f"o{k}" for k in range(n))
        src = f"def {name}({', '.join(INPUTS)}, acc, {outs}):\n" + "".join(f"    {ln}\n" for ln in body)
        grid, block = r.choice([(1, 32), (1, 64), (2, 32), (2, 64)])
        return name, src, n, grid, block


HEADER = '''"""Generated by validation/generated/gen.py (seed {seed}, kernels {lo}..{hi}); do not edit."""
import math

from numba import cuda, float32, float64, int32, int64, uint32, uint64  # noqa: F401

'''


_TYPING = {}


def _typing_compiler():
    """numba-cuda's CUDACompiler cut after type inference (the kernel's types without lowering or
    NVVM: campaign c2's 2,000 draws type in a fraction of a full compile).  Built once."""
    if "cls" in _TYPING:
        return _TYPING["cls"]
    from numba.cuda import compiler
    from numba.cuda.core.compiler import _EarlyPipelineCompletion
    from numba.cuda.core.compiler_machinery import FunctionPass, PassManager, register_pass

    @register_pass(mutates_CFG=False, analysis_only=True)
    class StashTypes(FunctionPass):
        _name = "simgpu_generated_stash_types"

        def __init__(self):
            FunctionPass.__init__(self)

        def run_pass(self, state):
            raise _EarlyPipelineCompletion((state.typemap, state.calltypes))

    class TypingOnly(compiler.CUDACompiler):
        def define_pipelines(self):
            full = compiler.CUDACompiler.define_pipelines(self)[0]
            pm = PassManager("cuda_typing_only")
            for impl, desc in full.passes:
                pm.add_pass(impl, desc)
                if impl.__name__ == "NopythonTypeInference":
                    break
            else:
                raise AssertionError("numba-cuda's pipeline has no NopythonTypeInference")
            pm.add_pass(StashTypes, "stash the types")
            pm.finalize()
            return [pm]

    _TYPING["cls"] = TypingOnly
    return TypingOnly


def out_types(name, src, devsrc, n, allow_f2i=False, typing_only=False):
    """numba-cuda's types for e0..e<n-1> (raises numba's error if the kernel does not compile).
    Without allow_f2i an explicit float -> int cast is refused (a redraw): campaign c1 kept them out.
    typing_only: type inference only (numba's typing errors, not its rare lowering ones)."""
    from simgpu._compat import patch_numpy_for_numba
    patch_numpy_for_numba()
    from numba import types
    from numba.cuda import compiler, dispatcher
    from simgpu.sass import toolchain
    ns = {}
    exec(HEADER.format(seed=0, lo=0, hi=0) + devsrc + "\n" + src, ns)
    argtys = [getattr(types, dt)[::1] for dt in IN_DTYPES] + [types.int64[::1]] + [types.float64[::1]] * n
    saved = dispatcher.get_current_device
    dispatcher.get_current_device = lambda: toolchain._TargetDevice((9, 0))
    try:
        if typing_only:
            from numba.cuda import utils as cuda_utils
            from numba.cuda.descriptor import cuda_target
            flags = compiler.CUDAFlags()
            flags.no_compile = True
            flags.no_cpython_wrapper = True
            flags.no_cfunc_wrapper = True
            flags.error_model = "numpy"
            flags.compute_capability = (9, 0)
            tctx = cuda_target.target_context
            with cuda_utils.numba_target_override():
                tm, calltypes = compiler.compile_extra(
                    cuda_target.typing_context, tctx, ns[name], tuple(argtys), types.void, flags, {},
                    pipeline_class=_typing_compiler(), call_conv=compiler.CUDACallConv(tctx), abi_info={})
        else:
            cres = compiler.compile_cuda(ns[name], types.void, tuple(argtys), cc=(9, 0))
            tm, calltypes = cres.type_annotation.typemap, cres.type_annotation.calltypes
    finally:
        dispatcher.get_current_device = saved
    for expr, sig in calltypes.items():
        # an explicit int32/int64/uint32/uint64(x) of a float x: undefined for NaN/inf/out of range
        if allow_f2i or getattr(expr, "op", None) != "call":
            continue
        fty = tm.get(expr.func.name)
        if (isinstance(fty, types.NumberClass) and sig is not None and len(sig.args) == 1
                and isinstance(sig.args[0], types.Float) and isinstance(sig.return_type, types.Integer)):
            raise ValueError(f"float-to-int cast {sig} (undefined for NaN/inf): redraw")
    res = []
    for k in range(n):
        t = types.unliteral(tm[f"e{k}"])      # e = 2: Literal[int](2) -> int64
        res.append("bool" if str(t) == "bool" else str(t))
    return res


def _gen_batch(job):
    """(batch file name, module text, redraw count, log lines) for kernels b0..b1-1."""
    b0, b1, batch, seed, types, campaign = job
    version = CAMPAIGNS[campaign][3]
    chunks, specs, devs, logs = [], [], [], []
    redrawn = 0
    for idx in range(b0, b1):
        for attempt in range(20):
            g = G(random.Random(f"{seed}/{idx}/{attempt}"), idx, version)
            name, src, nout, grid, block = g.kernel()
            devsrc = "\n\n".join(g.devfns)
            try:
                dts = (out_types(name, src, devsrc, nout, allow_f2i=version >= 2, typing_only=version >= 2)
                       if types else ["float64"] * nout)
                break
            except Exception as exc:  # noqa: BLE001 - numba refuses this draw: redraw
                redrawn += 1
                logs.append(f"  {name} attempt {attempt}: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
        else:
            raise RuntimeError(f"kernel {idx}: 20 draws refused by numba")
        devs.append(devsrc)
        chunks.append(src)
        specs.append(f"    dict(name={name!r}, fn={name}, grid={grid}, block={block}, out_dtypes={dts!r},\n"
                     f"         features={sorted(g.features)!r}),")
    text = HEADER.format(seed=seed, lo=b0, hi=b1 - 1)
    text += "\n\n".join(d for d in devs if d) + "\n\n" + "\n\n".join(chunks)
    text += "\n\nKERNELS = [\n" + "\n".join(specs) + "\n]\n"
    return f"batch_{b0 // batch:02d}.py", text, redrawn, logs


def generate(n=400, batch=50, seed=SEED, types=True, log=print, campaign="c1", jobs=1):
    """Write the campaign's batch modules and its package __init__ (jobs > 1: batches in parallel
    processes; the text does not depend on it)."""
    kdir = os.path.join(HERE, CAMPAIGNS[campaign][0])
    os.makedirs(kdir, exist_ok=True)
    work = [(b0, min(n, b0 + batch), batch, seed, types, campaign) for b0 in range(0, n, batch)]
    if jobs > 1:
        import multiprocessing as mp
        with mp.get_context("fork").Pool(jobs) as pool:
            results = pool.map(_gen_batch, work, chunksize=1)
    else:
        results = map(_gen_batch, work)
    redrawn = 0
    for fname, text, nred, logs in results:
        for ln in logs:
            log(ln)
        redrawn += nred
        path = os.path.join(kdir, fname)
        with open(path, "w") as f:
            f.write(text)
        log(f"wrote {path}")
    with open(os.path.join(kdir, "__init__.py"), "w") as f:
        f.write(f'"""Generated kernels (validation/generated/gen.py, campaign {campaign}, seed {seed}, {n} kernels)."""\n'
                f"CAMPAIGN = {campaign!r}\n"
                f"BATCHES = {[f'batch_{k:02d}' for k in range((n + batch - 1) // batch)]!r}\n")
    log(f"redrawn (numba refused the draw): {redrawn}")


def load_batches(campaign="c1"):
    """[(module name, KERNELS)] for every generated batch of a campaign (module names are
    "<package>.<batch>", importable with HERE on sys.path)."""
    import importlib
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    pkg_name = CAMPAIGNS[campaign][0]
    pkg = importlib.import_module(pkg_name)
    return [(f"{pkg_name}.{b}", importlib.import_module(f"{pkg_name}.{b}").KERNELS) for b in pkg.BATCHES]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--campaign", default="c1", choices=sorted(CAMPAIGNS))
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--batch", type=int, default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--no-types", action="store_true")
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    _, cseed, cn, _ = CAMPAIGNS[a.campaign]
    generate(a.n or cn, a.batch or (50 if a.campaign == "c1" else 100), a.seed or cseed, not a.no_types,
             campaign=a.campaign, jobs=a.jobs)
