"""simgpu.sass disk cache: a second compile_kernel runs neither numba nor any NVIDIA tool and
returns identical facts; changed inputs (a global constant) miss the cache."""
import json

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
from simgpu import settings  # noqa: E402
from simgpu._compat import patch_numpy_for_numba  # noqa: E402

patch_numpy_for_numba()
from numba import cuda  # noqa: E402

from simgpu.sass import cache, disasm, kernel, ptxas, toolchain  # noqa: E402
from simgpu.sass.fingerprint import function_fingerprint  # noqa: E402

from compiled_path import skip_without_compiled_path  # noqa: E402

skip_without_compiled_path()

SCALE = 2.0


def scaled_copy(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i] * SCALE


X = np.ones(64, np.float32)


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """A fresh cache folder, and counters of numba compiles and tool runs."""
    with settings.override(cache_dir=str(tmp_path), disk_cache=True):
        yield _counted(monkeypatch)


def _counted(monkeypatch):
    calls = {"numba": 0, "ptxas": 0, "nvdisasm": 0}
    real_run, real_compile = toolchain.run_tool, kernel.compile_ptx_linked

    def run(name, args, **kw):
        calls[name] += 1
        return real_run(name, args, **kw)

    def compile_ptx(*a, **kw):
        calls["numba"] += 1
        return real_compile(*a, **kw)

    monkeypatch.setattr(ptxas, "run_tool", run)
    monkeypatch.setattr(disasm, "run_tool", run)
    monkeypatch.setattr(kernel, "compile_ptx_linked", compile_ptx)
    return calls


def test_second_compile_comes_from_disk_without_running_tools(counted, tmp_path):
    """The first compile runs numba, ptxas and nvdisasm once each and writes JSON under
    $SIMGPU_CACHE_DIR/sass; the second runs none of them and returns the same facts."""
    first = kernel.compile_kernel(scaled_copy, (X, X))
    assert counted == {"numba": 1, "ptxas": 1, "nvdisasm": 1}
    assert not first.from_cache
    files = [p.name.split("-")[0] for p in (tmp_path / "sass").glob("*.json")]
    assert files.count("facts") == 1 and files.count("ptx") == 1
    assert set(files) <= {"facts", "ptx", "tool"}  # tool: version / arch list per executable
    second = kernel.compile_kernel(scaled_copy, (X, X))
    assert counted == {"numba": 1, "ptxas": 1, "nvdisasm": 1}
    assert second.from_cache
    assert second.ptx == first.ptx and second.entry == first.entry
    assert second.facts.to_dict() == first.facts.to_dict()
    assert second.resources == first.resources


def test_changed_global_constant_misses_the_cache(counted, monkeypatch):
    """The kernel reads global SCALE; changing it changes the fingerprint, recompiles, and the
    new constant shows up in the PTX."""
    before = function_fingerprint(scaled_copy)
    a = kernel.compile_kernel(scaled_copy, (X, X))
    monkeypatch.setitem(globals(), "SCALE", 3.0)
    assert function_fingerprint(scaled_copy) != before
    b = kernel.compile_kernel(scaled_copy, (X, X))
    assert counted["numba"] == 2 and counted["ptxas"] == 2
    assert a.ptx != b.ptx
    assert "0f40400000" in b.ptx.lower()  # 3.0f as PTX hex float


def test_other_argument_types_miss_the_cache(counted):
    """float64 arrays are a different specialisation: compiled anew, with FP64 SASS."""
    a = kernel.compile_kernel(scaled_copy, (X, X))
    b = kernel.compile_kernel(scaled_copy, (X.astype(np.float64), X.astype(np.float64)))
    assert counted["numba"] == 2
    assert "fp64" in b.pipe_histogram() and "fp64" not in a.pipe_histogram()


def test_corrupt_entry_is_a_miss(counted, tmp_path):
    """A damaged cache file is ignored and rewritten, not an error."""
    kernel.compile_kernel(scaled_copy, (X, X))
    for p in (tmp_path / "sass").glob("facts-*.json"):
        p.write_text("{not json")
    again = kernel.compile_kernel(scaled_copy, (X, X))
    assert counted["ptxas"] == 2 and not again.facts.from_cache
    for p in (tmp_path / "sass").glob("facts-*.json"):
        json.loads(p.read_text())


def test_cache_can_be_switched_off(counted, tmp_path):
    """SIMGPU_NO_CACHE=1 (the setting disk_cache=False) compiles every time and writes nothing."""
    with settings.override(disk_cache=False):
        kernel.compile_kernel(scaled_copy, (X, X))
        kernel.compile_kernel(scaled_copy, (X, X))
        assert cache.load("ptx", "anything") is None
    assert counted["ptxas"] == 2
    assert not (tmp_path / "sass").exists()
