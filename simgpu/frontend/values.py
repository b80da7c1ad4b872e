"""The values the frontend passes around while lowering (besides IR names and constants), and
the tables of names it recognises."""
from __future__ import annotations

from dataclasses import dataclass

SREGS = {"threadIdx": "tid", "blockIdx": "ctaid", "blockDim": "ntid", "gridDim": "nctaid"}
PURE_CALL_PREFIXES = ("math.", "cast.", "builtin.min", "builtin.max", "builtin.abs", "np.",
                      "cuda.popc", "cuda.clz", "cuda.ffs", "cuda.brev", "cuda.fma", "cuda.cbrt",
                      "cuda.grid", "cuda.gridsize", "cuda.threadIdx", "cuda.blockIdx",
                      "cuda.blockDim", "cuda.gridDim", "cuda.laneid", "cuda.warpsize")
NP_TO_MATH = {"sqrt": "sqrt", "exp": "exp", "log": "log", "sin": "sin", "cos": "cos", "tan": "tan",
              "tanh": "tanh", "abs": "fabs", "fabs": "fabs", "floor": "floor", "ceil": "ceil",
              "isnan": "isnan", "isinf": "isinf", "arctan2": "atan2", "exp2": "exp2", "log2": "log2",
              "log10": "log10", "power": "pow", "minimum": "min", "maximum": "max"}


@dataclass(frozen=True)
class Static:
    value: object


@dataclass(frozen=True)
class TupleVal:
    items: tuple


@dataclass(frozen=True)
class ShapeOf:
    array: str


@dataclass(frozen=True)
class ArrayMod:      # cuda.shared / cuda.local / cuda.const namespaces, cuda.atomic
    path: str
