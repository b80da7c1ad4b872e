# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # GPU against TPU: many small matrix units or few big ones
#
# An H200 tensor core works on 16 x 8 x 16 pieces, a TPU MXU on 8 x 128 x 128: padding and
# occupancy of small and odd matmuls on each (`simgpu.model.tpu`).

# %%
# Setup. Run in Colab (or any Jupyter): install simgpu when it is missing, from the clone of its
# repository this notebook is in (simgpu is on no package index; SIMGPU_PIP may name a wheel or a
# git URL instead). A kernel that an example has is imported from the repository's examples/
# folder, never copied: the folder is found from the working folder upwards (Jupyter and nbmake
# start in notebooks/) or named by SIMGPU_EXAMPLES, and goes first on sys.path, ahead of the
# notebooks' own .py files of the same names. In Colab, clone the repository first.
import importlib.util
import os
import pathlib
import subprocess
import sys

REPO = next((p for p in (pathlib.Path.cwd(), *pathlib.Path.cwd().parents)
             if (p / "examples" / "lesson_relu.py").is_file()), None)
if importlib.util.find_spec("simgpu") is None:
    SOURCE = os.environ.get("SIMGPU_PIP") or (str(REPO) if REPO and (REPO / "setup.cfg").is_file() else None)
    if SOURCE is None:
        raise RuntimeError("simgpu is not installed and this notebook is not in a clone of its repository: "
                           "clone the repository and open the notebook from its notebooks/ folder, or set "
                           "SIMGPU_PIP to a simgpu wheel (docs/index.md, Install)")
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", SOURCE])

EXAMPLES = os.environ.get("SIMGPU_EXAMPLES") or (str(REPO / "examples") if REPO else None)
if EXAMPLES:
    sys.path[:] = [EXAMPLES] + [p for p in sys.path if p != EXAMPLES]
else:
    print(f"note: simgpu's examples/ folder is not in {pathlib.Path.cwd()} or above it; a notebook that imports "
          "a lesson's kernels from it needs a clone of the simgpu repository (open the notebook from its "
          "notebooks/ folder) or SIMGPU_EXAMPLES set to the examples/ folder")

# %%
# %matplotlib inline
from simgpu.hardware import get_gpu
from simgpu.hardware.tpu import get_tpu
from simgpu.model.tpu import compare
from simgpu.plot.model import tpu_vs_gpu_plot

gpu, tpu = get_gpu("H200"), get_tpu("v5p")
SHAPES = [(32, 32, 32), (100, 100, 100), (128, 128, 128), (1000, 1000, 1000), (4096, 4096, 4096), (4096, 96, 96)]
for shape, a, b in compare(gpu, tpu, SHAPES):
    print(f"{'x'.join(map(str, shape)):>16}: {gpu.name} utilisation {a.utilisation:.3f} ({a.tflops:6.1f} TFLOP/s), "
          f"{tpu.name} {b.utilisation:.3f} ({b.tflops:6.1f} TFLOP/s)")

# %%
tpu_vs_gpu_plot(gpu, tpu)
