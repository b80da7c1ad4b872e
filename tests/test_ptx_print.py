"""print() on executor="ptx": numba-cuda's vprintf calls, formatted as C printf, one line per
thread that executes the call (simgpu/ptx/printf.py).

Order (one legal order of the GPU's printf buffer): blocks in order; within a block the
intervals between barriers in order; within one interval warps in order; within a warp calls
in the order it executed them; within a call lanes in order.  Output goes to sys.stdout
(capsys sees it) and to rep.extras["printed"] (one entry per thread per call, no newline).
"""
import ctypes
import ctypes.util
import math

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu import settings  # noqa: E402
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu.errors import KernelError  # noqa: E402
from simgpu.ptx import run as ptx_run  # noqa: E402
from simgpu.ptx.printf import c_printf, parse_format  # noqa: E402
from simgpu.sass import toolchain  # noqa: E402

try:
    toolchain.find_tool("ptxas"), toolchain.find_tool("nvdisasm")
    HAVE_TOOLS = True
except toolchain.ToolNotFoundError:  # pragma: no cover - depends on the machine
    HAVE_TOOLS = False
needs_tools = pytest.mark.skipif(not HAVE_TOOLS, reason="ptxas/nvdisasm not installed")


@pytest.fixture(autouse=True, scope="module")
def _private_cache(tmp_path_factory):
    with settings.override(cache_dir=str(tmp_path_factory.getbasetemp() / "ptx-print-cache")):
        yield


def launch(kernel, grid, block, *args, **kw):
    return simgpu.launch(kernel, grid, block, args, executor="ptx", timing=False, **kw)


def check(capsys, rep, want):
    """rep.extras["printed"] and what reached sys.stdout are exactly `want` (lines)."""
    assert rep.extras["printed"] == want
    assert capsys.readouterr().out == "".join(w + "\n" for w in want)


# -- kernels --------------------------------------------------------------------------------------
def k_ints(x):
    i = cuda.grid(1)
    print(i, x[i], -x[i] * 1000000000000, np.uint32(4000000000) + np.uint32(i))


def k_floats(x):
    i = cuda.threadIdx.x
    print(x[i], x[i] * np.float32(2.5), 1.0 / 3.0)


def k_strings(x):
    i = cuda.threadIdx.x
    print("tid", i, "of", cuda.blockDim.x, x[i] > 1, "done")


def k_mixed(x):
    i = cuda.threadIdx.x
    print("t", cuda.threadIdx, (i, x[i]), x[i] == 0)


def k_divergent(x):
    i = cuda.grid(1)
    if i % 3 == 0:
        print("three", i)
    x[i] = i


def k_loop(x):
    i = cuda.threadIdx.x
    for j in range(i):
        print("i", i, "j", j)


def k_lanes_of_warps(x):
    i = cuda.threadIdx.x
    if i % 32 == 0 or i % 32 == 31:
        print(cuda.blockIdx.x, i)


def k_barrier(x):
    i = cuda.threadIdx.x
    if i == 32:
        print("before the barrier", i)
    cuda.syncthreads()
    if i == 0:
        print("after the barrier", i)


def k_special(x):
    i = cuda.threadIdx.x
    print(x[i], -x[i])
    if x[i] != x[i]:
        print(x[i])


def k_fault(x):
    i = cuda.threadIdx.x
    print("alive", i)
    x[i + 100000] = 1.0


# -- numba's formats: %lld %llu %f %s (%d, %d, %d) -------------------------------------------------
@needs_tools
def test_ints_signed_unsigned_int64(capsys):
    x = np.array([0, 1, -2, 7], np.int64)
    rep = launch(k_ints, 1, 4, x)
    want = [f"{i} {v} {-v * 10 ** 12} {4000000000 + i}" for i, v in enumerate(x)]
    check(capsys, rep, want)


@needs_tools
def test_floats_are_printed_with_percent_f(capsys):
    """numba prints every float with %f (a float32 promoted to double: 0.1f -> 0.100000)."""
    x = np.array([0.1, -2.5, 1e10, 3.14159], np.float32)
    rep = launch(k_floats, 1, 4, x)
    want = ["%f %f %f" % (float(v), float(v * np.float32(2.5)), 1.0 / 3.0) for v in x]
    check(capsys, rep, want)
    assert want[0] == "0.100000 0.250000 0.333333"


@needs_tools
def test_strings_and_bools(capsys):
    x = np.arange(3, dtype=np.int32)
    rep = launch(k_strings, 1, 3, x)
    check(capsys, rep, [f"tid {i} of 3 {i > 1} done" for i in range(3)])


@needs_tools
def test_dim3_tuples_and_several_args(capsys):
    x = np.array([0.0, 1.5], np.float64)
    rep = launch(k_mixed, 1, 2, x)
    check(capsys, rep, ["t (0, 0, 0) (0, 0.000000) True", "t (1, 0, 0) (1, 1.500000) False"])


@needs_tools
def test_nan_inf_and_negative_zero(capsys):
    """(The sign of a negated NaN is unspecified in PTX (neg.f32, cvt.f64.f32), so the
    second column of the NaN line is not checked; the formatter's -nan is, against libc.)"""
    x = np.array([np.inf, np.nan, 0.0], np.float32)
    rep = launch(k_special, 1, 3, x)
    got = rep.extras["printed"]
    assert got[0] == "inf -inf" and got[2] == "0.000000 -0.000000" and got[3] == "nan"
    assert got[1] in ("nan nan", "nan -nan") and len(got) == 4
    assert capsys.readouterr().out == "".join(w + "\n" for w in got)


# -- who prints and in which order -------------------------------------------------------------------
@needs_tools
def test_divergent_branch_only_taking_lanes_print(capsys):
    x = np.zeros(64, np.int32)
    rep = launch(k_divergent, 2, 32, x)
    check(capsys, rep, [f"three {i}" for i in range(0, 64, 3)])
    assert list(x) == list(range(64))


@needs_tools
def test_loop_calls_in_program_order_per_warp_lanes_in_order_per_call(capsys):
    """Thread i prints i lines; each iteration is one call of the warp (lanes in order)."""
    rep = launch(k_loop, 1, 4, np.zeros(1, np.int32))
    check(capsys, rep, ["i 1 j 0", "i 2 j 0", "i 3 j 0", "i 2 j 1", "i 3 j 1", "i 3 j 2"])


@needs_tools
@pytest.mark.parametrize("chunk_lanes", [1 << 16, 64])
def test_blocks_then_warps_then_lanes(capsys, chunk_lanes):
    """Several blocks of two warps, run as one chunk or a chunk per block: same order."""
    rep = launch(k_lanes_of_warps, 3, 64, np.zeros(1, np.int32), chunk_lanes=chunk_lanes)
    check(capsys, rep, [f"{b} {t}" for b in range(3) for t in (0, 31, 32, 63)])


@needs_tools
def test_a_barrier_orders_the_lines_of_a_block(capsys):
    """Warp 1 prints before a barrier, warp 0 after it: warp 1's line comes first (warp
    order applies only between barriers)."""
    rep = launch(k_barrier, 1, 64, np.zeros(1, np.int32))
    check(capsys, rep, ["before the barrier 32", "after the barrier 0"])


@needs_tools
def test_lines_before_a_fault_are_printed(capsys):
    x = np.zeros(2, np.float32)
    with pytest.raises(KernelError):
        launch(k_fault, 1, 2, x)
    assert capsys.readouterr().out == "alive 0\nalive 1\n"


# -- hand-written PTX: CUDA's buffer layout for %d %c %x %s and 8-byte arguments ------------------
HAND_FMT = b"[%d] [%-4c] %#x %lld %s %.3e %p\n"
HAND_PTX = r"""
.version 7.8
.target sm_90
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.const .align 1 .b8 fmt[FMTLEN] = {FMTBYTES};
.const .align 1 .b8 word[3] = {104,105};
.visible .entry k(.param .u64 out)
{
    .local .align 8 .b8 buf[48];
    .reg .b32 %r<6>;
    .reg .b64 %rd<8>;
    .reg .f64 %fd<2>;
    mov.u32 %r1, %tid.x;
    mov.u64 %rd1, buf;
    st.local.u32 [%rd1], %r1;
    add.u32 %r2, %r1, 65;
    st.local.u32 [%rd1+4], %r2;
    mul.lo.u32 %r3, %r1, 255;
    st.local.u32 [%rd1+8], %r3;
    cvt.s64.s32 %rd2, %r1;
    sub.s64 %rd2, 0, %rd2;
    st.local.u64 [%rd1+16], %rd2;
    mov.u64 %rd3, word;
    cvta.const.u64 %rd3, %rd3;
    st.local.u64 [%rd1+24], %rd3;
    mov.f64 %fd1, 0d40091EB851EB851F;
    st.local.f64 [%rd1+32], %fd1;
    mov.u64 %rd6, 0;
    st.local.u64 [%rd1+40], %rd6;
    cvta.local.u64 %rd4, %rd1;
    mov.u64 %rd5, fmt;
    cvta.const.u64 %rd5, %rd5;
    {
    .param .b64 param0;
    st.param.b64 [param0+0], %rd5;
    .param .b64 param1;
    st.param.b64 [param1+0], %rd4;
    .param .b32 retval0;
    call.uni (retval0), vprintf, (param0, param1);
    ld.param.b32 %r4, [retval0+0];
    }
    ld.param.u64 %rd7, [out];
    cvta.to.global.u64 %rd7, %rd7;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd7, %rd7, %rd2;
    st.global.u32 [%rd7], %r4;
    ret;
}
""".replace("FMTLEN", str(len(HAND_FMT) + 1)).replace("FMTBYTES", ", ".join(map(str, HAND_FMT)))


def test_hand_written_vprintf_layout_and_return_value(capsys):
    """Each argument aligned to its size: int %d at 0, %c at 4, %#x at 8, %lld at 16,
    %s at 24, double at 32, %p at 40; vprintf returns the number of arguments (7)."""
    out = np.zeros(3, np.int32)
    image = ptx_run(HAND_PTX, "k", 1, 3, (out,))
    want = ["[0] [A   ] 0 0 hi 3.140e+00 (nil)", "[1] [B   ] 0xff -1 hi 3.140e+00 (nil)",
            "[2] [C   ] 0x1fe -2 hi 3.140e+00 (nil)"]
    assert image.printed == want
    assert capsys.readouterr().out == "".join(w + "\n" for w in want)
    assert list(out) == [7, 7, 7]


# -- the formatter against the C library -------------------------------------------------------------
_LIBC = ctypes.CDLL(ctypes.util.find_library("c")) if ctypes.util.find_library("c") else None

CASES = [
    (b"%d|%5d|%-5d|%05d|%+d|% d|%.3d|%5.3d|%05.3d|%.0d", [42, -42, 42, 42, 42, 42, 7, 7, 7, 0]),
    (b"%u %x %X %o %#x %#o %#X %#x %#o", [4294967295, 255, 255, 8, 255, 8, 255, 0, 0]),
    (b"%lld %llu %llx %ld %lu", [-(1 << 62), (1 << 64) - 1, 1 << 40, -5, 5]),
    (b"%hhd %hd %hhu %hu", [300, 70000, 300, 70000]),
    (b"%f %.2f %10.3f %-10.1f| %+f %e %.0e %E %g %g %g %G %#g", [
        1.5, 2.345, -3.14159, 2.0, 1.0, 12345.678, 5.5, 0.001, 0.0001, 1e-5, 123456789.0,
        1e20, 1.0]),
    (b"%08.3f %+08.2f %-8.2e| % .1f %.10g", [3.14159, -2.5, 1234.5, 2.0, 1.0 / 3.0]),
    (b"%f %f %5.1f %-6f| %E %F", [math.inf, -math.inf, math.nan, -math.nan, math.inf, math.nan]),
    (b"%a %a %A %a", [1.0, 0.5, 255.0, -0.1]),
    (b"%c%c%3c%-3c|", [72, 105, 65, 66]),
    (b"%s|%10s|%-10s|%.2s|%5.1s", [b"abc", b"abc", b"abc", b"abc", b"abc"]),
    (b"%p %20p %-20p|", [0x1234, 0xdeadbeef, 0x10]),
    (b"100%% %*d %-*d %.*f %*.*f|", [5, 42, 5, 42, 2, 3.14159, 8, 1, 2.25]),
]


def _ctypes_arg(fmt_item, v):
    if isinstance(v, bytes):
        return ctypes.c_char_p(v)
    if isinstance(v, float):
        return ctypes.c_double(v)
    if fmt_item.conv == "p":
        return ctypes.c_void_p(v)
    big = fmt_item.length in ("l", "ll", "q", "j", "z", "t")
    return (ctypes.c_ulonglong if v >= 0 else ctypes.c_longlong)(v) if big else \
        (ctypes.c_uint if v >= 0 else ctypes.c_int)(v & 0xFFFFFFFF if v >= 0 else v)


@pytest.mark.skipif(_LIBC is None, reason="no C library to compare with")
@pytest.mark.parametrize("fmt, args", CASES)
def test_formats_match_the_c_library(fmt, args):
    specs = [x for x in parse_format(fmt) if not isinstance(x, bytes)]
    slots = [x for x in specs for _ in x.slots]
    assert len(slots) == len(args)
    buf = ctypes.create_string_buffer(1024)
    _LIBC.snprintf(buf, 1024, fmt, *[_ctypes_arg(x, v) for x, v in zip(slots, args)])
    assert c_printf(fmt, args) == buf.value


def test_null_string_and_percent_n():
    assert c_printf(b"[%s] [%n] [%p]\n", [0, 0, 0]) == b"[(null)] [] [(nil)]\n"


LOCAL_FMT_PTX = r"""
.version 7.8
.target sm_90
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.visible .entry k(.param .u64 out)
{
    .local .align 8 .b8 fmt[8];
    .local .align 8 .b8 buf[8];
    .reg .b32 %r<6>;
    .reg .b64 %rd<8>;
    .reg .pred %p<2>;
    mov.u32 %r1, %tid.x;
    setp.eq.u32 %p1, %r1, 0;
    selp.u32 %r2, 100, 120, %p1;
    shl.b32 %r2, %r2, 8;
    or.b32 %r2, %r2, 655397;
    mov.u64 %rd1, fmt;
    st.local.u32 [%rd1], %r2;
    mov.u64 %rd2, buf;
    mov.u32 %r3, 255;
    st.local.u32 [%rd2], %r3;
    cvta.local.u64 %rd3, %rd1;
    cvta.local.u64 %rd4, %rd2;
    {
    .param .b64 param0;
    st.param.b64 [param0+0], %rd3;
    .param .b64 param1;
    st.param.b64 [param1+0], %rd4;
    .param .b32 retval0;
    call.uni (retval0), vprintf, (param0, param1);
    }
    ret;
}
"""


def test_format_in_local_memory_is_read_per_thread(capsys):
    """A format the thread built in its own .local frame ('%d\\n' / '%x\\n'): each lane's."""
    assert 655397 == int.from_bytes(b"%\0\n\0", "little")  # the bytes around the conversion
    image = ptx_run(LOCAL_FMT_PTX, "k", 1, 2, (np.zeros(1, np.int32),))
    assert image.printed == ["255", "ff"]
    assert capsys.readouterr().out == "255\nff\n"
