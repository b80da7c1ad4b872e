"""print() on the PTX path: the CUDA runtime's ``vprintf(format, args)``, formatted as C does.

numba-cuda compiles ``print(a, b, ...)`` (numba/cuda/printimpl.py) to one call of the extern
function ``vprintf`` with two generic pointers: a NUL-terminated format string in ``.const``
(the items' formats joined by spaces, then ``\\n``: ``%lld`` for signed integers, ``%llu`` for
unsigned, ``%f`` for floats (promoted to double), ``%s`` for string literals and for
booleans ("True"/"False"), ``(%d, %d, %d)`` for Dim3, ``(...)`` for tuples) and a buffer
in the thread's ``.local`` frame holding the arguments, each at an offset aligned to its size
(LLVM's layout of the anonymous struct, CUDA's printf rule): 4-byte ints for ``%d``/``%c``/
``%x`` and ``*``, 8 bytes for ``l``/``ll``/``z``/``j``/``t`` integers, doubles, pointers.

Every lane that executes the call formats its own line (C printf semantics, below) and the
call returns, in the ``.b32`` return parameter, the number of arguments it consumed (CUDA:
"the number of arguments parsed").  The lines of a chunk are written when the chunk ends, in
this order -- one legal order of the GPU's printf buffer, which only keeps each warp's calls
in program order and a block's threads ordered by its barriers:

* blocks in increasing linear block id;
* within a block, the intervals between the barriers (``bar.sync``) that block passed, in order;
* within one interval, warps in increasing warp id;
* within a warp, calls in the order the warp executed them (program order; the two sides of
  a divergent branch in the order the executor ran them);
* within one call, lanes in increasing lane id (only the lanes that executed the call).

Formats (C99 printf, as glibc formats them -- the CUDA driver formats on the host):
``%d %i %u %o %x %X %c %s %p %e %E %f %F %g %G %a %A %n %%`` with flags ``-+ #0``, width and
precision (numbers or ``*``), length modifiers ``hh h l ll q j z t L``.  ``%s`` of NULL prints
``(null)``, ``%p`` of NULL ``(nil)``, ``%n`` stores nothing; NaN/inf as ``nan``/``-nan``/
``inf``.  ``%a`` ignores a precision.  Not modelled: the 1 MiB printf buffer's overflow
(nothing is dropped), memory traffic of vprintf itself (its reads are not reported to
observers), ``%ls``/wide characters.
"""
from __future__ import annotations

import math
import re
import sys

import numpy as np

from simgpu.ptx import instrs
from simgpu.ptx.instrs import guarded, unsupported
from simgpu.ptx.memory import classify_generic, load
from simgpu.ptx.ops_mem import resolve

MAX_STRING = 1 << 16            # longest %s / format string read (bytes)
_SPEC = re.compile(rb"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d*))?(hh|h|ll|l|L|q|j|z|t)?"
                   rb"([diouxXeEfFgGaAcspn%])")
_LONG = ("l", "ll", "q", "j", "z", "t")
U8 = np.dtype(np.uint8)


# ---- the format string ---------------------------------------------------------------------
class Spec:
    """One conversion: flags, width/precision (int, '*' or None), length, conversion, and the
    argument slots it consumes: [(offset in the buffer, numpy dtype)] filled by ``layout``."""
    __slots__ = ("flags", "width", "prec", "length", "conv", "slots")

    def __init__(self, flags, width, prec, length, conv):
        self.flags, self.width, self.prec, self.length, self.conv = flags, width, prec, length, conv
        self.slots = []

    def arg_types(self):
        out = []
        if self.width == "*":
            out.append(np.dtype(np.int32))
        if self.prec == "*":
            out.append(np.dtype(np.int32))
        c, long_ = self.conv, self.length in _LONG
        if c in "di":
            out.append(np.dtype(np.int64 if long_ else np.int32))
        elif c in "ouxX":
            out.append(np.dtype(np.uint64 if long_ else np.uint32))
        elif c == "c":
            out.append(np.dtype(np.int32))
        elif c in "eEfFgGaA":
            out.append(np.dtype(np.float64))
        elif c in "spn":
            out.append(np.dtype(np.uint64))
        return out


def parse_format(fmt):
    """bytes -> [bytes | Spec], with each Spec's argument offsets laid out (each argument
    aligned to its size, from offset 0 of the argument buffer)."""
    items, pos, off = [], 0, 0
    while pos < len(fmt):
        k = fmt.find(b"%", pos)
        if k < 0:
            items.append(fmt[pos:])
            break
        if k > pos:
            items.append(fmt[pos:k])
        m = _SPEC.match(fmt, k)
        if m is None:                       # not a conversion: printed as written
            items.append(b"%")
            pos = k + 1
            continue
        flags, width, prec, length, conv = (g.decode() if g is not None else None
                                            for g in m.groups())
        pos = m.end()
        if conv == "%":
            items.append(b"%")
            continue
        width = width if width in (None, "*") else int(width)
        prec = prec if prec in (None, "*") else int(prec or 0)
        s = Spec(flags or "", width, prec, length, conv)
        for t in s.arg_types():
            off = -(-off // t.itemsize) * t.itemsize
            s.slots.append((off, t))
            off += t.itemsize
        items.append(s)
    return items


# ---- formatting one value as C does ----------------------------------------------------------
def _pad(body, flags, width, zero_ok=False):
    """Pad ``body`` (bytes) to ``width``: left-justified with '-', zeros after the sign and
    0x prefix with '0' (where allowed), else spaces on the left."""
    if width is None or len(body) >= width:
        return body
    if "-" in flags:
        return body.ljust(width)
    if zero_ok and "0" in flags:
        head = 1 if body[:1] in (b"-", b"+", b" ") else 0
        if body[head:head + 2].lower() == b"0x":
            head += 2
        return body[:head] + b"0" * (width - len(body)) + body[head:]
    return body.rjust(width)


def _int(spec, flags, width, prec, v):
    c = spec.conv
    if spec.length == "hh":
        v = v & 0xFF if c in "ouxX" else ((v + 0x80) & 0xFF) - 0x80
    elif spec.length == "h":
        v = v & 0xFFFF if c in "ouxX" else ((v + 0x8000) & 0xFFFF) - 0x8000
    sign = "-" if v < 0 else "+" if (c in "di" and "+" in flags) else \
        " " if (c in "di" and " " in flags) else ""
    digits = {"d": "%d", "i": "%d", "u": "%d", "o": "%o", "x": "%x", "X": "%X"}[c] % abs(v)
    if prec == 0 and v == 0:
        digits = ""
    if prec is not None and len(digits) < prec:
        digits = "0" * (prec - len(digits)) + digits
    if "#" in flags:
        if c == "o" and not digits.startswith("0"):
            digits = "0" + digits
        elif c in "xX" and v != 0:
            digits = ("0x" if c == "x" else "0X") + digits
    return _pad((sign + digits).encode(), flags, width, zero_ok=prec is None)


def _hexfloat(v, upper):
    h = float.hex(abs(v))                               # '0x1.8000000000000p+0'
    m = re.match(r"0x([01])\.?([0-9a-f]*)p([+-]\d+)", h)
    frac = m.group(2).rstrip("0")
    s = f"0x{m.group(1)}{'.' + frac if frac else ''}p{m.group(3)}"
    return s.upper() if upper else s


def _float(spec, flags, width, prec, v):
    c = spec.conv
    neg = math.copysign(1.0, v) < 0
    sign = "-" if neg else "+" if "+" in flags else " " if " " in flags else ""
    if math.isnan(v) or math.isinf(v):
        body = "nan" if math.isnan(v) else "inf"
        return _pad((sign + (body.upper() if c.isupper() else body)).encode(), flags, width)
    if c in "aA":
        return _pad((sign + _hexfloat(v, c == "A")).encode(), flags, width, zero_ok=True)
    f = "%" + "".join(x for x in flags if x in "#") + (f".{prec}" if prec is not None else "") + c
    return _pad((sign + f % abs(v)).encode(), flags, width, zero_ok=True)


def format_spec(spec, vals, read_string):
    """Bytes for one conversion; ``vals`` are its slots' values (Python scalars) and
    ``read_string(pointer)`` reads a NUL-terminated string."""
    vals = list(vals)
    flags, width, prec = spec.flags, spec.width, spec.prec
    if width == "*":
        width = int(vals.pop(0))
        if width < 0:
            flags, width = flags + "-", -width
    if prec == "*":
        prec = int(vals.pop(0))
        prec = None if prec < 0 else prec
    c = spec.conv
    v = vals[0] if vals else 0
    if c in "diouxX":
        return _int(spec, flags, width, prec, int(v))
    if c in "eEfFgGaA":
        return _float(spec, flags, width, prec, float(v))
    if c == "c":
        return _pad(bytes([int(v) & 0xFF]), flags, width)
    if c == "s":
        s = b"(null)" if int(v) == 0 else read_string(int(v))
        return _pad(s if prec is None else s[:prec], flags, width)
    if c == "p":
        return _pad(b"(nil)" if int(v) == 0 else b"0x%x" % int(v), flags, width)
    return b""                                          # %n: nothing printed, nothing stored


def c_printf(fmt, args):
    """C printf of ``fmt`` (bytes) with ``args`` (Python values in slot order; strings as
    bytes): a helper for tests and hand-written formats.  Returns bytes."""
    strings = {k + 1: a for k, a in enumerate(args) if isinstance(a, bytes)}
    it = iter(k + 1 if isinstance(a, bytes) else a for k, a in enumerate(args))
    out = []
    for x in parse_format(fmt):
        if isinstance(x, bytes):
            out.append(x)
        else:
            vals = [next(it) for _ in x.slots]
            out.append(format_spec(x, vals, strings.__getitem__))
    return b"".join(out)


# ---- reading the thread's memory ---------------------------------------------------------------
def read_cstring(ex, addr, lane):
    """The NUL-terminated bytes at generic address ``addr`` as chunk lane ``lane`` sees them."""
    groups = resolve(ex, "generic", np.array([addr], np.uint64), 1, U8,
                     np.array([lane], np.int64), [])
    view, idx, _ = groups[0]
    start = int(np.asarray(idx).reshape(-1)[0])
    seg = np.asarray(view[start:start + MAX_STRING])
    z = np.flatnonzero(seg == 0)
    return seg[:int(z[0]) if len(z) else len(seg)].tobytes()


def _read_slots(ex, lanes, bufs, slots):
    """Per slot, the values at buffer + offset for each lane (numpy arrays)."""
    out = []
    for off, t in slots:
        addrs = bufs + np.uint64(off)
        out.append(load(resolve(ex, "generic", addrs, t.itemsize, t, lanes, []), len(lanes), t))
    return out


def format_lanes(ex, lanes, fmts, bufs):
    """(texts, consumed-argument counts) for the lanes' vprintf(fmt, buf) calls."""
    texts, counts = [b""] * len(lanes), np.zeros(len(lanes), np.int32)
    cache = ex.im.__dict__.setdefault("printf_formats", {})
    const = classify_generic(fmts)[2]
    # a format in .const (numba's) is parsed once per image; one elsewhere, per lane
    groups = [np.flatnonzero(fmts == f) for f in np.unique(fmts[const])] + \
        [np.array([p]) for p in np.flatnonzero(~const)]
    for pos in groups:
        key = int(fmts[pos[0]])
        if key == 0:
            counts[pos] = -1                            # NULL format: CUDA returns -1
            continue
        items = cache.get(key) if const[pos[0]] else None
        if items is None:
            items = parse_format(read_cstring(ex, key, int(lanes[pos[0]])))
            if const[pos[0]]:
                cache[key] = items
        specs = [x for x in items if not isinstance(x, bytes)]
        slots = [s for x in specs for s in x.slots]
        sub = lanes[pos]
        values = _read_slots(ex, sub, bufs[pos], slots)
        for j, lane in enumerate(sub):
            k, out = 0, []
            for x in items:
                if isinstance(x, bytes):
                    out.append(x)
                    continue
                vals = [values[k + m][j].item() for m in range(len(x.slots))]
                k += len(x.slots)
                out.append(format_spec(x, vals, lambda p, ln=int(lane): read_cstring(ex, p, ln)))
            texts[pos[j]] = b"".join(out)
        counts[pos] = len(slots)
    return texts, counts


# ---- the call ------------------------------------------------------------------------------------
def _param_u64(ex, key, idx):
    return np.ascontiguousarray(ex.param_store(key, 8)[idx, :8]).view(np.uint64)[:, 0]


def build_vprintf(ctx, ins, rets, args):
    if len(args) != 2 or any(a[0] != "sym" for a in args):
        return unsupported(ctx, ins, "vprintf takes two .param arguments (format, buffer)")
    fkey, bkey = (ctx.func, args[0][1]), (ctx.func, args[1][1])
    rkey = (ctx.func, rets[0][1]) if rets and rets[0][0] == "sym" else None
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        idx = ex.all_lanes(guard(ex, lanes))
        if len(idx):
            texts, counts = format_lanes(ex, idx, _param_u64(ex, fkey, idx), _param_u64(ex, bkey, idx))
            ch = ex.ch
            ex.prints.append((ch.block_row[idx], ex.epoch, ch.warp_global[idx], ex.steps,
                              ch.laneid[idx], texts))
            if rkey is not None:
                ex.param_store(rkey, 4)[idx, :4] = counts.view(np.uint8).reshape(len(idx), 4)
        ex.advance(lanes)
    return run


def build_call(ctx, ins):
    """``call`` of the extern ``vprintf`` -> build_vprintf; every other call -> instrs'."""
    ops = ins.operands
    rets = ops[0][1] if ops and ops[0][0] == "list" else []
    rest = ops[1:] if ops and ops[0][0] == "list" else ops
    if rest and rest[0][0] == "sym" and rest[0][1] == "vprintf":
        fn = ctx.im.module.functions.get("vprintf")
        if fn is not None and fn.body is None:
            args = rest[1][1] if len(rest) > 1 and rest[1][0] == "list" else []
            return build_vprintf(ctx, ins, rets, args)
    return instrs.build_call(ctx, ins)


# ---- the output ----------------------------------------------------------------------------------
def emit(records, printed, out=None):
    """Sort a chunk's records (block, barrier epoch, warp, step, lane) and write them: the
    text to ``out`` (sys.stdout when None, looked up now), one entry per call per thread --
    its text, the trailing newline removed -- to ``printed``."""
    if not records:
        return
    blk = np.concatenate([r[0] for r in records])
    epoch = np.concatenate([np.full(len(r[0]), r[1], np.int64) for r in records])
    warp = np.concatenate([r[2] for r in records])
    step = np.concatenate([np.full(len(r[0]), r[3], np.int64) for r in records])
    lane = np.concatenate([r[4] for r in records])
    texts = [t for r in records for t in r[5]]
    order = np.lexsort((lane, step, warp, epoch, blk))
    chunks = [texts[i].decode("utf-8", "replace") for i in order]
    records.clear()
    printed.extend(t[:-1] if t.endswith("\n") else t for t in chunks)
    stream = out if out is not None else sys.stdout
    stream.write("".join(chunks))
    flush = getattr(stream, "flush", None)
    if flush is not None:
        flush()


__all__ = ["build_call", "c_printf", "emit", "format_spec", "parse_format"]
