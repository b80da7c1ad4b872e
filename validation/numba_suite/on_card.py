"""numba-cuda's IPC and CPU+CUDA caching tests on a real card (the 7 that fail on simgpu):
do they pass with numba and numba-cuda themselves?  Run on the GPU machine from the repository
root: ``python validation/numba_suite/on_card.py`` ($OUT: the junit XML, versions, the card).
Not run yet (no machine could be started on 2026-12-07)."""
import json
import os
import subprocess
import sys
sys.path.insert(0, os.getcwd())
from validation._common import patch_numpy_for_numba  # np.row_stack for numba on this numpy
patch_numpy_for_numba()
import pytest
out = os.environ.get("OUT", ".")
rc = pytest.main(["-q", "-p", "no:cacheprovider", "--tb=line", "-rA", "--pyargs",
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
