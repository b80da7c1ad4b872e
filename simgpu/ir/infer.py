"""Type inference: numba's unification over the whole function, per launch signature.

Like numba, a variable has one type: the unification of every value assigned to it
(acc = 0 then acc += x[i] with float32 x makes acc float64).  Instructions are typed in
program order and the pass repeats until nothing changes.
"""
from __future__ import annotations

import math


from ..errors import TypingError
from . import types as T
from .nodes import Call, Const, Instr, Loop, own_returns, walk

INT_OPS_ONLY = {"popc", "clz", "ffs", "brev"}


def _ty(env, v):
    if isinstance(v, Const):
        return v.ty if v.ty is not None else T.typeof_value(v.value)
    return env.get(v)


_OP_WORDS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
             "pow": "**", "neg": "unary -", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==",
             "ne": "!=", "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
             "min": "min()", "max": "max()", "abs": "abs()", "cast": "a cast", "truth": "a condition",
             "select": "a conditional expression", "copy": "an assignment"}


def _user_name(v):
    """The user's name for an IR value ('k.x' -> 'x'), or None for a temporary."""
    if not isinstance(v, str) or "%" in v:
        return None
    return v.split(".")[-1]


def _need_scalar(t, ins, what="operand", arg=None):
    if isinstance(t, T.ArrayType):
        name = _user_name(ins.args[arg]) if arg is not None and arg < len(ins.args) else None
        who = f"{name!r} is a whole array" if name else "a whole array is used"
        if ins.op == "st":
            target = _user_name(ins.args[0]) or "out"
            raise TypingError(f"{who}, stored into one element of {target!r}: an element holds one number",
                              ins.loc, f"store one element at a time: {target}[i] = "
                              f"{name or 'a'}[i]")
        op = (f"math.{ins.attrs.get('fn')}()" if ins.op == "math" else
              _OP_WORDS.get(ins.op, repr(ins.op)))
        raise TypingError(f"{who} where {op} needs a number: kernels have no whole-array arithmetic, "
                          "each thread computes single elements", ins.loc,
                          f"index it: {name or 'a'}[i], with i = cuda.grid(1) (one element per thread)")


def _scalars(ins, tys):
    for k, t in enumerate(tys):
        _need_scalar(t, ins, arg=k)


def _rule_array_alloc(ins, tys, env):
    return T.ArrayType(ins.attrs["dtype"], len(ins.attrs["shape"]), ins.op.split("_")[0])


def _rule_logic(ins, tys, env):
    _scalars(ins, tys)
    ins.arg_tys = tuple(tys)
    return T.BOOL


def _rule_binop(ins, tys, env):
    _scalars(ins, tys)
    args, ret = T.binop_type(ins.op, tys[0], tys[1], ins.loc)
    if T.is_int(ret) and all(T.is_int(t) for t in args) and ins.op != "pow":
        args = (ret, ret)         # numba casts both operands to the result type (int64 op uint64)
    ins.arg_tys = args
    return ret


def _rule_unop(ins, tys, env):
    _need_scalar(tys[0], ins)
    args, ret = T.unop_type(ins.op, tys[0], ins.loc)
    if T.is_bool(args[0]) and T.is_int(ret):
        args = (ret,)             # -(x > 0) is -1: the bool is widened first
    ins.arg_tys = args
    return ret


def _rule_cast(ins, tys, env):
    _need_scalar(tys[0], ins)
    ins.arg_tys = (tys[0],)
    return ins.attrs["to"]


def _rule_select(ins, tys, env):
    u = T.unify(tys[1], tys[2])
    if u is None:
        raise TypingError(f"the two sides of a conditional expression have types {tys[1]} and "
                          f"{tys[2]}, which numba cannot unify", ins.loc)
    ins.arg_tys = (T.BOOL, u, u)
    return u


def _rule_fma(ins, tys, env):
    _scalars(ins, tys)
    u = T.unify(T.unify(tys[0], tys[1]), tys[2])
    u = u if T.is_float(u) else T.FLOAT64
    ins.arg_tys = (u, u, u)
    return u


def _rule_cbrt(ins, tys, env):
    _scalars(ins, tys)
    u = tys[0] if tys[0] in (T.FLOAT32, T.FLOAT64) else T.FLOAT64
    ins.arg_tys = (u,)
    return u


_PY_FUNCS = {"min": min, "max": max, "abs": abs, "round": round}


def _rule_numeric_call(ins, tys, env):
    """min/max/abs/round and the math functions, typed by numba's own registry."""
    _scalars(ins, tys)
    fn = getattr(math, ins.attrs["fn"], None) if ins.op == "math" else _PY_FUNCS[ins.op]
    r = T.resolve(fn, tuple(tys)) if fn is not None else None
    if r is None:
        name = ins.attrs.get("fn", ins.op)
        raise TypingError(f"numba.cuda has no {name}() for ({', '.join(map(str, tys))})", ins.loc)
    args, ret = r
    if ins.op in ("min", "max"):
        # numba-cuda lowers min/max of exactly two float32/float64 values to libdevice
        # fmin/fmax (a NaN is ignored); any other call is Python's `v if v > acc else acc`
        ins.attrs["ieee"] = ins.attrs.get("nargs") == 2 and all(t in (T.FLOAT32, T.FLOAT64) for t in tys)
        args = (ret,) * len(tys)
    ins.arg_tys = tuple(args)
    return ret


def _rule_ld(ins, tys, env):
    arr = tys[0]
    if not isinstance(arr, T.ArrayType):
        raise TypingError(f"cannot index a value of type {arr}", ins.loc)
    _check_index(ins, arr, tys[1:])
    return arr.dtype


def _rule_st(ins, tys, env):
    arr = tys[0]
    if not isinstance(arr, T.ArrayType):
        raise TypingError(f"cannot store into a value of type {arr}", ins.loc)
    if arr.space == "const":
        raise TypingError("constant arrays are read-only", ins.loc)
    _need_scalar(tys[1], ins, arg=1)
    _check_index(ins, arr, tys[2:])
    return None


def _rule_atomic(ins, tys, env):
    arr = tys[0]
    if not isinstance(arr, T.ArrayType) or arr.space not in ("global", "shared"):
        raise TypingError("atomics need a global or shared array", ins.loc)
    nidx = ins.attrs["nidx"]
    _check_index(ins, arr, tys[len(tys) - nidx:])
    if ins.attrs["fn"] in ("and", "or", "xor", "inc", "dec", "cas") and not T.is_int(arr.dtype):
        raise TypingError(f"cuda.atomic.{ins.attrs['fn']} needs an integer array, not {arr.dtype}", ins.loc)
    return arr.dtype


def _rule_shfl(ins, tys, env):
    v = tys[1]
    if v not in (T.INT32, T.INT64, T.FLOAT32, T.FLOAT64, T.UINT32, T.UINT64):
        raise TypingError(f"shuffles move int32/int64/float32/float64 values, not {v}", ins.loc)
    if not T.is_int(tys[2]):
        raise TypingError(f"the shuffle's lane/delta must be an integer, not {tys[2]} (numba-cuda "
                          "cannot compile a bool one: NVVM rejects the IR)", ins.loc, "pass an int")
    ins.arg_tys = (T.UINT32, v, T.INT32)
    return v


def _rule_int_only(ins, tys, env):
    op = ins.op
    if not T.is_int(tys[0]):
        raise TypingError(f"cuda.{op}() needs an integer, not {tys[0]}", ins.loc)
    if op == "ffs":
        return T.UINT32
    if op == "brev":
        u = T.UINT64 if tys[0].bitwidth == 64 else T.UINT32
        ins.arg_tys = (u,)
        return u
    return tys[0]


def _fixed(ty):
    return lambda ins, tys, env: ty


# op -> rule(ins, operand types, env) -> result type (None: no result).  Rules in
# TYPE_RULES_ANY run even while an operand's type is unknown; the others wait for it.
TYPE_RULES_ANY = {
    "shared_array": _rule_array_alloc, "local_array": _rule_array_alloc,
    "const_array": lambda ins, tys, env: env[ins.attrs["key"]],
    "sreg": _fixed(T.INT32),
    **{op: _fixed(T.INT64) for op in ("grid", "gridsize", "dim", "size", "ndim")},
    "activemask": _fixed(T.UINT32), "lanemask_lt": _fixed(T.UINT32),
    "syncwarp": _fixed(None), "fence": _fixed(None),
    "syncthreads": lambda ins, tys, env: T.INT32 if ins.args else None,
}
TYPE_RULES = {
    "copy": lambda ins, tys, env: tys[0],
    **{op: _rule_logic for op in ("truth", "land", "lor", "not")},
    **{op: _rule_binop for op in T.BINOPS},
    **{op: _rule_unop for op in ("neg", "pos", "invert")},
    "cast": _rule_cast, "select": _rule_select, "fma": _rule_fma, "cbrt": _rule_cbrt,
    **{op: _rule_numeric_call for op in ("min", "max", "abs", "round", "math")},
    "ld": _rule_ld, "st": _rule_st, "atomic": _rule_atomic, "shfl": _rule_shfl,
    "vote": lambda ins, tys, env: T.INT32 if ins.attrs["mode"] == "ballot" else T.BOOL,
    **{op: _rule_int_only for op in INT_OPS_ONLY},
}


def type_instr(ins: Instr, env):
    """Return the result type of `ins`, setting ins.arg_tys; "unknown" if operands are not typed yet."""
    tys = [_ty(env, a) for a in ins.args]
    rule = TYPE_RULES_ANY.get(ins.op)
    if rule is not None:
        return rule(ins, tys, env)
    if any(t is None for t in tys):
        return "unknown"
    rule = TYPE_RULES.get(ins.op)
    if rule is None:
        raise TypingError(f"internal: no typing rule for {ins.op}", ins.loc)
    return rule(ins, tys, env)


def _check_index(ins, arr, idx_tys):
    name = _user_name(ins.args[0]) or "the array"
    if len(idx_tys) != arr.ndim:
        n = arr.ndim
        shown = f"{name}[{', '.join('ijk'[:n]) if n <= 3 else '...'}]"
        raise TypingError(f"{name!r} is a {n}-d array ({arr}) but is indexed with {len(idx_tys)} "
                          f"ind{'ex' if len(idx_tys) == 1 else 'ices'}", ins.loc,
                          f"use one index per dimension: {shown}")
    for t in idx_tys:
        if not (T.is_int(t) or T.is_bool(t)):
            raise TypingError(f"an index of {name!r} is a {t}, and array indices must be integers "
                              "(`/` always gives a float)", ins.loc,
                              "divide with // (i // 2), or convert: int32(x)")


def _assign(env, name, t, loc, what):
    if t is None or t == "unknown":
        return False
    old = env.get(name)
    if old is None:
        env[name] = t
        return True
    if old == t:
        return False
    u = T.unify(old, t)
    if u is None:
        raise TypingError(f"{what} {name.split('.')[-1]!r} is assigned both {old} and {t}, "
                          "which numba cannot unify", loc)
    if u != old:
        env[name] = u
        return True
    return False


def infer(fn, param_types: dict):
    """Fill fn.var_types and every instruction's .ty for the given parameter types."""
    env = dict(param_types)
    for key, arr in fn.consts.items():
        env[key] = T.ArrayType(T.from_numpy(arr.dtype), arr.ndim, "const")
    for _ in range(50):
        changed = False
        for st in walk(fn.body):
            if isinstance(st, Instr):
                t = type_instr(st, env)
                if st.dst is not None:
                    changed |= _assign(env, st.dst, t, st.loc, "variable")
            elif isinstance(st, Loop) and st.range_var:
                tys = [_ty(env, a) for a in st.range_args]
                if any(t is None for t in tys):
                    continue
                r = T.resolve(range, tuple(tys))
                if r is None:
                    raise TypingError(f"range() of ({', '.join(map(str, tys))}) is not supported", st.loc)
                lt = T.INT32 if "int32" in str(r[1]) else (T.UINT64 if "uint64" in str(r[1]) else T.INT64)
                changed |= _assign(env, st.range_var, lt, st.loc, "loop variable")
        for st in walk(fn.body):
            if isinstance(st, Call) and st.ret is not None:
                for r in own_returns(st.body):
                    if r.value is not None:
                        changed |= _assign(env, st.ret, _ty(env, r.value), r.loc, "return value of")
        if not changed:
            break
    # final pass: every instruction must be typed
    for st in walk(fn.body):
        if isinstance(st, Instr):
            t = type_instr(st, env)
            if t == "unknown":
                names = [a for a in st.args if isinstance(a, str) and a not in env]
                raise TypingError(f"variable {names[0].split('.')[-1]!r} is used before it is assigned"
                                  if names else "cannot type this expression", st.loc)
            st.ty = env.get(st.dst, t) if st.dst is not None else t
            st.__dict__["result_ty"] = t
    fn.var_types = env
    return env
