"""Facts about PTX types, in one place: how a register of each type is held in numpy, its size,
and the type each operand of an instruction is read as.

``bits(t)`` is a type's size in bits, ``nbytes(t)`` in bytes (``pred``: 1 byte); there is no
third meaning of "width".  ``signature(opcode, mods, types)`` gives (destination type, [source
types]), or (t, None) when every source has the destination's type t.
"""
from __future__ import annotations

import numpy as np

from simgpu.errors import SimGPUError

INT_T = {
    "u8": np.uint8, "s8": np.int8, "b8": np.uint8,
    "u16": np.uint16, "s16": np.int16, "b16": np.uint16,
    "u32": np.uint32, "s32": np.int32, "b32": np.uint32,
    "u64": np.uint64, "s64": np.int64, "b64": np.uint64,
}
DTYPES = {
    "f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
    "f16x2": np.uint32, "bf16x2": np.uint32, "pred": np.bool_,
    **INT_T,
}
FLOATS = ("f32", "f64", "f16", "bf16", "f16x2", "bf16x2")

# The condition-code register CC.CF of the carry chain (add.cc, addc, ...): one per function,
# per lane, held as u32 0 or 1.  The name cannot clash with a PTX register (PTX reserves %cc).
CC_REG = "%cc"


def np_dtype(t: str) -> np.dtype:
    """numpy dtype that holds a register value of PTX type ``t``."""
    try:
        return np.dtype(DTYPES[t])
    except KeyError:
        raise SimGPUError(f"PTX type .{t} has no numpy representation in simgpu") from None


def bits(t: str) -> int:
    """Size of PTX type t in bits (pred: 8, as it is held)."""
    return 8 * np_dtype(t).itemsize if t == "pred" or not t[1:].isdigit() else int(t[1:])


def nbytes(t: str) -> int:
    """Size of PTX type t in bytes (pred: 1)."""
    return np_dtype(t).itemsize


def is_signed(t: str) -> bool:
    return t[0] == "s"


def wider(t: str) -> str:
    return t[0] + str(2 * int(t[1:]))


# ---- operand signatures ------------------------------------------------------------------
def _sig_same(mods, types):
    return types[-1], None                          # None: every source has type t


def _sig_mul(mods, types):
    t = types[0]
    return (wider(t), [t, t]) if "wide" in mods else (t, [t, t])


def _sig_mad(mods, types):
    t = types[0]
    return (wider(t), [t, t, wider(t)]) if "wide" in mods else (t, [t, t, t])


SIGNATURES = {
    "mul": _sig_mul, "mad": _sig_mad,
    "shl": lambda m, t: (t[0], [t[0], "u32"]), "shr": lambda m, t: (t[0], [t[0], "u32"]),
    "setp": lambda m, t: ("pred", [t[0], t[0], "pred"]),
    "selp": lambda m, t: (t[0], [t[0], t[0], "pred"]),
    "slct": lambda m, t: (t[0], [t[0], t[0], t[1]]),
    # cvt.rn.{f16x2,bf16x2}.f32 d, a, b: two sources (a -> the upper half)
    "cvt": lambda m, t: (t[0], [t[1], t[1]] if t[0] in ("f16x2", "bf16x2") else [t[1]]),
    "popc": lambda m, t: ("u32", [t[0]]), "clz": lambda m, t: ("u32", [t[0]]),
    "bfind": lambda m, t: ("u32", [t[0]]),
    "testp": lambda m, t: ("pred", [t[0]]),
    "bfe": lambda m, t: (t[0], [t[0], "u32", "u32"]),
    "bfi": lambda m, t: (t[0], [t[0], t[0], "u32", "u32"]),
}


def signature(opcode: str, mods: tuple, types: tuple):
    """(destination type, [source types] or None) of an arithmetic instruction."""
    return SIGNATURES.get(opcode, _sig_same)(mods, types)
