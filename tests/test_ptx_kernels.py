"""End-to-end: numba-cuda PTX executed by simgpu.ptx, compared with numpy references.

Each kernel runs from the optimised PTX (opt=None, numba's default) and from unoptimised
PTX (opt=False: local stack frames, real .func calls, st.param/ld.param), both of which must
give the reference result."""
import numpy as np
import pytest

from simgpu._compat import patch_numpy_for_numba

patch_numpy_for_numba()
from numba import cuda, float32, int32  # noqa: E402

from simgpu.ptx.semantics import lookup as _ptx_lookup  # noqa: E402

_fma_rn_f32 = _ptx_lookup("fma", ("rn",), ("f32",))


def fma_f32(a, b, c):
    """fma.rn.f32 from the PTX table (which takes lanes: 1-D), over numpy-broadcast operands."""
    A, B, C = np.broadcast_arrays(np.float32(a), np.float32(b), np.float32(c))
    return _fma_rn_f32(A.ravel(), B.ravel(), C.ravel()).reshape(A.shape)
from simgpu.ptx.runner import compile_numba, launch_numba  # noqa: E402

OPTS = [pytest.param(None, id="O3"), pytest.param(False, id="O0")]
TILE = 16


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def matmul(A, B, C):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    acc = float32(0.)
    for t in range((A.shape[1] + TILE - 1) // TILE):
        if y < A.shape[0] and t * TILE + tx < A.shape[1]:
            sA[ty, tx] = A[y, t * TILE + tx]
        else:
            sA[ty, tx] = 0
        if x < B.shape[1] and t * TILE + ty < B.shape[0]:
            sB[ty, tx] = B[t * TILE + ty, x]
        else:
            sB[ty, tx] = 0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = acc


def tree_reduce(a, out):
    s = cuda.shared.array(256, int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    s[tid] = a[i] if i < a.size else 0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            s[tid] += s[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        out[cuda.blockIdx.x] = s[0]


def histogram(data, bins):
    i = cuda.grid(1)
    if i < data.size:
        cuda.atomic.add(bins, data[i] % bins.size, 1)


def warp_sum(a, out):
    i = cuda.grid(1)
    v = a[i]
    off = 16
    while off > 0:
        v += cuda.shfl_down_sync(0xffffffff, v, off)
        off //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


@cuda.jit(device=True)
def affine(x, y):
    return x * y + 1


def call_device(a, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = affine(a[i], i)


def diverge(a, out):
    i = cuda.grid(1)
    if i < a.size:
        v = a[i]
        acc = 0
        if v % 2 == 0:
            for k in range(v):
                acc += k
        else:
            acc = -v
        out[i] = acc


def local_array(a, out):
    i = cuda.grid(1)
    loc = cuda.local.array(8, int32)
    for k in range(8):
        loc[k] = 0
    for k in range(16):
        loc[(a[i] + k * 3) % 8] += k
    s = 0
    for k in range(8):
        s += loc[k] * (k + 1)
    out[i] = s


def run(f, grid, block, args, opt):
    launch_numba(f, grid, block, args, **({} if opt is None else {"opt": opt}))


@pytest.mark.parametrize("opt", OPTS)
def test_saxpy_matches_fused_float32(opt):
    """saxpy over a ragged last block: float32 fma(a, x, y) bit for bit -- NVVM's fma.rn.f32
    (O3), and unoptimised NVVM code's mul.f32 + add.f32, which ptxas fuses (numba's opt does not
    reach ptxas; simgpu/ptx/contract.py).  Elements past the guard are untouched."""
    rng = np.random.default_rng(0)
    n = 1000
    x, y = rng.random(n, np.float32), rng.random(n + 24, np.float32)[:n]
    out = np.full(n + 24, -1, np.float32)
    a = np.float32(2.5)
    run(saxpy, (n + 127) // 128, 128, (a, x, y, out[:n]), opt)
    ref = fma_f32(np.full(n, a), x, y)
    np.testing.assert_array_equal(out[:n], ref)
    assert (out[n:] == -1).all()


@pytest.mark.parametrize("opt", OPTS)
@pytest.mark.parametrize("shape", [(37, 29, 45), (16, 16, 16)])
def test_tiled_matmul(opt, shape):
    """16x16 shared-memory tiled matmul with two syncthreads per tile, on sizes that are not
    multiples of the tile: equals the float32 sum over k in order (as the kernel adds)."""
    M, K, N = shape
    rng = np.random.default_rng(1)
    A, B = rng.random((M, K), np.float32), rng.random((K, N), np.float32)
    C = np.zeros((M, N), np.float32)
    run(matmul, ((N + 15) // 16, (M + 15) // 16), (16, 16), (A, B, C), opt)
    ref = np.zeros((M, N), np.float32)
    Kp = (K + 15) // 16 * 16
    Ap = np.zeros((M, Kp), np.float32)
    Ap[:, :K] = A
    Bp = np.zeros((Kp, N), np.float32)
    Bp[:K] = B
    for k in range(Kp):                       # the kernel's order; fused into fma (NVVM O3, or ptxas at O0)
        ref = fma_f32(Ap[:, k:k + 1], Bp[k:k + 1, :], ref)
    np.testing.assert_array_equal(C, ref)


@pytest.mark.parametrize("opt", OPTS)
def test_tree_reduction(opt):
    """Shared-memory tree reduction with a barrier per level: exact integer block sums,
    including a partial last block (threads past the end contribute 0)."""
    a = np.random.default_rng(2).integers(-1000, 1000, 1000).astype(np.int32)
    out = np.zeros(4, np.int32)
    run(tree_reduce, 4, 256, (a, out), opt)
    np.testing.assert_array_equal(out, np.add.reduceat(a, [0, 256, 512, 768]))


@pytest.mark.parametrize("opt", OPTS)
def test_histogram_atomics(opt):
    """cuda.atomic.add from many lanes onto few addresses: counts equal np.bincount."""
    d = np.random.default_rng(3).integers(0, 1000, 5000).astype(np.int32)
    bins = np.zeros(17, np.int32)
    run(histogram, 40, 128, (d, bins), opt)
    np.testing.assert_array_equal(bins, np.bincount(d % 17, minlength=17))


@pytest.mark.parametrize("opt", OPTS)
def test_warp_shuffle_reduction(opt):
    """shfl.sync.down tree: lane 0 of each warp holds the float32 sum in the butterfly order
    (v += v[l+16], then 8, 4, 2, 1)."""
    a = np.random.default_rng(4).random(256, np.float32)
    out = np.zeros(8, np.float32)
    run(warp_sum, 2, 128, (a, out), opt)
    v = a.reshape(8, 32).copy()
    for off in (16, 8, 4, 2, 1):
        shifted = np.concatenate([v[:, off:], v[:, 32 - off:]], axis=1)  # clamp: own value
        v = v + shifted
    np.testing.assert_array_equal(out, v[:, 0])


@pytest.mark.parametrize("opt", OPTS)
def test_device_function_call(opt):
    """A kernel calling a device function (a real .func call with params and a return value
    in unoptimised PTX): out[i] = a[i] * i + 1 in int64."""
    a = np.random.default_rng(5).integers(-50, 50, 300).astype(np.int32)
    out = np.zeros(300, np.int64)
    run(call_device, 3, 128, (a, out), opt)
    np.testing.assert_array_equal(out, a.astype(np.int64) * np.arange(300) + 1)


def test_device_function_is_a_real_call_at_O0():
    """The O0 PTX really contains a call (so the test above exercises the call stack)."""
    a, out = np.zeros(4, np.int32), np.zeros(4, np.int64)
    ptx, _ = compile_numba(call_device, (a, out), opt=False)
    assert "call.uni" in ptx and ".func" in ptx


@pytest.mark.parametrize("opt", OPTS)
def test_divergent_if_else_and_loop(opt):
    """if/else divergence inside a warp plus a data-dependent loop trip count."""
    a = np.random.default_rng(6).integers(-20, 20, 300).astype(np.int32)
    out = np.zeros(300, np.int32)
    run(diverge, 3, 128, (a, out), opt)
    ref = np.where(a % 2 == 0, np.where(a > 0, a * (a - 1) // 2, 0), -a)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("opt", OPTS)
def test_local_array_with_dynamic_index(opt):
    """cuda.local.array indexed by data: per-thread local memory, st.local.v4 included."""
    a = np.random.default_rng(7).integers(-20, 20, 256).astype(np.int32)
    out = np.zeros(256, np.int32)
    run(local_array, 2, 128, (a, out), opt)
    ref = []
    for v in a:
        loc = [0] * 8
        for k in range(16):
            loc[(int(v) + k * 3) % 8] += k
        ref.append(sum(loc[k] * (k + 1) for k in range(8)))
    np.testing.assert_array_equal(out, ref)
