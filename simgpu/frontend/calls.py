"""Lowering of calls: numba.cuda intrinsics, math, casts, builtins and device functions."""
from __future__ import annotations

import ast
import difflib


import numpy as np

from ..ir.nodes import Call, Const, Instr
from ..ir import types as T
from .resolve import DeviceFunction, Intrinsic
from .values import NP_TO_MATH, Static, TupleVal

MATH_FUNCS = {"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
              "atanh", "exp", "expm1", "exp2", "log", "log1p", "log2", "log10", "sqrt", "pow", "atan2",
              "hypot", "floor", "ceil", "trunc", "fabs", "erf", "erfc", "gamma", "lgamma", "isnan",
              "isinf", "isfinite", "copysign", "fmod", "ldexp", "frexp", "modf", "radians", "degrees",
              "remainder"}
ATOMICS = {"add", "sub", "max", "min", "exch", "and_", "or_", "xor", "inc", "dec", "nanmax", "nanmin",
           "cas", "compare_and_swap"}
SIMPLE_INTRINSICS = {   # path -> (op, n_args)
    "cuda.popc": ("popc", 1), "cuda.clz": ("clz", 1), "cuda.ffs": ("ffs", 1), "cuda.brev": ("brev", 1),
    "cuda.fma": ("fma", 3), "cuda.cbrt": ("cbrt", 1), "cuda.activemask": ("activemask", 0),
    "cuda.lanemask_lt": ("lanemask_lt", 0), "cuda.selp": ("select", 3),
}
SHFL = {"cuda.shfl_sync": "idx", "cuda.shfl_up_sync": "up", "cuda.shfl_down_sync": "down",
        "cuda.shfl_xor_sync": "xor"}
VOTE = {"cuda.ballot_sync": "ballot", "cuda.all_sync": "all", "cuda.any_sync": "any", "cuda.eq_sync": "eq"}
SYNC = {"cuda.syncthreads": None, "cuda.syncthreads_count": "count", "cuda.syncthreads_and": "and",
        "cuda.syncthreads_or": "or"}
FENCES = {"cuda.threadfence", "cuda.threadfence_block", "cuda.threadfence_system"}


def _static_int(lw, v, node, what):
    if isinstance(v, Const) and isinstance(v.value, (int, np.integer)):
        return int(v.value)
    if isinstance(v, Static) and isinstance(v.value, (int, np.integer)):
        return int(v.value)
    shown = ast.unparse(node) if isinstance(node, ast.AST) else "it"
    why = ""
    if isinstance(node, ast.Name) and node.id in lw.locals:
        param = node.id in {a.arg for a in lw.fn_node.args.args}
        why = (f": {node.id!r} is a kernel argument, known only when the kernel runs" if param else
               f": {node.id!r} is a variable, computed when the kernel runs")
    raise lw.err(node, f"{what} must be a constant known when the kernel is compiled, not `{shown}`{why}",
                 "use a literal or a module-level constant (TPB = 16 at module level, then "
                 "cuda.shared.array(TPB, float32)); for a shared size chosen at launch use "
                 "cuda.shared.array(0, float32) and kernel[grid, block, 0, nbytes] (compiled path)")


_FOLD = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
         ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b, ast.Pow: lambda a, b: a ** b,
         ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b}


def _fold(lw, node):
    """Constant-fold an integer expression over literals and module constants (None if not)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, (ast.Name, ast.Attribute)):
        v = lw.expr_static_or_none(node)
        if isinstance(v, Static) and isinstance(v.value, (int, np.integer)):
            return int(v.value)
        return None
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLD:
        a, b = _fold(lw, node.left), _fold(lw, node.right)
        return None if a is None or b is None else _FOLD[type(node.op)](a, b)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        a = _fold(lw, node.operand)
        return None if a is None else -a
    return None


def _shape(lw, node):
    items = node.elts if isinstance(node, ast.Tuple) else [node]
    folded = [_fold(lw, e) for e in items]
    if all(f is not None for f in folded):
        return tuple(folded)
    v = lw.expr(node)
    if isinstance(v, Static) and isinstance(v.value, tuple):
        return tuple(int(x) for x in v.value)
    if isinstance(v, TupleVal):
        return tuple(_static_int(lw, x, node, "an array dimension") for x in v.items)
    return (_static_int(lw, v, node, "an array shape"),)


def _dtype(lw, node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        name = node.value
    else:
        v = lw.expr(node)
        if not (isinstance(v, Static) and isinstance(v.value, Intrinsic) and v.value.path.startswith("cast.")):
            raise lw.err(node, "dtype must be a numba or numpy type such as float32")
        name = v.value.path[5:]
    try:
        return T.from_numpy(np.dtype("bool" if name == "boolean" else name))
    except TypeError:
        raise lw.err(node, f"unknown dtype {name!r}") from None


def _args(call, names):
    """Positional and keyword arguments of a call, by parameter name."""
    out = dict(zip(names, call.args))
    for kw in call.keywords:
        out[kw.arg] = kw.value
    return out


def _sc(lw, a):
    return lw.scalar(lw.expr(a), a)


def _lower_grid(lw, node, path):
    if len(node.args) != 1:
        raise lw.err(node, f"{path}() takes the number of dimensions (1, 2 or 3)",
                     f"i = {path}(1) for a 1-d grid; x, y = {path}(2) for a 2-d one")
    nd = _static_int(lw, lw.expr(node.args[0]), node, f"{path}(ndim)")
    if nd not in (1, 2, 3):
        raise lw.err(node, f"{path}() takes 1, 2 or 3, not {nd}")
    op = "grid" if path == "cuda.grid" else "gridsize"
    comps = tuple(lw.emit(op, [], node, dim=k) for k in range(nd))
    return comps[0] if nd == 1 else TupleVal(comps)


def _lower_array(lw, node, path):
    a = _args(node, ["shape", "dtype"])
    if "shape" not in a or "dtype" not in a:
        missing = "the dtype" if "shape" in a else "the shape" if "dtype" in a else "the shape and the dtype"
        raise lw.err(node, f"`{ast.unparse(node)}` is missing {missing}: {path}(shape, dtype) needs both",
                     f"e.g. {path}(16, numba.float32) (from numba import float32)")
    shape, dtype = _shape(lw, a["shape"]), _dtype(lw, a["dtype"])
    if any(s <= 0 for s in shape):
        raise lw.err(node, f"{path} shape {shape} must have positive dimensions",
                     "dynamic shared memory (shape 0) is not supported yet")
    space = "shared" if "shared" in path else "local"
    key = f"{lw.prefix}{space}@{node.lineno}:{node.col_offset}"
    (lw.fn.shared if space == "shared" else lw.fn.local)[key] = (shape, dtype)
    return lw.emit(f"{space}_array", [], node, key=key, shape=shape, dtype=dtype)


def _lower_const_array(lw, node, path):
    v = lw.expr(node.args[0])
    if not (isinstance(v, Static) and isinstance(v.value, np.ndarray)):
        raise lw.err(node, "cuda.const.array_like() needs a numpy array defined outside the kernel")
    return lw.const_array(v.value, node)


def _lower_atomic(lw, node, path):
    fn = path.split(".")[-1]
    if fn not in ATOMICS:
        raise lw.err(node, f"cuda.atomic.{fn} does not exist")
    if fn == "compare_and_swap":
        arr, old, val = (node.args + [None] * 3)[:3]
        return lw.emit("atomic", [lw.array_operand(arr), _sc(lw, old), _sc(lw, val), Const(0, T.INT64)],
                       node, fn="cas", nidx=1)
    if fn == "cas":
        if len(node.args) != 4:
            raise lw.err(node, "cuda.atomic.cas(array, index, old, value)")
        arr, idx, old, val = node.args
        ix = lw.index(idx)
        return lw.emit("atomic", [lw.array_operand(arr), _sc(lw, old), _sc(lw, val), *ix], node, fn="cas",
                       nidx=len(ix))
    if len(node.args) != 3:
        raise lw.err(node, f"cuda.atomic.{fn}(array, index, value)")
    arr, idx, val = node.args
    ix = lw.index(idx)
    return lw.emit("atomic", [lw.array_operand(arr), _sc(lw, val), *ix], node, fn=fn.rstrip("_"), nidx=len(ix))


def _lower_sync(lw, node, path):
    if SYNC[path] is None:
        return lw.emit("syncthreads", [], node)
    if len(node.args) != 1:
        raise lw.err(node, f"{path}(predicate)")
    return lw.emit("syncthreads", [_sc(lw, node.args[0])], node, reduce=SYNC[path])


def _lower_syncwarp(lw, node, path):
    m = _sc(lw, node.args[0]) if node.args else Const(0xFFFFFFFF, T.INT64)
    return lw.emit("syncwarp", [m], node, dst=None)      # no value (the IR verifier wants none)


def _lower_fence(lw, node, path):
    return lw.emit("fence", [], node, scope=path.split("_")[-1])


def _lower_shfl(lw, node, path):
    if len(node.args) != 3:
        raise lw.err(node, f"{path}(mask, value, {'src_lane' if SHFL[path] == 'idx' else 'delta'})")
    return lw.emit("shfl", [_sc(lw, a) for a in node.args], node, mode=SHFL[path])


def _lower_vote(lw, node, path):
    if len(node.args) != 2:
        raise lw.err(node, f"{path}(mask, predicate)")
    return lw.emit("vote", [_sc(lw, a) for a in node.args], node, mode=VOTE[path])


def _lower_simple(lw, node, path):
    op, n = SIMPLE_INTRINSICS[path]
    if len(node.args) != n:
        raise lw.err(node, f"{path}() takes {n} argument(s)")
    return lw.emit(op, [_sc(lw, a) for a in node.args], node)


def _lower_math(lw, node, path):
    name = path.split(".", 1)[1]
    if path.startswith("np."):
        if name not in NP_TO_MATH:
            if name in ("zeros", "ones", "empty", "full", "array", "arange", "zeros_like", "empty_like",
                        "ones_like"):
                raise lw.err(node, f"`{ast.unparse(node)}` allocates an array: kernels cannot allocate "
                                   "memory with numpy",
                             "for a per-thread array use cuda.local.array(n, float32), for one per block "
                             "cuda.shared.array(n, float32); allocate big arrays on the host and pass them in")
            raise lw.err(node, f"numpy.{name} cannot be used inside kernels",
                         "kernels can call math functions (math.sqrt, ...) and numpy's elementwise "
                         "ones (np.sqrt, np.exp, ...) on single numbers")
        name = NP_TO_MATH[name]
        if name in ("min", "max"):      # np.minimum/np.maximum: a NaN operand wins
            return _minmax(lw, name, [_sc(lw, a) for a in node.args], node, numpy=True)
    if name not in MATH_FUNCS:
        raise lw.err(node, f"math.{name} is not supported by numba.cuda")
    return lw.emit("math", [_sc(lw, a) for a in node.args], node, fn=name)


def _lower_cast(lw, node, path):
    if len(node.args) != 1:
        raise lw.err(node, f"{path[5:]}() takes one argument")
    to = path[5:]
    ty = T.BOOL if to == "boolean" else T.from_numpy(np.dtype(to))
    return lw.emit("cast", [_sc(lw, node.args[0])], node, to=ty)


def _lower_minmax(lw, node, path):
    args = [_sc(lw, a) for a in node.args]
    if len(args) < 2:
        raise lw.err(node, f"{path[8:]}() of one value: pass two or more numbers")
    return _minmax(lw, path[8:], args, node, nargs=len(args))


def _lower_round(lw, node, path):
    if not 1 <= len(node.args) <= 2 or node.keywords:
        raise lw.err(node, "round() takes a number and, optionally, the number of digits")
    return lw.emit("round", [_sc(lw, a) for a in node.args], node)


def _lower_len(lw, node, path):
    return lw.emit("dim", [lw.array_operand(node.args[0]), Const(0, T.INT64)], node)


def _lower_builtin(op, first_only=False):
    def lower(lw, node, path):
        args = node.args[:1] if first_only else node.args
        return lw.emit(op, [_sc(lw, a) for a in args], node)
    return lower


# intrinsic path -> lowerer(lw, node, path); prefixes are tried after exact paths
LOWER_BY_PATH = {
    "cuda.grid": _lower_grid, "cuda.gridsize": _lower_grid,
    "cuda.shared.array": _lower_array, "cuda.local.array": _lower_array,
    "cuda.const.array_like": _lower_const_array,
    "cuda.syncwarp": _lower_syncwarp,
    "builtin.min": _lower_minmax, "builtin.max": _lower_minmax,
    "builtin.abs": _lower_builtin("abs", first_only=True),
    "builtin.pow": _lower_builtin("pow"),
    "builtin.round": _lower_round,
    "builtin.len": _lower_len,
    **{p: _lower_sync for p in SYNC}, **{p: _lower_fence for p in FENCES},
    **{p: _lower_shfl for p in SHFL}, **{p: _lower_vote for p in VOTE},
    **{p: _lower_simple for p in SIMPLE_INTRINSICS},
}
LOWER_BY_PREFIX = (("cuda.atomic.", _lower_atomic), ("math.", _lower_math), ("np.", _lower_math),
                   ("cast.", _lower_cast))


def lower_call(lw, node):
    """Lower a call: a device function is inlined; an intrinsic goes to its lowerer by path."""
    f = lw.expr(node.func)
    if isinstance(f, Static) and isinstance(f.value, DeviceFunction):
        return inline(lw, f.value.py_func, node)
    if not (isinstance(f, Static) and isinstance(f.value, Intrinsic)):
        fn = node.func
        if isinstance(fn, ast.Attribute) and fn.attr in ("size", "shape", "ndim"):
            raise lw.err(node, f"`{ast.unparse(node)}` calls {ast.unparse(fn)}, which is a number, not a "
                               "function", f"drop the parentheses: {ast.unparse(fn)}")
        raise lw.err(node, f"`{ast.unparse(node)}` calls {ast.unparse(fn)}, which is not a function "
                           "kernels can call",
                     "kernels can call numba.cuda intrinsics, math functions, casts (float32(x)) and "
                     "device functions (@cuda.jit(device=True))")
    path = f.value.path
    lower = LOWER_BY_PATH.get(path)
    if lower is None:
        lower = next((fn for prefix, fn in LOWER_BY_PREFIX if path.startswith(prefix)), None)
    if lower is None:
        name = path.replace('builtin.', '')
        known = [p for p in (*LOWER_BY_PATH, *SIMPLE_INTRINSICS) if p.startswith("cuda.")]
        near = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        if near:
            raise lw.err(node, f"{name}() does not exist in numba.cuda", f"did you mean {near[0]}()?")
        raise lw.err(node, f"{name}() is not supported inside kernels")
    return lower(lw, node, path)


def _minmax(lw, which, args, node, **attrs):
    r = args[0]
    for a in args[1:]:
        r = lw.emit(which, [r, a], node, **attrs)
    return r


def inline(lw, py_func, node):
    """Inline a device function: bind arguments to fresh names, lower its body in a Call region."""
    if py_func in lw.inline_stack:
        raise lw.err(node, f"recursive call of {py_func.__name__!r}: device functions cannot recurse")
    if node.keywords:
        raise lw.err(node, "pass device-function arguments by position")
    lw.fn.__dict__.setdefault("_ninline", 0)
    lw.fn._ninline += 1
    prefix = f"{py_func.__name__}{lw.fn._ninline}."
    sub = type(lw)(py_func, prefix=prefix, inline_stack=lw.inline_stack, fn_ir=lw.fn)
    sub.record_lines()
    params = [a.arg for a in sub.fn_node.args.args]
    if len(params) != len(node.args):
        raise lw.err(node, f"{py_func.__name__}() takes {len(params)} arguments, got {len(node.args)}")
    args = []
    for a in node.args:
        v = lw.expr(a)
        args.append(v if isinstance(v, str) else lw.scalar(v, a))
    ret = lw.new("ret")
    body = []
    for p, v in zip(params, args):
        body.append(Instr("copy", sub.var(p), (v,), lw.loc(node), {}))
    sub.out = body
    for st in sub.fn_node.body:
        sub.stmt(st)
    lw.out.append(Call(py_func.__name__, body, ret, lw.loc(node)))
    return ret
