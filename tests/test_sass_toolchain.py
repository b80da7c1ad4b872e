"""simgpu.sass.toolchain: finding the NVIDIA tools, typing launch arguments, GPU names,
and numba's own errors reaching the user unchanged."""
import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu import settings  # noqa: E402
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda  # noqa: E402
from numba.core import types  # noqa: E402
from numba.core.errors import TypingError  # noqa: E402

from simgpu.errors import SimGPUError  # noqa: E402
from simgpu.sass import toolchain  # noqa: E402
from simgpu.sass.toolchain import ToolNotFoundError, cc_for_gpu, numba_types_for_args  # noqa: E402


def _have_tools():
    try:
        toolchain.find_tool("ptxas"), toolchain.find_tool("nvdisasm")
        return True
    except ToolNotFoundError:
        return False


needs_tools = pytest.mark.skipif(not _have_tools(), reason="ptxas/nvdisasm not installed")


@needs_tools
def test_tools_are_found_and_report_versions():
    """ptxas and nvdisasm are located and state a CUDA version; NVVM's version is known."""
    v = toolchain.toolchain_versions()
    assert v["ptxas"].startswith("V") and v["nvdisasm"].startswith("V")
    assert v["nvvm"][0].isdigit()
    assert 90 in toolchain.supported_archs()


def test_missing_tool_gives_a_clear_error(monkeypatch, tmp_path):
    """With no tool anywhere (no pathfinder hit, no wheel folder, empty PATH) the error names
    the tool and the pip package that installs it."""
    monkeypatch.setattr(toolchain, "_pathfinder_lookup", lambda name: None)
    monkeypatch.setattr(toolchain, "_wheel_bin_dirs", lambda: [tmp_path])
    monkeypatch.setenv("PATH", str(tmp_path))
    with settings.override(ptxas=None), pytest.raises(ToolNotFoundError) as err:
        toolchain.find_tool("ptxas")
    assert isinstance(err.value, SimGPUError)
    assert "'ptxas' not found" in str(err.value)
    assert "pip install cuda-toolkit[nvcc]" in str(err.value)
    with pytest.raises(ToolNotFoundError, match="nvidia-cuda-nvdisasm"):
        toolchain.run_tool("nvdisasm", ["--version"])


def test_tool_override_must_be_executable(monkeypatch, tmp_path):
    """$SIMGPU_PTXAS pointing at a non-executable file is reported, not silently ignored."""
    bogus = tmp_path / "ptxas"
    bogus.write_text("not a program")
    with settings.override(ptxas=str(bogus)), pytest.raises(ToolNotFoundError, match="not an executable"):
        toolchain.find_tool("ptxas")


def test_launch_argument_types_match_numba_cuda():
    """Python int/float become int64/float64, numpy scalars keep their dtype, arrays keep
    dtype, rank and layout; numba types pass through."""
    a2f = np.zeros((4, 3), np.float64, order="F")
    got = numba_types_for_args((1, 2.5, True, np.float32(1), np.int32(3), np.zeros(8, np.float32),
                                a2f, types.int16))
    assert got == (types.int64, types.float64, types.boolean, types.float32, types.int32,
                   types.Array(types.float32, 1, "C"), types.Array(types.float64, 2, "F"),
                   types.int16)


def test_gpu_names_to_compute_capability():
    """H200/H100 are sm_90, A100 sm_80, V100 sm_70; full product names, 'sm_XY' and tuples
    work; an unknown name is a SimGPUError."""
    assert cc_for_gpu("H200") == cc_for_gpu("H100") == (9, 0)
    assert cc_for_gpu("NVIDIA H100 80GB HBM3") == (9, 0)
    assert cc_for_gpu("A100") == cc_for_gpu("NVIDIA A100-SXM4-80GB") == (8, 0)
    assert cc_for_gpu("V100") == (7, 0)
    assert cc_for_gpu("sm_86") == (8, 6) and cc_for_gpu((8, 9)) == (8, 9)
    with pytest.raises(SimGPUError, match="unknown GPU"):
        cc_for_gpu("Voodoo2")


@needs_tools
def test_unsupported_arch_is_refused_clearly():
    """Asking this ptxas for an architecture it cannot target names the architecture."""
    if 70 in toolchain.supported_archs():
        pytest.skip("this ptxas still targets sm_70")
    from simgpu.sass import compile_kernel
    with pytest.raises(SimGPUError, match="sm_70"):
        compile_kernel(store_text, (np.zeros(4, np.float32),), gpu="V100", use_cache=False)


def store_text(x):
    i = cuda.grid(1)
    x[i] = "text"


def test_numba_typing_error_reaches_the_user_unchanged():
    """A typing mistake in the kernel surfaces as numba's own TypingError, naming the
    offending line of this file."""
    from simgpu.sass import compile_kernel
    with pytest.raises(TypingError) as err:
        compile_kernel(store_text, (np.zeros(4, np.float32),), use_cache=False)
    assert type(err.value) is TypingError and "setitem" in str(err.value)
    where = "\n".join([str(err.value), *getattr(err.value, "__notes__", [])])
    line = store_text.__code__.co_firstlineno + 2
    assert f'test_sass_toolchain.py", line {line}' in where
    assert 'x[i] = "text"' in where
