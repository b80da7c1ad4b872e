"""The user's loop around a source line, as the user wrote it: for messages about loops that
run away (exec/budget.py) on both execution paths.  The compiled path knows only the line a
PTX instruction came from; this finds the innermost `while`/`for` statement of the kernel's
source file that contains that line, its header text and the names its condition reads."""
from __future__ import annotations

import ast
import linecache
from dataclasses import dataclass, field


@dataclass(frozen=True)
class LoopSource:
    file: str
    line: int                   # the loop statement's first line
    header: str                 # "while step < n:" as written
    cond_names: tuple = ()      # names the condition (or the range() bounds) reads, in order
    assigned: tuple = ()        # names the loop body assigns
    kind: str = "while"         # "while" | "for"
    local_names: tuple = ()     # names the enclosing function assigns anywhere (not parameters)
    extra: dict = field(default_factory=dict, compare=False, hash=False)


_TREES = {}


def _tree(file):
    t = _TREES.get(file)
    if t is None:
        text = "".join(linecache.getlines(file))
        if not text:
            return None
        try:
            t = ast.parse(text)
        except SyntaxError:
            return None
        _TREES[file] = t
    return t


def _names(node):
    seen = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id not in seen and n.id not in ("range", "cuda", "math", "len"):
            seen.append(n.id)
    return tuple(seen)


def _target_names(t):
    """The variables an assignment target binds (not `x` of `x[i] = ...`)."""
    if isinstance(t, ast.Name):
        return [t.id]
    if isinstance(t, (ast.Tuple, ast.List)):
        return [n for e in t.elts for n in _target_names(e)]
    if isinstance(t, ast.Starred):
        return _target_names(t.value)
    return []


def _assigned(stmts):
    out = []
    for s in stmts:
        for n in ast.walk(s):
            targets = []
            if isinstance(n, ast.Assign):
                targets = n.targets
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
                targets = [n.target]
            elif isinstance(n, ast.For):
                targets = [n.target]
            for t in targets:
                for m in _target_names(t):
                    if m not in out:
                        out.append(m)
    return tuple(out)


def _exit_names(stmts):
    """Names read by the conditions of the ifs that leave this loop (break/return), not
    looking into nested loops."""
    out = []

    def leaves(body):
        for s in body:
            if isinstance(s, (ast.Break, ast.Return)):
                return True
            if isinstance(s, ast.If) and (leaves(s.body) or leaves(s.orelse)):
                return True
        return False

    def walk(body):
        for s in body:
            if isinstance(s, ast.If):
                if leaves(s.body) or leaves(s.orelse):
                    out.extend(n for n in _names(s.test) if n not in out)
                walk(s.body)
                walk(s.orelse)
    walk(stmts)
    return tuple(out)


def loop_at(file, line):
    """The innermost while/for loop of `file` whose lines contain `line`, or None."""
    tree = _tree(file) if file else None
    if tree is None or not line:
        return None
    best = fn = None
    for n in ast.walk(tree):
        inside = n.lineno <= line <= (n.end_lineno or n.lineno) if hasattr(n, "lineno") else False
        if isinstance(n, (ast.While, ast.For)) and inside:
            if best is None or n.lineno >= best.lineno:
                best = n
        if isinstance(n, ast.FunctionDef) and inside and (fn is None or n.lineno >= fn.lineno):
            fn = n
    if best is None:
        return None
    header = (f"while {ast.unparse(best.test)}:" if isinstance(best, ast.While) else
              f"for {ast.unparse(best.target)} in {ast.unparse(best.iter)}:")
    local = _assigned(fn.body) if fn is not None else ()
    if isinstance(best, ast.While):
        names = _names(best.test) or _exit_names(best.body)     # while True: ... if c: break
        return LoopSource(file, best.lineno, header, names, _assigned(best.body), "while", local)
    return LoopSource(file, best.lineno, header, _names(best.iter) + _names(best.target),
                      _assigned(best.body), "for", local)
