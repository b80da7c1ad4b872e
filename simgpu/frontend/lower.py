"""Python AST -> simgpu IR.  One visit_<Node> per construct; errors carry file:line:col."""
from __future__ import annotations

import ast
import difflib
import math
import inspect
import textwrap

import numpy as np

from ..errors import DSLError
from ..ir.nodes import Break, Const, Continue, Function, If, Instr, Loc, Loop, Return
from ..ir import types as T
from .calls import lower_call
from .lint import uncalled_message, warn
from .resolve import _ALIAS, DeviceFunction, Intrinsic, classify, lookup
from .values import NP_TO_MATH, PURE_CALL_PREFIXES, SREGS, ArrayMod, ShapeOf, Static, TupleVal

_BINOP = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "truediv", ast.FloorDiv: "floordiv",
          ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift", ast.RShift: "rshift",
          ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor"}
_CMP = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}
_UNARY = {ast.USub: "neg", ast.UAdd: "pos", ast.Invert: "invert", ast.Not: "not"}

DIM3 = {f"cuda.{n}" for n in SREGS}

UNSUPPORTED_HINTS = {
    "ListComp": "allocate cuda.local.array(n, dtype) and fill it in a loop",
    "List": "kernels cannot build lists: for a per-thread array write t = cuda.local.array(n, float32), "
            "for fixed numbers a tuple t = (0.0, 0.0)",
    "Dict": "kernels cannot build dicts; pass numpy arrays instead",
    "Lambda": "define a device function with simgpu.jit(device=True) or numba.cuda.jit(device=True)",
    "FunctionDef": "define device functions at module level",
    "With": "remove the with-block; kernels have no context managers",
    "Try": "kernels cannot catch exceptions; check bounds with if instead",
    "Raise": "kernels cannot raise; check bounds with if instead",
    "Slice": "index one element at a time: a[i, j]",
    "Starred": "pass arguments one by one",
    "JoinedStr": "kernels cannot format strings",
    "Global": "pass the value as a kernel argument",
    "Nonlocal": "pass the value as a kernel argument",
    "Yield": "kernels cannot be generators",
    "Await": "kernels cannot await",
    "Set": "use a cuda.local.array",
    "Import": "import at module level",
    "ImportFrom": "import at module level",
    "Delete": "kernels cannot delete names",
}


def _is_bool_expr(node):
    """True for expressions whose value is a bool whatever the types (comparisons, not, and/or
    of those, bool literals): `and`/`or` of them is the plain logical and/or."""
    if isinstance(node, (ast.Compare,)) or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    if isinstance(node, ast.BoolOp):
        return all(_is_bool_expr(v) for v in node.values)
    return isinstance(node, ast.Constant) and isinstance(node.value, bool)


_PY_UNARY = {ast.USub: lambda a: -a, ast.UAdd: lambda a: +a, ast.Invert: lambda a: ~a,
             ast.Not: lambda a: not a}
_PY_BINARY = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
              ast.Div: lambda a, b: a / b, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
              ast.Pow: lambda a, b: a ** b, ast.LShift: lambda a, b: a << b, ast.RShift: lambda a, b: a >> b,
              ast.BitAnd: lambda a, b: a & b, ast.BitOr: lambda a, b: a | b, ast.BitXor: lambda a, b: a ^ b}


def _too_big(op, a, b):
    """CPython's limits on folding (Python/ast_opt.c: safe_multiply, safe_power, safe_lshift)."""
    if not (isinstance(a, int) and isinstance(b, int)):
        return False
    if isinstance(op, ast.Mult):
        return a and b and a.bit_length() + b.bit_length() > 128
    if isinstance(op, ast.Pow):
        return b > 0 and a.bit_length() * b > 128
    if isinstance(op, ast.LShift):
        return b > 128 or a and a.bit_length() + b > 128
    return False


def py_fold(node):
    """The constant CPython folds an expression of literals into, or None."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, (bool, int, float, complex)) else None
    if isinstance(node, ast.UnaryOp) and type(node.op) in _PY_UNARY:
        a = py_fold(node.operand)
        return None if a is None else _PY_UNARY[type(node.op)](a)
    if isinstance(node, ast.BinOp) and type(node.op) in _PY_BINARY:
        a, b = py_fold(node.left), py_fold(node.right)
        if a is None or b is None or _too_big(node.op, a, b):
            return None
        try:
            return _PY_BINARY[type(node.op)](a, b)
        except (ArithmeticError, ValueError, TypeError):
            return None
    return None


class Lowerer(ast.NodeVisitor):
    def __init__(self, py_func, prefix="", inline_stack=(), fn_ir=None):
        self.py = py_func
        self.prefix = prefix
        self.inline_stack = inline_stack + (py_func,)
        try:
            src = inspect.getsource(py_func)
            self.file = inspect.getsourcefile(py_func) or "<kernel>"
            first = py_func.__code__.co_firstlineno
        except (OSError, TypeError) as e:
            raise DSLError(f"cannot read the source of {py_func.__name__!r} ({e}); "
                           "kernels must be defined in a file or notebook cell") from None
        self.src_lines = src.splitlines()
        self.first = first
        src = textwrap.dedent(src)
        self.tree = ast.parse(src)
        defs = [n for n in self.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        if not defs:
            raise DSLError(f"cannot find the definition of {py_func.__name__!r} in its source")
        self.fn_node = defs[0]
        self.col_off = len(self.src_lines[0]) - len(self.src_lines[0].lstrip())
        self.tmp = 0
        self.out = []
        self.fn = fn_ir
        self.locals = self._collect_locals()
        self.in_loop = 0

    # -- helpers -----------------------------------------------------------
    def loc(self, node):
        line = getattr(node, "lineno", 1) + self.first - 1
        col = getattr(node, "col_offset", 0) + self.col_off
        return Loc(self.file, line, col, self.py.__name__)

    def err(self, node, msg, hint=None):
        return DSLError(msg, self.loc(node), hint)

    def new(self, hint="t"):
        self.tmp += 1
        return f"{self.prefix}%{hint}{self.tmp}"

    def var(self, name):
        return f"{self.prefix}{name}"

    def emit(self, op, args, node, dst=True, **attrs):
        d = self.new() if dst is True else dst
        self.out.append(Instr(op, d, tuple(args), self.loc(node), attrs))
        return d

    def _collect_locals(self):
        names = {a.arg for a in self.fn_node.args.args}
        for n in ast.walk(self.fn_node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                names.add(n.id)
        return names

    def record_lines(self):
        for i, text in enumerate(self.src_lines):
            self.fn.source_lines[(self.file, self.first + i)] = text

    # -- entry -------------------------------------------------------------
    def lower_function(self):
        node = self.fn_node
        if not isinstance(node, ast.FunctionDef):
            raise self.err(node, "a kernel must be a plain 'def' function")
        a = node.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults:
            raise self.err(node, "kernels take plain positional parameters only",
                           "remove *args, **kwargs, keyword-only parameters and defaults")
        self.fn = Function(self.py.__name__, [self.var(x.arg) for x in a.args], [], self.loc(node))
        self.record_lines()
        self.out = self.fn.body
        for st in node.body:
            self.stmt(st)
        return self.fn

    # -- statements --------------------------------------------------------
    def stmt(self, node):
        m = getattr(self, "stmt_" + type(node).__name__, None)
        if m is None:
            kind = type(node).__name__
            raise self.err(node, f"'{kind}' is not supported in kernels",
                           UNSUPPORTED_HINTS.get(kind, "see docs/design.md for the supported language"))
        m(node)

    def block(self, stmts):
        saved, self.out = self.out, []
        for s in stmts:
            self.stmt(s)
        body, self.out = self.out, saved
        return body

    def stmt_Pass(self, node):
        pass

    def stmt_Expr(self, node):
        if isinstance(node.value, ast.Constant):      # docstring
            return
        v = self.expr(node.value)
        if isinstance(v, Static) and isinstance(v.value, (Intrinsic, DeviceFunction)):
            loc = self.loc(node)                # numba compiles it to nothing: a warning, as there
            warn(loc.file, loc.line, uncalled_message(ast.unparse(node.value)))
        del v

    def stmt_Assert(self, node):
        """numba-cuda compiles `assert c` to `if not c: raise AssertionError`; without debug=True
        the raise ends the thread silently (from inside a device function too).  The message
        is not evaluated."""
        c = self.expr(node.test)
        if isinstance(c, Static):
            c = Const(c.value, None)
        if isinstance(c, Const):
            if not c.value:
                self.out.append(Return(self.loc(node), None, exit=True))
            return
        self.out.append(If(self.truth(c, node.test), [], [Return(self.loc(node), None, exit=True)],
                           self.loc(node)))

    def stmt_Assign(self, node):
        value = self.expr(node.value)
        for tgt in node.targets:
            self.assign(tgt, value, node)

    def stmt_AnnAssign(self, node):
        if node.value is None:
            return
        self.assign(node.target, self.expr(node.value), node)

    def assign(self, tgt, value, node):
        if isinstance(tgt, ast.Name):
            if isinstance(value, (TupleVal, ShapeOf, Static, ArrayMod)):
                if isinstance(value, Static) and isinstance(value.value, (bool, int, float, np.number)):
                    value = Const(value.value, T.typeof_value(value.value))
                else:
                    raise self.not_a_value_error(tgt, value, f"{tgt.id} = ",
                                                 ast.unparse(node.value) if hasattr(node, "value") else None)
            self.emit("copy", [value], tgt, dst=self.var(tgt.id))
        elif isinstance(tgt, (ast.Tuple, ast.List)):
            items = self.as_tuple(value, len(tgt.elts), tgt)
            tmps = []
            for it in items:                      # evaluate all before assigning (a, b = b, a)
                if isinstance(it, str) and not it.startswith(self.prefix + "%"):
                    t = self.emit("copy", [it], tgt)
                    tmps.append(t)
                else:
                    tmps.append(it)
            for t_node, it in zip(tgt.elts, tmps):
                self.assign(t_node, it, node)
        elif isinstance(tgt, ast.Subscript):
            arr = self.array_operand(tgt.value)
            idx = self.index(tgt.slice)
            self.emit("st", [arr, self.scalar(value, tgt), *idx], tgt, dst=None)
        elif isinstance(tgt, ast.Attribute):
            text = ast.unparse(tgt)
            v = self.expr_static_or_none(tgt)
            if v is not None and isinstance(v.value, Intrinsic) or text.startswith("cuda."):
                raise self.err(tgt, f"`{text} = ...` assigns to {text}, which is read-only: the thread's "
                                    "and block's indices and sizes are set by the launch",
                               "store the value in a variable of your own: i = ...; to change which "
                               "element a thread works on, compute an index from cuda.threadIdx.x")
            raise self.err(tgt, f"`{text} = ...` sets an attribute; kernels can only assign to variables "
                                "and to array elements",
                           "write a variable (x = ...) or an array element (out[i] = ...)")
        else:
            raise self.err(tgt, f"cannot assign to {type(tgt).__name__} (`{ast.unparse(tgt)} = ...`)",
                           "assign to a variable (x = ...) or an array element (out[i] = ...)")

    def stmt_AugAssign(self, node):
        op = _BINOP.get(type(node.op))
        if op is None:
            raise self.err(node, f"operator {type(node.op).__name__} is not supported")
        rhs = self.scalar(self.expr(node.value), node.value)
        tgt = node.target
        if isinstance(tgt, ast.Name):
            if tgt.id not in self.locals:
                raise self.err(tgt, f"{tgt.id!r} is not a local variable")
            cur = self.var(tgt.id)
            r = self.emit(op, [cur, rhs], node)
            self.emit("copy", [r], tgt, dst=cur)
        elif isinstance(tgt, ast.Subscript):
            arr = self.array_operand(tgt.value)
            idx = self.index(tgt.slice)
            cur = self.emit("ld", [arr, *idx], tgt)
            r = self.emit(op, [cur, rhs], node)
            self.emit("st", [arr, r, *idx], tgt, dst=None)
        else:
            raise self.err(tgt, "augmented assignment needs a name or an array element")

    def stmt_If(self, node):
        c = self.cond(node.test)
        if isinstance(c, Static):
            c = Const(c.value, None)
        if isinstance(c, Const):                 # constant-folded (e.g. on a module constant)
            for s in (node.body if c.value else node.orelse):
                self.stmt(s)
            return
        cond = self.truth(c, node.test)
        then = self.block(node.body)
        orelse = self.block(node.orelse)
        self.out.append(If(cond, then, orelse, self.loc(node)))

    def stmt_While(self, node):
        if node.orelse:
            raise self.err(node, "while/else is not supported", "move the else-block after the loop")
        saved, self.out = self.out, []
        c = self.cond(node.test)
        cond = None if isinstance(c, (Const, Static)) and c.value else self.truth(self.scalar(c, node.test), node.test)
        cond_body, self.out = self.out, saved
        self.in_loop += 1
        body = self.block(node.body)
        self.in_loop -= 1
        self.out.append(Loop(cond_body, cond, body, self.loc(node)))

    def stmt_For(self, node):
        if node.orelse:
            raise self.err(node, "for/else is not supported", "move the else-block after the loop")
        it = node.iter
        if not isinstance(node.target, ast.Name):
            raise self.err(node.target, "loop variables must be plain names")
        f = self.expr(it.func) if isinstance(it, ast.Call) else None
        if isinstance(f, Static) and f.value == Intrinsic("builtin.range"):
            args = [self.scalar(self.expr(a), a) for a in it.args]
            if not 1 <= len(args) <= 3 or it.keywords:
                raise self.err(it, "range() takes 1 to 3 positional arguments")
            if len(args) == 1:
                args = [Const(0, T.INT64), args[0], Const(1, T.INT64)]
            elif len(args) == 2:
                args.append(Const(1, T.INT64))
            if isinstance(args[2], Const) and args[2].value == 0:
                raise self.err(it, "range() step must not be zero")
            self.in_loop += 1
            body = self.block(node.body)
            self.in_loop -= 1
            self.out.append(Loop([], None, body, self.loc(node), range_var=self.var(node.target.id),
                                 range_args=tuple(args)))
            return
        v = self.expr(it)
        if isinstance(v, Static) and isinstance(v.value, tuple):
            v = TupleVal(tuple(Const(x, T.typeof_value(x)) for x in v.value))
        if isinstance(v, TupleVal):                 # unrolled loop over a constant tuple
            for item in v.items:
                self.emit("copy", [item], node.target, dst=self.var(node.target.id))
                for s in node.body:
                    if any(isinstance(n, (ast.Break, ast.Continue)) for n in ast.walk(s)):
                        raise self.err(s, "break/continue inside a loop over a tuple is not supported")
                    self.stmt(s)
            return
        raise self.err(it, "for-loops must iterate over range(...) or a constant tuple",
                       "write for i in range(n): ... and index the array inside")

    def stmt_Break(self, node):
        if not self.in_loop:
            raise self.err(node, "'break' outside a loop")
        self.out.append(Break(self.loc(node)))

    def stmt_Continue(self, node):
        if not self.in_loop:
            raise self.err(node, "'continue' outside a loop")
        self.out.append(Continue(self.loc(node)))

    def stmt_Return(self, node):
        val = None
        if node.value is not None:
            v = self.expr(node.value)
            if isinstance(v, Static) and v.value is None:
                v = None
            val = None if v is None else self.scalar(v, node.value)
            if val is not None and not self.prefix and len(self.inline_stack) <= 1:
                raise self.err(node, f"a kernel cannot return a value (`return {ast.unparse(node.value)}`): "
                                     "a launch has no result but the arrays it writes",
                               "write the result into an output array, e.g. out[i] = ..., then `return` "
                               "(or nothing)")
        self.out.append(Return(self.loc(node), val))

    # -- expressions -------------------------------------------------------
    def expr(self, node):
        m = getattr(self, "expr_" + type(node).__name__, None)
        if m is None:
            kind = type(node).__name__
            raise self.err(node, f"'{kind}' expressions are not supported in kernels",
                           UNSUPPORTED_HINTS.get(kind, "see docs/design.md for the supported language"))
        return m(node)

    def describe(self, v):
        if isinstance(v, TupleVal):
            return "a tuple"
        if isinstance(v, ShapeOf):
            return "an array shape"
        if isinstance(v, Static) and isinstance(v.value, Intrinsic):
            return v.value.path.replace("builtin.", "").replace("cast.", "")
        if isinstance(v, Static) and isinstance(v.value, DeviceFunction):
            return f"the device function {getattr(v.value.py_func, '__name__', '?')}"
        if isinstance(v, Static):
            return f"{v.value!r}"
        if isinstance(v, ArrayMod):
            return v.path
        return "this value"

    def not_a_value_error(self, node, v, context="", text=None):
        """The DSLError for a name that is not one number where one is needed: a Dim3 without
        .x, a function not called, a tuple, a shape."""
        what = self.describe(v)
        if text is None:
            text = ast.unparse(node) if isinstance(node, ast.AST) else what
        subject = f"`{what}`" if text == what and not context else f"`{context}{text}` uses {what}, which"
        if isinstance(v, Static) and isinstance(v.value, Intrinsic) and v.value.path in DIM3:
            return self.err(node, f"{subject} holds three numbers (.x, .y, .z), where one number is needed",
                            f"pick one component: {what}.x (or .y, .z)")
        if isinstance(v, Static) and isinstance(v.value, (Intrinsic, DeviceFunction)):
            return self.err(node, f"`{context}{text}` uses the function {what} itself, not a value it "
                                  "computes", f"call it: {what}(...)")
        if isinstance(v, (TupleVal, ShapeOf)):
            return self.err(node, f"`{context}{text}` is {what}, several numbers, where one number is needed",
                            "unpack it (a, b = ...) or index it with a constant (t[0], a.shape[0])")
        if isinstance(v, ArrayMod):
            return self.err(node, f"`{context}{text}` names the namespace {what}, not a value",
                            f"call one of its functions, e.g. {what}.array(shape, dtype)"
                            if v.path in ("cuda.shared", "cuda.local") else None)
        return self.err(node, f"`{context}{text}`: {what} cannot be used as a single value here")

    def scalar(self, v, node):
        """An operand usable as an instruction argument."""
        if isinstance(v, (str, Const)):
            return v
        if isinstance(v, Static) and isinstance(v.value, (bool, int, float, np.number, np.bool_)):
            return Const(v.value, T.typeof_value(v.value))
        if isinstance(v, Static) and v.value is None:
            raise self.err(node, "None is not a value in kernels")
        raise self.not_a_value_error(node, v)

    def truth(self, v, node):
        v = self.scalar(v, node)
        return self.emit("truth", [v], node)

    def as_tuple(self, v, n, node):
        if isinstance(v, ShapeOf):
            return tuple(self.emit("dim", [v.array, Const(k, T.INT64)], node) for k in range(n))
        if isinstance(v, Static) and isinstance(v.value, tuple):
            v = TupleVal(tuple(Const(x, T.typeof_value(x)) for x in v.value))
        if not isinstance(v, TupleVal):
            raise self.err(node, f"cannot unpack {self.describe(v)} into {n} names")
        if len(v.items) != n:
            raise self.err(node, f"cannot unpack {len(v.items)} values into {n} names")
        return v.items

    def expr_Constant(self, node):
        if isinstance(node.value, (bool, int, float)):
            return Const(node.value, T.typeof_value(node.value))
        if node.value is None:
            return Static(None)
        if isinstance(node.value, str):
            return Static(node.value)
        raise self.err(node, f"constant {node.value!r} is not supported")

    def expr_Name(self, node):
        if node.id in self.locals:
            return self.var(node.id)
        found, obj = lookup(self.py, node.id)
        if not found:
            near = difflib.get_close_matches(node.id, sorted(self.locals), n=1)
            raise self.err(node, f"name {node.id!r} is not defined: the kernel reads it, but neither the "
                                 "kernel nor its module assigns it",
                           (f"did you mean {near[0]!r}? " if near else "") +
                           f"assign it first in the kernel, define it at module level ({node.id} = ...), "
                           "or pass it as a kernel argument")
        c = classify(obj)
        self.note_global(node, obj, c)
        if c is None:
            raise self.err(node, f"{node.id!r} ({type(obj).__name__}) cannot be used inside a kernel",
                           "kernels may read numbers, tuples and numpy arrays defined at module level, "
                           "math/numpy/numba.cuda names, and device functions")
        return Static(c)

    def expr_Tuple(self, node):
        return TupleVal(tuple(self._tuple_item(self.expr(e), e) for e in node.elts))

    def _tuple_item(self, v, node):
        if isinstance(v, (TupleVal,)):
            raise self.err(node, "nested tuples are not supported")
        if isinstance(v, Static) and isinstance(v.value, (bool, int, float, np.number)):
            return Const(v.value, T.typeof_value(v.value))
        return v

    expr_List = None

    def expr_Attribute(self, node):
        base = self.expr(node.value)
        a = node.attr
        if isinstance(base, Static) and isinstance(base.value, Intrinsic):
            path = base.value.path
            full = f"{path}.{a}"
            if path in ("cuda.threadIdx", "cuda.blockIdx", "cuda.blockDim", "cuda.gridDim"):
                if a not in ("x", "y", "z"):
                    raise self.err(node, f"{full} does not exist", "use .x, .y or .z")
                return self.emit("sreg", [], node, name=f"{SREGS[path[5:]]}.{a}")
            if full == "cuda.laneid":
                return self.emit("sreg", [], node, name="laneid")
            if full == "cuda.warpsize":
                return Const(np.int32(32), T.INT32)
            if path in ("np", "numba") and a in ("float16", "float32", "float64", "int8", "int16", "int32",
                                                 "int64", "uint8", "uint16", "uint32", "uint64", "bool_",
                                                 "boolean", "intp"):
                return Static(Intrinsic(f"cast.{_ALIAS.get(a, a)}"))
            if path == "np" and a in NP_TO_MATH:
                return Static(Intrinsic(f"np.{a}"))
            if path == "math" and a in ("pi", "e", "inf", "nan", "tau"):
                return Const(getattr(math, a), T.FLOAT64)
            return Static(base.value.attr(a))
        if isinstance(base, Static) and isinstance(base.value, np.ndarray):
            base = self.const_array(base.value, node)
        if isinstance(base, str):
            if a == "shape":
                return ShapeOf(base)
            if a == "size":
                return self.emit("size", [base], node)
            if a == "ndim":
                return self.emit("ndim", [base], node)
            raise self.err(node, f"attribute .{a} is not supported on kernel values",
                           "arrays have .shape, .size and .ndim")
        if isinstance(base, Static) and isinstance(base.value, (int, float, np.number)):
            raise self.err(node, f"numbers have no attribute .{a}")
        raise self.err(node, f"attribute .{a} is not supported here")

    def const_array(self, arr, node):
        name = f"%const{id(arr)}"
        self.fn.consts[name] = np.ascontiguousarray(arr)
        return self.emit("const_array", [], node, key=name)

    def expr_Subscript(self, node):
        base = self.expr(node.value)
        if isinstance(base, ShapeOf):
            k = self.expr(node.slice)
            if not isinstance(k, Const):
                raise self.err(node, "index a shape with a constant: a.shape[0]")
            return self.emit("dim", [base.array, k], node)
        if isinstance(base, Static) and isinstance(base.value, tuple):
            base = TupleVal(tuple(Const(x, T.typeof_value(x)) for x in base.value))
        if isinstance(base, TupleVal):
            k = self.expr(node.slice)
            if not isinstance(k, Const):
                raise self.err(node, "tuples can only be indexed by constants")
            return base.items[k.value]
        arr = self.array_operand(node.value, base)
        idx = self.index(node.slice)
        return self.emit("ld", [arr, *idx], node)

    def array_operand(self, node, base=None):
        base = self.expr(node) if base is None else base
        if isinstance(base, Static) and isinstance(base.value, np.ndarray):
            return self.const_array(base.value, node)
        if not isinstance(base, str):
            raise self.err(node, f"{self.describe(base)} is not an array")
        return base

    def index(self, node):
        v = self.expr(node)
        if isinstance(node, ast.Slice) or isinstance(v, Static) and isinstance(v.value, slice):
            raise self.err(node, "slices are not supported in kernels", UNSUPPORTED_HINTS["Slice"])
        if isinstance(v, Static) and isinstance(v.value, tuple):
            v = TupleVal(tuple(Const(x, T.typeof_value(x)) for x in v.value))
        items = v.items if isinstance(v, TupleVal) else (v,)
        return [self.scalar(i, node) for i in items]

    def expr_Slice(self, node):
        raise self.err(node, "slices are not supported in kernels", UNSUPPORTED_HINTS["Slice"])

    def folded(self, node):
        """The Const CPython's compiler folds `node` to (numba reads the folded bytecode:
        2 ** -1 is 0.5), or None."""
        v = py_fold(node)
        if v is None or isinstance(v, complex):
            return None
        if isinstance(v, int) and not isinstance(v, bool) and not -2 ** 63 <= v < 2 ** 64:
            raise self.err(node, f"integer constant {v} does not fit in 64 bits")
        return Const(v, T.typeof_value(v))

    def expr_BinOp(self, node):
        c = self.folded(node)
        if c is not None:
            return c
        op = _BINOP.get(type(node.op))
        if op is None:
            raise self.err(node, f"operator {type(node.op).__name__} is not supported",
                           "matrix multiply (@) is not available inside kernels; write the loop")
        l = self.scalar(self.expr(node.left), node.left)
        r = self.scalar(self.expr(node.right), node.right)
        return self.emit(op, [l, r], node)

    def expr_UnaryOp(self, node):
        c = self.folded(node)
        if c is not None:
            return c
        v = self.scalar(self.expr(node.operand), node.operand)
        if isinstance(v, Const) and isinstance(node.op, ast.USub):
            return Const(-v.value, v.ty)
        return self.emit(_UNARY[type(node.op)], [v], node)

    def expr_Compare(self, node):
        left = self.scalar(self.expr(node.left), node.left)
        results = []
        for op, comp in zip(node.ops, node.comparators):
            if type(op) not in _CMP:
                raise self.err(node, f"comparison {type(op).__name__} is not supported",
                               "use ==, !=, <, <=, >, >=")
            right = self.scalar(self.expr(comp), comp)
            results.append(self.emit(_CMP[type(op)], [left, right], node))
            left = right
        r = results[0]
        for x in results[1:]:
            r = self.emit("land", [r, x], node)
        return r

    def is_safe(self, node):
        """True when evaluating `node` for lanes that would not reach it cannot fault."""
        for n in ast.walk(node):
            if isinstance(n, ast.Subscript):
                v = self.expr_static_or_none(n.value)
                if not isinstance(v, (ShapeOf, TupleVal)):
                    return False
            if isinstance(n, ast.Call):
                f = self.expr_static_or_none(n.func)
                if not (isinstance(f, Static) and isinstance(f.value, Intrinsic)
                        and f.value.path.startswith(PURE_CALL_PREFIXES)):
                    return False
        return True

    def note_global(self, node, obj, c):
        """Remember a number, tuple or array read from the globals/closure: its value is part of
        the compiled kernel (numba freezes it); exec/interp.py refuses to run if it changed."""
        if isinstance(c, (bool, int, float, np.number, np.bool_, tuple, np.ndarray)):
            self.fn.globals_read.setdefault((id(self.py), node.id), (self.py, node.id, obj, self.loc(node)))

    def expr_static_or_none(self, node):
        if isinstance(node, ast.Name) and node.id not in self.locals:
            found, obj = lookup(self.py, node.id)
            if found:
                self.note_global(node, obj, classify(obj))
            return Static(classify(obj)) if found else None
        if isinstance(node, ast.Attribute):
            b = self.expr_static_or_none(node.value)
            if isinstance(b, Static) and isinstance(b.value, Intrinsic):
                return Static(b.value.attr(node.attr))
            if isinstance(node.value, ast.Name) and node.attr == "shape":
                return ShapeOf(node.value.id)
        return None

    def cond(self, node):
        """A test (if/while/conditional expression): only its truth matters."""
        return self.bool_op(node) if isinstance(node, ast.BoolOp) else self.expr(node)

    def expr_BoolOp(self, node):
        """`a and b` is a if a is false, else b (Python's and numba's value, not a bool).  A
        constant operand decides at compile time, as numba's dead-branch pruning does
        (`3 or x` is the int 3, `1 and x` is x: the other side's type does not join in)."""
        first = self.folded(node.values[0]) if isinstance(node.values[0], (ast.Constant, ast.UnaryOp,
                                                                           ast.BinOp)) else None
        if first is not None:
            if bool(first.value) == isinstance(node.op, ast.Or):
                return first
            if len(node.values) == 2:
                return self.expr(node.values[1])
            return self.expr(ast.copy_location(ast.BoolOp(op=node.op, values=node.values[1:]), node))
        if all(_is_bool_expr(v) for v in node.values):
            return self.bool_op(node)
        res = self.new("bo")
        self.emit("copy", [self.scalar(self.expr(node.values[0]), node.values[0])], node, dst=res)
        t = self.truth(res, node.values[0])
        rest = ast.BoolOp(op=node.op, values=node.values[1:]) if len(node.values) > 2 else node.values[1]
        ast.copy_location(rest, node.values[1])
        saved, self.out = self.out, []
        self.emit("copy", [self.scalar(self.expr(rest), rest)], node, dst=res)
        body, self.out = self.out, saved
        then, orelse = (body, []) if isinstance(node.op, ast.And) else ([], body)
        self.out.append(If(t, then, orelse, self.loc(node)))
        return res

    def bool_op(self, node):
        kind = "land" if isinstance(node.op, ast.And) else "lor"
        first = self.truth(self.expr(node.values[0]), node.values[0])
        if all(self.is_safe(v) for v in node.values[1:]):
            r = first
            for v in node.values[1:]:
                r = self.emit(kind, [r, self.truth(self.expr(v), v)], node)
            return r
        # short-circuit: evaluate the rest only for lanes that need it
        res = self.new("sc")
        self.emit("copy", [first], node, dst=res)
        rest = ast.BoolOp(op=node.op, values=node.values[1:]) if len(node.values) > 2 else node.values[1]
        ast.copy_location(rest, node.values[1])
        saved, self.out = self.out, []
        self.emit("copy", [self.truth(self.expr(rest), rest)], node, dst=res)
        body, self.out = self.out, saved
        if kind == "land":
            self.out.append(If(res, body, [], self.loc(node)))
        else:
            self.out.append(If(res, [], body, self.loc(node)))
        return res

    def expr_IfExp(self, node):
        c = self.cond(node.test)
        if isinstance(c, Const):
            return self.expr(node.body if c.value else node.orelse)
        cond = self.truth(c, node.test)
        if self.is_safe(node.body) and self.is_safe(node.orelse):
            a = self.scalar(self.expr(node.body), node.body)
            b = self.scalar(self.expr(node.orelse), node.orelse)
            return self.emit("select", [cond, a, b], node)
        res = self.new("ife")
        saved, self.out = self.out, []
        self.emit("copy", [self.scalar(self.expr(node.body), node.body)], node, dst=res)
        then, self.out = self.out, []
        self.emit("copy", [self.scalar(self.expr(node.orelse), node.orelse)], node, dst=res)
        orelse, self.out = self.out, saved
        self.out.append(If(cond, then, orelse, self.loc(node)))
        return res

    def expr_Call(self, node):
        return lower_call(self, node)
