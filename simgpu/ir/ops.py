"""The registry of IR ops: every op the frontend emits, in named groups.

Adding an op is one name here plus one row in each table that interprets the IR:
    type rule   simgpu/ir/infer.py      TYPE_RULES / TYPE_RULES_ANY
    semantics   simgpu/exec/ops.py      VALUE_OPS (values)  or  simgpu/exec/interp.py HANDLERS
    cost        simgpu/sass/costs.py    OPS (class, estimated SASS instructions)
tests/test_op_registry.py checks that every op has all three and that no table has an op
this registry does not list.
"""
from __future__ import annotations

ARITH = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "pos", "abs", "min", "max",
         "round", "fma", "cbrt", "math")
BITS = ("lshift", "rshift", "and", "or", "xor", "invert", "popc", "clz", "ffs", "brev")
COMPARE = ("lt", "le", "gt", "ge", "eq", "ne")
LOGIC = ("truth", "land", "lor", "not", "select")
MOVE = ("copy", "cast")
SREG = ("sreg", "grid", "gridsize", "activemask", "lanemask_lt")
ARRAY = ("shared_array", "local_array", "const_array", "dim", "size", "ndim")
MEMORY = ("ld", "st", "atomic")
SYNC = ("syncthreads", "syncwarp", "fence")
WARP = ("shfl", "vote")

GROUPS = {"arith": ARITH, "bits": BITS, "compare": COMPARE, "logic": LOGIC, "move": MOVE, "sreg": SREG,
          "array": ARRAY, "memory": MEMORY, "sync": SYNC, "warp": WARP}
ALL = frozenset(op for ops in GROUPS.values() for op in ops)


def group_of(op: str) -> str:
    return next(g for g, ops in GROUPS.items() if op in ops)
