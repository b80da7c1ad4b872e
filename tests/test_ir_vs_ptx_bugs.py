"""The IR interpreter against the compiled (PTX) path on the bug classes of issue #10 item 6.

Each class found by comparing the IR path with numba.cuda on an H200 has a small kernel
here, run on both paths (executor="ir" and executor="ptx").  The PTX path runs the code
numba-cuda compiles, so its result is numba's semantics; the test checks it against the
value worked out by hand, then requires the IR path to give the bit-identical result (floats
compared bit for bit: -0.0 is not 0.0, NaN is NaN) or to refuse with a clear simgpu error that
names the source line -- never a silently different result.

PYTEST_DONT_REWRITE: the kernels' own `assert` statements must reach numba-cuda and simgpu as
written, so pytest does not rewrite this module's asserts (the checks carry their messages).
"""
import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda, int32, int64, uint32, uint64  # noqa: E402

import simgpu  # noqa: E402
from simgpu.errors import DSLError, LaunchError, TypingError  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()

I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1


# -- helpers ---------------------------------------------------------------------------------
def run(kernel, make_args, executor, block=1):
    args = make_args()
    simgpu.launch(kernel, 1, block, args, executor=executor, memory=False, timing=False)
    return args


def bits(a):
    """Floats as their bit patterns, so that equality is bit-exact."""
    a = np.asarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def same(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(bits(x), bits(y))


def check(kernel, make_args, expect, out=-1, block=1):
    """The PTX path gives `expect` in argument `out`; the IR path gives the same bits."""
    ptx = run(kernel, make_args, "ptx", block)[out]
    expect = np.asarray(expect, dtype=ptx.dtype)
    assert same(ptx, expect), f"PTX path: {ptx!r}, expected {expect!r}"
    ir = run(kernel, make_args, "ir", block)[out]
    assert same(ir, ptx), f"IR path: {ir!r}, PTX path: {ptx!r}"


# -- 1. int64 mixed with uint64 ----------------------------------------------------------------
def mixed_int(a, b, out, cmp):
    x, y = a[0], b[0]
    out[0] = x + y
    out[1] = x - y
    out[2] = x * y
    out[3] = x // y
    out[4] = x % y
    out[5] = x & y
    out[6] = x | y
    out[7] = x ^ y
    out[8] = x << y
    out[9] = x >> y
    cmp[0] = x < y
    cmp[1] = x == y


@pytest.mark.parametrize("x,y", [(2 ** 62 + 1, 3), (-7, 2 ** 63 + 5)])
def test_int64_with_uint64_is_int64_arithmetic(x, y):
    """numba casts both operands to int64 (not float64, as numpy would): exact, wrapping;
    a shift takes the amount's low 32 bits and clamps it at 64 (NVVM's shl/shr.b64)."""
    def wrap(v):
        return (v + 2 ** 63) % 2 ** 64 - 2 ** 63
    ys = wrap(y)
    amt = y % 2 ** 32
    expect = [wrap(x + y), wrap(x - y), wrap(x * ys), x // ys if ys else 0,
              x % ys if ys else 0, x & ys, x | ys, x ^ ys,
              wrap(x << amt) if amt < 64 else 0, x >> min(amt, 63)]
    check(mixed_int, lambda: (np.array([x], np.int64), np.array([y], np.uint64),
                              np.zeros(10, np.int64), np.zeros(2, np.int64)), expect, out=2)
    # comparisons of int64 with uint64 are done in float64 by numba
    check(mixed_int, lambda: (np.array([x], np.int64), np.array([y], np.uint64),
                              np.zeros(10, np.int64), np.zeros(2, np.int64)),
          [float(x) < float(y), float(x) == float(y)], out=3)


# -- 2. nested device functions ------------------------------------------------------------------
@cuda.jit(device=True)
def _half(x):
    return x * 0.5                       # float64


@cuda.jit(device=True)
def _scaled(x):
    _half(x)                             # the callee's float64 return must not leak out
    return x * 1000000007                # int64


def nested_calls(x, out):
    out[0] = _scaled(x[0])


def test_nested_device_function_keeps_its_own_return_type():
    x = 2 ** 62 + 12345
    expect = (x * 1000000007 + 2 ** 63) % 2 ** 64 - 2 ** 63
    check(nested_calls, lambda: (np.array([x], np.int64), np.zeros(1, np.int64)), [expect])


# -- 3. `a and b` as a value --------------------------------------------------------------------
def and_or_values(x, f, out, fo):
    out[0] = x[0] and x[1]
    out[1] = x[2] or x[1]
    out[2] = x[2] and x[1]
    out[3] = x[0] or x[1]
    fo[0] = x[1] and f[0]                # int and float: the value is float64
    fo[1] = x[2] or f[0]
    if x[0] and x[2]:
        out[4] = 5
    out[5] = 1 if x[1] or x[2] else 2


def test_and_or_give_an_operand_not_a_bool():
    mk = lambda: (np.array([3, 7, 0]), np.array([2.5]), np.zeros(6, np.int64), np.zeros(2))  # noqa: E731
    check(and_or_values, mk, [7, 7, 0, 3, 0, 1], out=2)
    check(and_or_values, mk, [2.5, 2.5], out=3)


def and_or_constants(u, out):
    out[0] = (3 or u[0]) >> 1            # numba prunes the constant branch: an int64, not the
    out[1] = (-1 and u[0]) & 7           # float64 that unifying int64 with uint64 would give
    out[2] = (0 or u[0]) >> 0
    out[3] = 0 and u[0]


def test_and_or_with_a_constant_operand_is_decided_at_compile_time():
    check(and_or_constants, lambda: (np.array([13], np.uint64), np.zeros(4, np.int64)), [1, 5, 13, 0])


# -- 4. max/min with NaN and signed zeros ------------------------------------------------------
def minmax(x, out):
    out[0] = max(x[0], x[1])
    out[1] = max(x[1], x[0])
    out[2] = min(x[0], x[1])
    out[3] = min(x[1], x[0])
    out[4] = max(x[2], x[1])
    out[5] = min(x[1], x[2])
    out[6] = np.maximum(x[2], x[1])      # numpy's: the NaN wins
    out[7] = np.minimum(x[1], x[2])
    out[8] = max(x[2], 1)                # not two floats: Python's `v if v > acc else acc`
    out[9] = max(x[2], x[1], x[0])       # three arguments: Python's too
    out[10] = min(x[1], x[0], 1.0)       # Python keeps the first of equal zeros


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_max_min_of_two_floats_are_fmax_fmin(dt):
    """numba-cuda lowers min/max of exactly two float32/float64 values to libdevice fmin/fmax:
    max(nan, 0.0) is 0.0, max(-0.0, 0.0) is +0.0; np.maximum keeps the NaN; any other min/max
    is Python's comparison (a NaN first operand stays)."""
    nan = np.nan
    check(minmax, lambda: (np.array([-0.0, 0.0, nan], dt), np.zeros(11)),
          [0.0, 0.0, -0.0, -0.0, 0.0, 0.0, nan, nan, nan, nan, 0.0])


# -- 5. integer ** (negative) exponent -----------------------------------------------------------
def int_pow(x, e, out):
    out[0] = x[0] ** e[0]


@pytest.mark.parametrize("x,e,expect", [
    (2, -1, 0), (0, -1, I64_MIN), (1, -5, 1), (-1, -3, -1), (-1, -2, 1),
    (3, 40, -6289078614652622848),       # 3**40 wraps, then goes through float64 (numba's
    (2, 70000, I64_MAX),                 # `1.0 / r if invert else r`); |e| > 0x10000: pow()
    (-2, 63, I64_MIN), (5, 0, 1)])
def test_integer_power(x, e, expect):
    check(int_pow, lambda: (np.array([x]), np.array([e]), np.zeros(1, np.int64)), [expect])


def uint_pow(u, out):
    out[0] = u[0] ** 3                   # uint64 ** int64 is int64: computed in int64
    out[1] = u[0] ** -2
    out[2] = u[1] ** -2
    out[3] = min(u[0] ** 3, u[0] ** 1)


def test_unsigned_power_is_computed_in_the_result_type():
    check(uint_pow, lambda: (np.array([2 ** 64 - 2, 1], np.uint64), np.zeros(4, np.int64)), [-8, 0, 1, -8])


def float_pow(f, e, out):
    out[0] = f[0] ** e[0]
    out[1] = f[0] ** 3
    out[2] = f[0] ** -3


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_float_to_integer_power_is_repeated_multiplication(dt):
    f = dt(1.1)
    f2 = f * f                          # exponentiation by squaring in f's type:
    r3 = f * f2                         # r = 1*f; r *= f**2 (exp 3); r *= f**4 (exp 7)
    r7 = r3 * (f2 * f2)
    inv = dt(1.0 / np.float64(r3))      # a negative exponent: 1.0 / r in float64
    check(float_pow, lambda: (np.array([f], dt), np.array([7]), np.zeros(3, dt)), [r7, r3, inv])


# -- 6. `2 ** -1` is folded by CPython to 0.5 -------------------------------------------------
def folded_constants(out, fo):
    fo[0] = 2 ** -1
    fo[1] = -(2 ** -2)
    out[0] = 7 // 2 ** 1
    out[1] = -True


def test_constant_expressions_fold_as_python_does():
    check(folded_constants, lambda: (np.zeros(2, np.int64), np.zeros(2)), [0.5, -0.25], out=1)
    check(folded_constants, lambda: (np.zeros(2, np.int64), np.zeros(2)), [3, -1], out=0)


# -- 7. unary minus of a bool ----------------------------------------------------------------------
def neg_bool(x, out):
    out[0] = -(x[0] > 0)
    out[1] = ~(x[0] > 0)                 # numba: bool invert is `not`
    out[2] = +(x[0] > 0)
    out[3] = -(x[0] < 0)


def test_negated_comparison_is_minus_one():
    check(neg_bool, lambda: (np.array([5]), np.zeros(4, np.int64)), [-1, 0, 1, 0])


# -- 8. shuffle lane/delta outside 0..31 -----------------------------------------------------------
def shuffles(x, d, out):
    i = cuda.threadIdx.x
    out[0, i] = cuda.shfl_down_sync(0xffffffff, x[i], d[0])
    out[1, i] = cuda.shfl_up_sync(0xffffffff, x[i], d[0])
    out[2, i] = cuda.shfl_xor_sync(0xffffffff, x[i], d[0])
    out[3, i] = cuda.shfl_sync(0xffffffff, x[i], d[0])


@pytest.mark.parametrize("d", [33, -1, 69, 2 ** 31, -33])
def test_shuffle_takes_delta_mod_32(d):
    lane = np.arange(32)
    k = d % 32
    expect = [np.where(lane + k < 32, lane + k, lane), np.where(lane - k >= 0, lane - k, lane),
              lane ^ k, np.full(32, k)]
    check(shuffles, lambda: (np.arange(32, dtype=np.int32), np.array([d]), np.zeros((4, 32), np.int32)),
          expect, block=32)


def shuffle_bool_delta(x, out):
    i = cuda.threadIdx.x
    out[i] = cuda.shfl_down_sync(0xffffffff, x[i], True)


def test_shuffle_bool_delta_is_refused_on_both_paths():
    """numba-cuda cannot compile a bool delta (NVVM rejects its IR); the IR path says so."""
    mk = lambda: (np.arange(32), np.zeros(32, np.int64))  # noqa: E731
    with pytest.raises(LaunchError, match="nvvm|NVVM"):
        run(shuffle_bool_delta, mk, "ptx", 32)
    with pytest.raises(TypingError, match=r"test_ir_vs_ptx_bugs.py:\d+.*delta must be an integer"):
        run(shuffle_bool_delta, mk, "ir", 32)


# -- 9. INT64_MIN // -1 ---------------------------------------------------------------------------
def divmod_kernel(x, y, out):
    out[0] = x[0] // y[0]
    out[1] = x[0] % y[0]


@pytest.mark.parametrize("x,y,expect", [(I64_MIN, -1, [0, 0]), (7, 0, [0, 0]), (-7, 2, [-4, 1]),
                                        (I64_MIN, 1, [I64_MIN, 0])])
def test_floor_division_overflow_and_zero(x, y, expect):
    """numba returns 0, 0 for MIN // -1 (as for a zero divisor) instead of overflowing."""
    check(divmod_kernel, lambda: (np.array([x]), np.array([y]), np.zeros(2, np.int64)), expect)


# -- 10. a failing assert ----------------------------------------------------------------------------
@cuda.jit(device=True)
def _checked(v):
    assert v > 100
    return v + 1


def asserts(x, out):
    out[0] = _checked(x[0])
    out[1] = 1
    assert x[0] > 100, "not evaluated"
    out[2] = 1


@pytest.mark.parametrize("x,expect", [(1, [0, 0, 0]), (101, [102, 1, 1])])
def test_failing_assert_ends_the_thread(x, expect):
    """Without debug=True numba-cuda compiles `assert` to a silent return of the thread, from
    inside a device function too: nothing after it runs."""
    check(asserts, lambda: (np.array([x]), np.zeros(3, np.int64)), expect)


# -- 11. round(x, n) ------------------------------------------------------------------------------------
def round_digits(x, out):
    out[0] = round(x[0], 2)
    out[1] = round(x[0], -1)
    out[2] = round(x[1], 0)
    out[3] = round(x[2], 3)


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_round_with_ndigits(dt):
    x = np.array([1.23456, 2.5, -17.0625], dt)
    expect = [1.23, 0.0, 2.0, -17.062]          # -17062.5 rounds half to even
    check(round_digits, lambda: (x.copy(), np.zeros(4, dt)), expect)


def round_edges(x, out, oi):
    out[0] = round(x[0], 1)              # -0.01 -> +0.0: numba's rint goes through an int64
    out[1] = round(x[1], 0)              # 3e38 -> 2^63 (the int64 saturates)
    out[2] = round(x[2], -1)             # -4 -> +0.0
    oi[0] = round(x[1])
    oi[1] = round(x[3])                  # NaN -> INT64_MIN


@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_round_edge_cases(dt):
    mk = lambda: (np.array([-0.01, 3e38, -4.0, np.nan], dt), np.zeros(3, dt), np.zeros(2, np.int64))  # noqa: E731
    check(round_edges, mk, [0.0, 2.0 ** 63, 0.0], out=1)
    check(round_edges, mk, [I64_MAX, I64_MIN], out=2)


def float_casts(f, g, oi, ou, oi32, ou32):
    oi[0] = int64(f[0])
    oi[1] = int64(f[1])
    oi[2] = int64(f[2])
    ou[0] = uint64(f[3])
    ou[1] = uint64(f[1])
    oi32[0] = int32(f[1])
    oi32[1] = int32(f[2])
    oi32[2] = int32(g[0])
    ou32[0] = uint32(g[0])
    ou32[1] = uint32(f[3])


def test_float_to_int_casts_saturate():
    """float -> int casts saturate as the GPU's cvt.rzi does; a NaN gives the sign-bit pattern
    from a float64 or into 64 bits, else 0 (measured on the H200)."""
    def mk():
        return (np.array([1e300, -1e300, np.nan, -5.0]), np.array([np.nan], np.float32),
                np.zeros(3, np.int64), np.zeros(2, np.uint64), np.zeros(3, np.int32), np.zeros(2, np.uint32))
    check(float_casts, mk, [I64_MAX, I64_MIN, I64_MIN], out=2)
    check(float_casts, mk, [0, 0], out=3)
    check(float_casts, mk, [-2 ** 31, -2 ** 31, 0], out=4)
    check(float_casts, mk, [0, 0], out=5)


def pow_half(x, out):
    out[0] = x[0] ** 0.5
    out[1] = x[1] ** 0.5
    out[2] = x[2] ** 0.5


def test_float_power_one_half_is_pow_not_sqrt():
    """libdevice pow: pow(-inf, 0.5) is +inf and pow(-0.0, 0.5) is +0.0 (numpy's sqrt fast path
    gave nan and -0.0)."""
    check(pow_half, lambda: (np.array([-np.inf, -0.0, 4.0]), np.zeros(3)), [np.inf, 0.0, 2.0])


# -- 12. globals are frozen when the kernel is compiled ----------------------------------------------
SCALE = 5


def read_global(out):
    out[0] = SCALE


def test_globals_read_at_compile_time():
    """Each launch of a plain function compiles it afresh on both paths, with the globals'
    values of that moment.  A kernel object keeps its compiled code: numba.cuda would keep
    the old value, the compiled path recompiles when a global changes -- the IR path, which
    keeps its typed IR per signature, refuses rather than differ silently."""
    global SCALE
    mk = lambda: (np.zeros(1, np.int64),)  # noqa: E731
    k = simgpu.jit(read_global)
    try:
        for ex in ("ptx", "ir"):
            assert run(read_global, mk, ex)[0][0] == 5
            assert run(k, mk, ex)[0][0] == 5
        SCALE = 7
        for ex in ("ptx", "ir"):
            assert run(read_global, mk, ex)[0][0] == 7
        assert run(k, mk, "ptx")[0][0] == 7
        with pytest.raises(DSLError, match=r"test_ir_vs_ptx_bugs.py:\d+.*'SCALE'.*changed"):
            run(k, mk, "ir")
    finally:
        SCALE = 5


# -- 13. a scalar argument through cuda.brev / max --------------------------------------------------
def scalar_arg(a, out):
    out[0] = cuda.brev(a)
    out[1] = max(a, 3)


@pytest.mark.parametrize("a,dt,expect", [(np.int32(5), np.int64, [0xA0000000, 5]),
                                         (np.uint64(5), np.uint64, [0xA000000000000000, 5])])
def test_scalar_argument_through_intrinsics(a, dt, expect):
    check(scalar_arg, lambda: (a, np.zeros(2, dt)), expect)


# -- 14. a * b + c is one fused multiply-add -----------------------------------------------------------
def mul_add(a, b, c, out):
    out[0] = a[0] * b[0] + c[0]
    out[1] = c[1] - a[0] * b[0]          # fsub: not contracted by NVPTX, but by ptxas (DFMA -R)
    out[2] = a[0] * b[0] - c[1]          # fsub: likewise (DFMA ..., -R)
    out[3] = a[0] * b[0] - 1.0           # fsub of a constant: fadd of -1.0, contracted
    t = a[0] * b[0]                      # one multiply, two adds: both contracted
    out[4] = t + c[0]
    out[5] = c[0] + t


def mul_then_store(a, b, c, out):
    t = a[0] * b[0]
    out[0] = t + c[0]                    # the product is also stored: not contracted
    out[1] = t


@pytest.mark.parametrize("dt,k", [(np.float64, 30), (np.float32, 13)])
def test_multiply_add_is_fused_like_nvvm(dt, k):
    """NVVM contracts fmul+fadd into fma.rn: (1+2^-k)(1-2^-k) - 1 is -2^-2k, not the 0 that
    rounding the product first gives.  Which pairs it contracts was measured on the compiled
    path (NVPTX: an fadd of an fmul whose uses are all fadds)."""
    e = 2.0 ** (-2 * k)

    def mk():
        return (np.array([1 + 2.0 ** -k], dt), np.array([1 - 2.0 ** -k], dt),
                np.array([-1.0, 1.0], dt), np.zeros(6, dt))
    check_ptx(mul_add, mk, [-e, e, -e, -e, -e, -e])
    check(mul_then_store, mk, [0.0, 1 - e, 0, 0, 0, 0])


def check_ptx(kernel, make_args, expect, out=-1, block=1):
    """The PTX path gives `expect` (what ptxas' SASS computes); the IR path is not compared."""
    ptx = run(kernel, make_args, "ptx", block)[out]
    expect = np.asarray(expect, dtype=ptx.dtype)
    assert same(ptx, expect), f"PTX path: {ptx!r}, expected {expect!r}"


@pytest.mark.xfail(strict=True, reason="the IR path contracts as NVPTX does (_mark_fused); ptxas also fuses "
                   "the fsubs c - a*b, a*b - c and the adds of an unrolled loop (issue 25 item 3: "
                   "simgpu/ptx/contract.py; SASS DFMA -R): an IR-path follow-up")
@pytest.mark.parametrize("kernel", ["mul_add", "fma_in_loop"])
def test_ir_path_contracts_like_ptxas(kernel):
    k = 30
    dt = np.float64

    def mk():
        return (np.array([1 + 2.0 ** -k], dt), np.array([1 - 2.0 ** -k], dt),
                np.array([-1.0, 1.0, 1.0], dt), np.zeros(6, dt))
    f = {"mul_add": mul_add, "fma_in_loop": fma_in_loop}[kernel]
    ptx = run(f, mk, "ptx", 1)[-1]
    ir = run(f, mk, "ir", 1)[-1]
    assert same(ir, ptx), f"IR path: {ir!r}, PTX path: {ptx!r}"


def fma_sunk_into_if(a, b, c, out):
    t = a[0] * b[0]
    if c[2] > 0:
        out[0] = t + c[0]                # the single use sinks into the if: contracted


def fma_two_blocks(a, b, c, out):
    t = a[0] * b[0]
    out[1] = t + c[0]                    # two uses in two blocks: neither contracted
    if c[2] > 0:
        out[0] = t + c[0]


def fma_unrolled(a, b, c, out):
    t = a[0] * b[0]
    for i in range(2):                   # unrolled completely: contracted
        out[i] = t + c[0]


def fma_in_loop(a, b, c, out):
    t = a[0] * b[0]
    for i in range(50):                  # NVPTX: another block, not contracted; ptxas fuses the
        out[i % 2] = t + c[0]            # 50 adds LLVM unrolled (SASS: 50 DFMA)


@pytest.mark.parametrize("dt,k", [(np.float64, 30), (np.float32, 13)])
def test_multiply_add_contraction_follows_basic_blocks(dt, k):
    """NVPTX contracts within a basic block; LLVM first sinks a single-use multiply into an if
    and unrolls short constant loops (measured on the compiled path); ptxas then fuses the mul +
    add pairs left in one block (its SASS; simgpu/ptx/contract.py)."""
    e = 2.0 ** (-2 * k)

    def mk():
        return (np.array([1 + 2.0 ** -k], dt), np.array([1 - 2.0 ** -k], dt),
                np.array([-1.0, 1.0, 1.0], dt), np.zeros(2, dt))
    check(fma_sunk_into_if, mk, [-e, 0.0])
    check(fma_two_blocks, mk, [0.0, 0.0])
    check(fma_unrolled, mk, [-e, -e])
    check_ptx(fma_in_loop, mk, [-e, -e])        # the IR path: test_ir_path_contracts_like_ptxas


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def test_saxpy_bit_exact_on_both_paths():
    rng = np.random.default_rng(0)
    x, y = rng.random(256, np.float32), rng.random(256, np.float32)
    fused = (2.5 * x.astype(np.float64) + y).astype(np.float32)    # one rounding
    mk = lambda: (np.float32(2.5), x.copy(), y.copy(), np.zeros(256, np.float32))  # noqa: E731
    ptx = run(saxpy, mk, "ptx", 256)[3]
    assert same(ptx, fused)
    assert same(run(saxpy, mk, "ir", 256)[3], ptx)

