"""numba's NRT (CUDA_ENABLE_NRT) on the host path: nrt.cu linked (NVRTC), the device heap
(malloc/free intrinsics), the MemInfo destructor called through a function pointer (indirect
call), isspacep."""
import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda  # noqa: E402
from numba.cuda import config  # noqa: E402

import simgpu  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()


@pytest.fixture
def nrt():
    old = config.CUDA_ENABLE_NRT
    config.CUDA_ENABLE_NRT = True
    try:
        yield
    finally:
        config.CUDA_ENABLE_NRT = old


VAL = np.array([4, 9, 16, 25])[::-1]


@pytest.mark.parametrize("lto", ["off", "auto"])
@pytest.mark.parametrize("sass", [False, True], ids=["results-only", "with-ptxas"])
def test_array_copy_allocates_on_the_device_heap(nrt, sass, lto):
    @cuda.jit
    def kernel(out):
        q = VAL.copy()                  # NRT: malloc, MemInfo, decref -> destructor -> free
        i = cuda.grid(1)
        if i < out.size:
            out[i] = q[i % q.size] + i

    with simgpu.settings.override(lto=lto), simgpu.installed(memory=False, sass=sass):
        out = np.zeros(40, np.float64)
        kernel[2, 32](out)
    i = np.arange(40)
    np.testing.assert_array_equal(out, VAL[i % 4] + i)
    ptx = next(iter(kernel.overloads.values())).library._simgpu_linked_ptx   # noqa: SLF001
    text = next(iter(ptx.values()))
    # without LTO nrt.cu's functions are merged in and called; with LTO (numba-cuda's default
    # where nvJitLink is installed) nvJitLink inlines them, and only the heap's malloc stays
    assert "malloc" in text and ("NRT_MemInfo" in text) is (lto == "off")


INDIRECT = """.version 8.0
.target sm_90
.address_size 64

.func (.param .b32 r) twice(.param .b32 x)
{
	.reg .b32 %r<3>;
	ld.param.u32 %r1, [x];
	add.s32 %r2, %r1, %r1;
	st.param.b32 [r], %r2;
	ret;
}

.func (.param .b32 r) plus_one(.param .b32 x)
{
	.reg .b32 %r<3>;
	ld.param.u32 %r1, [x];
	add.s32 %r2, %r1, 1;
	st.param.b32 [r], %r2;
	ret;
}

.visible .entry k(.param .u64 out, .param .u32 which)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [which];
	mov.u32 %r2, %tid.x;
	setp.eq.u32 %p1, %r1, 0;
	mov.u64 %rd2, twice;
	mov.u64 %rd3, plus_one;
	selp.b64 %rd4, %rd2, %rd3, %p1;
	isspacep.global %p1, %rd1;
	@!%p1 trap;
	{
	.param .b32 a;
	.param .b32 ret;
	st.param.b32 [a], %r2;
	proto : .callprototype (.param .b32 _) _ (.param .b32 _);
	call (ret), %rd4, (a), proto;
	ld.param.b32 %r3, [ret];
	}
	mul.wide.u32 %rd5, %r2, 4;
	add.s64 %rd5, %rd1, %rd5;
	st.global.u32 [%rd5], %r3;
	ret;
}
"""


@pytest.mark.parametrize("which, f", [(0, lambda t: 2 * t), (1, lambda t: t + 1)])
def test_indirect_call_through_a_function_address(which, f):
    from simgpu.ptx.runner import run
    out = np.zeros(64, np.int32)
    run(INDIRECT, "k", 1, 64, (out, np.uint32(which)))
    np.testing.assert_array_equal(out, f(np.arange(64)))
