"""simgpu.ptx: TMA (cp.async.bulk.tensor through tensor maps, simgpu/ptx/ops_tma.py), mbarrier
transactions (ops_mbarrier.py) and Triton's tensor-descriptor kernels through simgpu.jit:

* simgpu's tensor-map layout round-trips between its encoder and its decoder, and the encoder
  refuses what cuTensorMapEncodeTiled refuses;
* a TMA load on hand-written PTX (a map passed as a kernel parameter, used through its address)
  against a numpy reference of the box, its OOB fill and the swizzle, written independently of
  the executor (chunk j of 128-byte line r goes to chunk j ^ (r mod span/16));
* the TMA store (shared -> global) drops the elements outside the tensor;
* mbarrier tx-count and phase parity: a wait fails before the bytes arrive, the destination
  reads as poison before the wait, a phase with more bytes expected than arrived stays open;
* FlashAttention-2 forward (Triton's tutorial, validation/tensor_cores/flash/kernels.py) on
  numpy inputs against a float32 numpy attention, and the TMA matmul against the H200's bits;
* an unmodelled TMA form is an error naming the PTX instruction and the Python line.
"""
import importlib.util
import json
import os
import sys

import numpy as np
import pytest

from simgpu.errors import SimGPUError
from simgpu.ptx import ops_tma
from simgpu.ptx.args import byte_span
from simgpu.ptx.memory import DeviceMemory
from simgpu.ptx.runner import run

HERE = os.path.dirname(os.path.abspath(__file__))
FLASH = os.path.join(os.path.dirname(HERE), "validation", "tensor_cores", "flash")
F16 = 6                                   # the PTX ISA's .elemtype f16


# -- tensor maps ---------------------------------------------------------------------------------
def test_tensormap_round_trip():
    raw = ops_tma.encode_tiled(0x10000000200, F16, (48, 40, 3), (96, 96 * 40), (32, 16, 2), (1, 2, 1),
                               swizzle=2, fill=1)
    assert raw.dtype == np.uint8 and raw.shape == (128,)
    m = ops_tma.decode(raw)
    assert (m.address, m.rank, m.elemtype, m.swizzle, m.fill) == (0x10000000200, 3, F16, 2, 1)
    assert m.dims == (48, 40, 3) and m.strides == (96, 3840) and m.box == (32, 16, 2) and m.estrides == (1, 2, 1)
    assert m.counts == (32, 8, 2) and m.nbytes == 32 * 8 * 2 * 2
    # the fields tensormap.replace writes are where the layout says
    assert int.from_bytes(raw[8:12].tobytes(), "little") == 2          # rank - 1
    assert int.from_bytes(raw[88:92].tobytes(), "little") == 32        # box_dim[0]
    assert int.from_bytes(raw[56:64].tobytes(), "little") == 96        # global_stride[0]


@pytest.mark.parametrize("kw, msg", [
    (dict(address=0x10000000008), "16-byte aligned"),
    (dict(strides=(100,)), "multiples of 16"),
    (dict(box=(72, 16)), "wider than"),
    (dict(box=(300, 1)), "1 .. 256"),
    (dict(box=(4, 16)), "multiple of 16"),
])
def test_tensormap_encoder_refuses_what_the_driver_refuses(kw, msg):
    args = dict(address=0x10000000000, elemtype=F16, dims=(64, 64), strides=(128,), box=(64, 16), swizzle=3)
    args.update(kw)
    with pytest.raises(SimGPUError, match=msg):
        ops_tma.encode_tiled(**args)
    with pytest.raises(SimGPUError, match="not a valid tensor map"):
        ops_tma.decode(np.zeros(128, np.uint8))          # a zeroed map: box dims 0


# -- hand-written PTX -----------------------------------------------------------------------------
KERNEL = """
.version 8.0
.target sm_90a
.address_size 64
.file 1 "tma_kernel.py"
.visible .entry k(.param .u64 src_p, .param .u64 dst_p, .param .align 64 .b8 tmap[128],
                  .param .align 64 .b8 dmap[128], .param .u64 out_p, .param .u64 flags_p,
                  .param .u32 c0, .param .u32 c1, .param .u32 d0, .param .u32 d1)
{
  .reg .pred %p<8>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<20>;
  .shared .align 1024 .b8 buf[SIZE];
  .shared .align 8 .b64 bar;
  .shared .align 8 .b64 bar2;
  .loc 1 10 0
  ld.param.u64 %rd1, [out_p];
  ld.param.u64 %rd7, [flags_p];
  ld.param.u32 %r20, [c0];
  ld.param.u32 %r21, [c1];
  ld.param.u32 %r22, [d0];
  ld.param.u32 %r23, [d1];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, bar;
  mov.u32 %r9, bar2;
  mov.u32 %r3, buf;
  mov.b64 %rd2, tmap;
  cvta.param.u64 %rd2, %rd2;
  mov.b64 %rd3, dmap;
  cvta.param.u64 %rd3, %rd3;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;
  @%p1 mbarrier.init.shared::cta.b64 [%r9], 1;
  bar.sync 0;
  .loc 1 11 0
  @%p1 mbarrier.arrive.expect_tx.shared.b64 _, [%r2], BYTES;
  mbarrier.try_wait.parity.shared.b64 %p2, [%r2], 0;
  selp.u32 %r4, 1, 0, %p2;
  .loc 1 12 0
  @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd2, {%r20, %r21}], [%r2];
  ld.shared.u32 %r5, [%r3];
  mbarrier.try_wait.parity.shared.b64 %p3, [%r2], 0;
  selp.u32 %r6, 1, 0, %p3;
  mbarrier.try_wait.parity.shared.b64 %p3, [%r2], 1;
  selp.u32 %r7, 1, 0, %p3;
  .loc 1 13 0
  @%p1 mbarrier.arrive.expect_tx.shared.b64 _, [%r9], BYTES;
  @%p1 mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r9], 16;
  @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd2, {%r20, %r21}], [%r9];
  mbarrier.try_wait.parity.shared.b64 %p4, [%r9], 0;
  selp.u32 %r8, 1, 0, %p4;
  @%p1 mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r9], 16;
  mbarrier.try_wait.parity.shared.b64 %p4, [%r9], 0;
  selp.u32 %r10, 1, 0, %p4;
  @!%p1 bra $COPY;
  st.global.u32 [%rd7], %r4;
  st.global.u32 [%rd7+4], %r5;
  st.global.u32 [%rd7+8], %r6;
  st.global.u32 [%rd7+12], %r7;
  st.global.u32 [%rd7+16], %r8;
  st.global.u32 [%rd7+20], %r10;
$COPY:
  .loc 1 14 0
  fence.proxy.async.shared::cta;
  @%p1 cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd3, {%r22, %r23}], [%r3];
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group.read 0;
  shl.b32 %r11, %r1, 2;
$LOOP:
  setp.ge.u32 %p5, %r11, SIZE;
  @%p5 bra $DONE;
  add.u32 %r12, %r3, %r11;
  ld.shared.u32 %r13, [%r12];
  cvt.u64.u32 %rd5, %r11;
  add.s64 %rd6, %rd1, %rd5;
  st.global.u32 [%rd6], %r13;
  add.u32 %r11, %r11, 512;
  bra $LOOP;
$DONE:
  ret;
}
"""


def reference_box(src, coords, box, fill):
    """The box of a 2-D array (coords and box innermost first) in shared-memory order, before
    the swizzle: rows of box[0] elements, fill outside the array."""
    rows, cols = src.shape
    out = np.full((box[1], box[0]), fill, src.dtype)
    for r in range(box[1]):
        for c in range(box[0]):
            y, x = coords[1] + r, coords[0] + c
            if 0 <= y < rows and 0 <= x < cols:
                out[r, c] = src[y, x]
    return out.reshape(-1).view(np.uint8)


def reference_swizzle(data, span):
    """16-byte chunk j of 128-byte line r goes to chunk j ^ (r mod span/16) (span 0: none)."""
    if not span:
        return data
    out = np.empty_like(data)
    for off in range(0, len(data), 16):
        line, j = off // 128, (off // 16) % 8
        dst = line * 128 + (j ^ (line % (span // 16))) * 16
        out[dst:dst + 16] = data[off:off + 16]
    return out


def addresses(*arrays):
    """Where run() places the arrays (flatten_args allocates them in order)."""
    mem = DeviceMemory()
    return [mem.alloc(byte_span(a)[0]) for a in arrays]


@pytest.mark.parametrize("swizzle, box0, fill", [(3, 64, 0), (2, 32, 0), (1, 16, 1), (0, 24, 0)])
def test_tma_load_oob_fill_swizzle_store_and_tx_counts(swizzle, box0, fill):
    rng = np.random.default_rng(swizzle)
    src = rng.standard_normal((40, 48)).astype(np.float16)            # rows x cols, innermost: cols
    dst = np.full((40, 48), 7, np.float16)
    box = (box0, 16)
    nbytes = box[0] * box[1] * 2
    out = np.zeros(nbytes, np.uint8)
    flags = np.full(6, 9, np.uint32)
    a_src, a_dst = addresses(src, dst)
    tmap = ops_tma.encode_tiled(a_src, F16, (48, 40), (96,), box, swizzle=swizzle, fill=fill)
    dmap = ops_tma.encode_tiled(a_dst, F16, (48, 40), (96,), box, swizzle=swizzle)
    c, d = (-8, 30), (40, -4)                      # OOB left and below; store: OOB right and above
    ptx = KERNEL.replace("SIZE", str(nbytes)).replace("BYTES", str(nbytes))
    img = run(ptx, "k", 1, 128, (src, dst, ops_tma.tensormap_param(tmap), ops_tma.tensormap_param(dmap), out, flags,
                                 np.int32(c[0]), np.int32(c[1]), np.int32(d[0]), np.int32(d[1])))
    assert img.memory.bases[:2] == [a_src, a_dst]
    nan = 0x7FFF if fill else 0
    ref = reference_box(src, c, box, np.uint16(nan).view(np.float16))
    assert np.array_equal(out, reference_swizzle(ref, {0: 0, 1: 32, 2: 64, 3: 128}[swizzle]))
    # a wait before the bytes arrive fails; the destination is poison until the wait; after it,
    # parity 0's phase has completed and parity 1's has not; 16 bytes more expected than a copy
    # brings keep the phase open until complete_tx brings them
    assert flags.tolist() == [0, 0xFFFFFFFF, 1, 0, 0, 1]
    # the store wrote the in-bounds part of the box at d, nothing else
    want = np.full((40, 48), 7, np.float16)
    boxv = ref.view(np.float16).reshape(box[1], box[0])
    for r in range(box[1]):
        for col in range(box[0]):
            y, x = d[1] + r, d[0] + col
            if 0 <= y < 40 and 0 <= x < 48:
                want[y, x] = boxv[r, col]
    assert np.array_equal(dst.view(np.uint16), want.view(np.uint16))


def test_wait_loop_without_the_bytes_never_passes():
    """A spin on try_wait whose phase expects bytes no copy brings runs until the step limit:
    it never passes by itself."""
    ptx = """
.version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 out_p)
{
  .reg .pred %p<4>;
  .reg .b32 %r<8>;
  .shared .align 8 .b64 bar;
  mov.u32 %r2, bar;
  mbarrier.init.shared::cta.b64 [%r2], 1;
  mbarrier.arrive.expect_tx.shared.b64 _, [%r2], 128;
$W:
  mbarrier.try_wait.parity.shared.b64 %p1, [%r2], 0;
  @!%p1 bra $W;
  ret;
}
"""
    with pytest.raises(Exception, match="step"):
        run(ptx, "k", 1, 1, (np.zeros(1, np.uint32),), max_steps=2000)


def test_unmodelled_tma_form_names_the_ptx_and_the_python_line():
    ptx = KERNEL.replace("SIZE", "2048").replace("BYTES", "2048").replace(
        "@%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd2, {%r20, %r21}], [%r2];",
        "@%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
        "[%r3], [%rd2, {%r20, %r21}], [%r2], %rs1;", 1).replace(".reg .b64 %rd<20>;", ".reg .b64 %rd<20>;\n  .reg .b16 %rs<2>;")
    src, dst = np.zeros((40, 48), np.float16), np.zeros((40, 48), np.float16)
    a_src, a_dst = addresses(src, dst)
    m = ops_tma.tensormap_param(ops_tma.encode_tiled(a_src, F16, (48, 40), (96,), (64, 16), swizzle=3))
    with pytest.raises(SimGPUError) as e:
        run(ptx, "k", 1, 128, (src, dst, m, m, np.zeros(2048, np.uint8), np.zeros(6, np.uint32),
                               np.int32(0), np.int32(0), np.int32(0), np.int32(0)))
    msg = str(e.value)
    assert "tma_kernel.py:12" in msg and "multicast::cluster" in msg and "cp.async.bulk.tensor" in msg


# -- Triton's kernels through simgpu.jit -------------------------------------------------------------
def _flash():
    """validation/tensor_cores/flash/kernels.py under its own name (other tests import other
    folders' ``kernels`` modules: a plain ``import kernels`` took whichever came first)."""
    pytest.importorskip("triton")
    name = "_simgpu_flash_kernels"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(FLASH, "kernels.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        sys.path.insert(0, FLASH)
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(FLASH)
    return sys.modules[name]


def attention32(q, k, v, causal, sm):
    q, k, v = (x.astype(np.float32) for x in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) * np.float32(sm)
    if causal:
        n = q.shape[-2]
        s = np.where(np.tril(np.ones((n, n), bool)), s, -np.inf)
    mx = s.max(-1, keepdims=True)
    p = np.exp(s - mx)
    return p @ v / p.sum(-1, keepdims=True), (mx[..., 0] + np.log(p.sum(-1))) / np.log(2)


@pytest.mark.parametrize("host, causal, BM, BN", [(True, False, 64, 32), (False, True, 64, 64)])
def test_flash_attention_forward_against_numpy(host, causal, BM, BN):
    """Tolerance: the kernel rounds P to fp16 before P @ V (relative 2^-11 of each p, so at most
    2^-11 max|v| on an output), rounds the output to fp16 (2^-12 relative) and computes exp2 and
    the division with ex2.approx / div.full (2 ulp of f32 each): |o - ref| <= 2^-10 max|v| + 2^-11|ref|
    bounds all of it.  A wrong box, swizzle or barrier gives errors of order |v|."""
    import simgpu
    import triton
    from triton.tools.tensor_descriptor import TensorDescriptor
    K = _flash()
    Z, H, N, D = 1, 2, 256 if causal else 128, 64
    q, k, v = K.fa_inputs("test", Z, H, N, D)
    o = np.full_like(q, np.nan)
    M = np.full((Z, H, N), np.nan, np.float32)
    y = Z * H * N
    descs = [TensorDescriptor(simgpu.as_tensor(x.reshape(y, D)), [y, D], [D, 1], [BM if i in (0, 3) else BN, D])
             for i, x in enumerate((q, k, v, o))] if host else [q, k, v, o]
    simgpu.jit(K._attn_fwd)[(triton.cdiv(N, BM), Z * H, 1)](
        0.5, M, Z, H, *descs, N, HEAD_DIM=D, BLOCK_M=BM, BLOCK_N=BN, FP8_OUTPUT=False, STAGE=3 if causal else 1,
        warp_specialize=False, IS_HOPPER=True, num_warps=4, num_stages=3, timing=False)
    ref, lse = attention32(q, k, v, causal, 0.5)
    bound = 2.0 ** -10 * np.abs(v.astype(np.float32)).max() + 2.0 ** -11 * np.abs(ref)
    assert (np.abs(o.astype(np.float32) - ref) <= bound).all()
    assert np.abs(M - lse).max() < 1e-4


def test_tma_matmul_matches_the_h200_bits():
    """The TMA matmul (host descriptors, OOB zero fill past M, N and K, the TMA store clipping
    rows and columns) on the H200's inputs gives the H200's output bits
    (validation/tensor_cores/flash/h200, Triton 3.6 on the card)."""
    import simgpu
    import triton
    from triton.tools.tensor_descriptor import TensorDescriptor
    K = _flash()
    data = np.load(os.path.join(FLASH, "h200", "h200_flash.npz"))
    name, Mm, Nn, Kk, BM, BN, BK, w, s = K.MM_CASES[1]
    a, b = data[name + "_a"].view(np.float16), data[name + "_b"].view(np.float16)
    c = np.full((Mm, Nn), np.nan, np.float16)
    ds = [TensorDescriptor.from_tensor(simgpu.as_tensor(x), blk) for x, blk in ((a, [BM, BK]), (b, [BK, BN]), (c, [BM, BN]))]
    rep = simgpu.jit(K.matmul_tma)[(triton.cdiv(Mm, BM), triton.cdiv(Nn, BN))](
        *ds, Mm, Nn, Kk, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, num_warps=w, num_stages=s)
    assert np.array_equal(c.view(np.uint16), data[name + "_c"])
    card = json.load(open(os.path.join(FLASH, "results.json")))["cases"][name]
    assert rep.extras["ptx"]["registers"] == card["registers_card"]


def test_box_layout_rank3_with_element_strides():
    """A 3-D box with a traversal stride of 2 on dimension 1: ceil(box/stride) elements a
    dimension, innermost fastest, OOB where any coordinate is outside, against a loop."""
    m = ops_tma.decode(ops_tma.encode_tiled(0x10000000000, F16, (16, 10, 3), (32, 320), (8, 5, 2), (1, 2, 1)))
    goff, inb, soff = ops_tma.box_layout(m, (12, -2, 2))
    want_g, want_in = [], []
    for z in range(2):
        for y in range(3):                       # ceil(5 / 2)
            for x in range(8):
                cx, cy, cz = 12 + x, -2 + 2 * y, 2 + z
                want_g.append(cx * 2 + cy * 32 + cz * 320)
                want_in.append(0 <= cx < 16 and 0 <= cy < 10 and 0 <= cz < 3)
    assert goff.tolist() == want_g and inb.tolist() == want_in
    assert soff.tolist() == [2 * i for i in range(48)] and m.nbytes == 96
