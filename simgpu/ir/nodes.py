"""The IR: plain data.  Flat instructions over named values, grouped in structured regions.

A kernel is a `Function` whose body is a list of statements:
  Instr      dst = op(args...)            (dst may be None)
  If         if cond: then else: orelse   (cond is a value name)
  Loop       while: cond_body; cond -> body   (for-range loops are lowered to this
             shape but keep their `range_var` so the executor can run uniform trip counts fast)
  Break / Continue / Return
  Call       an inlined device function: its own Return scope
Values are names (str) or `Const`.  Every node carries a `Loc` pointing at user source.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional


@dataclass(frozen=True)
class Loc:
    file: str
    line: int
    col: int = 0
    func: str = ""

    def __str__(self):
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Const:
    value: Any
    ty: Any = None          # numba type; filled by the frontend

    def __repr__(self):
        return repr(self.value)


_ids = iter(range(1, 1 << 62))


@dataclass(eq=False)
class Instr:
    op: str
    dst: Optional[str]
    args: tuple
    loc: Loc
    attrs: dict = field(default_factory=dict)
    ty: Any = None                 # result type, set by type inference
    arg_tys: tuple = ()            # operand types the op computes in (after numba's conversions)
    id: int = field(default_factory=lambda: next(_ids))


@dataclass(eq=False)
class If:
    cond: Any
    then: list
    orelse: list
    loc: Loc
    id: int = field(default_factory=lambda: next(_ids))


@dataclass(eq=False)
class Loop:
    cond_body: list          # instructions computing `cond` at the top of each iteration
    cond: Any                # value name (None: loop forever until break)
    body: list
    loc: Loc
    range_var: Optional[str] = None                # set for `for v in range(...)`
    range_args: tuple = ()                          # (start, stop, step) values
    id: int = field(default_factory=lambda: next(_ids))


@dataclass(eq=False)
class Break:
    loc: Loc


@dataclass(eq=False)
class Continue:
    loc: Loc


@dataclass(eq=False)
class Return:
    loc: Loc
    value: Any = None
    exit: bool = False       # leave the thread, not just the device function (a failed assert)


@dataclass(eq=False)
class Call:
    """An inlined device-function call.  `ret` receives the returned value."""
    name: str
    body: list
    ret: Optional[str]
    loc: Loc
    id: int = field(default_factory=lambda: next(_ids))


@dataclass(eq=False)
class Function:
    name: str
    params: list                 # parameter names
    body: list
    loc: Loc
    source_lines: dict = field(default_factory=dict)   # (file, line) -> text
    var_types: dict = field(default_factory=dict)      # name -> type after inference
    shared: dict = field(default_factory=dict)         # shared-array name -> (shape, dtype)
    local: dict = field(default_factory=dict)          # local-array name -> (shape, dtype)
    consts: dict = field(default_factory=dict)         # const-array name -> numpy array
    globals_read: dict = field(default_factory=dict)   # (id(py func), name) -> (py func, name,
    #                                                    value when lowered, Loc of a read)


def walk(stmts, into_calls=True):
    """Yield every statement, depth first, in program order (with ``into_calls=False``, not
    the statements of the inlined calls nested in them)."""
    for s in stmts:
        yield s
        if isinstance(s, If):
            yield from walk(s.then, into_calls)
            yield from walk(s.orelse, into_calls)
        elif isinstance(s, Loop):
            yield from walk(s.cond_body, into_calls)
            yield from walk(s.body, into_calls)
        elif isinstance(s, Call) and into_calls:
            yield from walk(s.body, into_calls)


def own_returns(stmts):
    """The Returns of one function's body: not those of the calls nested in it."""
    return (s for s in walk(stmts, into_calls=False) if isinstance(s, Return))
