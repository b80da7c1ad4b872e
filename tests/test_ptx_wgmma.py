"""wgmma (sm_90a): Triton's tutorial fp16 matmul compiled for the H200 (GPUTarget("cuda", 90, 32),
.target sm_90a) through simgpu's front door against the k16-step model and numpy; the H200's
own outputs for the card's PTX (validation/tensor_cores/wgmma/); hand-written wgmma PTX against
a numpy reference of the ISA's shared-memory layouts (every swizzle mode, K- and MN-major, A from
registers or a descriptor) and of its register fragments."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import simgpu
from simgpu.ptx import ops_mma, ops_wgmma
from simgpu.ptx.runner import run

HERE = os.path.dirname(os.path.abspath(__file__))
VAL = os.path.join(os.path.dirname(HERE), "validation", "tensor_cores", "wgmma")


def _model():
    spec = importlib.util.spec_from_file_location("_tc_sm80_model", os.path.join(HERE, "test_ptx_triton_mma.py"))
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except pytest.skip.Exception:
        pytest.skip("triton is not installed")
    return mod.model_matmul


# ---- hand-written wgmma PTX --------------------------------------------------------------
def layout_reference(mn, k, mn_major, width, lbo, sbo):
    """Byte address of 16-bit element (mn, k) in an operand whose layout the descriptor names,
    written as the ISA draws it: rows of `width` bytes (K-major: one per mn; MN-major: one per
    k) in 8-row atoms whose 16-byte chunks are XOR-ed with the row's position in the 1024-byte
    repeat ((row % 8) * width // 128); no swizzle: 8 x 16-byte core matrices."""
    if width == 0:
        if mn_major:
            return (2 * mn // 16) * sbo + (k // 8) * lbo + (k % 8) * 16 + (2 * mn) % 16
        return (mn // 8) * sbo + (2 * k // 16) * lbo + (mn % 8) * 16 + (2 * k) % 16
    row, inrow, col_block, atom = ((k % 8, (2 * mn) % width, (2 * mn) // width, k // 8) if mn_major
                                   else (mn % 8, 2 * k, 0, mn // 8))
    chunk = (inrow // 16) ^ (((row * width) // 128) % (width // 16))
    return atom * sbo + col_block * lbo + row * width + chunk * 16 + inrow % 16


def wgmma_ptx(N, a_regs, sa, sb, ta, tb, image_words, t="f16"):
    D = ",".join(f"%d{i}" for i in range(N // 2))
    lines = [".version 8.0", ".target sm_90a", ".address_size 64",
             ".visible .entry k(.param .u64 pimg, .param .u64 pc, .param .u64 pd, .param .u64 pa,"
             " .param .u64 da, .param .u64 db, .param .u32 keep)", "{",
             f".reg .b32 %d<{N // 2}>;", ".reg .b32 %a<4>;", ".reg .b32 %r<16>;", ".reg .b64 %rd<32>;",
             ".reg .pred %p<2>;", f".shared .align 1024 .b8 smem[{4 * image_words}];",
             "mov.u32 %r1, %tid.x;", "ld.param.u64 %rd1, [pimg];", "mul.wide.u32 %rd2, %r1, 4;",
             "mov.u32 %r2, smem;", "cvt.u64.u32 %rd3, %r2;"]
    for i in range(image_words // 128):            # thread t copies words t, t + 128, ...
        lines += ["add.u64 %rd4, %rd1, %rd2;", f"ld.global.b32 %r3, [%rd4+{512 * i}];",
                  "add.u64 %rd5, %rd3, %rd2;", f"st.shared.b32 [%rd5+{512 * i}], %r3;"]
    lines += ["bar.sync 0;", "shr.u64 %rd6, %rd3, 4;",
              "ld.param.u64 %rd7, [da];", "add.u64 %rd7, %rd7, %rd6;",
              "ld.param.u64 %rd8, [db];", "add.u64 %rd8, %rd8, %rd6;",
              "ld.param.u64 %rd9, [pc];", f"mul.wide.u32 %rd10, %r1, {2 * N};",
              "add.u64 %rd9, %rd9, %rd10;", "ld.param.u64 %rd11, [pd];", "add.u64 %rd11, %rd11, %rd10;",
              "ld.param.u64 %rd12, [pa];", "mul.wide.u32 %rd13, %r1, 16;", "add.u64 %rd12, %rd12, %rd13;",
              "ld.param.u32 %r4, [keep];", "setp.ne.u32 %p1, %r4, 0;"]
    lines += [f"ld.global.b32 %d{i}, [%rd9+{4 * i}];" for i in range(N // 2)]
    lines += [f"ld.global.b32 %a{i}, [%rd12+{4 * i}];" for i in range(4)]
    a = "{%a0,%a1,%a2,%a3}" if a_regs else "%rd7"
    imms = f"{sa}, {sb}, {tb}" if a_regs else f"{sa}, {sb}, {ta}, {tb}"
    lines += ["wgmma.fence.sync.aligned;",
              f"wgmma.mma_async.sync.aligned.m64n{N}k16.f32.{t}.{t} {{{D}}}, {a}, %rd8, %p1, {imms};",
              "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;"]
    lines += [f"st.global.b32 [%rd11+{4 * i}], %d{i};" for i in range(N // 2)]
    lines += ["ret;", "}"]
    return "\n".join(lines) + "\n"


def d_fragment(thread, reg):
    """The ISA's wgmma D fragment: (row, column) of f32 register `reg` of `thread` (0..127)."""
    w, lane = thread // 32, thread % 32
    g, t, i, j = lane >> 2, lane & 3, reg >> 2, reg & 3
    return 16 * w + g + 8 * (j >> 1), 8 * i + 2 * t + (j & 1)


def a_fragment(thread, reg, half):
    w, lane = thread // 32, thread % 32
    g, t = lane >> 2, lane & 3
    return 16 * w + g + 8 * (reg & 1), 8 * (reg >> 1) + 2 * t + half


def place(image, vals, rows, cols, mn_axis, mn_major, width, lbo, sbo, base):
    """Write the 16-bit element bits `vals` (rows x cols) into the byte image at their layout
    addresses (mn_axis 0: rows are mn)."""
    for r in range(rows):
        for c in range(cols):
            mn, k = (r, c) if mn_axis == 0 else (c, r)
            addr = base + layout_reference(mn, k, mn_major, width, lbo, sbo)
            image[addr:addr + 2] = np.frombuffer(np.uint16(vals[r, c]).tobytes(), np.uint8)


SWZ_CODE = {0: 0, 128: 1, 64: 2, 32: 3}


def desc(start, lbo, sbo, width):
    return (start >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (SWZ_CODE[width] << 62)


def strides(width, mn_major, extent_mn):
    """(LBO, SBO) a canonical tile of this operand uses."""
    if width == 0:
        return (128, 256) if not mn_major else (128 * (extent_mn // 8), 128)
    return (0 if not mn_major else 8 * width * 2, 8 * width)


CASES = [  # (A swizzle, A MN-major, B swizzle, B MN-major, A from registers, scale-a, scale-b, keep C, N)
    (128, False, 128, True, False, 1, 1, True, 64),      # Triton's sm_90a matmul's modes
    (128, False, 128, False, False, -1, 1, True, 64),
    (128, True, 128, True, False, 1, -1, False, 128),
    (64, False, 64, True, False, 1, 1, True, 32),
    (32, True, 32, False, False, 1, 1, True, 16),
    (0, False, 0, False, False, 1, 1, True, 64),
    (0, True, 0, True, False, 1, 1, False, 24),
    (None, None, 128, True, True, -1, -1, True, 64),
    (128, False, 128, True, False, 1, 1, True, 256, "bf16"),
    (None, None, 64, False, True, 1, 1, True, 8, "bf16"),
]


def _bf16(x):
    """float64 -> bf16 bits (round to nearest even) as a uint16 array viewed as float16 storage."""
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return (((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)).view(np.float16)


def _values(t, h):
    if t == "bf16":
        return (h.view(np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return h.astype(np.float64)


@pytest.mark.parametrize("aw, am, bw, bm, a_regs, sa, sb, keep, N, t", [c if len(c) == 10 else c + ("f16",) for c in CASES])
def test_wgmma_descriptors_and_fragments(aw, am, bw, bm, a_regs, sa, sb, keep, N, t):
    rng = np.random.default_rng(N + (aw or 7) + 3 * bool(am) + 5 * bool(bm))
    conv = _bf16 if t == "bf16" else (lambda x: x.astype(np.float16))
    A = conv(rng.standard_normal((64, 16)) * np.exp2(rng.integers(-6, 7, (64, 16))))
    B = conv(rng.standard_normal((16, N)))
    C = rng.standard_normal((64, N)).astype(np.float32)
    a_base, b_base = 0, 16384                     # 1024-aligned: the swizzle's repeat
    image = np.zeros(32768, np.uint8)
    if not a_regs:
        la, sa_ = strides(aw, am, 64)
        place(image, A.view(np.uint16), 64, 16, 0, am, aw, la, sa_, a_base)
        da = desc(a_base, la, sa_, aw)
    else:
        da = 0
    lb, sb_ = strides(bw, bm, N)
    place(image, B.view(np.uint16), 16, N, 1, bm, bw, lb, sb_, b_base)
    db = desc(b_base, lb, sb_, bw)
    ptx = wgmma_ptx(N, a_regs, sa, sb, int(bool(am)), int(bm), image.size // 4, t)
    cin = np.zeros((128, N // 2), np.uint32)
    for th in range(128):
        for r in range(N // 2):
            cin[th, r] = C.view(np.uint32)[d_fragment(th, r)]
    ain = np.zeros((128, 4), np.uint32)
    Ab = A.view(np.uint16).astype(np.uint32)
    for th in range(128):
        for r in range(4):
            ain[th, r] = Ab[a_fragment(th, r, 0)] | (Ab[a_fragment(th, r, 1)] << 16)
    dout = np.zeros_like(cin)
    run(ptx, "k", 1, 128, (image.view(np.uint32), cin, dout, ain, np.uint64(da), np.uint64(db), np.uint32(keep)))
    got = np.zeros((64, N), np.uint32)
    for th in range(128):
        for r in range(N // 2):
            got[d_fragment(th, r)] = dout[th, r]
    a64, b64 = _values(t, A) * sa, _values(t, B) * sb
    c64 = C.astype(np.float64) if keep else np.zeros((64, N))
    prod = a64[:, None, :] * b64.T[None, :, :]
    pexp = ops_mma.exponents(t, a64)[:, None, :] + ops_mma.exponents(t, b64).T[None, :, :]
    want = ops_mma.fused_sum(c64, prod, pexp).astype(np.float32).view(np.uint32)
    np.testing.assert_array_equal(got, want)
    exact = a64 @ b64 + c64
    assert np.abs(got.view(np.float32) - exact).max() < 1e-5 * (np.abs(prod).sum(-1).max() + 1)


def test_descriptor_fields_and_swizzle():
    d = np.uint64(0x4000004002000080)                # Triton's B descriptor: 128B, LBO 8192, SBO 1024
    f = ops_wgmma.decode(d)
    assert (int(f["start"]), int(f["lbo"]), int(f["sbo"]), int(f["swizzle"])) == (2048, 8192, 1024, 128)
    assert int(ops_wgmma.decode(np.uint64(3 << 62))["swizzle"]) == 32
    # 128B: byte 16 of row 1 of an atom is chunk 1 ^ 1 = 0
    assert int(ops_wgmma.swizzle(128 + 16, 128)) == 128 and int(ops_wgmma.swizzle(128 + 16, 0)) == 144


def test_tensor_pipe_costs_hgmma_by_its_flops():
    """HGMMA/HMMA occupy the tensor pipe for their FLOPs at the rates the H200's microbenchmarks
    measured (validation/tensor_cores/pipe/h200/h200_pipe.json: wgmma 4096 dense fp16 FLOP per SM
    cycle; mma.sync m16n8k16 6.1 cycles per SMSP; latencies 24.9 and 66 beyond occupancy), not
    one fp32 cycle; a GPU without the measurements takes the datasheet's peak."""
    import json
    from simgpu.hardware.presets import H200
    from simgpu.timing.params import TimingParams
    from simgpu.timing.ptx_trace import sim_pipe, tensor_units
    P = TimingParams.from_gpu(H200)
    pipe = json.load(open(os.path.join(os.path.dirname(VAL), "pipe", "h200", "h200_pipe.json")))["results"]
    r = pipe["wgmma_n256_p4_2wg_sm"]
    per_sm_cycle = r["blocks"] / 132 * r["instr_per_block"] * r["flop_per_instr"] / r["span_cycles_max"]
    assert H200.tensor_fp16_flops_per_sm_cycle == pytest.approx(per_sm_cycle, rel=0.01)
    cycles = tensor_units("HGMMA.64x128x16.F32") * P.interval["tensor"]
    assert sim_pipe("HGMMA.64x128x16.F32") == "tensor"
    assert cycles == pytest.approx(2 * 16 * 128 * 16 / (per_sm_cycle / 4), rel=0.01)      # 64 cycles a warp
    h = pipe["hmma_tput_32warps_sm_ch4"]
    hmma = h["span_cycles_max"] / (h["blocks"] / 132 * h["instr_per_block"] / 4)
    assert tensor_units("HMMA.16816.F32") * P.interval["tensor_sync"] == pytest.approx(hmma, rel=0.02)
    lat = pipe["hmma_latency"]
    assert P.op_latency({"tensor_sync": 4}) == pytest.approx(lat["span_cycles_max"] / lat["iters"], rel=0.02)
    assert tensor_units("HGMMA.64x256x16.F32") == 2 * tensor_units("HGMMA.64x128x16.F32")
    assert tensor_units("HGMMA.64x128x8.F32.TF32") == tensor_units("HGMMA.64x128x16.F32")    # tf32: half rate
    assert tensor_units("WARPGROUP.ARRIVE") == 0
    assert P.op_latency({"tensor": 64.0, "uniform": 1}) > cycles
    bare = TimingParams.from_gpu(H200.with_(tensor_fp16_flops_per_sm_cycle=0.0, mma_sync_16816_cycles=0.0))
    dense = H200.tensor_fp16_flops / (H200.sm_count * H200.clock_hz * H200.schedulers_per_sm)
    assert tensor_units("HGMMA.64x128x16.F32") * bare.interval["tensor"] == pytest.approx(2 * 16 * 128 * 16 / dense)


def test_wgmma_by_part_of_a_warpgroup_is_an_error():
    ptx = wgmma_ptx(8, True, 1, 1, 0, 0, 128 * 8)
    with pytest.raises(simgpu.SimGPUError, match="warpgroup"):
        run(ptx, "k", 1, 96, (np.zeros(1024, np.uint32), np.zeros((96, 4), np.uint32),
                             np.zeros((96, 4), np.uint32), np.zeros((96, 4), np.uint32),
                             np.uint64(0), np.uint64(0), np.uint32(0)))


# ---- Triton's tutorial matmul, sm_90a ------------------------------------------------------
def _kernels():
    pytest.importorskip("triton")
    spec = importlib.util.spec_from_file_location("_wgmma_kernels", os.path.join(VAL, "kernels.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("M, N, K", [(128, 128, 64), (100, 200, 80)])
def test_triton_matmul_sm90a_equals_the_k16_model(M, N, K):
    K_ = _kernels()
    import triton
    model_matmul = _model()
    rng = np.random.default_rng(M + N + K)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)
    rep = simgpu.jit(K_.matmul_kernel)[lambda m: (triton.cdiv(M, m["BLOCK_SIZE_M"]) * triton.cdiv(N, m["BLOCK_SIZE_N"]),)](
        a, b, c, M, N, K, K, 1, N, 1, N, 1, BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=64,
        GROUP_SIZE_M=8, num_warps=4, num_stages=3)
    ptx = rep.extras["ptx"]["compiled"].ptx
    assert ".target sm_90a" in ptx and "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in ptx
    assert rep.extras["ptx"]["arch"].startswith("sm_90a")
    acc = model_matmul(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_array_equal(c.view(np.uint16), acc.astype(np.float16).view(np.uint16))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(c.astype(np.float64) - exact).max() < 1e-3 * np.abs(exact).max() + 2e-3


@pytest.mark.parametrize("name", ["mm_100x200x80", "mm_200x136x72_cancel"])
def test_card_ptx_reproduces_the_h200_bits(name):
    """The PTX Triton 3.6 made on the H200, run on simgpu with the card's inputs: the card's output
    bits (validation/tensor_cores/wgmma/h200/)."""
    K_ = _kernels()
    import json
    H = os.path.join(VAL, "h200")
    card = json.load(open(os.path.join(H, "h200_wgmma.json")))["cases"][name]
    data = np.load(os.path.join(H, "h200_wgmma.npz"))
    a, b = data[name + "_a"].view(np.float16), data[name + "_b"].view(np.float16)
    M, N, K = card["M"], card["N"], card["K"]
    meta = card["meta"]
    c = np.full((M, N), np.nan, np.float16)
    s = np.zeros(16, np.uint8)
    grid = -(-M // meta["BLOCK_SIZE_M"]) * -(-N // meta["BLOCK_SIZE_N"])
    run(open(os.path.join(H, name + ".ptx")).read(), "matmul_kernel", grid, 32 * meta["num_warps"],
        (a, b, c, np.int32(M), np.int32(N), np.int32(K), np.int32(K), np.int32(N), np.int32(N), s, s.copy()),
        dynamic_shared_bytes=card["shared"])
    np.testing.assert_array_equal(c.view(np.uint16), data[name + "_c"])
    assert K_.CASES                                   # the cases file the card ran


# ---- elect.sync, setmaxnreg, fence.proxy.async -----------------------------------------------
def _small(body):
    return f""".version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 pout)
{{
.reg .b32 %r<16>; .reg .b64 %rd<8>; .reg .pred %p<4>;
mov.u32 %r1, %tid.x;
ld.param.u64 %rd1, [pout];
mul.wide.u32 %rd2, %r1, 4;
add.u64 %rd3, %rd1, %rd2;
mov.u32 %r5, 0;
{body}
st.global.u32 [%rd3], %r5;
ret;
}}
"""


def test_elect_sync_leader_is_the_lowest_active_member():
    # fence.proxy.async and setmaxnreg by whole warpgroups run (and change nothing)
    run(_small("and.b32 %r2, %r1, 31;\nsetp.ge.u32 %p2, %r2, 3;\n@%p2 elect.sync %r6|%p1, 0xfffffff8;\n"
               "@%p2 selp.u32 %r5, 1000, 0, %p1;\n@%p2 add.u32 %r5, %r5, %r6;\nfence.proxy.async.shared::cta;\n"
               "setmaxnreg.dec.sync.aligned.u32 40;"), "k", 1, 128, (np.zeros(128, np.uint32),))
    # lanes 0-2 of each warp skip it; the others elect with mask 0xfffffff8
    out = np.zeros(128, np.uint32)
    run(_small("and.b32 %r2, %r1, 31;\nsetp.ge.u32 %p2, %r2, 3;\n@%p2 elect.sync %r6|%p1, 0xfffffff8;\n"
               "@%p2 selp.u32 %r5, 1000, 0, %p1;\n@%p2 add.u32 %r5, %r5, %r6;"), "k", 1, 128, (out,))
    want = np.where(np.arange(128) % 32 >= 3, 3, 0) + np.where(np.arange(128) % 32 == 3, 1000, 0)
    np.testing.assert_array_equal(out, want)
    with pytest.raises(simgpu.SimGPUError, match="membermask"):
        run(_small("elect.sync %r6|%p1, 0xfffffff8;"), "k", 1, 32, (np.zeros(32, np.uint32),))
    with pytest.raises(simgpu.SimGPUError, match="warpgroup"):
        run(_small("setmaxnreg.inc.sync.aligned.u32 240;"), "k", 1, 64, (np.zeros(64, np.uint32),))


def test_wgmma_results_reach_registers_at_wait_group():
    """D is written when a wait_group covers its group: before it the registers hold their old
    values; wait_group 1 completes all but the newest committed group; a chained wgmma
    accumulates from the pending D."""
    N = 8
    base = wgmma_ptx(N, True, 1, 1, 0, 1, 2048)
    mma = next(ln for ln in base.splitlines() if ln.startswith("wgmma.mma_async"))
    chained = mma.replace("%d", "%e")
    body = "\n".join([
        "mov.b32 %e0, %d0;", "mov.b32 %e1, %d1;", "mov.b32 %e2, %d2;", "mov.b32 %e3, %d3;",
        "wgmma.fence.sync.aligned;", mma, "wgmma.commit_group.sync.aligned;",
        chained, chained, "wgmma.commit_group.sync.aligned;",
        "st.global.v4.b32 [%rd11], {%d0, %d1, %d2, %d3};",          # before any wait: C
        "wgmma.wait_group.sync.aligned 1;",
        "st.global.v4.b32 [%rd11+2048], {%d0, %d1, %d2, %d3};",      # group 0 done
        "st.global.v4.b32 [%rd11+4096], {%e0, %e1, %e2, %e3};",     # group 1 not yet: C
        "wgmma.wait_group.sync.aligned 0;",
        "st.global.v4.b32 [%rd11+6144], {%e0, %e1, %e2, %e3};"])
    lines = base.splitlines()
    start = lines.index("wgmma.fence.sync.aligned;")
    end = max(i for i, ln in enumerate(lines) if ln.startswith("st.global.b32 [%rd11"))
    lines[start:end + 1] = body.splitlines()
    lines.insert(lines.index(".reg .b32 %a<4>;"), ".reg .b32 %e<4>;")
    ptx = "\n".join(lines)
    rng = np.random.default_rng(5)
    B = rng.standard_normal((16, N)).astype(np.float16)
    image = np.zeros(8192, np.uint8)
    place(image, B.view(np.uint16), 16, N, 1, True, 128, 2048, 1024, 0)
    A = rng.standard_normal((64, 16)).astype(np.float16)
    C = rng.standard_normal((64, N)).astype(np.float32)
    cin = np.zeros((128, 4), np.uint32)
    ain = np.zeros((128, 4), np.uint32)
    Ab = A.view(np.uint16).astype(np.uint32)
    for th in range(128):
        for r in range(4):
            cin[th, r] = C.view(np.uint32)[d_fragment(th, r)]
            ain[th, r] = Ab[a_fragment(th, r, 0)] | (Ab[a_fragment(th, r, 1)] << 16)
    out = np.zeros((4, 128, 4), np.uint32)
    run(ptx, "k", 1, 128, (image.view(np.uint32), cin, out, ain, np.uint64(0), np.uint64(desc(0, 2048, 1024, 128)),
                           np.uint32(1)))
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    prod = a64[:, None, :] * b64.T[None, :, :]
    pexp = ops_mma.exponents("f16", a64)[:, None, :] + ops_mma.exponents("f16", b64).T[None, :, :]
    once = ops_mma.fused_sum(C.astype(np.float64), prod, pexp)
    twice = ops_mma.fused_sum(once, prod, pexp)
    frag = lambda M: np.array([[M.astype(np.float32).view(np.uint32)[d_fragment(th, r)] for r in range(4)]
                               for th in range(128)])
    np.testing.assert_array_equal(out[0], cin)
    np.testing.assert_array_equal(out[1], frag(once))
    np.testing.assert_array_equal(out[2], cin)
    np.testing.assert_array_equal(out[3], frag(twice))


WGMMA_CU = r"""
#include <cuda_fp16.h>
extern "C" __global__ void wg(const __half *A, const __half *B, float *D) {
    // D (64 x 8, row-major) = A (64 x 16, row-major) B (16 x 8, row-major): A from registers,
    // B in shared memory K-major without swizzle (two 8 x 16-byte core matrices along K)
    __shared__ alignas(1024) __half sb[128];
    int t = threadIdx.x, w = t / 32, g = (t % 32) / 4, q = t % 4;
    int n = t % 8, k = t / 8;                                 // 128 threads: 16 x 8 elements
    sb[(n * 16 + (2 * k / 16) * 128 + (2 * k) % 16) / 2] = B[k * 8 + n];
    __syncthreads();
    unsigned a[4];
    for (int j = 0; j < 4; j++) {
        int row = 16 * w + g + 8 * (j & 1), col = 8 * (j >> 1) + 2 * q;
        __half2 h = __halves2half2(A[row * 16 + col], A[row * 16 + col + 1]);
        a[j] = *reinterpret_cast<unsigned *>(&h);
    }
    unsigned long long addr = (unsigned long long)__cvta_generic_to_shared(sb);
    unsigned long long desc = ((addr & 0x3FFFF) >> 4) | ((128ull >> 4) << 16) | ((256ull >> 4) << 32);
    float d[4] = {0.f, 0.f, 0.f, 0.f};
    asm volatile("wgmma.fence.sync.aligned;\n"
                 "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, 0, 1, 1, 0;\n"
                 "wgmma.commit_group.sync.aligned;\n"
                 "wgmma.wait_group.sync.aligned 0;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));
    for (int j = 0; j < 4; j++)
        D[(16 * w + g + 8 * (j >> 1)) * 8 + 2 * q + (j & 1)] = d[j];
}
"""


def test_cuda_c_inline_wgmma_sm90a():
    """CUDA C with inline wgmma through simgpu.cuda_source(arch="sm_90a") (NVRTC compute_90a):
    A from registers, B from a no-swizzle K-major descriptor, scale-d = 0."""
    k = simgpu.cuda_source(WGMMA_CU, "wg", arch="sm_90a")
    rng = np.random.default_rng(9)
    A = rng.standard_normal((64, 16)).astype(np.float16)
    B = rng.standard_normal((16, 8)).astype(np.float16)
    D = np.full((64, 8), np.nan, np.float32)
    rep = k[1, 128](A, B, D)
    assert "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16" in rep.extras["ptx"]["compiled"].ptx
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    prod = a64[:, None, :] * b64.T[None, :, :]
    pexp = ops_mma.exponents("f16", a64)[:, None, :] + ops_mma.exponents("f16", b64).T[None, :, :]
    np.testing.assert_array_equal(D, ops_mma.fused_sum(np.zeros((64, 8)), prod, pexp).astype(np.float32))


def test_chained_accumulator_by_part_of_the_lanes():
    """The accumulator chain kept as a matrix (ops_wgmma._Chain) gives way to the per-register
    form when a later wgmma on the same registers runs on other lanes: two blocks issue a
    wgmma, only block 1 chains a second one on the pending D; block 0 gets C + AB once, block
    1 twice, as the ISA's completion rules say."""
    N = 8
    base = wgmma_ptx(N, True, 1, 1, 0, 1, 2048)
    mma = next(ln for ln in base.splitlines() if ln.startswith("wgmma.mma_async"))
    lines = base.splitlines()
    # per block: C, D and A rows at 128 * ctaid + tid (the image copy stays per tid)
    at = lines.index("ld.param.u64 %rd9, [pc];")
    lines[at:at] = ["mov.u32 %r5, %ctaid.x;", "mad.lo.u32 %r1, %r5, 128, %r1;", "setp.ne.u32 %p0, %r5, 0;"]
    start = lines.index("wgmma.fence.sync.aligned;")
    end = lines.index("wgmma.wait_group.sync.aligned 0;")
    lines[start:end + 1] = ["wgmma.fence.sync.aligned;", mma, "wgmma.commit_group.sync.aligned;",
                            "@%p0 " + mma, "wgmma.commit_group.sync.aligned;",
                            "wgmma.wait_group.sync.aligned 0;"]
    ptx = "\n".join(lines) + "\n"
    rng = np.random.default_rng(7)
    B = rng.standard_normal((16, N)).astype(np.float16)
    image = np.zeros(8192, np.uint8)
    place(image, B.view(np.uint16), 16, N, 1, True, 128, 2048, 1024, 0)
    A = rng.standard_normal((64, 16)).astype(np.float16)
    Ab = A.view(np.uint16).astype(np.uint32)
    cin = np.zeros((256, N // 2), np.uint32)
    ain = np.zeros((256, 4), np.uint32)
    Cs = [rng.standard_normal((64, N)).astype(np.float32) for _ in range(2)]
    for th in range(256):
        for r in range(N // 2):
            cin[th, r] = Cs[th // 128].view(np.uint32)[d_fragment(th % 128, r)]
        for r in range(4):
            ain[th, r] = Ab[a_fragment(th % 128, r, 0)] | (Ab[a_fragment(th % 128, r, 1)] << 16)
    out = np.zeros((256, N // 2), np.uint32)
    run(ptx, "k", 2, 128, (image.view(np.uint32), cin, out, ain, np.uint64(0), np.uint64(desc(0, 2048, 1024, 128)),
                           np.uint32(1)))
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    prod = a64[:, None, :] * b64.T[None, :, :]
    pexp = ops_mma.exponents("f16", a64)[:, None, :] + ops_mma.exponents("f16", b64).T[None, :, :]
    frag = lambda M: np.array([[M.astype(np.float32).view(np.uint32)[d_fragment(th, r)] for r in range(N // 2)]
                               for th in range(128)])
    once = ops_mma.fused_sum(Cs[0].astype(np.float64), prod, pexp)
    c1 = ops_mma.fused_sum(Cs[1].astype(np.float64), prod, pexp)
    twice = ops_mma.fused_sum(c1, prod, pexp)
    np.testing.assert_array_equal(out[:128], frag(once))
    np.testing.assert_array_equal(out[128:], frag(twice))
