"""Atomics, applied one lane at a time in a defined order (compiled with numba).

Order: the active lanes of a warp-instruction in lane order, warps in order within a
block, blocks in increasing linear block index (the order blocks are simulated in).
Real GPUs give no order; this one is documented so results are reproducible.
"""
from __future__ import annotations

import numpy as np
from numba import njit

OPS = {"add": 0, "sub": 1, "max": 2, "min": 3, "exch": 4, "and": 5, "or": 6, "xor": 7,
       "inc": 8, "dec": 9, "cas": 10, "nanmax": 11, "nanmin": 12}


@njit(cache=True)
def _apply_num(buf, idx, val, code, old):
    """add, sub, max, min, exch, nanmax, nanmin: valid for floats and ints."""
    for k in range(idx.shape[0]):
        i = idx[k]
        o = buf[i]
        old[k] = o
        v = val[k]
        if code == 0:
            buf[i] = o + v
        elif code == 1:
            buf[i] = o - v
        elif code == 2:
            if v > o:
                buf[i] = v
        elif code == 3:
            if v < o:
                buf[i] = v
        elif code == 4:
            buf[i] = v
        elif code == 11:
            if v > o or o != o:
                buf[i] = v
        elif code == 12:
            if v < o or o != o:
                buf[i] = v


@njit(cache=True)
def _apply_int(buf, idx, val, cmp, code, old):
    """and, or, xor, inc, dec, cas: integers only."""
    for k in range(idx.shape[0]):
        i = idx[k]
        o = buf[i]
        old[k] = o
        v = val[k]
        if code == 5:
            buf[i] = o & v
        elif code == 6:
            buf[i] = o | v
        elif code == 7:
            buf[i] = o ^ v
        elif code == 8:
            buf[i] = 0 if o >= v else o + 1
        elif code == 9:
            buf[i] = v if (o == 0 or o > v) else o - 1
        elif code == 10:
            if o == cmp[k]:
                buf[i] = v


def apply(buf, idx, val, fn, cmp=None):
    """Apply atomic `fn` to flat buffer `buf` at `idx` with values `val`; return old values."""
    idx = np.ascontiguousarray(idx, dtype=np.int64)
    val = np.ascontiguousarray(val, dtype=buf.dtype)
    cmp = val if cmp is None else np.ascontiguousarray(cmp, dtype=buf.dtype)
    old = np.empty(idx.shape[0], dtype=buf.dtype)
    if fn in ("and", "or", "xor", "inc", "dec", "cas") and buf.dtype.kind == "f":
        raise TypeError(fn)
    if fn in ("nanmax", "nanmin") and buf.dtype.kind != "f":
        fn = fn[3:]
    code = OPS[fn]
    if code in (5, 6, 7, 8, 9, 10):
        _apply_int(buf, idx, val, cmp, code, old)
    else:
        _apply_num(buf, idx, val, code, old)
    return old
