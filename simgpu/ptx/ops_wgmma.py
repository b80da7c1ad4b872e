"""Warpgroup-level tensor-core instructions (sm_90a): ``wgmma.mma_async`` and its
``fence`` / ``commit_group`` / ``wait_group`` (PTX ISA 9.7.15, "Asynchronous Warpgroup Level
Matrix Multiply-Accumulate Instructions").

wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}
    d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b;
    d, {a},    b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b;     (A from registers)

D (64 x N, f32) = A (64 x 16) B (16 x N) + (scale-d ? D : 0); imm-scale-a/b = -1 negates A/B;
N = 8, 16, ..., 256.  The 128 threads of a warpgroup (4 consecutive warps, the first a multiple
of 4 in its block) execute it together (``.aligned``; otherwise a clear error).

Register fragments (ISA "Register Fragments" for wgmma .m64nNk16), warp w of the warpgroup,
g = lane >> 2, t = lane % 4: D register r = 4i + j holds row 16w + g + 8(j >> 1), column
8i + 2t + (j & 1); A register j (f16/bf16 pairs) holds row 16w + g + 8(j & 1), columns
8(j >> 1) + 2t + [0, 1], lower element in the lower bits (mma.m16n8k16's A layout, per warp).

Shared-memory matrix descriptors (64 bits, ISA "Matrix Descriptor Format"): bits 0-13 start
address >> 4, 16-29 leading dimension byte offset (LBO) >> 4, 32-45 stride dimension byte offset
(SBO) >> 4, 49-51 matrix base offset, 62-63 swizzle (0 none, 1 128B, 2 64B, 3 32B).  The
canonical layouts (ISA "Shared Memory Matrix Layout"; T = 16 bytes, W the swizzle width in bytes),
for 16-bit elements, byte offset of element (mn, k) before the swizzle (``layout_offsets``):

* K-major (imm-trans = 0; A as M x K with K contiguous, B as N x K):
  none: (mn % 8) 16 + (mn // 8) SBO + (2k // 16) LBO + 2k % 16;
  W = 32/64/128: (mn % 8) W + (mn // 8) SBO + 2k (the 32 bytes of k16 lie inside one W row; LBO
  unused);
* MN-major (imm-trans = 1; M or N contiguous): with b = 2 mn,
  none: b % 16 + (k % 8) 16 + (b // 16) SBO + (k // 8) LBO;
  W: b % W + (k % 8) W + (b // W) LBO + (k // 8) SBO;
* the swizzle acts on the shared address a = start + offset: bits [4, 4 + s) ^= bits [7, 7 + s),
  s = log2(W / 16) (128B: 3, 64B: 2, 32B: 1).  A nonzero base offset is not modelled (error).

Checked: 128B K-major (A) and 128B MN-major (B) are what Triton 3.6's sm_90a matmul writes and
reads (its output equals the model's product: tests/test_ptx_wgmma.py); every mode is checked
against a numpy reference of the formulas above with hand-written PTX.  Not checked on an H200:
the interleaved (no swizzle), 32B and 64B modes.

Execution: the products are computed when the instruction is issued (the operands' shared
memory and A's registers are read then): the warpgroup's fragments are gathered into
(warpgroups, 64, 16) / (warpgroups, 16, N) / (warpgroups, 64, N) arrays and multiplied in one
compiled call (ops_mma.fused_mma).  D reaches its registers when a ``wgmma.wait_group N`` of
the same threads covers its group (every committed group but the N most recent), as the ISA's
completion rules say: until then the registers keep their old values, and a later wgmma of the
same threads that accumulates into them takes the pending D (the hardware's in-flight chaining).
A wgmma never committed is never written; a thread's write of a pending D register is
overwritten by the wait (both undefined in the ISA).  ``fence`` and ``commit_group`` check that
a whole warpgroup executes them.  Accumulation: ops_mma's model (all 16 products and C in one
fused step aligned to the largest exponent, truncated to 2^(emax - 25), the sum truncated to
f32), measured on the H200 for mma.sync m16n8k16; that HGMMA sums a k16 step the same way was an
assumption, confirmed on the H200 with the Triton matmul (validation/tensor_cores/wgmma/:
bit-identical on 194,656 outputs).  Not modelled: a program that overwrites the operands' shared
memory before the wait sees the old operands used (undefined in the ISA).

Also here: ``elect.sync`` (the lowest member lane leads) and ``setmaxnreg`` (checked, no effect).
"""
from __future__ import annotations

import numpy as np

from simgpu.errors import SimGPUError
from simgpu.ptx import ops_mma
from simgpu.ptx import sem_fp as fp
from simgpu.ptx.instrs import guarded, reader, unsupported, writer

SWIZZLE_BYTES = {0: 0, 1: 128, 2: 64, 3: 32}       # descriptor bits 62-63 -> swizzle width
_LANE = np.arange(32)
_G, _T = _LANE >> 2, _LANE & 3


def decode(desc):
    """uint64 descriptors -> dict of int64 arrays: start, lbo, sbo (bytes), base, swizzle (width
    in bytes, 0 for none)."""
    d = np.asarray(desc, np.uint64)
    f = lambda sh, bits: ((d >> np.uint64(sh)) & np.uint64((1 << bits) - 1)).astype(np.int64)
    return {"start": f(0, 14) << 4, "lbo": f(16, 14) << 4, "sbo": f(32, 14) << 4,
            "base": f(49, 3), "swizzle": np.vectorize(SWIZZLE_BYTES.get, otypes=[np.int64])(f(62, 2))}


def swizzle(addr, width):
    """The swizzle of a W-byte mode on shared addresses: bits [4, 4+s) ^= bits [7, 7+s)."""
    addr = np.asarray(addr, np.int64)
    width = np.asarray(width, np.int64)
    mask = np.where(width > 0, np.maximum(width // 16 - 1, 0), 0)
    return addr ^ (((addr >> 7) & mask) << 4)


def layout_offsets(mn, k, mn_major, width, lbo, sbo):
    """Byte offsets (before the swizzle) of 16-bit elements (mn, k) of a canonical layout
    (broadcasting int64 arrays; width 0 = no swizzle)."""
    mn, k = np.asarray(mn, np.int64), np.asarray(k, np.int64)
    if mn_major:
        b = 2 * mn
        inter = b % 16 + (k % 8) * 16 + (b // 16) * sbo + (k // 8) * lbo
        W = np.maximum(width, 16)
        swz = b % W + (k % 8) * W + (b // W) * lbo + (k // 8) * sbo
    else:
        kb = 2 * k
        inter = (mn % 8) * 16 + (mn // 8) * sbo + (kb // 16) * lbo + kb % 16
        swz = (mn % 8) * width + (mn // 8) * sbo + kb
    return np.where(width == 0, inter, swz)


def matrix_addresses(desc, rows, cols, mn_major, mn_axis):
    """Shared addresses (G, rows, cols) of the elements of the matrices the descriptors `desc`
    (G,) name; mn_axis 0: the matrix is (MN, K) (A), 1: (K, MN) (B)."""
    f = decode(desc)
    r = np.arange(rows)[None, :, None]
    c = np.arange(cols)[None, None, :]
    mn, k = (r, c) if mn_axis == 0 else (c, r)
    ex = lambda v: v[:, None, None]
    off = layout_offsets(mn, k, mn_major, ex(f["swizzle"]), ex(f["lbo"]), ex(f["sbo"]))
    return swizzle(ex(f["start"]) + off, ex(f["swizzle"])), f


_OFFSETS: dict = {}


def element_offsets(dv, rows, cols, mn_major, mn_axis, ex, ins, what, lane):
    """Element (16-bit) offsets in a block's shared memory of the (rows, cols) matrix that
    descriptor ``dv`` names (cached per descriptor and shape); a fault for a nonzero base
    offset, a misaligned or out-of-bounds address."""
    key = (dv, rows, cols, mn_major, mn_axis)
    got = _OFFSETS.get(key)
    if got is None:
        addr, f = matrix_addresses(np.array([dv], np.uint64), rows, cols, mn_major, mn_axis)
        got = (addr.reshape(-1), int(f["base"][0]))
        if len(_OFFSETS) > 4096:
            _OFFSETS.clear()
        _OFFSETS[key] = got
    addr, base = got
    if base != 0:
        ex.fault(ins, f"wgmma {what} descriptor with a nonzero matrix base offset is not modelled", lane)
    if int(addr.max()) + 2 > ex.shared.size:
        ex.fault(ins, f"wgmma {what}: out-of-bounds shared access: address {int(addr.max()):#x}, "
                 f"shared size {ex.shared.size} bytes", lane)
    if (addr & 1).any():
        ex.fault(ins, f"wgmma {what}: misaligned 2-byte shared access", lane)
    return addr >> 1


def _d_index(N):
    """D fragment of one warp (16 x N rows/cols per lane and register): (32, N/2, 1) each."""
    r = np.arange(N // 2)[None, :, None]
    i, j = r >> 2, r & 3
    g, t = _G[:, None, None], _T[:, None, None]
    return (np.broadcast_to(g + 8 * (j >> 1), (32, N // 2, 1)).copy(),
            np.broadcast_to(8 * i + 2 * t + (j & 1), (32, N // 2, 1)).copy())


_D_IDX: dict = {}
_A_IDX = ops_mma._a_index(16, 2)


def d_index(N):
    got = _D_IDX.get(N)
    if got is None:
        got = _D_IDX[N] = _d_index(N)
    return got


class _Chain:
    """The pending D of one wgmma register set (``keys``) kept as a matrix: the lanes ``sub``
    (whole warpgroups, in the order the wgmma saw them), D's f32 values as float64 (G, 64, N),
    and per lane the group it belongs to (its count of commit_groups when issued; -1: written
    by a wait, the registers hold it)."""
    __slots__ = ("sub", "D", "grp", "writers")

    def __init__(self, sub, D, grp, writers):
        self.sub, self.D, self.grp, self.writers = sub, D, grp, writers


class _Pending:
    """Per executor (chunk): D values computed but not yet written.  Two forms, the same
    semantics: a chain (``chains``: register key tuple -> _Chain) holds the D matrix of the
    latest wgmma on that register set, so that the next wgmma of the same lanes and registers
    accumulates on it without going through the registers (Triton's k loop: one commit group
    per k step, ``wait_group 1``: the chained accumulator is always the pending one); any other
    use (other lanes, registers shared with another set) first moves a chain into the columns
    form (``cols``: register key -> column of ``vals`` / ``grp``, per lane), which is what the
    per-register path reads and writes.  ``seq``: each lane's count of commit_groups."""

    def __init__(self, L):
        self.seq = np.zeros(L, np.int64)
        self.cols = {}                        # register key -> column of vals / grp
        self.writers = []                     # per column: the register's writer
        self.vals = np.zeros((L, 0), np.uint32)
        self.grp = np.full((L, 0), -1, np.int64)
        self._sets = {}                       # tuple of keys -> their columns (int64 array)
        self.chains = {}                      # tuple of keys -> _Chain
        self.chain_of = {}                    # register key -> the tuple of its chain
        self.col_live = np.zeros(0, bool)     # per column: may hold a pending value

    def columns(self, keys, writers):
        """The columns of registers ``keys`` (a tuple), new ones added with their writers."""
        got = self._sets.get(keys)
        if got is None:
            new = [(k, w) for k, w in zip(keys, writers) if k not in self.cols]
            if new:
                L, n0 = len(self.seq), len(self.writers)
                for i, (k, w) in enumerate(new):
                    self.cols[k] = n0 + i
                    self.writers.append(w)
                self.vals = np.concatenate([self.vals, np.zeros((L, len(new)), np.uint32)], 1)
                self.grp = np.concatenate([self.grp, np.full((L, len(new)), -1, np.int64)], 1)
                self.col_live = np.concatenate([self.col_live, np.zeros(len(new), bool)])
            got = self._sets[keys] = np.array([self.cols[k] for k in keys], np.int64)
        return got

    def spill(self, keys, idx_d):
        """Move the chain of register set ``keys`` (if any) into the columns form."""
        ch = self.chains.pop(keys, None)
        if ch is None:
            return
        for k in keys:
            self.chain_of.pop(k, None)
        live = ch.grp >= 0
        if live.any():
            G, N = ch.D.shape[0], ch.D.shape[2]
            cols = self.columns(keys, ch.writers)
            words = ops_mma.scatter(f32_bits(ch.D).reshape(G * 4, 16, N), idx_d, 1)
            lanes = ch.sub[live]
            at = np.ix_(lanes, cols)
            self.vals[at] = words[live]
            self.grp[at] = ch.grp[live][:, None]
            self.col_live[cols] = True

    def release(self, keys, idx_d):
        """Before the per-register path touches registers ``keys``: every chain sharing one of
        them goes to the columns form."""
        for k in keys:
            other = self.chain_of.get(k)
            if other is not None:
                self.spill(other, idx_d)


def f32_bits(r):
    """f32 values held as float64 -> their uint32 bits (NaN: the canonical f32 NaN), as
    ops_mma's compute returns them."""
    bits = r.astype(np.float32).view(np.uint32)
    return np.where(np.isnan(r), np.uint32(fp.F32_NAN), bits)


def pending(ex):
    p = ex.__dict__.get("_wgmma_pending")
    if p is None:
        p = ex.__dict__["_wgmma_pending"] = _Pending(ex.ch.L)
    return p


def warpgroups(ex, ins, sub):
    """The executing lanes must be whole warpgroups: (groups, 128) chunk lanes."""
    n = len(sub)
    if n % 128 == 0:
        w = sub.reshape(-1, 128)
        if ((ex.ch.tlin[w[:, 0]] % 128) == 0).all() and (np.diff(w, axis=1) == 1).all():
            return w
    ex.fault(ins, f"wgmma.{ins.mods[0]} executed by part of a warpgroup (the 128 threads of 4 "
             "consecutive warps, the first a multiple of 4, must execute it together)", sub[0])


def _parse(ins):
    mods = list(ins.mods)
    if mods[:3] != ["mma_async", "sync", "aligned"] or len(mods) != 4:
        raise SimGPUError("only wgmma.mma_async.sync.aligned.m64nNk16 is modelled")
    shape = mods[3]
    if not (shape.startswith("m64n") and shape.endswith("k16")):
        raise SimGPUError(f"wgmma shape .{shape} is not modelled (simgpu runs m64nNk16)")
    N = int(shape[4:-3])
    if N % 8 or not 8 <= N <= 256:
        raise SimGPUError(f"wgmma .{shape}: N must be a multiple of 8 from 8 to 256")
    if len(ins.types) != 3 or ins.types[0] != "f32" or ins.types[1] != ins.types[2] \
            or ins.types[1] not in ("f16", "bf16"):
        raise SimGPUError("wgmma types: simgpu runs .f32.f16.f16 and .f32.bf16.bf16")
    return N, ins.types[1]


def _imm(op, what, allowed):
    if op[0] != "imm" or op[1] not in allowed:
        raise SimGPUError(f"wgmma {what} must be an immediate in {sorted(allowed)}, got {op}")
    return op[1]


def build_wgmma(ctx, ins):
    op = ins.mods[0] if ins.mods else ""
    if op in ("fence", "commit_group", "wait_group"):
        return _build_sync(ctx, ins)
    try:
        N, t = _parse(ins)
        ops = ins.operands
        a_regs = ops[1][0] == "vec"
        if len(ops) != (7 if a_regs else 8) or ops[0][0] != "vec" or len(ops[0][1]) != N // 2:
            raise SimGPUError(f"wgmma m64n{N}k16 takes {N // 2} D registers, A (4 registers or a "
                              "descriptor), a B descriptor, scale-d and the immediates")
        if a_regs and len(ops[1][1]) != 4:
            raise SimGPUError("wgmma with A in registers takes 4 A registers")
        sa = _imm(ops[4], "imm-scale-a", {1, -1})
        sb = _imm(ops[5], "imm-scale-b", {1, -1})
        ta = 0 if a_regs else _imm(ops[6], "imm-trans-a", {0, 1})
        tb = _imm(ops[-1], "imm-trans-b", {0, 1})
    except SimGPUError as err:
        return unsupported(ctx, ins, str(err))
    wd = [writer(ctx, r, "b32") for r in ops[0][1]]
    rc = [reader(ctx, r, "b32") for r in ops[0][1]]
    keys = tuple(ctx.key(r[1]) for r in ops[0][1])
    ra = [reader(ctx, r, "b32") for r in ops[1][1]] if a_regs else reader(ctx, ops[1], "b64")
    rb = reader(ctx, ops[2], "b64")
    rs = reader(ctx, ops[3], "pred")
    guard = guarded(ctx, ins)
    model = ops_mma.MODEL[t]
    idx_d = d_index(N)
    neg = np.uint32(0x8000)

    def per_group(ex, v, n, G, what):
        v = np.broadcast_to(np.asarray(v), (n,)).reshape(G, 128)
        if (v != v[:, :1]).any():
            ex.fault(ins, f"wgmma {what} differs between the threads of a warpgroup")
        return v[:, 0]

    def load(ex, desc, first, rows, cols, mn_major, mn_axis, what):
        """The operand's 16-bit elements (G, rows, cols) as uint32, read from each warpgroup's
        block's shared memory through its descriptor (the element offsets are computed once
        per distinct descriptor and reused)."""
        u, inv = np.unique(desc, return_inverse=True)
        offs = np.empty((len(u), rows * cols), np.int64)
        for i, dv in enumerate(u.tolist()):
            offs[i] = element_offsets(dv, rows, cols, mn_major, mn_axis, ex, ins, what, first[inv == i][0])
        sh = ex.shared
        S = sh.typed(np.dtype(np.uint16)).reshape(-1, sh.size // 2)
        brow = ex.ch.block_row[first]
        if len(u) == 1:
            vals = S[brow[:, None], offs[0][None, :]]
        else:
            vals = S[brow[:, None], offs[inv]]
        return vals.reshape(len(first), rows, cols).astype(np.uint32)

    def accumulator(ex, pend, sub, n, G, keep):
        """C as f32 values (G, 64, N) float64: the chained pending D where there is one (the
        chain of these registers and lanes: no trip through the registers), else the
        registers' values with the per-register pending D in flight taking their place."""
        ch = pend.chains.get(keys)
        if ch is not None and not (len(ch.sub) == n and np.array_equal(ch.sub, sub)):
            pend.spill(keys, idx_d)             # other lanes: the per-register form
            ch = None
        live = None if ch is None else (ch.grp.reshape(G, 128)[:, 0] >= 0)
        if live is not None and live.all():
            C = ch.D
        else:
            pend.release(keys, idx_d)
            cols = pend.columns(keys, wd)
            C = np.stack([np.broadcast_to(np.asarray(r(ex, sub), np.uint32), (n,)) for r in rc], 1)
            if pend.col_live[cols].any():
                at = np.ix_(sub, cols)
                inflight = pend.grp[at] >= 0        # a pending D: the chained accumulator
                if inflight.any():
                    C = np.where(inflight, pend.vals[at], C)
                    pend.grp[at] = -1               # superseded by this wgmma's D (below)
            C = ops_mma.values("f32", ops_mma.gather(C, idx_d, 1, (16, N)).reshape(G, 64, N))
            if live is not None and live.any():
                C[live] = ch.D[live]
        if not keep.all():
            C = np.where(keep[:, None, None], C, 0.0)
        return C

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            wg = warpgroups(ex, ins, sub)
            G, n = len(wg), len(sub)
            first = wg[:, 0]
            if a_regs:
                A = np.stack([np.broadcast_to(np.asarray(r(ex, sub), np.uint32), (n,)) for r in ra], 1)
                Am = ops_mma.gather(A, _A_IDX, 2, (16, 16)).reshape(G, 64, 16)
            else:
                da = per_group(ex, ra(ex, sub), n, G, "A descriptor")
                Am = load(ex, da, first, 64, 16, ta == 1, 0, "A")
            db = per_group(ex, rb(ex, sub), n, G, "B descriptor")
            Bm = load(ex, db, first, 16, N, tb == 1, 1, "B")
            if sa == -1:
                Am = Am ^ neg
            if sb == -1:
                Bm = Bm ^ neg
            keep = per_group(ex, rs(ex, sub), n, G, "scale-d").astype(bool)
            pend = pending(ex)
            C = accumulator(ex, pend, sub, n, G, keep)
            with np.errstate(all="ignore"):
                D = ops_mma.fused_mma(ops_mma.values(t, Am), ops_mma.values(t, Bm), C, t, t, *model)
            pend.chains[keys] = _Chain(sub, D, pend.seq[sub].copy(), wd)
            for k in keys:
                pend.chain_of[k] = keys
        ex.advance(lanes)
    return run


def write_chain(ex, pend, ch, sub, keep):
    """wait_group ``keep`` executed by lanes ``sub``: the chain's lanes among them whose group
    is complete (all but the ``keep`` most recent committed) get D in their registers."""
    same = len(ch.sub) == len(sub) and np.array_equal(ch.sub, sub)
    mine = np.ones(len(ch.sub), bool) if same else np.isin(ch.sub, sub)
    done = mine & (ch.grp >= 0) & (ch.grp < pend.seq[ch.sub] - keep)
    if not done.any():
        return
    G, _, N = ch.D.shape
    wgd = done.reshape(G, 128)[:, 0]
    words = ops_mma.scatter(f32_bits(ch.D[wgd]).reshape(-1, 16, N), d_index(N), 1)
    lanes = ch.sub[done]
    for c, w in enumerate(ch.writers):
        w(ex, words[:, c], lanes)
    ch.grp[done] = -1


def _build_sync(ctx, ins):
    op = ins.mods[0]
    if list(ins.mods[1:]) != ["sync", "aligned"]:
        return unsupported(ctx, ins, f"wgmma.{op} is modelled as wgmma.{op}.sync.aligned")
    keep = 0
    if op == "wait_group":
        if len(ins.operands) != 1 or ins.operands[0][0] != "imm" or ins.operands[0][1] < 0:
            return unsupported(ctx, ins, "wgmma.wait_group takes an immediate N >= 0")
        keep = ins.operands[0][1]
    elif ins.operands:
        return unsupported(ctx, ins, f"wgmma.{op} takes no operands")
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            warpgroups(ex, ins, sub)
            if op == "commit_group":
                pending(ex).seq[sub] += 1
            elif op == "wait_group":
                pend = pending(ex)
                for ch in list(pend.chains.values()):
                    write_chain(ex, pend, ch, sub, keep)
                if pend.col_live.any():
                    limit = pend.seq[sub] - keep
                    g = pend.grp[sub]
                    done = (g >= 0) & (g < limit[:, None])
                    for c in np.flatnonzero(done.any(axis=0)):
                        lanes_done = sub[done[:, c]]
                        pend.writers[c](ex, pend.vals[lanes_done, c], lanes_done)
                        pend.grp[lanes_done, c] = -1
                    pend.col_live &= (pend.grp >= 0).any(axis=0)
        ex.advance(lanes)
    return run


# ---- other sm_90 warp / warpgroup instructions Triton and CUTLASS emit ---------------------
def build_elect(ctx, ins):
    """elect.sync d|p, membermask (sm_90): of the executing lanes of each warp that are in
    membermask, the lowest-numbered one is the leader (the ISA says "one"; the hardware's and
    CUTLASS' leader is the lowest lane); d = the leader's laneid in every such lane, p = true in
    the leader only.  Lanes outside membermask must not execute it (ISA: undefined): an error."""
    if list(ins.mods) != ["sync"] or len(ins.operands) != 2 or ins.operands[0][0] not in ("pair", "reg", "sink"):
        return unsupported(ctx, ins, "only elect.sync d|p, membermask is modelled")
    dst = ins.operands[0]
    wd, wp = (writer(ctx, dst[1], "b32"), writer(ctx, dst[2], "pred")) if dst[0] == "pair" else \
        (writer(ctx, dst, "b32"), None)
    mask = reader(ctx, ins.operands[1], "b32")
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            lane = ex.ch.laneid[sub].astype(np.int64)
            m = np.broadcast_to(np.asarray(mask(ex, sub), np.uint32), (len(sub),)).astype(np.int64)
            if not ((m >> lane) & 1).all():
                bad = sub[int(np.argmin((m >> lane) & 1))]
                ex.fault(ins, "elect.sync executed by a lane outside its membermask", bad)
            warp = ex.ch.warp_global[sub]
            _, inv = np.unique(warp, return_inverse=True)
            leader = np.full(inv.max() + 1, 99, np.int64)
            np.minimum.at(leader, inv, lane)
            ld = leader[inv]
            wd(ex, ld.astype(np.uint32), sub)
            if wp is not None:
                wp(ex, lane == ld, sub)
        ex.advance(lanes)
    return run


def build_setmaxnreg(ctx, ins):
    """setmaxnreg.{inc,dec}.sync.aligned.u32 imm (sm_90a): a hint to move registers between the
    warpgroups of a block; simgpu's registers are not a limited resource while it executes, so
    it checks the form (imm 24..256, a multiple of 8; a whole warpgroup) and does nothing (the
    kernel's register count for occupancy is ptxas' report, as for every kernel)."""
    mods = list(ins.mods)
    ops = ins.operands
    if len(mods) != 3 or mods[0] not in ("inc", "dec") or mods[1:] != ["sync", "aligned"] \
            or len(ops) != 1 or ops[0][0] != "imm" or not (24 <= ops[0][1] <= 256 and ops[0][1] % 8 == 0):
        return unsupported(ctx, ins, "setmaxnreg.{inc,dec}.sync.aligned.u32 N (N = 24..256, a "
                                     "multiple of 8) is the form the ISA defines")
    guard = guarded(ctx, ins)

    def run(ex, lanes, pc):
        sub = ex.all_lanes(guard(ex, lanes))
        if len(sub):
            warpgroups(ex, ins, sub)
        ex.advance(lanes)
    return run


HANDLERS = {"wgmma": build_wgmma, "elect": build_elect, "setmaxnreg": build_setmaxnreg}
