"""The dialect of executor="ptx": kernels simgpu's own frontend refuses, run as numba-cuda
compiles them (runtime/ptx_binding.py binds from the Python signature; no simgpu frontend).

Summary, one line per kernel (IR = simgpu's frontend + interpreter; PTX = executor="ptx"):

  k_print          print()               works: vprintf formatted as C printf, one line per thread (simgpu/ptx/printf.py); IR refuses
  k_tuple          tuples                works (tuple unpacking, tuple returned by a device function); IR refuses
  k_slice          x[1:], x[2:6]         works (slices passed to a device function); IR refuses
  k_complex        complex64             works, exact on integer-valued inputs; IR refuses
  k_enum_zip       enumerate/zip         works, exact; IR refuses
  k_for_else       for ... else          works, exact; IR refuses
  k_raise          raise                 works: without debug=True numba leaves no exception flag in the PTX,
                                         the failing thread just returns (as on the GPU); IR refuses
  k_assert         assert                works like raise on PTX; the IR path ends the failing threads too
                                         (it used to ignore the assert: tests/test_ir_vs_ptx_bugs.py)
  k_fp16           cuda.fp16 hadd/hmul   clear error: numba's fp16 C shims are linked at module load, not in the
                                         PTX; ptxas cannot resolve __hadd (LaunchError); IR refuses
  k_match          cuda.match_any_sync   works, exact (simgpu.ptx's match.any.sync.b32); IR refuses
  k_record         record dtype array    works with an aligned dtype (np.dtype(..., align=True)); an unaligned
                                         record is numba's own NumbaTypeError, unchanged; IR refuses
  k_dynsmem        cuda.shared.array(0)  works with launch(shared_bytes=N) and Kernel[grid, block, stream, N];
                                         IR path: clear LaunchError
  k_closure        module-level tuple    works on both paths (the IR frontend accepts it too)
  make_closure()   closure over a local  works on both paths
  k_typing_error   undefined name        numba's TypingError reaches the user unchanged, with a note naming the line

Needs numba-cuda (NVVM) and the ptxas/nvdisasm wheels; skipped cleanly without them.
PYTEST_DONT_REWRITE: pytest's assertion rewriting would rewrite k_assert's assert into a call
that numba cannot type.
"""
import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu import settings  # noqa: E402
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import complex64, cuda, float32  # noqa: E402

import simgpu  # noqa: E402
from simgpu.errors import DSLError, LaunchError, SimGPUError  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()

N = 64
COEFFS = (3, -1, 4, 1, -5)


@pytest.fixture(autouse=True, scope="module")
def _private_cache(tmp_path_factory):
    with settings.override(cache_dir=str(tmp_path_factory.getbasetemp() / "ptx-dialect-cache")):
        yield


def ptx(kernel, *args, **kw):
    return simgpu.launch(kernel, 2, 32, args, executor="ptx", timing=False, **kw)


def ir_refuses(kernel, *args, err=DSLError, match=None):
    with pytest.raises(err, match=match):
        simgpu.launch(kernel, 2, 32, args, timing=False, executor="ir")


# -- kernels -----------------------------------------------------------------------------------
def k_print(x):
    i = cuda.grid(1)
    if i < x.size:
        print("thread", i, x[i])
        x[i] = x[i] + 1


@cuda.jit(device=True)
def divmod_pair(a, b):
    return a // b, a % b


def k_tuple(x, q, r):
    i = cuda.grid(1)
    if i < x.size:
        a, b = divmod_pair(x[i], 7)
        q[i], r[i] = a, b


@cuda.jit(device=True)
def sum_all(v):
    s = 0
    for j in range(v.size):
        s += v[j]
    return s


def k_slice(x, out):
    i = cuda.grid(1)
    if i == 0:
        out[0] = sum_all(x[1:])
        out[1] = sum_all(x[2:6])


def k_complex(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        z = a[i] * b[i] + complex64(1 + 2j)
        out[i] = z * z.conjugate() + z


def k_enum_zip(out):
    i = cuda.grid(1)
    if i < out.size:
        s = 0
        for k, v in enumerate(range(i, i + 5)):
            s += k * v
        for u, w in zip(range(3), range(i, i + 3)):
            s += u * w
        out[i] = s


def k_for_else(x, out):
    i = cuda.grid(1)
    if i < x.size:
        r = -1
        for d in range(2, x[i]):
            if x[i] % d == 0:
                r = d
                break
        else:
            r = 0
        out[i] = r


def k_assert(x):
    i = cuda.grid(1)
    if i < x.size:
        assert x[i] >= 0
        x[i] = x[i] * 2


def k_raise(x):
    i = cuda.grid(1)
    if i < x.size:
        if x[i] < 0:
            raise ValueError("negative")
        x[i] = x[i] * 2


def k_fp16(a, b, out):
    i = cuda.grid(1)
    if i < a.size:
        out[i] = cuda.fp16.hmul(cuda.fp16.hadd(a[i], b[i]), b[i])


def k_fp16_reference(a, b):
    """hadd then hmul, each rounded to float16 (numpy's float16 ops round once, as the GPU)."""
    return (a + b) * b


def k_match(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = cuda.match_any_sync(0xffffffff, x[i])


def k_record(rec, out):
    i = cuda.grid(1)
    if i < rec.size:
        out[i] = rec[i]['a'] * 2 + rec[i]['b']
        rec[i]['a'] = i


def k_dynsmem(x, out):
    buf = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    buf[t] = x[cuda.grid(1)]
    cuda.syncthreads()
    out[cuda.grid(1)] = buf[cuda.blockDim.x - 1 - t]


def k_closure(out):
    i = cuda.grid(1)
    if i < out.size:
        s = 0
        for c in COEFFS:
            s = s * i + c
        out[i] = s


def make_closure(weights):
    def k_local_closure(out):
        i = cuda.grid(1)
        if i < out.size:
            s = 0
            for w in weights:
                s = s * 2 + w * i
            out[i] = s
    return k_local_closure


def k_typing_error(x):
    i = cuda.grid(1)
    x[i] = undefined_helper(i)  # noqa: F821 - the error under test


# -- tests -------------------------------------------------------------------------------------
def test_print_prints_one_line_per_thread(capsys):
    """works: print() is a call of vprintf; each thread that executes it prints one line
    (numba's format: %lld for ints, %s for strings), blocks/warps/lanes in order, to
    sys.stdout and in rep.extras["printed"].  The IR path refuses print."""
    x = np.arange(4, dtype=np.int32)
    rep = ptx(k_print, x)
    want = [f"thread {i} {i}" for i in range(4)]
    assert rep.extras["printed"] == want
    assert capsys.readouterr().out == "".join(w + "\n" for w in want)
    assert list(x) == [1, 2, 3, 4]
    ir_refuses(k_print, x.copy(), match="'print'")


def test_tuples_from_device_function():
    """works, exact: tuple unpacking of a tuple a device function returns."""
    x = np.arange(3 * N, dtype=np.int32)
    q, r = np.zeros_like(x), np.zeros_like(x)
    simgpu.launch(k_tuple, 6, 32, (x, q, r), executor="ptx")
    assert np.array_equal(q, x // 7) and np.array_equal(r, x % 7)
    ir_refuses(k_tuple, x, q, r, match="tuple")


def test_slices_passed_to_device_function():
    """works, exact: x[1:] and x[2:6] passed to a device function.  The Report's source
    lines come from inspect (no IR); the inlined device function's loads are credited to the
    calling line, as the PTX's .loc gives them."""
    x = np.arange(10, dtype=np.int64) ** 2
    out = np.zeros(2, np.int64)
    rep = ptx(k_slice, x, out)
    assert list(out) == [x[1:].sum(), x[2:6].sum()]
    rows = {row["source"]: row for row in rep.by_line()}
    assert all(rows) and rows["out[0] = sum_all(x[1:])"]["global_ld_requests"] == 9
    ir_refuses(k_slice, x, out, match="slices")


def test_complex64_arithmetic():
    """works, exact (integer-valued inputs: every product and sum is exact in float32)."""
    a = (np.arange(N) + 1j).astype(np.complex64)
    b = np.full(N, 2 - 1j, np.complex64)
    out = np.zeros(N, np.complex64)
    ptx(k_complex, a, b, out)
    z = a * b + np.complex64(1 + 2j)
    assert np.array_equal(out, z * np.conj(z) + z)
    ir_refuses(k_complex, a, b, out)


def test_enumerate_zip():
    """works, exact."""
    out = np.zeros(N, np.int64)
    ptx(k_enum_zip, out)
    i = np.arange(N)
    assert np.array_equal(out, sum(k * (i + k) for k in range(5)) + sum(u * (i + u) for u in range(3)))
    ir_refuses(k_enum_zip, out, match="loop variables")


def test_for_else():
    """works, exact: smallest divisor, 0 (the else) where the loop ends without a break."""
    x = np.arange(N, dtype=np.int32)
    out = np.full(N, 7, np.int32)
    ptx(k_for_else, x, out)
    expect = [next((d for d in range(2, v) if v % d == 0), 0) for v in x]
    assert list(out) == expect
    ir_refuses(k_for_else, x, out, match="for/else")


def test_raise_and_assert_exit_the_thread():
    """works: without debug=True numba compiles raise/assert to a plain return (no exception
    flag, nothing reported to the host, as on the GPU): the failing threads leave their element
    alone.  The IR path refuses raise and ends the failing threads at an assert, as the GPU."""
    x = np.arange(N, dtype=np.int32) - 3
    expect = np.where(x >= 0, 2 * x, x)
    for k in (k_raise, k_assert):
        y = x.copy()
        ptx(k, y)
        assert np.array_equal(y, expect), k.__name__
    ir_refuses(k_raise, x.copy(), match="Raise")
    y = x.copy()
    simgpu.launch(k_assert, 2, 32, (y,), timing=False, executor="ir")
    assert np.array_equal(y, expect)          # the IR path: the same threads exit


def test_fp16_intrinsics_run_with_numbas_shims_linked():
    """works, exact: cuda.fp16.hadd/hmul call numba's C shims, which numba links when it loads
    the module; simgpu compiles them with NVRTC and links them into the PTX.  The IR path
    refuses them."""
    a = np.arange(N, dtype=np.float16)
    b = np.full(N, 0.5, np.float16)
    out = np.zeros(N, np.float16)
    ptx(k_fp16, a, b, out)
    assert np.array_equal(out, k_fp16_reference(a, b))
    ir_refuses(k_fp16, a, b, np.zeros(N, np.float16), match="fp16")


def test_match_any_sync():
    """works, exact: each lane gets the mask of its warp's lanes holding the same value (x % 5
    repeats every 5 lanes).  The IR path refuses it."""
    x = np.arange(N, dtype=np.int32) % 5
    out = np.zeros(N, np.uint32)
    ptx(k_match, x, out)
    lane = np.arange(32)
    for i in range(N):
        w = i // 32
        assert out[i] == sum(1 << int(j) for j in lane[x[w * 32:(w + 1) * 32] == x[i]])
    ir_refuses(k_match, x, np.zeros(N, np.uint32), match="match_any_sync")


RECORD = np.dtype([("a", np.int32), ("b", np.float64)], align=True)


def test_record_array_argument():
    """works, exact: a structured array (aligned record) read and written field by field;
    the memory model counts its loads.  An unaligned record is numba's own error, unchanged,
    with the user's line in a note."""
    rec = np.zeros(N, RECORD)
    rec["a"], rec["b"] = np.arange(N) * 3, np.arange(N) * 0.5
    out = np.zeros(N)
    rep = ptx(k_record, rec, out)
    assert np.array_equal(out, np.arange(N) * 6 + np.arange(N) * 0.5)
    assert np.array_equal(rec["a"], np.arange(N))
    assert rep.metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] > 0
    ir_refuses(k_record, rec, out)
    packed = np.zeros(N, [("a", np.int32), ("b", np.float64)])
    with pytest.raises(Exception, match="not aligned") as e:
        ptx(k_record, packed, out)
    assert type(e.value).__module__.startswith("numba")
    # the user's line: in the message (simgpu's reading first, numba's text trimmed to it)
    assert "test_ptx_dialect.py" in str(e.value) + "".join(getattr(e.value, "__notes__", ()))


def test_dynamic_shared_memory():
    """works: cuda.shared.array(0, float32) sized by launch(shared_bytes=N) or
    Kernel[grid, block, stream, N]; shared-memory counters and the dynamic size in the
    Report.  The IR path: a clear LaunchError."""
    x = np.arange(N, dtype=np.float32)
    out = np.zeros(N, np.float32)
    rep = ptx(k_dynsmem, x, out, shared_bytes=32 * 4)
    assert np.array_equal(out, x.reshape(2, 32)[:, ::-1].reshape(-1))
    assert rep.metrics["launch__shared_mem_per_block_dynamic"] == 128
    assert rep.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == 2
    out2 = np.zeros(N, np.float32)
    simgpu.jit(k_dynsmem, executor="ptx", timing=False)[2, 32, 0, 128](x, out2)
    assert np.array_equal(out2, out)
    with pytest.raises(LaunchError, match="dynamic shared memory is not supported yet on the IR path"):
        simgpu.jit(k_dynsmem, executor="ir")[2, 32, 0, 128](x, out2)
    with pytest.raises(LaunchError, match="dynamic shared memory is not supported yet on the IR path"):
        simgpu.launch(k_dynsmem, 2, 32, (x, out2), shared_bytes=128, executor="ir")
    with pytest.raises(LaunchError, match="max_shared_mem_per_block_bytes"):
        ptx(k_dynsmem, x, out2, shared_bytes=1 << 20)


def test_closures_over_tuples():
    """works on both paths, exact: a module-level tuple and a closure over a local tuple."""
    out = np.zeros(N, np.int64)
    ptx(k_closure, out)
    i = np.arange(N)
    expect = np.zeros(N, np.int64)
    for c in COEFFS:
        expect = expect * i + c
    assert np.array_equal(out, expect)
    k = make_closure((1, 2, 3))
    out2, out3 = np.zeros(N, np.int64), np.zeros(N, np.int64)
    ptx(k, out2)
    simgpu.launch(k, 2, 32, (out3,), timing=False)
    assert np.array_equal(out2, 11 * i) and np.array_equal(out3, out2)


def test_numba_typing_error_reaches_the_user():
    """numba's TypingError, its type kept, its message naming the user's line (trimmed to it:
    tests/test_compile_errors.py)."""
    with pytest.raises(Exception, match="undefined_helper") as e:
        ptx(k_typing_error, np.zeros(N))
    assert type(e.value).__module__.startswith("numba") and type(e.value).__name__ == "TypingError"
    text = str(e.value) + "".join(getattr(e.value, "__notes__", ()))
    assert "test_ptx_dialect.py" in text and "x[i] = undefined_helper(i)" in text


# -- kernels written against simgpu's stand-ins compile with numba-cuda ----------------------
from simgpu import cuda as scuda          # noqa: E402


@simgpu.jit(device=True)
def _s_twice(v):
    return v * 2


def _s_plus_one(v):                       # a plain Python helper: compiled as a device function
    return v + 1


def k_simgpu_standins(x, out):
    i = scuda.grid(1)
    if i < x.size:
        out[i] = _s_plus_one(_s_twice(x[i])) + scuda.threadIdx.x * 0


def test_simgpu_standins_and_device_functions_compile_on_the_ptx_path():
    """`from simgpu import cuda`, simgpu.jit(device=True) functions and plain helpers become
    numba.cuda's objects and device functions for numba-cuda (sass.toolchain.numba_view)."""
    x = np.arange(100, dtype=np.int32)
    out = np.zeros_like(x)
    simgpu.launch(k_simgpu_standins, 1, 128, (x, out), executor="ptx", timing=False)
    assert np.array_equal(out, 2 * x + 1)


# -- float16: numba links its fp16 operator shims (CUDA C++) at load time ---------------------
def k_half_relu_scale(x, y):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        y[i] = v * np.float16(2) if v > np.float16(0) else np.float16(0)


def test_float16_operators_link_numbas_shims_and_match_numpy():
    """float16 `>` and `*` compile to calls of numba's C++ shims (inline-asm setp.f16/mul.f16):
    simgpu compiles them with NVRTC, links them into the PTX and runs them bit-exactly."""
    x = (np.random.default_rng(3).random(300).astype(np.float16) - np.float16(0.5)) * np.float16(8)
    y = np.zeros_like(x)
    rep = simgpu.launch(k_half_relu_scale, 3, 128, (x, y), executor="ptx", timing=False)
    assert np.array_equal(y, np.where(x > 0, x * np.float16(2), np.float16(0)))
    assert rep.metrics["launch__registers_per_thread"] > 0
