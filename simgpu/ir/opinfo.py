"""What each IR op costs on the machine: its pipe (instruction class) and an estimate of
how many SASS instructions it becomes.  One row per op; the timing model and the
instruction counters read this table.

SASS estimates are first-order (documented in docs/design.md): numba's accurate libdevice
maths expands one call into a short routine, and multi-dimensional indexing adds integer
address arithmetic.
"""
from __future__ import annotations

from . import types as T

# op -> (class, sass instructions); class "float" resolves by the operand type
OPS = {
    "copy": ("move", 0), "truth": ("int", 0), "cast": ("conv", 1), "select": ("int", 1),
    "add": ("float", 1), "sub": ("float", 1), "mul": ("float", 1), "truediv": ("float", 8),
    "floordiv": ("float", 10), "mod": ("float", 10), "pow": ("sfu", 12),
    "lshift": ("int", 1), "rshift": ("int", 1), "and": ("int", 1), "or": ("int", 1), "xor": ("int", 1),
    "lt": ("float", 1), "le": ("float", 1), "gt": ("float", 1), "ge": ("float", 1), "eq": ("float", 1),
    "ne": ("float", 1), "land": ("int", 1), "lor": ("int", 1), "not": ("int", 1),
    "neg": ("float", 1), "pos": ("move", 0), "invert": ("int", 1), "abs": ("float", 1),
    "min": ("float", 1), "max": ("float", 1), "round": ("float", 2), "fma": ("float", 1),
    "cbrt": ("sfu", 10),
    "sreg": ("int", 1), "grid": ("int", 3), "gridsize": ("int", 1), "dim": ("move", 0),
    "size": ("move", 0), "ndim": ("move", 0),
    "ld": ("ldst", 1), "st": ("ldst", 1), "atomic": ("atomic", 1),
    "shared_array": ("move", 0), "local_array": ("move", 0), "const_array": ("move", 0),
    "syncthreads": ("barrier", 1), "syncwarp": ("barrier", 1), "fence": ("misc", 1),
    "shfl": ("shfl", 1), "vote": ("int", 1), "activemask": ("int", 1), "lanemask_lt": ("int", 1),
    "popc": ("int", 1), "clz": ("int", 2), "ffs": ("int", 2), "brev": ("int", 1),
}
# math functions: (class, sass instructions) for float32; float64 goes to the fp64 pipe
MATH = {
    "sqrt": ("sfu", 8), "exp": ("sfu", 10), "exp2": ("sfu", 4), "log": ("sfu", 12), "log2": ("sfu", 8),
    "log10": ("sfu", 12), "sin": ("sfu", 30), "cos": ("sfu", 30), "tan": ("sfu", 40), "tanh": ("sfu", 20),
    "erf": ("sfu", 20), "pow": ("sfu", 30), "floor": ("float", 1), "ceil": ("float", 1),
    "trunc": ("float", 1), "fabs": ("float", 1), "isnan": ("float", 1), "isinf": ("float", 2),
    "isfinite": ("float", 2),
}


def op_class(ins) -> str:
    """fp32 | fp64 | fp16 | int | sfu | ldst | atomic | barrier | shfl | conv | move | misc."""
    if ins.op == "math":
        cls, _ = MATH.get(ins.attrs["fn"], ("sfu", 20))
    else:
        cls, _ = OPS.get(ins.op, ("misc", 1))
    if cls == "float":
        tys = ins.arg_tys or ((ins.ty,) if ins.ty is not None else ())
        t = tys[0] if tys else None
        if t == T.FLOAT64:
            return "fp64"
        if t == T.FLOAT16:
            return "fp16"
        if t == T.FLOAT32:
            return "fp32"
        return "int"
    if cls == "sfu":
        tys = ins.arg_tys or ()
        if tys and tys[0] == T.FLOAT64:
            return "fp64"
    return cls


def sass_count(ins) -> int:
    """Estimated SASS instructions for one execution of `ins` by one warp."""
    if ins.op == "math":
        n = MATH.get(ins.attrs["fn"], ("sfu", 20))[1]
    else:
        n = OPS.get(ins.op, ("misc", 1))[1]
    if ins.op in ("ld", "st", "atomic"):
        nidx = len(ins.args) - (1 if ins.op == "ld" else 2)
        n += 2 * max(nidx, 1)                        # address arithmetic (IMAD/LEA) per index
    return n
