"""TMA: tensor copies between global and shared memory through a tensor map (PTX ISA, "Data
Movement: cp.async.bulk.tensor", "tensormap.replace"), sm_90, as Triton's tensor descriptors
and CUTLASS compile them.

Tensor maps.  A CUtensorMap is 128 opaque bytes (64-byte aligned) that the driver's
``cuTensorMapEncodeTiled`` writes on the host, or that a kernel edits with
``tensormap.replace``.  simgpu defines its own layout (the hardware's is undocumented; only
simgpu's encoder, ``tensormap.replace`` and the copies below read it), little-endian:

====== ===== ================================================================================
offset bytes field
====== ===== ================================================================================
0      8     global address (16-byte aligned)
8      4     rank - 1 (0..4), as ``tensormap.replace.rank`` writes it
12     4     element type (the PTX ISA's ``.elemtype`` numbering: 0 u8 .. 6 f16, 7 f32, 10 bf16)
16     4     interleave (0 none; only 0 is run)
20     4     swizzle (0 none, 1 32B, 2 64B, 3 128B)
24     4     OOB fill (0 zeros, 1 NaN)
28     4     L2 promotion (kept, no effect)
32     4x5   global dimensions, innermost first
56     8x4   global strides in bytes of dimensions 1..4
88     4x5   box dimensions (1..256)
108    4x5   element (traversal) strides (1..8)
====== ===== ================================================================================

A tensor map argument (``.param .align 64 .b8 p[128]``) is used through the address of the
kernel parameter: ``mov.b64 %rd, p`` gives its param-space offset and ``cvta.param`` adds
``PARAM_WINDOW`` (a generic window no allocation overlaps); a copy whose tensor map lies there
reads the launch's parameter bytes, any other address reads 128 bytes of global memory.

Copies (tile mode, 1-D .. 5-D):

* ``cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes [dst],
  [tmap, {c0, ..}], [mbar]``: the box at coordinates c (signed, innermost first) is read from
  global memory -- elements outside the tensor are the fill (zero, or a quiet NaN) -- and laid out
  in shared memory densely, innermost dimension fastest (ceil(box/elementStride) elements a
  dimension), each 16-byte chunk at the swizzled address (bits [4, 4+s) ^= bits [7, 7+s) of the
  shared address, as wgmma reads it).  The copy's bytes (the whole box, fill included) complete
  a transaction on the mbarrier.
  Completion is modelled as cp.async's is (ops_async.py), so that a missing wait shows: the
  source is read when the copy executes, the destination is poisoned, and the data lands --
  and its bytes reach the mbarrier's tx-count -- when a thread of the block tests or waits on
  that mbarrier (``mbarrier.test_wait`` / ``try_wait``), in issue order.
* ``cp.async.bulk.tensor.Nd.global.shared::cta.bulk_group [tmap, {c..}], [src]``: the box is
  read from shared memory (the same layout) and written to global memory, elements outside the
  tensor dropped.  It completes when it executes; ``cp.async.bulk.commit_group`` and
  ``cp.async.bulk.wait_group{.read} N`` are therefore satisfied at once.
* ``tensormap.replace.tile.<field>{.shared::cta|.global}.b1024.b32|b64 [tmap], {ord,} value``
  writes one field of a tensor map (``tl.make_tensor_descriptor`` builds its maps so in shared
  memory); ``tensormap.cp_fenceproxy.global.shared::cta... [g], [s], 128`` copies one to global
  memory.  ``fence.proxy.tensormap``, ``fence.proxy.async`` and ``prefetch.tensormap`` have no
  effect (simgpu has one memory proxy).

Memory events: the copy's global reads (a load event of the global source, at the copy) and
shared writes (a store event, when the data lands), the store's shared reads and global writes,
each as 16-byte accesses by the issuing warp's lanes (one event per 512 bytes), so every level's
byte counts, the L2/DRAM model and the bank model see the traffic (the report counts them as
L1 requests of the instruction's line; on the card the TMA unit moves them, not the LSU).
``tensormap.cp_fenceproxy``'s 128 bytes are accesses of the one lane that copies.

Not modelled (each a clear error naming the instruction and the Python line): im2col, gather4 /
scatter4, multicast, ``.cta_group``, ``cp.reduce.async.bulk.tensor``, plain (non-tensor)
``cp.async.bulk``, interleaved layouts and the 32B-atomicity swizzles.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simgpu.errors import SimGPUError
from simgpu.ptx.instrs import guarded, reader, unsupported
from simgpu.ptx.memory import PARAM_WINDOW, POISON, SHARED_WINDOW, WINDOW_SIZE, MemFault, classify_generic
from simgpu.ptx.ops_mbarrier import complete_tx
from simgpu.ptx.ops_mem import _emit, address_reader, resolve
from simgpu.ptx.ops_wgmma import swizzle as _swizzle

TENSORMAP_BYTES = 128
O_ADDR, O_RANK, O_ETYPE, O_INTERLEAVE, O_SWIZZLE, O_FILL, O_L2 = 0, 8, 12, 16, 20, 24, 28
O_DIMS, O_STRIDES, O_BOX, O_ESTRIDES = 32, 56, 88, 108
# the PTX ISA's .elemtype numbering -> bytes per element
ELEM_BYTES = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 4, 9: 8, 10: 2, 11: 4, 12: 4}
FLOAT_TYPES = {6: 0x7FFF, 7: 0x7FFFFFFF, 8: 0x7FFFFFFF, 9: 0x7FFFFFFFFFFFFFFF, 10: 0x7FFF,
               11: 0x7FFFFFFF, 12: 0x7FFFFFFF}          # type -> its quiet NaN (the NaN fill)
SWIZZLE_BYTES = {0: 0, 1: 32, 2: 64, 3: 128}
# cuTensorMapEncodeTiled's CUtensorMapDataType -> the PTX ISA's .elemtype (they differ at 8-10)
HOST_TO_PTX_TYPE = {**{i: i for i in range(16)}, 8: 9, 9: 10, 10: 8}
_FIELDS = {"global_address": (O_ADDR, 8, 0), "rank": (O_RANK, 4, 0), "elemtype": (O_ETYPE, 4, 0),
           "interleave_layout": (O_INTERLEAVE, 4, 0), "swizzle_mode": (O_SWIZZLE, 4, 0),
           "fill_mode": (O_FILL, 4, 0), "box_dim": (O_BOX, 4, 5), "global_dim": (O_DIMS, 4, 5),
           "global_stride": (O_STRIDES, 8, 4), "element_stride": (O_ESTRIDES, 4, 5)}
_U8 = np.dtype(np.uint8)
_CHUNK = 16                 # bytes per lane of the copies' memory events


@dataclass(frozen=True)
class TensorMap:
    address: int
    rank: int
    elemtype: int
    interleave: int
    swizzle: int
    fill: int
    dims: tuple             # innermost first
    strides: tuple          # bytes, of dimensions 1..rank-1
    box: tuple
    estrides: tuple
    l2: int = 0

    @property
    def esize(self):
        return ELEM_BYTES[self.elemtype]

    @property
    def counts(self):
        """Elements a copy moves along each dimension: ceil(box / element stride)."""
        return tuple(-(-b // e) for b, e in zip(self.box, self.estrides))

    @property
    def nbytes(self):
        return int(np.prod(self.counts)) * self.esize


def encode_tiled(address, elemtype, dims, strides, box, estrides=None, interleave=0, swizzle=0,
                 fill=0, l2=0):
    """The 128 bytes of a tiled tensor map (simgpu's layout), checked as cuTensorMapEncodeTiled
    checks its arguments.  dims, box, estrides innermost first; strides: bytes, of dimensions
    1..rank-1; elemtype in the PTX ISA's numbering (HOST_TO_PTX_TYPE maps the driver's)."""
    rank = len(dims)
    estrides = tuple(estrides or (1,) * rank)
    dims, strides, box = tuple(int(d) for d in dims), tuple(int(s) for s in strides), tuple(int(b) for b in box)
    if not 1 <= rank <= 5 or len(box) != rank or len(estrides) != rank or len(strides) != rank - 1:
        raise SimGPUError(f"tensor map: rank {rank} with {len(box)} box dims, {len(estrides)} element "
                          f"strides and {len(strides)} strides (rank 1..5; rank - 1 strides)")
    if elemtype not in ELEM_BYTES:
        raise SimGPUError(f"tensor map: element type {elemtype} is not modelled")
    es = ELEM_BYTES[elemtype]
    if address % 16:
        raise SimGPUError(f"tensor map: global address {address:#x} is not 16-byte aligned")
    if any(not 1 <= d <= 1 << 32 for d in dims):
        raise SimGPUError(f"tensor map: global dimensions {dims} must be 1 .. 2^32")
    if any(s % 16 or not 0 < s < 1 << 40 for s in strides):
        raise SimGPUError(f"tensor map: global strides {strides} (bytes) must be multiples of 16 below 2^40")
    if any(not 1 <= b <= 256 for b in box) or (box[0] * es) % 16:
        raise SimGPUError(f"tensor map: box {box} must be 1 .. 256 with box[0] x {es} bytes a multiple of 16")
    if any(not 1 <= e <= 8 for e in estrides):
        raise SimGPUError(f"tensor map: element strides {estrides} must be 1 .. 8")
    if interleave:
        raise SimGPUError("tensor map: interleaved layouts are not modelled")
    if swizzle not in SWIZZLE_BYTES:
        raise SimGPUError(f"tensor map: swizzle {swizzle} is not modelled (0 none, 1 32B, 2 64B, 3 128B)")
    if swizzle and box[0] * es > SWIZZLE_BYTES[swizzle]:
        raise SimGPUError(f"tensor map: the box's inner dimension ({box[0] * es} bytes) is wider than "
                          f"the {SWIZZLE_BYTES[swizzle]}B swizzle")
    raw = np.zeros(TENSORMAP_BYTES, np.uint8)
    _put(raw, O_ADDR, 8, address)
    for off, v in ((O_RANK, rank - 1), (O_ETYPE, elemtype), (O_INTERLEAVE, interleave),
                   (O_SWIZZLE, swizzle), (O_FILL, fill), (O_L2, l2)):
        _put(raw, off, 4, v)
    for i in range(rank):
        _put(raw, O_DIMS + 4 * i, 4, dims[i] & 0xFFFFFFFF if dims[i] < 1 << 32 else 0xFFFFFFFF)
        _put(raw, O_BOX + 4 * i, 4, box[i])
        _put(raw, O_ESTRIDES + 4 * i, 4, estrides[i])
    for i, s in enumerate(strides):
        _put(raw, O_STRIDES + 8 * i, 8, s)
    return raw


def _put(raw, off, w, v):
    raw[off:off + w] = np.frombuffer(int(v).to_bytes(w, "little"), np.uint8)


def _get(raw, off, w):
    return int.from_bytes(bytes(raw[off:off + w]), "little")


def decode(raw):
    """TensorMap of 128 bytes; SimGPUError when they are not a map simgpu can run."""
    raw = np.asarray(raw, np.uint8)
    rank = _get(raw, O_RANK, 4) + 1
    if rank > 5:
        raise SimGPUError(f"the tensor map's rank field is {rank - 1} (rank - 1 must be 0..4)")
    m = TensorMap(_get(raw, O_ADDR, 8), rank, _get(raw, O_ETYPE, 4), _get(raw, O_INTERLEAVE, 4),
                  _get(raw, O_SWIZZLE, 4), _get(raw, O_FILL, 4),
                  tuple(_get(raw, O_DIMS + 4 * i, 4) for i in range(rank)),
                  tuple(_get(raw, O_STRIDES + 8 * i, 8) for i in range(rank - 1)),
                  tuple(_get(raw, O_BOX + 4 * i, 4) for i in range(rank)),
                  tuple(_get(raw, O_ESTRIDES + 4 * i, 4) for i in range(rank)), _get(raw, O_L2, 4))
    try:
        encode_tiled(m.address, m.elemtype, m.dims, m.strides, m.box, m.estrides, m.interleave,
                     m.swizzle, m.fill, m.l2)
    except SimGPUError as e:
        raise SimGPUError(f"not a valid tensor map ({e})") from None
    return m


def tensormap_param(raw):
    """The 128 bytes as a kernel parameter value (a numpy void scalar: args.pack_param)."""
    return np.frombuffer(np.asarray(raw, np.uint8).tobytes(), dtype=f"V{TENSORMAP_BYTES}")[0]


def param_offsets(specs):
    """Param-space offset of each kernel parameter (laid out in order, each at its alignment):
    what ``mov.b64 %rd, param`` gives."""
    out, off = {}, 0
    for p in specs:
        a = max(1, int(getattr(p, "align", 0) or 0), min(8, max(1, int(p.size))))
        off = -(-off // a) * a
        out[p.name] = off
        off += int(p.size)
    return out


def box_layout(m, coords):
    """(global byte offsets from the map's address, in-bounds mask, shared byte offsets before
    the swizzle) of the box's elements in shared-memory order (innermost dimension fastest)."""
    n = m.counts
    idx = np.indices(n[::-1]).reshape(m.rank, -1)[::-1].astype(np.int64)
    c = np.asarray(coords, np.int64)[:, None] + idx * np.asarray(m.estrides, np.int64)[:, None]
    inb = ((c >= 0) & (c < np.asarray(m.dims, np.int64)[:, None])).all(axis=0)
    goff = c[0] * m.esize
    for i, s in enumerate(m.strides):
        goff = goff + c[i + 1] * s
    soff = np.arange(idx.shape[1], dtype=np.int64) * m.esize
    return goff, inb, soff


# -- the executor's side ----------------------------------------------------------------------
class _State:
    def __init__(self):
        self.pending = []           # copies not landed: [_Copy]

    def land(self, ex, sub, bars):
        """ops_mbarrier's entry point (it cannot import this module: this one imports it)."""
        land(ex, sub, bars)


@dataclass
class _Copy:
    row: int                        # the block's row in the chunk
    bar: int                        # the mbarrier's shared address
    lane: int                       # the issuing chunk lane
    groups: list                    # shared destination (view, idx, pos)
    data: np.ndarray                # the box's elements, shared-memory order
    nbytes: int
    ins: object
    pc: int
    saddr: np.ndarray               # shared byte addresses (for the store event)


def _state(ex):
    st = ex.__dict__.get("_tma")
    if st is None:
        st = ex.__dict__["_tma"] = _State()
    return st


def _fail(ex, ins, msg, lane=None):
    ex.fault(ins, msg, lane)


def read_tensormap(ex, ins, addr, lane):
    """The TensorMap at generic address `addr` (a kernel parameter's, or global memory)."""
    addr = int(addr)
    if addr % 64:
        _fail(ex, ins, f"tensor map address {addr:#x} is not 64-byte aligned", lane)
    if addr & ~(WINDOW_SIZE - 1) == PARAM_WINDOW:
        im = ex.im
        k = getattr(im, "kernel", im)
        offs = getattr(k, "kernel_param_offsets", None) or param_offsets(k.kernel_param_specs)
        off = addr - PARAM_WINDOW
        name = next((n for n, o in offs.items() if o == off), None)
        raw = im.kernel_params.get(name) if name is not None else None
        if raw is None or len(raw) < TENSORMAP_BYTES:
            _fail(ex, ins, f"tensor map at parameter offset {off}: no 128-byte kernel parameter there", lane)
        raw = np.frombuffer(raw[:TENSORMAP_BYTES], np.uint8)
    else:
        if classify_generic(np.array([addr], np.uint64))[0][0]:
            _fail(ex, ins, "a tensor map in shared memory cannot be used by a copy (PTX ISA: .param, "
                  ".const or .global)", lane)
        try:
            groups = resolve(ex, "global", np.uint64(addr) + np.arange(TENSORMAP_BYTES, dtype=np.uint64),
                             1, _U8, np.full(TENSORMAP_BYTES, lane), [])
        except MemFault as err:
            _fail(ex, ins, f"tensor map: {err.msg}", lane)
        raw = np.empty(TENSORMAP_BYTES, np.uint8)
        for view, idx, pos in groups:
            raw[pos] = view[idx]
    try:
        return decode(raw)
    except SimGPUError as e:
        _fail(ex, ins, f"tensor map at {addr:#x}: {e}", lane)


def _events(ex, ins, pc, kind, space, lane, addrs):
    """The copy's traffic as 16-byte accesses by the issuing warp's lanes, 512 bytes an event."""
    if not ex.wants_mem or not len(addrs):
        return
    chunks = np.unique(np.asarray(addrs, np.uint64) & ~np.uint64(_CHUNK - 1))
    base = int(lane) - int(lane) % 32
    for k in range(0, len(chunks), 32):
        part = chunks[k:k + 32]
        _emit(ex, ins, pc, kind, _CHUNK, np.arange(base, base + len(part)), [(space, slice(None), part)])


def _lane_events(ex, ins, pc, kind, space, lane, addrs):
    """A small copy's traffic as 16-byte accesses of its own lane (one event each): a
    sanitizer sees the lane that made it (tensormap.cp_fenceproxy)."""
    if not ex.wants_mem:
        return
    for a in np.unique(np.asarray(addrs, np.uint64) & ~np.uint64(_CHUNK - 1)):
        _emit(ex, ins, pc, kind, _CHUNK, np.array([int(lane)]), [(space, slice(None), np.array([a]))])


def _shared_addr(a):
    a = np.asarray(a, np.uint64)
    sh = classify_generic(a)[0]
    return np.where(sh, a - np.uint64(SHARED_WINDOW), a)


def build_cp_bulk(ctx, ins):
    mods = list(ins.mods)
    ms = set(mods)
    if "commit_group" in ms or "wait_group" in ms:
        return _build_group(ctx, ins)
    if "tensor" not in ms:
        return unsupported(ctx, ins, "cp.async.bulk without .tensor (plain bulk copies) is not "
                                     "modelled yet; simgpu runs cp.async.bulk.tensor (simgpu/ptx/ops_tma.py)")
    bad = [m for m in mods if m.startswith(("im2col", "multicast", "cta_group", "tile::gather4",
                                            "tile::scatter4"))]
    if bad:
        return unsupported(ctx, ins, f"cp.async.bulk.tensor .{bad[0]} is not modelled (simgpu runs "
                                     "tile mode without multicast)")
    rank = next((int(m[0]) for m in mods if len(m) == 2 and m[1] == "d" and m[0] in "12345"), None)
    if rank is None:
        return unsupported(ctx, ins, "cp.async.bulk.tensor needs .1d .. .5d")
    spaces = [m for m in mods if m in ("global", "shared", "shared::cluster")]
    if spaces[:1] == ["global"] and "bulk_group" in ms:
        return _build_store(ctx, ins, rank)
    if spaces[:1] in (["shared::cluster"], ["shared"]) and "mbarrier::complete_tx::bytes" in ms:
        return _build_load(ctx, ins, rank)
    return unsupported(ctx, ins, "cp.async.bulk.tensor: simgpu runs .shared::cluster.global."
                                 "mbarrier::complete_tx::bytes and .global.shared::cta.bulk_group")


def _tensor_operand(ctx, ins, op, rank):
    if op[0] != "tensor" or len(op[2]) != rank:
        raise SimGPUError(f"expected [tensorMap, {{{rank} coordinates}}]")
    return address_reader(ctx, op[1]), [reader(ctx, c, "s32") for c in op[2]]


def _coords(ex, sub, cr):
    n = len(sub)
    return np.stack([np.broadcast_to(np.asarray(r(ex, sub)).astype(np.int64), (n,)) for r in cr])


def _build_load(ctx, ins, rank):
    ops = ins.operands
    try:
        if len(ops) not in (3, 4):
            raise SimGPUError("takes [dst], [tensorMap, {coordinates}], [mbar]{, cache-policy}")
        dst, bar = address_reader(ctx, ops[0]), address_reader(ctx, ops[2])
        tmap, cr = _tensor_operand(ctx, ins, ops[1], rank)
    except SimGPUError as e:
        return unsupported(ctx, ins, str(e))
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            n = len(sub)
            d = _shared_addr(np.broadcast_to(dst(ex, sub), (n,)))
            b = _shared_addr(np.broadcast_to(bar(ex, sub), (n,)))
            t = np.broadcast_to(tmap(ex, sub), (n,))
            cs = _coords(ex, sub, cr)
            st = _state(ex)
            for i, lane in enumerate(sub.tolist()):
                m = read_tensormap(ex, ins, t[i], lane)
                if m.rank != rank:
                    _fail(ex, ins, f"a .{rank}d copy through a rank-{m.rank} tensor map", lane)
                if int(d[i]) % 128:
                    _fail(ex, ins, f"shared destination {int(d[i]):#x} is not 128-byte aligned", lane)
                goff, inb, soff = box_layout(m, cs[:, i])
                T = np.dtype(f"u{m.esize}")
                fill = FLOAT_TYPES.get(m.elemtype, 0) if m.fill else 0
                data = np.full(len(goff), fill, T)
                ga = np.uint64(m.address) + goff[inb].astype(np.uint64)
                if len(ga):
                    try:
                        groups = resolve(ex, "global", ga, m.esize, T, np.full(len(ga), lane), [])
                    except MemFault as err:
                        _fail(ex, ins, f"TMA load: {err.msg}", lane)
                    got = np.empty(len(ga), T)
                    for view, idx, pos in groups:
                        got[pos] = view[idx]
                    data[inb] = got
                saddr = _swizzle(int(d[i]) + soff, SWIZZLE_BYTES[m.swizzle]).astype(np.uint64)
                try:
                    dg = resolve(ex, "shared", saddr, m.esize, T, np.full(len(saddr), lane), [])
                except MemFault as err:
                    _fail(ex, ins, f"TMA load: {err.msg}", lane)
                poison = T.type(int.from_bytes(bytes([POISON]) * m.esize, "little"))
                for view, idx, pos in dg:        # not visible before the mbarrier says so
                    view[idx] = poison
                st.pending.append(_Copy(int(ex.ch.block_row[lane]), int(b[i]), lane, dg, data,
                                        m.nbytes, ins, pc, saddr))
                _events(ex, ins, pc, "load", "global", lane, ga)
        ex.advance(lanes)
    return run


def land(ex, sub, bars):
    """Before lanes `sub` test mbarriers at shared addresses `bars`: the pending copies that
    signal those mbarriers (of the lanes' blocks) land, in issue order, and complete their
    bytes on the mbarrier."""
    st = ex.__dict__.get("_tma")
    if st is None or not st.pending:
        return
    rows = ex.ch.block_row[sub]
    keys = set(zip(rows.tolist(), _shared_addr(np.broadcast_to(bars, (len(sub),))).tolist()))
    keep = []
    for cp in st.pending:
        if (cp.row, cp.bar) not in keys:
            keep.append(cp)
            continue
        for view, idx, pos in cp.groups:
            view[idx] = cp.data[pos]
        _events(ex, cp.ins, cp.pc, "store", "shared", cp.lane, cp.saddr)
        complete_tx(ex, cp.ins, cp.lane, cp.bar, cp.nbytes)
    st.pending = keep


def _build_store(ctx, ins, rank):
    ops = ins.operands
    try:
        if len(ops) not in (2, 3):
            raise SimGPUError("takes [tensorMap, {coordinates}], [src]{, cache-policy}")
        tmap, cr = _tensor_operand(ctx, ins, ops[0], rank)
        src = address_reader(ctx, ops[1])
    except SimGPUError as e:
        return unsupported(ctx, ins, str(e))
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            n = len(sub)
            s = _shared_addr(np.broadcast_to(src(ex, sub), (n,)))
            t = np.broadcast_to(tmap(ex, sub), (n,))
            cs = _coords(ex, sub, cr)
            for i, lane in enumerate(sub.tolist()):
                m = read_tensormap(ex, ins, t[i], lane)
                if m.rank != rank:
                    _fail(ex, ins, f"a .{rank}d copy through a rank-{m.rank} tensor map", lane)
                if int(s[i]) % 128:
                    _fail(ex, ins, f"shared source {int(s[i]):#x} is not 128-byte aligned", lane)
                goff, inb, soff = box_layout(m, cs[:, i])
                T = np.dtype(f"u{m.esize}")
                saddr = _swizzle(int(s[i]) + soff, SWIZZLE_BYTES[m.swizzle]).astype(np.uint64)
                try:
                    sg = resolve(ex, "shared", saddr, m.esize, T, np.full(len(saddr), lane), [])
                    data = np.empty(len(saddr), T)
                    for view, idx, pos in sg:
                        data[pos] = view[idx]
                    ga = np.uint64(m.address) + goff[inb].astype(np.uint64)
                    if len(ga):
                        gg = resolve(ex, "global", ga, m.esize, T, np.full(len(ga), lane), [])
                        vals = data[inb]
                        for view, idx, pos in gg:
                            view[idx] = vals[pos]
                except MemFault as err:
                    _fail(ex, ins, f"TMA store: {err.msg}", lane)
                _events(ex, ins, pc, "load", "shared", lane, saddr)
                _events(ex, ins, pc, "store", "global", lane, ga)
        ex.advance(lanes)
    return run


def _build_group(ctx, ins):
    if "wait_group" in ins.mods and (len(ins.operands) != 1 or ins.operands[0][0] != "imm"):
        return unsupported(ctx, ins, "cp.async.bulk.wait_group takes an integer constant")
    return lambda ex, lanes, pc: ex.advance(lanes)      # stores complete when they execute


# -- tensormap.replace / cp_fenceproxy ------------------------------------------------------------
def build_tensormap(ctx, ins):
    mods = list(ins.mods)
    op = mods[0] if mods else ""
    if op == "replace":
        return _build_replace(ctx, ins)
    if op == "cp_fenceproxy":
        return _build_cp_fenceproxy(ctx, ins)
    return unsupported(ctx, ins, "simgpu runs tensormap.replace.tile and tensormap.cp_fenceproxy")


def _space(mods):
    return "shared" if "shared" in mods else "global" if "global" in mods else "generic"


def _build_replace(ctx, ins):
    mods = list(ins.mods)
    field = next((m for m in mods if m in _FIELDS), None)
    if "tile" not in mods or field is None:
        return unsupported(ctx, ins, "tensormap.replace: simgpu runs .tile with the fields "
                                     + ", ".join(sorted(_FIELDS)))
    off, w, nord = _FIELDS[field]
    ops = ins.operands
    if len(ops) != (3 if nord else 2) or (nord and ops[1][0] != "imm"):
        return unsupported(ctx, ins, f"tensormap.replace .{field} takes [addr]{', ord' if nord else ''}, value")
    if nord:
        k = int(ops[1][1])
        if not 0 <= k < nord:
            return unsupported(ctx, ins, f"tensormap.replace .{field}: ordinal {k} is out of range")
        off += w * k
    addr = address_reader(ctx, ops[0])
    val = reader(ctx, ops[-1], f"u{8 * w}")
    space = _space(mods)
    T = np.dtype(f"u{w}")
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            n = len(sub)
            a = np.broadcast_to(addr(ex, sub), (n,)).astype(np.uint64)
            if (a % np.uint64(64)).any():
                p = int(np.argmax(a % np.uint64(64) != 0))
                _fail(ex, ins, f"tensor map address {int(a[p]):#x} is not 64-byte aligned", sub[p])
            v = np.broadcast_to(np.asarray(val(ex, sub)).astype(T), (n,))
            events = []
            try:
                groups = resolve(ex, space, a + np.uint64(off), w, T, sub, events)
            except MemFault as err:
                _fail(ex, ins, err.msg, err.pos)
            for view, idx, pos in groups:
                view[idx] = v[pos]
            _emit(ex, ins, pc, "store", w, sub, events)
        ex.advance(lanes)
    return run


def _build_cp_fenceproxy(ctx, ins):
    ops = ins.operands
    if len(ops) != 3 or ops[2][0] != "imm" or ops[2][1] != TENSORMAP_BYTES:
        return unsupported(ctx, ins, "tensormap.cp_fenceproxy takes [global], [shared], 128")
    dst, src = address_reader(ctx, ops[0]), address_reader(ctx, ops[1])
    guard = guarded(ctx, ins)
    nb = np.arange(TENSORMAP_BYTES, dtype=np.uint64)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            n = len(sub)
            d = np.broadcast_to(dst(ex, sub), (n,)).astype(np.uint64)
            s = _shared_addr(np.broadcast_to(src(ex, sub), (n,)))
            rows = ex.ch.block_row[sub]
            seen = set()
            for i, lane in enumerate(sub.tolist()):       # the warp copies one map (.sync.aligned)
                key = (int(rows[i]), int(d[i]), int(s[i]))
                if key in seen:
                    continue
                seen.add(key)
                try:
                    sg = resolve(ex, "shared", s[i] + nb, 1, _U8, np.full(len(nb), lane), [])
                    raw = np.empty(len(nb), np.uint8)
                    for view, idx, pos in sg:
                        raw[pos] = view[idx]
                    gg = resolve(ex, "global", d[i] + nb, 1, _U8, np.full(len(nb), lane), [])
                    for view, idx, pos in gg:
                        view[idx] = raw[pos]
                except MemFault as err:
                    _fail(ex, ins, f"tensormap.cp_fenceproxy: {err.msg}", lane)
                _lane_events(ex, ins, pc, "load", "shared", lane, s[i] + nb)
                _lane_events(ex, ins, pc, "store", "global", lane, d[i] + nb)
        ex.advance(lanes)
    return run


HANDLERS = {"tensormap": build_tensormap}
