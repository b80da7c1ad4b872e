"""Smoke test of an installed simgpu wheel or sdist (run by .ci/run in a fresh venv, from outside
the checkout, so `import simgpu` finds the installed package and not the source tree)."""
import importlib.metadata as md
import os
import subprocess
import sys

import numpy as np

import simgpu
from simgpu import cuda


def add(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


def case(p):
    x = np.arange(p["n"], dtype=np.float32)
    out = np.zeros_like(x)
    rep = simgpu.launch(add, 1, p["n"], (x, x, out), executor="ir")
    assert np.array_equal(out, 2 * x)
    return rep


def main():
    here = os.path.dirname(os.path.abspath(simgpu.__file__))
    assert "site-packages" in here, f"simgpu imported from {here}, not from the installed package"
    assert md.version("simgpu") == simgpu.__version__, (md.version("simgpu"), simgpu.__version__)
    meta = md.metadata("simgpu")
    assert meta["Summary"] and any("License :: OSI Approved" in c for c in meta.get_all("Classifier"))
    n = 1000
    x, y = np.random.default_rng(0).random((2, n), dtype=np.float32)
    out = np.zeros_like(x)
    rep = simgpu.launch(add, 4, 256, (x, y, out), executor="ir")
    assert np.array_equal(out, x + y) and rep.metrics["gpu__time_duration.sum"] > 0
    out[:] = 0
    rep = simgpu.launch(add, 4, 256, (x, y, out))           # the default path (compiled where available)
    assert np.array_equal(out, x + y)
    tab = simgpu.sweep(case, [{"n": n} for n in (32, 64, 96)], workers=2, progress=False)
    assert tab.errors == [] and len(tab) == 3, tab
    script = os.path.join(os.path.dirname(sys.executable), "simgpu")       # the venv's console script
    for cmd in ([sys.executable, "-m", "simgpu", "--help"], [script, "gpus"]):
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    version = subprocess.run([script, "--version"], check=True, capture_output=True, text=True).stdout.strip()
    assert version == f"simgpu {simgpu.__version__}", version
    print(f"simgpu {simgpu.__version__} installed at {here}: launch, sweep, python -m simgpu, simgpu gpus, "
          "simgpu --version: ok")


if __name__ == "__main__":
    main()
