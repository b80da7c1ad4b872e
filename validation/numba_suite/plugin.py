"""pytest plugin for running numba-cuda's own tests (validation/numba_suite/run.py).

    SIMGPU_NUMBA_SUITE=simgpu   numba.cuda's host API on the modelled GPU (simgpu.install())
    SIMGPU_NUMBA_SUITE=cudasim  numba's simulator (run.py sets NUMBA_ENABLE_CUDASIM=1 too)
    SIMGPU_NUMBA_SUITE_GPUS=H200,A100   the modelled system's GPUs, one preset each (run.py's
                                default: an H200 and an A100, so the multi-GPU and per-compute-
                                capability cache tests run)
    SIMGPU_NUMBA_SUITE=plain    simgpu installed, every kernel launched as a plain simgpu.launch
                                (validation/numba_kernels/: plain.py, run.py)

numba-cuda's tests ask for the fixture ``initialize_from_pytest_config`` (its own conftest,
not shipped in the wheel, sets options from the pytest config there); here it does nothing.
"""
import importlib
import os

import pytest

from simgpu._compat import patch_numpy_for_numba

patch_numpy_for_numba()                   # numba 0.68.0 calls np.row_stack; numpy 2.5 removed it

MODE = os.environ.get("SIMGPU_NUMBA_SUITE", "simgpu")
TEST_TIMEOUT_S = int(os.environ.get("SIMGPU_NUMBA_SUITE_TEST_TIMEOUT", "180"))
TEST_WALL_TIMEOUT_S = int(os.environ.get("SIMGPU_NUMBA_SUITE_TEST_WALL_TIMEOUT", "900"))


class TestTimeout(Exception):
    """A test used more than SIMGPU_NUMBA_SUITE_TEST_TIMEOUT seconds of CPU (a spin-wait on
    other blocks never ends on a lock-step simulator, for example), or waited more than
    SIMGPU_NUMBA_SUITE_TEST_WALL_TIMEOUT seconds (a child process that never answers).  The
    limit is on CPU time so that it means the same on a loaded shared machine."""


def _cpu_limit(signum, frame):
    raise TestTimeout(f"Timeout: the test used more than {TEST_TIMEOUT_S} s of CPU")


def _wall_limit(signum, frame):
    raise TestTimeout(f"Timeout: the test ran past {TEST_WALL_TIMEOUT_S} s (wall)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    import signal
    old_cpu = signal.signal(signal.SIGVTALRM, _cpu_limit)
    old_wall = signal.signal(signal.SIGALRM, _wall_limit)
    signal.setitimer(signal.ITIMER_VIRTUAL, TEST_TIMEOUT_S)      # this process's user CPU time
    signal.alarm(TEST_WALL_TIMEOUT_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.alarm(0)
        signal.signal(signal.SIGVTALRM, old_cpu)
        signal.signal(signal.SIGALRM, old_wall)


def pytest_configure(config):
    if (config.getoption("numprocesses", None) or 0) and not hasattr(config, "workerinput"):
        return          # pytest-xdist's controller: only its workers run tests
    if MODE == "simgpu":
        import simgpu
        full = os.environ.get("SIMGPU_NUMBA_SUITE_MEMORY", "0") == "1"
        gpus = [g for g in os.environ.get("SIMGPU_NUMBA_SUITE_GPUS", "").split(",") if g.strip()]
        # results only: no ptxas/nvdisasm per kernel; SIMGPU_NUMBA_SUITE_GPUS: a mixed system ("H200,A100")
        simgpu.install(gpu=gpus or None, memory=full, sass=full)
    elif MODE == "plain":
        _plain().install_plain()


def _plain():
    """validation/numba_kernels/plain.py (SIMGPU_NUMBA_SUITE=plain)."""
    import sys
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "numba_kernels")
    if here not in sys.path:
        sys.path.insert(0, here)
    return importlib.import_module("plain")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if MODE == "plain":
        _plain().reset()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if MODE != "plain":
        return
    report = outcome.get_result()
    if report.when == "call" or report.outcome == "failed":
        _plain().record(item, report, call.excinfo)


def pytest_collection_finish(session):
    """Every test module, numba and simgpu are imported: their objects go to the collector's
    permanent generation (gc.freeze), so each later full collection walks only what the tests
    make (numba's heap is large; the suite's compiles and launches trigger many collections)."""
    import gc
    gc.collect()
    gc.freeze()


class CanonicalModule(pytest.Module):
    """A test module imported under its own name (``numba.cuda.tests.cudapy.test_caching``),
    not the name pytest's importlib mode derives from the folder (``cuda.tests...``: numba-cuda's
    wheel has no ``__init__`` in ``numba_cuda/numba``).  Functions of the module then pickle by
    a name a child process can import (the multiprocessing tests' pool initialisers), and the
    module is the one numba-cuda's other modules import."""

    canonical = None

    def _getobj(self):
        return importlib.import_module(self.canonical)


def canonical_name(path):
    """'.../numba_cuda/numba/cuda/tests/cudapy/test_x.py' -> 'numba.cuda.tests.cudapy.test_x'."""
    parts = str(path).replace(os.sep, "/").split("/numba_cuda/numba/")
    if len(parts) != 2 or not parts[1].endswith(".py"):
        return None
    return "numba." + parts[1][:-3].replace("/", ".")


def pytest_pycollect_makemodule(module_path, parent):
    name = canonical_name(module_path)
    if name is None or module_path.name == "__init__.py":
        return None
    mod = CanonicalModule.from_parent(parent, path=module_path)
    mod.canonical = name
    return mod


@pytest.fixture(scope="class")
def initialize_from_pytest_config(request):
    yield


_CONFIG = []


def pytest_sessionstart(session):
    _CONFIG[:] = [session.config]


def pytest_runtest_logreport(report):
    """With SIMGPU_NUMBA_SUITE_LOG=path: one JSON line per test as it finishes, so a run
    stopped by a time limit still says what it measured.  Under pytest-xdist (run.py
    --workers) the controller writes the lines its workers report; the workers write none."""
    path = os.environ.get("SIMGPU_NUMBA_SUITE_LOG")
    if not path or not (report.when == "call" or report.outcome != "passed"):
        return
    if _CONFIG and hasattr(_CONFIG[0], "workerinput"):
        return
    import json
    msg = ""
    if report.outcome != "passed":
        text = str(report.longrepr) if report.longrepr is not None else ""
        lines = [ln for ln in text.splitlines() if ln.startswith("E ")] or text.splitlines()[-1:]
        msg = (lines[-1] if lines else "")[:300]
        if report.outcome == "skipped" and isinstance(report.longrepr, tuple):
            msg = str(report.longrepr[2])[:300]
    outcome = "xfailed" if hasattr(report, "wasxfail") else report.outcome
    with open(path, "a") as f:
        f.write(json.dumps({"test": report.nodeid, "when": report.when, "outcome": outcome,
                            "message": msg, "duration": round(report.duration, 2),
                            "worker": getattr(report, "node", None) and report.node.gateway.id}) + "\n")
