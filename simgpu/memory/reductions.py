"""Which atomics are reductions: the CUDA compiler emits `RED` instead of `ATOM` for an
atomic whose old value is never used, and Nsight Compute counts those under `op_red`."""
from __future__ import annotations

from ..ir.nodes import Call, If, Instr, Loop, Return, walk


def _uses(fn):
    """name -> instructions that read it (control-flow reads are recorded as None)."""
    users = {}

    def add(v, ins):
        if isinstance(v, str):
            users.setdefault(v, []).append(ins)

    for s in walk(fn.body):
        if isinstance(s, Instr):
            for a in s.args:
                add(a, s)
        elif isinstance(s, If):
            add(s.cond, None)
        elif isinstance(s, Loop):
            add(s.cond, None)
            for a in s.range_args:
                add(a, None)
        elif isinstance(s, Return):
            add(s.value, None)
    return users


def reduction_ids(fn):
    """Ids of atomic instructions whose result is dead (unused, or only copied into
    variables that are themselves unused)."""
    if fn is None:
        return set()
    users = _uses(fn)
    rets = {s.ret for s in walk(fn.body) if isinstance(s, Call) and s.ret}

    def dead(name, seen):
        if name in seen:
            return True
        seen.add(name)
        if name in rets:
            return False
        return all(u is not None and u.op == "copy" and u.dst is not None and dead(u.dst, seen)
                   for u in users.get(name, ()))

    return {s.id for s in walk(fn.body)
            if isinstance(s, Instr) and s.op == "atomic" and (s.dst is None or dead(s.dst, set()))}
