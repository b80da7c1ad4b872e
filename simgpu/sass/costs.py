"""What each IR op costs on the machine (the IR executor's estimate; the compiled path reads
ptxas's own SASS instead): its class, an estimate of how many SASS instructions
it becomes, which pipes those instructions use and how many FLOPs it does.  One row per op;
the timing model and the instruction counters read these tables.

SASS estimates are first-order (documented in docs/timing.md, "Instruction costs"):
  * numba's accurate libdevice maths expands one call into a short routine; MATH_MIX gives
    the routine's mix of pipes (FP32 FMA pipe, integer ALU, conversions, MUFU).  The mixes of
    sin and exp come from the SASS of the issue-rate microbenchmarks
    (validation/microbench, mb_sin_f32 / mb_exp_f32), the others from the same libdevice
    routines' structure (polynomial + range reduction).
  * a multiply whose only use is an add or subtract of the same kind is contracted into one
    FMA / IMAD, as NVVM does by default (``contract(fn)`` marks it; the mul then costs 0).
  * casts of constants and integer-to-integer casts are free (folded or absorbed by the
    compiler); float <-> int and float32 <-> float64 conversions use the conversion pipe.
  * integer multiplies (and adds a multiply was contracted into) are IMADs, on the half-rate
    FMA-heavy pipe; integer adds go to the ALU or the FMA-heavy pipe, whichever is free;
    logic, compares, selects and shifts to the half-rate ALU pipe.
  * global/local array indexing adds one integer instruction per access for the 64-bit
    address (the compiler hoists and strength-reduces the row part of multi-dimensional
    indices); shared-memory accesses add none (LDS/STS take register + immediate offsets).
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.nodes import Const

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
# a math function without a row: a libdevice routine of about 20 SASS around one MUFU
DEFAULT_MATH_COST = ("sfu", 20)
# math functions: (class, sass instructions) for float32; float64 goes to the fp64 pipe
MATH = {
    "sqrt": ("sfu", 8), "exp": ("sfu", 8), "exp2": ("sfu", 4), "log": ("sfu", 12), "log2": ("sfu", 8),
    "log10": ("sfu", 12), "sin": ("sfu", 25), "cos": ("sfu", 25), "tan": ("sfu", 40), "tanh": ("sfu", 20),
    "erf": ("sfu", 20), "pow": ("sfu", 30), "floor": ("float", 1), "ceil": ("float", 1),
    "trunc": ("float", 1), "fabs": ("float", 1), "isnan": ("float", 1), "isinf": ("float", 2),
    "isfinite": ("float", 2),
}
# pipes of a libdevice routine (float32): {pipe: instructions}; sums equal MATH's counts.
# sin/cos: [MB issue_sin_f32] 24.6 SASS per call: 13.4 on the FMA pipes (FFMA/FMUL/FADD/FSEL,
# IMAD.MOV), 7.1 on the ALU (LOP3/ISETP/SHF/IADD3), 1.0 on XU (F2I/I2F), the rest branches
# (BSSY/BSYNC/BRA around the slow path).  No MUFU in the accurate path.
# exp: [MB issue_exp_f32] 8.2 SASS per call: 6.0 FMA-pipe (FFMA.SAT, FFMA.RM, FADD, FMUL), 1.1
# ALU (SHL), 1.0 XU (MUFU.EX2).
MATH_MIX = {
    "sin": {"fp32": 14, "int": 7, "conv": 1, "branch": 3},
    "cos": {"fp32": 14, "int": 7, "conv": 1, "branch": 3},
    "tan": {"fp32": 26, "int": 9, "conv": 2, "sfu": 2, "branch": 1},
    "exp": {"fp32": 6, "int": 1, "sfu": 1},
    "exp2": {"fp32": 2, "int": 1, "sfu": 1},
    "log": {"fp32": 8, "int": 3, "sfu": 1},
    "log2": {"fp32": 5, "int": 2, "sfu": 1},
    "log10": {"fp32": 8, "int": 3, "sfu": 1},
    "sqrt": {"fp32": 4, "int": 2, "sfu": 1, "branch": 1},
    "tanh": {"fp32": 15, "int": 3, "sfu": 2},
    "erf": {"fp32": 16, "int": 3, "sfu": 1},
    "pow": {"fp32": 20, "int": 7, "sfu": 2, "branch": 1},
}
# true division and floor division / modulo of floats: MUFU.RCP + Newton FFMAs + a check
DIV_MIX = {"truediv": {"fp32": 5, "int": 2, "sfu": 1}, "floordiv": {"fp32": 6, "int": 3, "sfu": 1},
           "mod": {"fp32": 6, "int": 3, "sfu": 1}}
# FLOPs per thread: add/sub/mul 1, fma 2 (a contracted mul counts its own 1); math calls 1
FLOP_OPS = {"add": 1, "sub": 1, "mul": 1, "truediv": 1, "fma": 2, "neg": 0, "min": 0, "max": 0}
PIPES = ("fp32", "fp64", "int", "imad", "iadd", "sfu", "conv", "lsu", "shfl", "branch", "barrier")
# "int" is the integer ALU pipe (LOP3, ISETP, SEL, SHF, IADD3), "imad" the FMA-heavy pipe's
# integer side (IMAD, IMAD.WIDE); "iadd" is an add or move ptxas may put on either (IADD3 or
# IMAD.IADD, MOV or IMAD.MOV): the simulator gives it to whichever is free first.


def _float_type(ins):
    tys = ins.arg_tys or ((ins.ty,) if ins.ty is not None else ())
    return tys[0] if tys else None


def op_class(ins) -> str:
    """fp32 | fp64 | fp16 | int | sfu | ldst | atomic | barrier | shfl | conv | move | misc."""
    if ins.op == "math":
        cls, _ = MATH.get(ins.attrs["fn"], DEFAULT_MATH_COST)
    else:
        cls, _ = OPS.get(ins.op, ("misc", 1))
    if cls == "float":
        t = _float_type(ins)
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


def _free_cast(ins):
    if ins.op != "cast":
        return False
    if ins.args and isinstance(ins.args[0], Const):
        return True                                  # folded constant
    src = ins.arg_tys[0] if ins.arg_tys else None
    dst = ins.ty
    return src is not None and dst is not None and not T.is_float(src) and not T.is_float(dst)


def _int_division(ins):
    """Integer // or %: by a constant it becomes shifts or a multiply-high (3 SASS), by a
    variable a reciprocal-based routine (I2F, MUFU.RCP, F2I, IMADs and fix-ups: 15)."""
    if ins.op not in ("floordiv", "mod") or op_class(ins) != "int":
        return None
    return 3 if len(ins.args) > 1 and isinstance(ins.args[1], Const) else 15


def sass_count(ins) -> int:
    """Estimated SASS instructions for one execution of `ins` by one warp."""
    if ins.attrs.get("contracted"):
        return 0
    if _free_cast(ins):
        return 0
    d = _int_division(ins)
    if d is not None:
        return d
    if ins.op == "math":
        n = MATH.get(ins.attrs["fn"], DEFAULT_MATH_COST)[1]
    else:
        n = OPS.get(ins.op, ("misc", 1))[1]
    if ins.op in ("ld", "st", "atomic"):
        n += _address_cost(ins)
    return n


WRAP = 5        # numba's negative-index wrap-around per signed index (SHF, LOP3, IADD3, IMAD.X, LEA.HI.X)


ROW_MUL = 4     # a 64-bit index times a 64-bit stride: IMAD, IMAD, IMAD.WIDE.U32, IMAD.IADD


def _address_parts(ins):
    """{pipe: SASS} forming a global/local address, from the microbenchmarks' SASS: LEA +
    LEA.HI.X scale and add the base ([MB] gran_read_stride*: 2 per access); each further
    dimension adds its 64-bit offset (IADD3 + IMAD.X), and a row index that changes in the
    loop is multiplied by its 64-bit stride ([MB2] bcast2, B[k, col]: IMAD, IMAD,
    IMAD.WIDE.U32, IMAD.IADD per iteration; rows the loop does not change are hoisted).
    Shared arrays: constant strides fold into LDS/STS offsets, nothing."""
    if _space(ins) == "shared":
        return {}
    nidx = ins.attrs.get("nidx_addr", 1)
    rows = ins.attrs.get("vary_rows", nidx - 1)
    parts = {"int": 2}
    if nidx > 1:
        parts["iadd"] = 2 * (nidx - 1) + rows
        parts["imad"] = (ROW_MUL - 1) * rows
    return parts


def _address_cost(ins):
    """Integer SASS to form the address (_address_parts) and WRAP per index that may be
    negative ([MB] mb_chase vs mb_chaseu: a signed index costs 10 SASS per access, an
    unsigned one 2)."""
    return sum(_address_parts(ins).values()) + WRAP * ins.attrs.get("wrap_dims", 0)


def _space(ins):
    return ins.attrs.get("space")


def pipe_mix(ins) -> dict:
    """{pipe: SASS instructions} for one warp executing `ins` once (sums to sass_count)."""
    n = sass_count(ins)
    if n == 0:
        return {}
    cls = op_class(ins)
    if _int_division(ins) == 15:
        return {"int": 12, "conv": 2, "sfu": 1}
    if ins.op == "math" and cls != "fp64":
        mix = MATH_MIX.get(ins.attrs["fn"])
        if mix:
            return dict(mix)
        return {"fp32": n} if MATH.get(ins.attrs["fn"], ("sfu",))[0] == "float" else {"sfu": 1, "fp32": n - 1}
    if ins.op in DIV_MIX and cls == "fp32":
        return dict(DIV_MIX[ins.op])
    if ins.op in ("ld", "st", "atomic"):
        wrap = WRAP * ins.attrs.get("wrap_dims", 0)
        mix = {"lsu": 1}
        for p, k in _address_parts(ins).items():
            if k:
                mix[p] = mix.get(p, 0) + k
        if wrap:
            mix["int"] = mix.get("int", 0) + wrap
        return mix
    if cls == "int" and (ins.op == "mul" or ins.attrs.get("fma")):
        return {"imad": n}                        # IMAD: the FMA-heavy pipe, half rate
    if cls == "int" and ins.op in ("add", "sub", "neg"):
        return {"iadd": n}                        # IADD3 on the ALU or IMAD.IADD on the FMA pipe
    pipe = {"fp32": "fp32", "fp16": "fp32", "fp64": "fp64", "int": "int", "sfu": "sfu", "conv": "conv",
            "shfl": "shfl", "barrier": "barrier", "misc": "int", "move": "int", "ldst": "lsu",
            "atomic": "lsu"}.get(cls, "int")
    return {pipe: n}


def flops(ins) -> int:
    """Floating-point operations per thread for one execution (an FMA counts two)."""
    cls = op_class(ins)
    if cls not in ("fp32", "fp64", "fp16"):
        return 0
    if ins.op == "math":
        return 1
    return FLOP_OPS.get(ins.op, 0)


__all__ = ["OPS", "MATH", "MATH_MIX", "PIPES", "op_class", "sass_count", "pipe_mix", "flops"]
