"""Seeded generator of small numba.cuda kernels that mix integer and float types.

    python validation/generated/gen.py [--n 400] [--batch 50] [--seed 20261130] [--no-types]

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
INPUTS = ("ai32", "ai64", "au32", "au64", "af32", "af64")
IN_DTYPES = ("int32", "int64", "uint32", "uint64", "float32", "float64")

# --- inputs -------------------------------------------------------------------------------------
_INT_EDGES = [0, 1, -1, 2, -2, 7, -7, 31, 32, 63, 64, 3, -3, 1000, -1000, 0x7FFF, 5, -5]
_F_EDGES = [0.0, -0.0, 1.0, -1.0, float("nan"), float("inf"), float("-inf"), 0.5, -0.5, 2.5, -2.5,
            1.5, 3.0, -7.0, 1e10, -1e10, 1e-40, 65504.0, 0.1, 100.25, 2.0 ** 31, -2.0 ** 63, 123456.789]


def make_inputs(seed=SEED):
    """The six input arrays (length L): edge values first (0, +-1, MIN, MAX, NaN, inf, -0.0, ...),
    then seeded random values."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, dt in zip(INPUTS, IN_DTYPES):
        d = np.dtype(dt)
        if d.kind in "iu":
            info = np.iinfo(d)
            edges = [info.min, info.max, info.min + 1, info.max - 1] + _INT_EDGES
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
            nrand = L - len(edges)
            r = rng.standard_normal(nrand) * np.exp(rng.uniform(-8, 12, nrand))
            vals = np.concatenate([np.array(edges, dtype=d), r.astype(d)])
        assert vals.shape == (L,), (name, vals.shape)
        out[name] = np.ascontiguousarray(vals.astype(d))
    return out


# --- expressions --------------------------------------------------------------------------------
class G:
    """One kernel's generator state.  Kinds: 'i' (integer), 'f' (float), 'b' (bool)."""

    def __init__(self, rnd, idx):
        self.r = rnd
        self.idx = idx
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
        self.features.add(op)
        d = depth - 1
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


def out_types(name, src, devsrc, n):
    """numba-cuda's types for e0..e<n-1> (raises numba's error if the kernel does not compile)."""
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
        cres = compiler.compile_cuda(ns[name], types.void, tuple(argtys), cc=(9, 0))
    finally:
        dispatcher.get_current_device = saved
    tm = cres.type_annotation.typemap
    for expr, sig in cres.type_annotation.calltypes.items():
        # an explicit int32/int64/uint32/uint64(x) of a float x: undefined for NaN/inf/out of range
        if getattr(expr, "op", None) != "call":
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


def generate(n=400, batch=50, seed=SEED, types=True, log=print):
    os.makedirs(KDIR, exist_ok=True)
    redrawn = 0
    for b0 in range(0, n, batch):
        chunks, specs, devs = [], [], []
        for idx in range(b0, min(n, b0 + batch)):
            for attempt in range(20):
                g = G(random.Random(f"{seed}/{idx}/{attempt}"), idx)
                name, src, nout, grid, block = g.kernel()
                devsrc = "\n\n".join(g.devfns)
                try:
                    dts = out_types(name, src, devsrc, nout) if types else ["float64"] * nout
                    break
                except Exception as exc:  # noqa: BLE001 - numba refuses this draw: redraw
                    redrawn += 1
                    log(f"  {name} attempt {attempt}: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
            else:
                raise RuntimeError(f"kernel {idx}: 20 draws refused by numba")
            devs.append(devsrc)
            chunks.append(src)
            specs.append(f"    dict(name={name!r}, fn={name}, grid={grid}, block={block}, out_dtypes={dts!r},\n"
                         f"         features={sorted(g.features)!r}),")
        text = HEADER.format(seed=seed, lo=b0, hi=min(n, b0 + batch) - 1)
        text += "\n\n".join(d for d in devs if d) + "\n\n" + "\n\n".join(chunks)
        text += "\n\nKERNELS = [\n" + "\n".join(specs) + "\n]\n"
        path = os.path.join(KDIR, f"batch_{b0 // batch:02d}.py")
        with open(path, "w") as f:
            f.write(text)
        log(f"wrote {path}")
    with open(os.path.join(KDIR, "__init__.py"), "w") as f:
        f.write(f'"""Generated kernels (validation/generated/gen.py, seed {seed}, {n} kernels)."""\n'
                f"BATCHES = {[f'batch_{k:02d}' for k in range((n + batch - 1) // batch)]!r}\n")
    log(f"redrawn (numba refused the draw): {redrawn}")


def load_batches():
    """[(module name, KERNELS)] for every generated batch."""
    import importlib
    sys.path.insert(0, HERE)
    pkg = importlib.import_module("gen_kernels")
    return [(b, importlib.import_module(f"gen_kernels.{b}").KERNELS) for b in pkg.BATCHES]


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--no-types", action="store_true")
    a = ap.parse_args()
    generate(a.n, a.batch, a.seed, not a.no_types)
