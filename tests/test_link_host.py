"""What numba links into a kernel when it loads the module, linked by simgpu on the host path
(simgpu.sass.toolchain.library_link_ptx): the CUDA C shims of cuda.fp16, ``declare_device``
with ``link=[...]`` (.cu compiled with NVRTC, .ptx merged as it is), and a clear error for
machine code simgpu cannot link."""
import re

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu.sass import toolchain  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()


@pytest.fixture(params=[False, True], ids=["results-only", "with-ptxas"])
def sim(request):
    with simgpu.installed(memory=False, sass=request.param) as s:
        yield s


def test_fp16_shims_are_linked(sim):
    @cuda.jit
    def k(r, a, b):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = cuda.fp16.hfma(a[i], b[i], cuda.fp16.hsub(a[i], b[i]))

    rng = np.random.default_rng(1)
    a = rng.standard_normal(100).astype(np.float16)
    b = rng.standard_normal(100).astype(np.float16)
    r = np.zeros_like(a)
    k[1, 128](r, a, b)
    d = (a - b).astype(np.float16)                          # hsub: rounded to half
    want = (a.astype(np.float64) * b + d).astype(np.float16)  # hfma: one rounding to half
    np.testing.assert_array_equal(r.view(np.uint16), want.view(np.uint16))


CU_SOURCE = r"""
extern "C" __device__ int times_three_plus(int *ret, int x, int y) {
    *ret = 3 * x + y;
    return 0;
}
"""

PTX_SOURCE = r"""
.version 7.0
.target sm_70
.address_size 64

.visible .func (.param .b32 func_retval0) negate_ptx(
	.param .b64 negate_ptx_param_0,
	.param .b32 negate_ptx_param_1
)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [negate_ptx_param_0];
	ld.param.u32 %r1, [negate_ptx_param_1];
	neg.s32 %r2, %r1;
	st.u32 [%rd1], %r2;
	mov.u32 %r2, 0;
	st.param.b32 [func_retval0+0], %r2;
	ret;
}
"""


def test_declare_device_links_cu_and_ptx_files(sim, tmp_path):
    cu = tmp_path / "times.cu"
    cu.write_text(CU_SOURCE)
    ptx = tmp_path / "neg.ptx"
    ptx.write_text(PTX_SOURCE)
    times = cuda.declare_device("times_three_plus", "int32(int32, int32)", link=[str(cu)])
    neg = cuda.declare_device("negate_ptx", "int32(int32)", link=[str(ptx)])

    @cuda.jit
    def k(out, x):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = neg(times(x[i], i))

    x = np.arange(50, dtype=np.int32) - 7
    out = np.zeros_like(x)
    k[2, 32](out, x)
    np.testing.assert_array_equal(out, -(3 * x + np.arange(50)))


def test_jit_link_argument_in_memory_source(sim):
    from numba.cuda.cudadrv.linkable_code import CUSource
    src = CUSource(CU_SOURCE.replace("times_three_plus", "times_three_plus_mem"), name="mem.cu")
    times = cuda.declare_device("times_three_plus_mem", "int32(int32, int32)")

    @cuda.jit(link=[src])
    def k(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = times(i, 1)

    out = np.zeros(40, np.int32)
    k[1, 64](out)
    np.testing.assert_array_equal(out, 3 * np.arange(40) + 1)


@pytest.mark.parametrize("ext", ["o", "a", "cubin", "fatbin", "ltoir"])
def test_machine_code_is_a_clear_link_error(ext, tmp_path):
    f = tmp_path / f"lib.{ext}"
    f.write_bytes(b"\x7fELF not really")
    with pytest.raises(toolchain.LinkError, match=r"lib\.%s.*links CUDA C\+\+ sources \(\.cu" % ext):
        toolchain.linking_file_ptx(str(f), (9, 0))


def test_machine_code_in_a_kernel_names_it(tmp_path):
    f = tmp_path / "thing.cubin"
    f.write_bytes(b"\x7fELF")
    fn = cuda.declare_device("from_cubin", "int32(int32)", link=[str(f)])

    @cuda.jit
    def k(out):
        out[0] = fn(1)

    with simgpu.installed(memory=False, sass=False):
        with pytest.raises(toolchain.LinkError, match="thing.cubin"):
            k[1, 1](np.zeros(1, np.int32))


def test_merge_keeps_one_definition_of_a_function_two_files_define():
    a = ".version 7.0\n.target sm_70\n.address_size 64\n.weak .func helper()\n{\n\tret;\n}\n"
    kernel = ".version 8.0\n.target sm_90\n.address_size 64\n.extern .func helper\n()\n;\n.visible .entry k()\n{\n\tret;\n}\n"
    merged = toolchain.merge_ptx(kernel, [a, a])
    assert merged.count(".func helper()") == 1 and ".extern" not in merged
    assert ".version 8.0" in merged and merged.count(".target") == 1


def test_linked_ptx_is_remembered_per_library(sim):
    @cuda.jit
    def k(r, a):
        r[0] = cuda.fp16.hneg(a[0])

    a = np.ones(1, np.float16)
    r = np.zeros(1, np.float16)
    k[1, 1](r, a)
    assert r[0] == -1
    lib = next(iter(k.overloads.values())).library
    assert lib._simgpu_linked_ptx                        # noqa: SLF001 - the memo
    ptx = next(iter(lib._simgpu_linked_ptx.values()))
    assert "neg.f16" in ptx and not re.search(r"\.extern\s+\.func[^;]*hneg", ptx)
