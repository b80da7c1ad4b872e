"""Triton's fp16 matmul compiled for sm_80 (mma.sync m16n8k16 + ldmatrix + cp.async with zero
fill and wait_group), run through simgpu's PTX runner on its PTX text, against numpy: bit-equal
to the tensor-core accumulation model of simgpu/ptx/ops_mma.py (measured on the H200) applied
k16 step by k16 step."""
from __future__ import annotations

import numpy as np
import pytest

from simgpu.ptx import ops_mma
from simgpu.ptx.runner import run

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

BM, BN, BK = 64, 64, 32


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(tl.float16)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


@pytest.fixture(scope="module")
def ptx():
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
           "K": "i32", "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32",
           "stride_bn": "constexpr", "stride_cm": "i32", "stride_cn": "constexpr"}
    const = {"BLOCK_M": BM, "BLOCK_N": BN, "BLOCK_K": BK, "stride_ak": 1, "stride_bn": 1,
             "stride_cn": 1}
    attrs = {(i,): [["tt.divisibility", 16]] for i in (0, 1, 2, 3, 4, 5, 6, 8, 10)}
    k = triton.compile(ASTSource(matmul_kernel, sig, const, attrs),
                       target=GPUTarget("cuda", 80, 32), options={"num_warps": 4, "num_stages": 3})
    text = k.asm["ptx"]
    for op in ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "ldmatrix.sync.aligned",
               "cp.async.cg.shared.global", "cp.async.wait_group"):
        assert op in text
    return text, k.metadata.shared


def model_matmul(a, b):
    """numpy: the K loop's mma.sync steps (k16 each, in order) through ops_mma.fused_sum."""
    M, K = a.shape
    N = b.shape[1]
    Kp = -(-K // BK) * BK
    A = np.zeros((M, Kp))
    A[:, :K] = a
    B = np.zeros((Kp, N))
    B[:K] = b
    ea, eb = ops_mma.exponents("f16", A), ops_mma.exponents("f16", B)
    acc = np.zeros((M, N))
    for s in range(0, Kp, 16):
        acc = ops_mma.fused_sum(acc, A[:, None, s:s + 16] * B[s:s + 16].T[None],
                                ea[:, None, s:s + 16] + eb[s:s + 16].T[None])
    return acc


@pytest.mark.parametrize("M, N, K", [(128, 128, 64), (100, 72, 80)])
def test_triton_matmul_sm80_matches_the_model(ptx, M, N, K):
    text, shared = ptx
    rng = np.random.default_rng(M + K)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    c = np.full((M, N), np.nan, np.float16)
    scratch = np.zeros(16, np.uint8)
    run(text, "matmul_kernel", (-(-M // BM), -(-N // BN)), 128,
        (a, b, c, np.int32(M), np.int32(N), np.int32(K), np.int32(K), np.int32(N), np.int32(N),
         scratch, scratch.copy()), dynamic_shared_bytes=shared)
    acc = model_matmul(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_array_equal(c.view(np.uint16), acc.astype(np.float16).view(np.uint16))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert np.abs(acc - exact).max() < 1e-3 * np.abs(exact).max()
