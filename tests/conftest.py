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
