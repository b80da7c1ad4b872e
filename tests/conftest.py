import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from simgpu import settings  # noqa: E402
from simgpu.ir.verify import verify  # noqa: E402
from simgpu.runtime.program import KernelProgram  # noqa: E402

_lower, _specialize = KernelProgram.lower, KernelProgram.specialize

settings.current()      # the run's SIMGPU_* environment, read before a test sets one for its children


def _verified_lower(self):
    return verify(_lower(self))


def _verified_specialize(self, param_types):
    return verify(_specialize(self, param_types))


@pytest.fixture(autouse=True)
def verify_every_ir(monkeypatch):
    """Every kernel a test lowers or specialises passes the IR verifier (simgpu/ir/verify.py)."""
    monkeypatch.setattr(KernelProgram, "lower", _verified_lower)
    monkeypatch.setattr(KernelProgram, "specialize", _verified_specialize)


@pytest.fixture(autouse=True)
def executor_of_module(request, monkeypatch):
    """A test module about one executor's own behaviour names it: EXECUTOR = "ir" runs its
    launches on simgpu's IR path (e.g. its frontend's error messages, its SASS estimate)
    whatever the default; modules without it run on the default (the compiled path)."""
    ex = getattr(request.module, "EXECUTOR", None)
    if ex:
        monkeypatch.setenv("SIMGPU_EXECUTOR", ex)        # and in the processes a test starts
        with settings.override(executor=ex):
            yield
    else:
        yield


# ---- recording the PTX forms the tests' kernels use (tests/test_ptx_table_coverage.py) ------
def pytest_addoption(parser):
    parser.addoption("--ptx-forms", metavar="DIR", default=None,
                     help="write every PTX instruction form the tests compile to DIR/forms-<pid>.json "
                          "(merged by validation/tools/ptx_forms.py into tests/data/ptx_forms.json)")


_PTX_FORMS = set()


def pytest_configure(config):
    if not config.getoption("--ptx-forms", default=None):
        return
    import simgpu.ptx.runner as runner
    compile_instr = runner.compile_instr

    def recording(kernel, pc):
        ins = kernel.linked.code[pc]
        _PTX_FORMS.add((ins.opcode, tuple(ins.mods), tuple(ins.types)))
        return compile_instr(kernel, pc)
    runner.compile_instr = recording


def pytest_unconfigure(config):
    out = config.getoption("--ptx-forms", default=None)
    if out and _PTX_FORMS:
        import json
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"forms-{os.getpid()}.json"), "w") as f:
            json.dump(sorted(map(list, _PTX_FORMS)), f)


@pytest.fixture(autouse=True)
def _cached_one_character_objects_intact():
    """CPython caches every one-byte ``bytes`` and one-character latin-1 ``str``; native code
    that writes into a ``bytes`` it was handed corrupts them for the rest of the process.
    NVRTC's log written into ``b" " * 1`` once turned ``b" "`` into ``b"\\0"``, so a later
    print's separator, encoded through that cached object, came out as NUL (stop 30's full
    run; fixed in sass/toolchain.py).  Each test checks them all after running (``encode``
    returns the cached object), so a test that corrupts one fails by name."""
    yield
    bad = [i for i in range(256) if chr(i).encode("latin-1").hex() != f"{i:02x}" or ord(chr(i)) != i]
    assert not bad, f"this test (or native code it ran) overwrote CPython's cached one-character objects {bad}"
