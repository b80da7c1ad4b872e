"""Sending a case function to workers with its kernels' source.

cloudpickle sends functions defined in ``__main__``, a notebook cell or a closure by value, but
it renames their code's file to ``<dynamic-code>`` (for deterministic pickles), and simgpu reads
a kernel's Python source to compile it. So the payload carries, for every Python function
reachable from the case function (its globals, closure cells, and the ``py_func`` of kernels),
the file name and the source lines; the worker puts the name back on the code objects and the
lines into ``linecache``, where ``inspect.getsource`` finds them, even on a cluster node that
does not have the file.
"""
from __future__ import annotations

import importlib
import linecache
import pickle
import types

_WRAPPED = ("py_func", "__wrapped__", "fn", "func")


def _reachable(fn, limit=200):
    """The Python functions fn can reach: itself, the globals its code names, its closure cells,
    and the functions behind kernel/dispatcher objects; breadth-first, at most `limit`."""
    out, seen, todo = [], set(), [fn]
    while todo and len(out) < limit:
        f = todo.pop(0)
        if not isinstance(f, types.FunctionType):
            for a in _WRAPPED:
                g = getattr(f, a, None) if not isinstance(f, type) else None
                if isinstance(g, types.FunctionType):
                    todo.append(g)
            continue
        if id(f) in seen:
            continue
        seen.add(id(f))
        out.append(f)
        names = set()
        stack = [f.__code__]
        while stack:
            c = stack.pop()
            names.update(c.co_names)
            stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        g = f.__globals__
        for n in sorted(names):
            v = g.get(n)
            if v is not None and not isinstance(v, (types.ModuleType, type)):
                todo.append(v)
        for cell in f.__closure__ or ():
            try:
                todo.append(cell.cell_contents)
            except ValueError:
                pass
    return out


def _ident(f):
    c = f.__code__
    return (f.__qualname__, c.co_name, c.co_firstlineno)


def ship(fn):
    """fn as bytes for a worker: cloudpickle (lambdas, closures, ``__main__`` functions) when
    installed, else pickle (module-level functions of importable modules only)."""
    try:
        cp = importlib.import_module("cloudpickle")
    except ImportError:
        cp = None
    sources = {}
    for f in _reachable(fn):
        fname = f.__code__.co_filename
        if fname in sources:
            continue
        lines = linecache.getlines(fname, f.__globals__)
        if lines:
            sources[fname] = lines
    files = {_ident(f): f.__code__.co_filename for f in _reachable(fn)}
    try:
        body = cp.dumps(fn) if cp else pickle.dumps(fn)
    except Exception as e:  # noqa: BLE001
        hint = "" if cp else " (pip install cloudpickle to send lambdas and closures)"
        raise TypeError(f"sweep: cannot send {fn!r} to the workers: {e}{hint}") from e
    return pickle.dumps((body, files, sources))


def _refile(code, name):
    consts = tuple(_refile(k, name) if isinstance(k, types.CodeType) else k for k in code.co_consts)
    return code.replace(co_filename=name, co_consts=consts)


def unship(payload):
    """The function from `ship`, its functions' file names and source restored."""
    body, files, sources = pickle.loads(payload)
    fn = pickle.loads(body)
    for fname, lines in sources.items():
        if fname not in linecache.cache or not linecache.cache[fname][2]:
            linecache.cache[fname] = (sum(map(len, lines)), None, list(lines), fname)
    for f in _reachable(fn):
        want = files.get(_ident(f))
        if want and f.__code__.co_filename != want:
            f.__code__ = _refile(f.__code__, want)
    return fn


__all__ = ["ship", "unship"]
