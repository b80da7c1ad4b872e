"""numba-cuda's IPC and CPU+CUDA caching tests on a real card (the 7 that fail on simgpu):
do they pass with numba and numba-cuda themselves?  Run on the GPU machine from the repository
root: ``python validation/numba_suite/on_card.py`` ($OUT: the junit XML, versions, the card).
First try (2026-12-07 16:59 UTC, H100) stopped in the repository's conftest (simgpu imported, simpy absent
there); it now runs from a temporary folder."""
import json
import os
import subprocess
import sys
sys.path.insert(0, os.getcwd())
from validation._common import patch_numpy_for_numba  # np.row_stack for numba on this numpy
patch_numpy_for_numba()
import pytest
import tempfile
out = os.path.abspath(os.environ.get("OUT", "."))
# run outside the repository: its tests/conftest.py imports simgpu (and simpy), which the card's
# environment lacks and which must not stand between numba-cuda and the real driver here
os.chdir(tempfile.mkdtemp())       # as validation/numba_suite/run.py runs the suite
rc = pytest.main(["-q", "-p", "no:cacheprovider", "--import-mode=importlib", "--tb=line", "-rA", "--pyargs",
                  "numba.cuda.tests.cudapy.test_ipc", "numba.cuda.tests.cudapy.test_caching",
                  "-k", "Ipc or CUDAAndCPUCachingTest",
                  f"--junitxml={out}/gpu_numba_tests.xml"])
vers = {}
for pkg in ("numba", "numba-cuda", "cuda-bindings", "cuda-core", "numpy"):
    try:
        from importlib.metadata import version
        vers[pkg] = version(pkg)
    except Exception as e:
        vers[pkg] = repr(e)
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip()
json.dump({"rc": int(rc), "versions": vers, "gpu": smi}, open(f"{out}/gpu_numba_tests.json", "w"), indent=1)
print(vers, smi)
