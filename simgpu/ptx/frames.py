"""Recursive device functions: each call's registers and .param space saved and restored.

The executor keeps one register array per (function, register) for all lanes, which is every
frame's storage as long as no function is active twice on a lane's call stack.  A recursive
function (numba compiles ``fib(n - 1) + fib(n - 2)`` to a PTX self-call) is: before a lane
enters one, the function's registers and .param stores of the calling lanes are pushed
(keyed by call depth), and when the lanes return to that depth they are restored -- after
the return values are read, so the caller sees them.  What ptxas does with a call stack in
local memory, in effect.  A recursive function's .local variables get one frame per call depth
(instrs.reader: their address is offset + depth x the image's frame; the image reserves
RECURSION_FRAMES frames per lane), so a pointer into the caller's frame (numba passes the
return slot so) stays valid.  Only functions runner.Image found on a call cycle pay for this.
"""
from __future__ import annotations

import numpy as np

RECURSION_FRAMES = 32       # local frames per lane for recursive functions (call depth)


def save_frame(ex, callee, idx, depth):
    """Push `callee`'s registers and .param stores for lanes `idx` calling from `depth`."""
    regs = {k: ex.reg(k)[idx].copy() for k in ex.im.reg_dtype if k[0] == callee}
    params = {k: v[idx].copy() for k, v in ex.params.items() if k[0] == callee}
    ex.__dict__.setdefault("frames", {}).setdefault(int(depth), []).append((idx.copy(), regs, params))


def restore_frame(ex, lanes, depth):
    """Lanes `lanes` returned to `depth`: restore what save_frame pushed for them there."""
    stack = ex.__dict__.get("frames", {}).get(int(depth))
    if not stack:
        return
    keep = []
    for idx, regs, params in stack:
        hit = np.isin(idx, lanes)
        if not hit.any():
            keep.append((idx, regs, params))
            continue
        who = idx[hit]
        for k, v in regs.items():
            ex.reg(k)[who] = v[hit]
        for k, v in params.items():
            p = ex.param_store(k, v.shape[1])
            p[who, :v.shape[1]] = v[hit]
        if not hit.all():
            rest = ~hit
            keep.append((idx[rest], {k: v[rest] for k, v in regs.items()},
                         {k: v[rest] for k, v in params.items()}))
    ex.frames[int(depth)] = keep
