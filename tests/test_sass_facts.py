"""simgpu.sass on real kernels: ptxas resources and SASS mapped to PTX lines and source lines.

Needs numba-cuda (NVVM) and the ptxas/nvdisasm wheels; skipped cleanly without them.
"""
import inspect

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu import settings  # noqa: E402
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda, float32  # noqa: E402

from simgpu.sass import toolchain  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()

from simgpu.sass import compile_kernel  # noqa: E402
from simgpu.sass.disasm import parse_nvdisasm  # noqa: E402
from simgpu.sass.kernel import analyze_ptx  # noqa: E402
from simgpu.sass.ptxas import assemble  # noqa: E402
from simgpu.sass.ptxlines import number_ptx_lines  # noqa: E402


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory):
    with settings.override(cache_dir=str(tmp_path_factory.getbasetemp() / "sass-facts")):
        yield


def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i] + y[i]


def local_unrolled(x, out):
    i = cuda.grid(1)
    acc = cuda.local.array(64, float32)
    for j in range(64):
        acc[j] = x[i] * j
    s = float32(0)
    for j in range(64):
        s += acc[j]
    out[i] = s


def local_dynamic(x, out, n):
    i = cuda.grid(1)
    acc = cuda.local.array(64, float32)
    for j in range(64):
        acc[j] = x[i] * j
    s = float32(0)
    for j in range(n):
        s += acc[(i + j) % 64]
    out[i] = s


def divide(x, y, out):
    i = cuda.grid(1)
    out[i] = x[i] / y[i]


def reverse_shared(x, out):
    sm = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    sm[t] = x[t]
    cuda.syncthreads()
    out[t] = sm[255 - t]


X = np.ones(256, np.float32)


def _line_of(func, text):
    """Absolute line number of the first source line of ``func`` containing ``text``."""
    lines, first = inspect.getsourcelines(func)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


def _ptx_lines_starting(ck, prefix):
    return [n for n in ck.ptx_source if ck.ptx_line(n).startswith(prefix)]


@pytest.mark.parametrize("gpu,arch", [("H200", "sm_90"), ("A100", "sm_80")])
def test_saxpy_resources_and_global_memory_sass(gpu, arch):
    """saxpy compiles for sm_90 and sm_80, uses registers but no local memory, and each PTX
    ld.global / st.global / fma line maps to exactly one LDG / STG / FFMA."""
    ck = compile_kernel(saxpy, (np.float32(2.0), X, X, X), gpu=gpu)
    assert ck.arch == arch
    assert ck.resources.kind == "entry" and ck.resources.registers > 0
    assert not ck.resources.uses_local_memory
    per_line = ck.sass.sass_per_ptx_line
    loads = _ptx_lines_starting(ck, "ld.global")
    assert len(loads) == 2
    for n in loads:
        assert [op.split(".")[0] for op in per_line[n]] == ["LDG"]
    (store,) = _ptx_lines_starting(ck, "st.global")
    assert [op.split(".")[0] for op in per_line[store]] == ["STG"]
    (fma,) = _ptx_lines_starting(ck, "fma.rn.f32")
    assert "FFMA" in per_line[fma]


def test_saxpy_ptx_lines_point_at_the_users_source_line():
    """The PTX lines of the loads and the FMA carry the user's file and line of
    ``out[i] = a * x[i] + y[i]``; every mapped SASS instruction names a PTX instruction line."""
    ck = compile_kernel(saxpy, (np.float32(2.0), X, X, X))
    want = _line_of(saxpy, "out[i] = a * x[i]")
    for n in _ptx_lines_starting(ck, "ld.global") + _ptx_lines_starting(ck, "fma.rn.f32"):
        loc = ck.ptx_source[n]
        assert loc.file.endswith("test_sass_facts.py") and loc.line == want
    assert all(i.ptx_line in ck.ptx_source for i in ck.sass.instructions)
    by_src = ck.sass_by_source_line()
    assert "FFMA" in by_src[(loc.file, want)]


def test_local_array_unrolled_lives_in_registers_but_dynamic_index_does_not():
    """A fully unrolled cuda.local.array(64, float32) accumulator is promoted to registers
    (no stack frame, no local loads); indexed with a runtime index it stays in local memory
    (256-byte stack frame, LDL/STL in the SASS)."""
    reg = compile_kernel(local_unrolled, (X, X))
    assert reg.resources.stack_frame == 0 and not reg.resources.uses_local_memory
    assert not {"LDL", "STL"} & {i.base for i in reg.sass.instructions}
    loc = compile_kernel(local_dynamic, (X, X, 5))
    assert loc.resources.stack_frame >= 64 * 4
    assert {"LDL", "STL"} <= {i.base for i in loc.sass.instructions}


def test_fp32_division_expands_and_calls_a_slow_path():
    """PTX div.rn.f32 becomes MUFU.RCP, FFMA refinements, FCHK and a CALL to an out-of-line
    slow-path subroutine, which is kept separately and attributed to the div line."""
    ck = compile_kernel(divide, (X, X, X))
    (div,) = _ptx_lines_starting(ck, "div.rn.f32")
    ops = ck.sass.sass_per_ptx_line[div]
    assert "MUFU.RCP" in ops and "FCHK" in ops and ops.count("FFMA") >= 3
    assert any(op.startswith("CALL") for op in ops)
    (sub,) = ck.sass.subroutines_of_ptx_line(div)
    assert "slowpath" in sub and len(ck.sass.subroutines[sub]) > 20
    assert all(i.ptx_line is None for i in ck.sass.subroutines[sub])
    full = ck.sass.sass_for_ptx_line(div)
    assert len(full) == len(ops) + len(ck.sass.subroutines[sub])
    assert ck.ptx_source[div].line == _line_of(divide, "out[i] = x[i] / y[i]")


def test_shared_memory_kernel_reports_static_shared_bytes():
    """A 256-float shared array is 1024 bytes of static shared memory; syncthreads uses one
    barrier and becomes BAR.SYNC; the shared accesses are STS/LDS."""
    ck = compile_kernel(reverse_shared, (X, X))
    assert ck.resources.shared_bytes == 1024
    assert ck.resources.barriers == 1
    bases = [i.base for i in ck.sass.instructions]
    assert "STS" in bases and "LDS" in bases and "BAR" in bases


def test_line_rewrite_does_not_change_the_generated_code():
    """ptxas makes the same SASS (opcodes and operands) and uses the same registers for the
    original PTX without -lineinfo and for the .loc-rewritten PTX with -lineinfo."""
    ptx, _entry = toolchain.compile_ptx(divide, toolchain.numba_types_for_args((X, X, X)), (9, 0))
    plain, rep_plain = assemble(ptx, (9, 0), lineinfo=False)
    numbered = number_ptx_lines(ptx)
    lined, rep_lined = assemble(numbered.text, (9, 0), lineinfo=True)

    def code(cubin, tmp):
        tmp.write_bytes(cubin)
        text = toolchain.run_tool("nvdisasm", ["-c", tmp]).stdout
        return [(i.opcode, i.operands, i.predicate) for v in parse_nvdisasm(text).values()
                for i in v]

    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        assert code(plain, Path(d) / "a.cubin") == code(lined, Path(d) / "b.cubin")
    assert ({k: f.registers for k, f in rep_plain.functions.items()}
            == {k: f.registers for k, f in rep_lined.functions.items()})


def test_analyze_ptx_on_handwritten_ptx():
    """analyze_ptx works on PTX not made by numba: a vectorised global load maps to LDG.E.128
    and a .local array indexed at run time gives a stack frame."""
    ptx = r"""
.version 8.0
.target sm_90
.address_size 64

.visible .entry k(.param .u64 p, .param .u32 n)
{
	.local .align 16 .b8 	depot[64];
	.reg .b32 	%r<4>;
	.reg .b64 	%rd<8>;
	.reg .f32 	%f<8>;
	ld.param.u64 	%rd1, [p];
	ld.param.u32 	%r1, [n];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.global.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd2];
	mov.u64 	%rd3, depot;
	cvta.local.u64 	%rd3, %rd3;
	st.local.v4.f32 	[depot], {%f1, %f2, %f3, %f4};
	and.b32 	%r2, %r1, 3;
	mul.wide.u32 	%rd4, %r2, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.f32 	%f5, [%rd5];
	st.global.f32 	[%rd2], %f5;
	ret;
}
"""
    facts = analyze_ptx(ptx, (9, 0), use_cache=False)
    k = facts.kernels["k"]
    v4 = next(n for n in facts.ptx_source if "ld.global.v4" in ptx.splitlines()[n - 1])
    ops = k.sass_per_ptx_line[v4]  # (ptxas also bills the address's LDC/ULDC to this line)
    assert [o for o in ops if o.startswith("LDG")] == ["LDG.E.128"]
    assert sum(o.startswith("LDG") for v in k.sass_per_ptx_line.values() for o in v) == 1
    assert facts.ptxas.functions["k"].stack_frame >= 16
    assert all(v is None for v in facts.ptx_source.values())  # no .loc: no user lines


@cuda.jit(device=True, lineinfo=True)
def _axpy1(a, b):
    return a * b + float32(1)


def calls_device_function(x, out):
    i = cuda.grid(1)
    out[i] = _axpy1(x[i], x[i])


def test_kernel_calling_a_device_function_compiles_without_a_gpu():
    """numba-cuda asks the current GPU for the cc of called device functions; compile_kernel
    answers with the target's cc, so this compiles here.  The inlined FFMA is attributed to
    the device function's line (it has lineinfo=True), inlined at the kernel's call line."""
    ck = compile_kernel(calls_device_function, (X, X))
    want = _line_of(_axpy1.py_func, "return a * b")
    call = _line_of(calls_device_function, "out[i] = _axpy1")
    locs = {ck.ptx_source[i.ptx_line] for i in ck.sass.instructions if i.base == "FFMA"}
    assert [(loc.line, loc.inlined_at[1]) for loc in locs] == [(want, call)]


def test_dispatcher_and_plain_function_give_the_same_kernel():
    """A @cuda.jit dispatcher is compiled through its Python function."""
    plain = compile_kernel(saxpy, (np.float32(2.0), X, X, X))
    jitted = compile_kernel(cuda.jit(saxpy), (np.float32(2.0), X, X, X))
    assert jitted.entry == plain.entry and jitted.resources == plain.resources
