"""Shared memory: 32 banks of 4 bytes; a wavefront serves one distinct word per bank, equal
words broadcast; 8-byte accesses go by half-warp and 16-byte by quarter-warp; bank
conflicts = wavefronts - ideal wavefronts (as Nsight Compute counts them)."""
import numpy as np
from hypothesis import given, settings, strategies as st
from numba import cuda

from simgpu.memory.banks import new_scratch, shared_event
from simgpu.memory.reference import shared_wavefronts
from simgpu.testing import run, traffic, transpose_wavefronts_per_request

TILE = 32
TILE_PAD = 33          # TILE + 1 (the frontend wants a literal constant here)


def smem_stride(out, stride):
    sh = cuda.shared.array(4096, np.float32)
    t = cuda.threadIdx.x
    sh[(t * stride) % 4096] = np.float32(t)
    cuda.syncthreads()
    out[cuda.blockIdx.x * 32 + t] = sh[(t * stride) % 4096]


def smem_f64(out, stride):
    sh = cuda.shared.array(2048, np.float64)
    t = cuda.threadIdx.x
    sh[(t * stride) % 2048] = np.float64(t)
    cuda.syncthreads()
    out[t] = sh[(t * stride) % 2048]


def smem_broadcast(out):
    sh = cuda.shared.array(64, np.float32)
    t = cuda.threadIdx.x
    if t < 64:
        sh[t] = np.float32(t)
    cuda.syncthreads()
    out[t] = sh[t // 16]           # 2 distinct words per warp, in different banks


def transpose(inp, out):
    tile = cuda.shared.array((TILE, TILE), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, 8):
        tile[ty + j, tx] = inp[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + tx
    y = cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, 8):
        out[y + j, x] = tile[tx, ty + j]


def transpose_padded(inp, out):
    tile = cuda.shared.array((TILE, TILE_PAD), np.float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + tx
    y = cuda.blockIdx.y * TILE + ty
    for j in range(0, TILE, 8):
        tile[ty + j, tx] = inp[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + tx
    y = cuda.blockIdx.x * TILE + ty
    for j in range(0, TILE, 8):
        out[y + j, x] = tile[tx, ty + j]


def _gcd(a, b):
    while b:
        a, b = b, a % b
    return a


@given(st.integers(1, 64))
@settings(max_examples=25, deadline=None)
def test_float32_stride_conflicts(stride):
    """Word stride s: the 32 lanes fall into 32/gcd(s,32) banks, gcd(s,32) distinct words
    each -> gcd(s,32) wavefronts per request, for loads and stores."""
    out = np.zeros(4 * 32, np.float32)
    t = traffic(run(smem_stride, 4, 32, out, np.int64(stride)))
    way = _gcd(stride, 32)
    assert (t["shared_st_wavefronts"], t["shared_ld_wavefronts"]) == (4 * way, 4 * way)
    assert (t["shared_st_conflicts"], t["shared_ld_conflicts"]) == (4 * (way - 1), 4 * (way - 1))


def test_float64_half_warps():
    """8-byte accesses: ideal 2 wavefronts (half-warps); stride 1 is conflict-free, stride 2
    (16 bytes apart) is 2-way within each half-warp."""
    out = np.zeros(32, np.float64)
    t1 = traffic(run(smem_f64, 1, 32, out, np.int64(1)))
    t2 = traffic(run(smem_f64, 1, 32, out, np.int64(2)))
    assert (t1["shared_ld_wavefronts"], t1["shared_ld_conflicts"]) == (2, 0)
    assert (t2["shared_ld_wavefronts"], t2["shared_ld_conflicts"]) == (4, 2)


def test_broadcast_is_free():
    """Lanes reading equal words share one wavefront."""
    out = np.zeros(128, np.float32)
    t = traffic(run(smem_broadcast, 1, 128, out))
    assert (t["shared_ld_requests"], t["shared_ld_wavefronts"], t["shared_ld_conflicts"]) == (4, 4, 0)
    assert np.array_equal(out, np.arange(128) // 16)


def test_transpose_unpadded_is_32_way_and_padded_conflict_free():
    """Reading a 32x32 float32 tile down a column: 32 words in one bank (32 wavefronts per
    request); with a 33-word row the column spreads over all banks (1 wavefront)."""
    n = 64
    a = np.arange(n * n, dtype=np.float32).reshape(n, n)
    for kernel, padded in ((transpose, False), (transpose_padded, True)):
        b = np.zeros_like(a)
        t = traffic(run(kernel, (n // 32, n // 32), (32, 8), a, b))
        req = t["shared_ld_requests"]
        assert req == (n // 32) ** 2 * 8 * 4
        assert t["shared_ld_wavefronts"] == req * transpose_wavefronts_per_request(32, padded)
        assert t["shared_ld_conflicts"] == (0 if padded else req * 31)
        assert t["shared_st_conflicts"] == 0
        assert np.array_equal(b, a.T)


@st.composite
def warp_accesses(draw):
    size = draw(st.sampled_from([1, 2, 4, 8, 16]))
    words = draw(st.lists(st.one_of(st.none(), st.integers(0, 95)), min_size=32, max_size=32))
    return [None if w is None else w * size for w in words], size


@given(st.lists(warp_accesses(), min_size=1, max_size=4))
@settings(max_examples=200, deadline=None)
def test_compiled_banks_match_reference(warps):
    """For random per-lane offsets and sizes (one size per call), the compiled counter
    equals the reference's wavefronts and ideal wavefronts."""
    size = warps[0][1]
    addrs = [a for w, _ in warps for a in w]
    addr = np.array([a or 0 for a in addrs], dtype=np.int64)
    mask = np.array([a is not None for a in addrs])
    req, wf, ideal, nbytes = shared_event(addr, mask, mask.view(np.uint8), size, len(warps), 2, 31, 1,
                                         new_scratch(32))
    want = [shared_wavefronts(w, size) for w, _ in warps]
    assert (wf, ideal) == (sum(x for x, _ in want), sum(y for _, y in want))
    assert req == sum(any(a is not None for a in w) for w, _ in warps)
    assert nbytes == int(mask.sum()) * size
