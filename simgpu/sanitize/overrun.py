"""Accesses past an allocation's end that the GPU runs (issue 25): inside the driver's
rounding of the allocation (ptx.memory.driver_span: 512 B, or 2 MiB above 1 MiB, measured on
the H200 -- validation/allocation/) a load returns the bytes there and a store lands there, as
on the card; compute-sanitizer's memcheck would report each access as an invalid global
read/write.  simgpu runs them, warns once per source line, and under ``check=True`` files them as
memcheck findings.  The executor records them (ptx/ops_mem.py ``_file_overruns``, one record
per PTX line and allocation); this module words them."""
from __future__ import annotations

import warnings

from ..errors import SimGPUWarning
from .findings import Finding

_KIND = {"load": "read", "store": "write", "atomic": "atomic"}


def _loc(r):
    s = r.get("loc")
    text = str(s) if s is not None else ""
    if not text or text == "None":
        return f"PTX line {r['ptx_line']}"
    parts = text.rsplit(":", 2)         # 'file:line:col' -> 'file:line'
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return f"{parts[0]}:{parts[1]}"
    return text


def _who(r):
    t, b = r["thread"], r["block"]
    return (f"thread ({', '.join(str(int(v)) for v in t)}) in block "
            f"({', '.join(str(int(v)) for v in b)})")


def message(r):
    """One line: what the access did, to which array, where inside the allocation's rounding."""
    what = _KIND.get(r["kind"], r["kind"])
    name = f"array {r['array']!r}" if r["array"] else "an allocation"
    far = r["size"] + r["max_past_end"]
    upto = f" to {far}" if r["max_past_end"] != r["past_end"] else ""
    return (f"Invalid __global__ {what} of {name} ({r['size']} bytes) at byte "
            f"{r['size'] + r['past_end']}{upto}, past its end but inside cuMemAlloc's rounding to "
            f"{r['span']} bytes")


def by_line(records):
    """The records merged per source line (several PTX lines or allocations may share one)."""
    out = {}
    for r in records.values() if isinstance(records, dict) else records:
        key = (_loc(r), r["kind"], r["array"])
        m = out.get(key)
        if m is None:
            out[key] = dict(r)
        else:
            m["count"] += r["count"]
            m["max_past_end"] = max(m["max_past_end"], r["max_past_end"])
    return list(out.values())


def warn(records, kernel, stacklevel=2):
    """A SimGPUWarning per source line that read or wrote past an array's end."""
    for r in by_line(records):
        warnings.warn(f"{_loc(r)}: in kernel {kernel!r}: {message(r)}, by {_who(r)} "
                      f"({r['count']} access{'es' if r['count'] != 1 else ''}). The H200 runs it "
                      "(the bytes are mapped; reads see whatever is there, here poison 0xFF "
                      "if never written); compute-sanitizer's memcheck reports it.",
                      SimGPUWarning, stacklevel=stacklevel)


def findings(records):
    """memcheck findings (one per source line) for a SanitizerReport."""
    out = []
    for r in by_line(records):
        out.append(Finding("memcheck", f"invalid {_KIND.get(r['kind'], r['kind'])}", message(r),
                           _loc(r), space="global", block=tuple(int(v) for v in r["block"]),
                           thread=tuple(int(v) for v in r["thread"]), array=r["array"] or None,
                           size=r["size"], count=r["count"],
                           details={"past_end": r["past_end"], "max_past_end": r["max_past_end"],
                                    "rounded_size": r["span"], "inside_rounding": True}))
    return out
