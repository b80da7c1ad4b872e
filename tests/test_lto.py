"""A numba kernel compiled as numba-cuda (>= 0.16) links it on a GPU with nvJitLink: link-time
optimisation (simgpu.sass.toolchain.lto_for / kernel_lto_ptx, simgpu/sass/nvjitlink.py), the
switch (SIMGPU_LTO, cuda.jit(lto=...), simgpu.jit(lto=...)), the fallback where nvJitLink is
missing, and validation/card_lto.py's per-dataset rule."""
import os
import re
import sys
import warnings

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda  # noqa: E402

import simgpu  # noqa: E402
from simgpu import settings  # noqa: E402
from simgpu.errors import SimGPUError, SimGPUWarning  # noqa: E402
from simgpu.sass import nvjitlink, toolchain  # noqa: E402
from simgpu.sass.kernel import compile_kernel  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()
try:
    nvjitlink.linker(nvjitlink.library())
except nvjitlink.NvJitLinkMissing as exc:  # pragma: no cover - depends on the machine
    pytest.skip(str(exc), allow_module_level=True)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# cuda_fp16's __hgt as a function of its own (declared, or merged in from NVRTC's PTX): not inlined
SHIM_CALL = re.compile(r"\.func\s+\([^)]*\)\s*_ZgtRK6__halfS1_")


def relu_f16(x, y):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        z = np.float16(0.0)
        if v > z:
            y[i] = v
        else:
            y[i] = z


X = np.random.default_rng(0).standard_normal(1000).astype(np.float16)


def ptx_of(kernel, **kw):
    return compile_kernel(kernel, (X, X), use_cache=False, **kw).ptx


def test_lto_inlines_the_fp16_shim_and_gives_the_same_results():
    with settings.override(lto="on"):
        lto = ptx_of(relu_f16)
    with settings.override(lto="off"):
        plain = ptx_of(relu_f16)
    assert SHIM_CALL.search(plain), "without LTO the kernel calls the fp16 shim"
    assert not SHIM_CALL.search(lto) and "call" not in lto, "nvJitLink's LTO inlines the shim"
    outs = {}
    for mode in ("on", "off"):
        y = np.zeros_like(X)
        with settings.override(lto=mode):
            rep = simgpu.launch(relu_f16, 4, 256, (X, y))
        outs[mode] = (y, rep.metrics["smsp__thread_inst_executed.sum"])
    expect = np.where(X > 0, X, np.float16(0))
    assert np.array_equal(outs["on"][0], expect) and np.array_equal(outs["off"][0], expect)
    assert outs["on"][1] < outs["off"][1], "the inlined compare executes fewer instructions than the call"


def test_lto_keeps_source_lines_when_cuda_c_is_linked():
    """numba's line information and NVRTC's LTO-IR disagree on a module flag's behaviour;
    simgpu links them anyway, so the report keeps the kernel's lines."""
    with settings.override(lto="on"):
        ptx = ptx_of(relu_f16)
    assert ".loc" in ptx


def test_the_default_follows_numba_cuda_and_the_kernels_own_choice():
    with settings.override(lto="auto"):
        assert toolchain.lto_for(relu_f16) is True              # nvJitLink installed, numba-cuda 0.30
        assert toolchain.lto_for(relu_f16, requested=False) is False    # simgpu.jit(lto=False)
        assert toolchain.lto_for(cuda.jit(relu_f16, lto=False)) is False
        assert toolchain.lto_for(cuda.jit(relu_f16)) is True
        assert toolchain.lto_for(cuda.jit(relu_f16, debug=True, opt=False)) is False
        assert not SHIM_CALL.search(ptx_of(relu_f16))
        assert SHIM_CALL.search(ptx_of(relu_f16, lto=False))
    with settings.override(lto="off"):
        assert toolchain.lto_for(cuda.jit(relu_f16, lto=True)) is False
    with settings.override(lto="on"):
        assert toolchain.lto_for(relu_f16, requested=False) is True


def test_simgpu_jit_lto_option_reaches_the_compile():
    k = simgpu.jit(relu_f16, lto=False)
    y = np.zeros_like(X)
    rep_off = simgpu.launch(k, 4, 256, (X, y))
    rep_on = simgpu.launch(simgpu.jit(relu_f16), 4, 256, (X, np.zeros_like(X)))
    assert rep_off.metrics["smsp__inst_executed.sum"] > rep_on.metrics["smsp__inst_executed.sum"]


def test_the_setting_reads_the_environment():
    assert settings.from_environment({"SIMGPU_LTO": "0"}).lto == "off"
    assert settings.from_environment({"SIMGPU_LTO": "on"}).lto == "on"
    assert settings.from_environment({}).lto == "auto"
    with pytest.raises(SimGPUError, match="SIMGPU_LTO"):
        settings.from_environment({"SIMGPU_LTO": "sometimes"})


def test_missing_nvjitlink_falls_back_and_says_so_once(monkeypatch):
    def missing():
        raise nvjitlink.NvJitLinkMissing("libnvJitLink is not installed (pip install nvidia-nvjitlink)")
    monkeypatch.setattr(nvjitlink, "library", missing)
    monkeypatch.setattr(toolchain, "_lto_fallback_said", [])
    with settings.override(lto="on"), warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert toolchain.lto_for(relu_f16) is False
        assert toolchain.lto_for(relu_f16) is False
        ptx = ptx_of(relu_f16)
    said = [w for w in got if issubclass(w.category, SimGPUWarning)]
    assert len(said) == 1 and "nvidia-nvjitlink" in str(said[0].message) and "without link-time" in str(said[0].message)
    assert SHIM_CALL.search(ptx)
    with settings.override(lto="auto"), warnings.catch_warnings():
        warnings.simplefilter("error")          # numba-cuda's own default without nvJitLink: no LTO, no message
        assert toolchain.lto_for(relu_f16) is False


def test_a_toolchain_folder_without_nvjitlink_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(toolchain, "selected_toolchain", lambda: {"root": str(tmp_path), "nvjitlink": None})
    with pytest.raises(nvjitlink.NvJitLinkMissing, match="pip install --target"):
        nvjitlink.library()
    (tmp_path / "libnvJitLink.so.13").write_bytes(b"")
    assert nvjitlink.find_in(str(tmp_path)).endswith("libnvJitLink.so.13")


def test_numba_cuda_versions_that_default_to_lto():
    assert toolchain.numba_cuda_defaults_lto("0.30.4")
    assert toolchain.numba_cuda_defaults_lto("0.16.0")
    assert not toolchain.numba_cuda_defaults_lto("0.15.2")


def test_card_datasets_pick_lto_from_their_recorded_versions():
    sys.path.insert(0, os.path.join(ROOT, "validation"))
    import card_lto
    base = {"python": "3.12.3", "numpy": "2.5.2", "numba": "0.68.0"}
    assert card_lto.card_ran_lto({**base, "numba_cuda": "0.15.2", "pkg_nvidia-nvjitlink": "12.9.86"})[0] is False
    assert card_lto.card_ran_lto({"numba_cuda": "0.30.4", "pkg_nvidia-nvjitlink": "13.0.88"})[0] is True
    assert card_lto.card_ran_lto({**base, "numba_cuda": "0.30.4"})[0] is True      # the recorded card image
    assert card_lto.card_ran_lto({**base, "numba": "0.61.0", "numba_cuda": "0.30.4"})[0] is None
    assert card_lto.card_ran_lto({})[0] is None
    rec = card_lto.record_of(os.path.join(ROOT, "validation", "generated", "c2_device.json"))
    assert card_lto.card_ran_lto(rec)[0] is True
    rec = card_lto.record_of(os.path.join(ROOT, "validation", "data", "bottleneck", "h100_2026-12-07", "env.txt"))
    assert rec["numba_cuda"] == "0.30.4" and card_lto.card_ran_lto(rec)[0] is True
    assert card_lto.use_card_lto([], "record")["lto"] is None       # no card data: simgpu's default stays


def test_the_host_path_runs_the_lto_program_too():
    """simgpu.install(): numba's own dispatcher, whose library numba-cuda made with lto."""
    from simgpu.host.kernels import kernel_ptx
    x = X[:256]
    for mode, shim in (("auto", False), ("off", True)):
        with settings.override(lto=mode), simgpu.installed(memory=False, sass=True):
            k = cuda.jit(relu_f16)
            y = np.zeros_like(x)
            k[1, 256](x, y)
            code = next(iter(k.overloads.values()))
            assert bool(SHIM_CALL.search(kernel_ptx(code, (9, 0)))) is shim
            assert np.array_equal(y, np.where(x > 0, x, np.float16(0)))
