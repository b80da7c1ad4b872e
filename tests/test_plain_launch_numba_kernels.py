"""numba-cuda's own test kernels as plain ``simgpu.launch`` calls (issue 25).

Each test here is a kernel of numba-cuda's test suite (numba/cuda/tests/cudapy) that went
wrong as a plain launch -- ``simgpu.launch(py_func, grid, block, args)``, simgpu compiling the
Python function itself and binding the arguments from Python -- with the arguments and the
expected values of numba-cuda's test.  validation/numba_kernels/ runs all of them.
"""
from collections import namedtuple

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()

from numba.cuda.np.numpy_support import carray  # noqa: E402

import simgpu  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()

Point3 = namedtuple("Point3", ("x", "y", "r"))
Point2 = namedtuple("Point2", ("x", "y"))


def plain(kernel, args, grid=1, block=1):
    return simgpu.launch(kernel, grid, block, args, memory=False, timing=False)


def read_named(r1, r2, x):
    r1[0] = x.x
    r1[1] = x.y
    r2[0] = x.r


def read_named_uni(r, x):
    r[0] = x.x
    r[1] = x.y


def test_namedtuple_argument_keeps_its_fields():
    """test_array_args.TestCudaArrayArg.test_namedtuple: numba types a namedtuple by its
    class; the binding rebuilt it as a plain tuple, and ``x.x`` did not type."""
    x = Point3(1, 2, 2.236)
    r1, r2 = np.zeros(2, np.int64), np.zeros(1, np.float64)
    plain(read_named, (r1, r2, x))
    assert r1.tolist() == [1, 2] and r2[0] == 2.236


def test_namedunituple_argument_keeps_its_fields():
    """test_array_args.TestCudaArrayArg.test_namedunituple."""
    x = Point2(1, 2)
    r = np.zeros(2, np.int64)
    plain(read_named_uni, (r, x))
    assert r.tolist() == [1, 2]


def read_named_array(out, p):
    out[0] = p.x[1] + p.y


def test_namedtuple_holding_an_array():
    """A namedtuple's array member is placed in device memory like any array argument."""
    out = np.zeros(1, np.float64)
    plain(read_named_array, (out, Point2(np.arange(3.0), 0.5)))
    assert out[0] == 1.5


def lengths(r, x):
    r[0] = len(x)
    r[1] = len(x[0])


def test_tuple_of_empty_tuples():
    """test_array_args.TestCudaArrayArg.test_tuple_of_empty_tuples: numba-cuda's line
    information fails on an empty tuple's debug type (ZeroDivisionError in debuginfo.py); the
    kernel compiles without it, as a plain cuda.jit compiles it."""
    r = np.ones(2, np.int64)
    plain(lengths, (r, ((), (), ())))
    assert r.tolist() == [3, 0]


def test_typing_errors_are_not_retried_without_lineinfo():
    """Only a failure inside numba's debuginfo is retried; a kernel that does not type fails
    as before (numba's own error)."""
    from simgpu.sass.toolchain import raised_in_debuginfo
    try:
        plain(read_named_uni, (np.zeros(2, np.int64), (1, 2)))
    except Exception as e:
        assert not raised_in_debuginfo(e)
    else:
        raise AssertionError("a plain tuple has no .x")


EXTREME = """
def atomic(res, ary):
    tx = cuda.threadIdx.x
    bx = cuda.blockIdx.x
    {func}(res, 0, ary[tx, bx])
"""


def exec_kernel(func):
    from numba import cuda
    scope = {}
    exec(EXTREME.format(func=func), {"cuda": cuda}, scope)     # no source: as numba-cuda's tests make them
    return scope["atomic"]


def test_execd_kernels_differing_only_in_a_name_have_different_fingerprints():
    """test_atomics' atomic_max and atomic_min are exec'd from one template: the same
    bytecode, names, file and line, differing only in ``cuda.atomic.max``/``.min`` (co_names).
    The PTX cache's key had the bytecode without the names: atomic_min ran atomic_max's PTX."""
    from simgpu.sass.fingerprint import function_fingerprint
    assert function_fingerprint(exec_kernel("cuda.atomic.max")) != function_fingerprint(exec_kernel("cuda.atomic.min"))
    assert function_fingerprint(exec_kernel("cuda.atomic.max")) == function_fingerprint(exec_kernel("cuda.atomic.max"))


@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_atomic_min_after_atomic_max(dtype):
    """test_atomics.TestCudaAtomics.test_atomic_min_*: run after test_atomic_max_*, as the
    suite does; each gets its own result."""
    vals = np.random.default_rng(0).integers(-65535, 65535, size=(32, 32)).astype(dtype)
    for func, want, start in (("cuda.atomic.max", vals.max(), 0), ("cuda.atomic.min", vals.min(), 65535)):
        res = np.array([start], dtype=dtype)
        simgpu.launch(exec_kernel(func), 32, 32, (res, vals), memory=False, timing=False)
        assert res[0] == want, func


def operator_kernel(op):
    def foo(a, b):
        i = 0
        a[i] = op(a[i], b[i])
    return foo


def test_operator_closures_are_different_kernels():
    """test_operator.TestOperatorModule.test_floordiv (after test_add): one closure whose
    ``op`` is operator.add or operator.floordiv.  The PTX cache's key counted a builtin
    function by its type only, so floordiv ran add's PTX (2.0 for 1 // 1)."""
    import operator
    for op in (operator.add, operator.floordiv, operator.mul, operator.sub, operator.truediv):
        a, b = np.ones(1), np.ones(1)
        res = a.copy()
        plain(operator_kernel(op), (res, b))
        assert res[0] == op(a, b)[0], op.__name__


def test_fingerprints_name_builtins_ufuncs_classes_and_enum_members():
    import enum
    import math
    import operator
    from simgpu.sass.fingerprint import value_fingerprint

    class Color(enum.IntEnum):
        RED = 1
        BLUE = 2

    values = [operator.add, operator.floordiv, math.sin, math.cos, np.sin, np.cos, int, float,
              Color.RED, Color.BLUE]
    fps = [str(value_fingerprint(v)) for v in values]
    assert len(set(fps)) == len(values)
    assert str(value_fingerprint(operator.add)) == str(value_fingerprint(operator.add))


def array_reshape2d(arr, newshape, got):
    y = arr.reshape(newshape)
    for i in range(y.shape[0]):
        for j in range(y.shape[1]):
            got[i, j] = y[i, j]


def test_array_reshape_links_numbas_helper():
    """test_array.TestCudaArray.test_array_reshape: ``a.reshape`` calls
    numba_attempt_nocopy_reshape, which numba-cuda's _Kernel links from reshape_funcs.cu; the
    plain launch's compile left it out and the launch was refused."""
    arr = np.arange(24)
    got = np.zeros((4, 6), arr.dtype)
    plain(array_reshape2d, (arr, (4, 6), got))
    np.testing.assert_array_equal(got, arr.reshape(4, 6))
    arr = np.arange(25).reshape(5, 5)         # a negative extent, as the test's second half
    got = np.zeros((5, 5), arr.dtype)
    plain(array_reshape2d, (arr, (-1, 5), got))
    np.testing.assert_array_equal(got, arr)


def test_dispatcher_fastmath_is_compiled_in():
    """A cuda.jit(fastmath=True) dispatcher given to simgpu.launch compiles with fastmath, as
    numba compiles it for the GPU (division flushes a subnormal to zero: div.approx.ftz)."""
    from numba import cuda

    def divide(r, a, b):
        r[0] = a / b
    sub = np.float32(1e-40)         # subnormal
    r = np.ones(1, np.float32)
    plain(cuda.jit(fastmath=True)(divide), (r, sub, np.float32(1.0)))
    assert r[0] == 0.0
    plain(cuda.jit(divide), (r, sub, np.float32(1.0)))
    assert r[0] == sub


def multiply(r, a, b):
    r[0] = a * b


def pointer_axpy(r, a, x, y, n):
    i = 0
    while i < n:
        r[i] = a * x[i] + y[i]
        i += 1


def carray_add(a_ptr):
    a = carray(a_ptr, (1,), dtype=np.float32)
    a[0] += 1.2


def test_explicit_signatures_type_and_cast_the_arguments():
    """A dispatcher made with explicit signatures (cuda.jit("void(...)")) runs the overload
    numba picks, with the arguments cast to its types (a float32 parameter: 0.1 * 0.1 in
    float32, not float64)."""
    from numba import cuda
    with simgpu.installed(memory=False, sass=False):
        k = cuda.jit("void(float64[:], float32, float32)")(multiply)
        r = np.zeros(1, np.float64)
        plain(k, (r, 0.1, 0.1))         # float32 arithmetic, as numba casts 0.1 to the signature's f4
        assert r[0] == np.float64(np.float32(0.1) * np.float32(0.1)) != 0.1 * 0.1


def test_pointer_arguments_reach_the_device_arrays():
    """An integer passed for a pointer parameter is the address (explicit signatures, above),
    and the device arrays it names are mapped in a plain launch as in a numba launch
    (test_dispatcher.test_dispatcher_cpointer_arguments, test_array.test_carray/test_farray:
    refused before: the int typed as int64, then the address unmapped)."""
    from numba import cuda, types
    with simgpu.installed(memory=False, sass=False):
        ptr = types.CPointer(types.int32)
        axpy = cuda.jit(types.void(ptr, types.int32, ptr, ptr, types.uint32))(pointer_axpy)
        hx, hy = np.arange(10, dtype=np.int32), np.arange(10, dtype=np.int32) * 2
        dx, dy = cuda.to_device(hx), cuda.to_device(hy)
        dr = cuda.device_array_like(dx)
        ptrs = [d.__cuda_array_interface__["data"][0] for d in (dr, dx, dy)]
        plain(axpy, (ptrs[0], 5, ptrs[1], ptrs[2], 10))
        np.testing.assert_array_equal(dr.copy_to_host(), 5 * hx + hy)
        add = cuda.jit(types.void(types.CPointer(types.float32)))(carray_add)
        d = cuda.to_device(np.zeros(1, np.float32))
        plain(add, (int(d.gpu_data.device_pointer),))
        assert d.copy_to_host()[0] == np.float32(1.2)


class Color(__import__("enum").Enum):
    red = 1
    green = 2


class Shape(__import__("enum").IntEnum):
    circle = 1
    square = 2


def compare(a, b, out):
    out[0] = a == b
    out[1] = a != b
    out[2] = a is b
    out[3] = a is not b


class Planet(__import__("enum").Enum):
    VENUS = (4.869e24, 6.0518e6)
    EARTH = (5.976e24, 6.37814e6)


@pytest.mark.parametrize("a, b", [(Color.red, Color.green), (Color.red, Color.red), (Shape.circle, Shape.circle),
                                  (Planet.EARTH, Planet.EARTH), (Planet.VENUS, Planet.EARTH)])
def test_enum_members_are_arguments(a, b):
    """test_enums.EnumTest.test_compare: an Enum member is a kernel argument (numba types it
    by its class and passes its value, a tuple value as its members); the binding refused a
    plain Enum's member."""
    got, want = np.zeros(4, np.bool_), np.zeros(4, np.bool_)
    plain(compare, (a, b, got))
    compare(a, b, want)
    np.testing.assert_array_equal(got, want)


TIMES2_CU = """
extern "C" __device__
int times2(int *out, int a)
{
  *out = a * 2;
  return 0;
}
"""

TIMES4_CU = """
extern "C" __device__
int times2(int *out, int a);

extern "C" __device__
int times4(int *out, int a)
{
  int tmp;
  times2(&tmp, a);
  *out = tmp * 2;
  return 0;
}
"""


@pytest.mark.parametrize("order", ["times2 first", "times4 first"])
def test_linked_sources_that_call_each_other_merge_in_either_order(order):
    """test_device_func.TestDeclareDevice.test_link_multiple_sources_*: times4.cu declares
    times2 (.extern) and times2.cu defines it.  The merge kept the .extern next to the
    definition (ptxas: duplicate definition), depending on the files' order (numba keeps
    them in a set)."""
    from simgpu.sass.ptxas import assemble
    from simgpu.sass.toolchain import merge_ptx, nvrtc_ptx_cached
    t2, t4 = nvrtc_ptx_cached(TIMES2_CU, "times2.cu", (9, 0)), nvrtc_ptx_cached(TIMES4_CU, "times4.cu", (9, 0))
    kernel = (".version 8.0\n.target sm_90\n.address_size 64\n"
              ".extern .func (.param .b32 r) times4(.param .b64 a, .param .b32 b);\n"
              ".visible .entry k(.param .b64 p)\n{\n.reg .b64 %rd<2>;\n.reg .b32 %r<2>;\n"
              "ld.param.u64 %rd1, [p];\n{\n.param .b64 pa;\n.param .b32 pb;\n.param .b32 rv;\n"
              "st.param.b64 [pa], %rd1;\nst.param.b32 [pb], 3;\n"
              "call.uni (rv), times4, (pa, pb);\n}\nret;\n}\n")
    extras = [t2, t4] if order == "times2 first" else [t4, t2]
    merged = merge_ptx(kernel, extras)
    assemble(merged, (9, 0), lineinfo=False)          # ptxas accepts it
    assert merged.count(".extern") == 0


def times4_kernel(r, x):
    i = 0
    while i < len(r):
        r[i] = TIMES4(x[i])
        i += 1


def test_linked_ptx_is_not_kept_in_the_ptx_cache(tmp_path):
    """PTX with linked files (declare_device(link=...)) is compiled afresh each time: the files
    are not in the kernel's fingerprint, so a cached copy could be another file's code."""
    from numba import cuda
    from simgpu import settings
    from simgpu.sass.kernel import compile_kernel
    global TIMES4
    TIMES4 = cuda.declare_device("times4", "int32(int32)",
                                 link=[cuda.CUSource(TIMES2_CU), cuda.CUSource(TIMES4_CU)])
    x = np.arange(10, dtype=np.int32)
    r = np.empty_like(x)
    with settings.override(cache_dir=str(tmp_path), disk_cache=True):
        assert not compile_kernel(times4_kernel, (r, x)).ptx_from_cache
        assert not compile_kernel(times4_kernel, (r, x)).ptx_from_cache
        plain(times4_kernel, (r, x))
    np.testing.assert_array_equal(r, 4 * x)


def write_one(r):
    r[0] = 1


@pytest.mark.parametrize("bounds", [128, (128,), (128, 2)])
def test_launch_bounds_refuse_a_bigger_block(bounds):
    """test_dispatcher.TestLaunchBounds: a block beyond the kernel's launch bounds (.maxntid)
    does not launch (the driver's CUDA_ERROR_INVALID_VALUE); the plain launch ran it."""
    from numba import cuda
    from simgpu.errors import LaunchError
    k = cuda.jit(launch_bounds=bounds)(write_one)
    r = np.zeros(1, np.int32)
    plain(k, (r,), block=128)
    assert r[0] == 1
    with pytest.raises(LaunchError, match="CUDA_ERROR_INVALID_VALUE"):
        plain(k, (r,), block=129)


VAL = np.array([1, 2, 3])[::-1]


def copy_global(out):
    q = VAL.copy()
    for i in range(len(out)):
        out[i] = q[i]


def test_nrt_library_is_linked(monkeypatch):
    """test_array_methods.TestCudaArrayMethods.test_array_copy: ``a.copy()`` in a kernel
    allocates through NRT (NRT_Allocate, NRT_incref ...), whose library numba-cuda's _Kernel
    links (maybe_link_nrt); the plain launch's compile left it out and was refused."""
    from numba.cuda import config
    monkeypatch.setattr(config, "CUDA_ENABLE_NRT", True)     # as the numba test's setUp
    out = np.zeros(3, np.float64)
    plain(copy_global, (out,))
    np.testing.assert_array_equal(out, VAL)
