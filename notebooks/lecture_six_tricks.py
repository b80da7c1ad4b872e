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
# # The lecture's six tricks, each as a number you can check
#
# Control divergence, low precision, operator fusion, recomputation, coalescing and tiling, in
# closed form (`simgpu.model.tricks`); the divergence lessons simulate the first one.

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
from simgpu.model import tricks
from simgpu.plot.model import six_tricks_plot

gpu = get_gpu("H200")
N_VEC = 1 << 26
print("1. divergence: SIMT efficiency with k of 32 lanes taking the if:",
      ", ".join(f"k={k}: {tricks.simt_efficiency(k):.3f}" for k in (1, 16, 31)))
print("2. low precision: ReLU bytes per FLOP:", ", ".join(f"{d} {tricks.relu_bytes_per_flop(d):.0f}"
                                                          for d in ("fp32", "fp16", "fp8")))
for fused in (False, True):
    c = tricks.fusion_cost(gpu, N_VEC, fused)
    print(f"3. fusion, sin^2+cos^2 {'fused' if fused else 'unfused'}: {c.kernels} kernels, "
          f"{c.bytes / 1e6:.0f} MB of HBM, {c.time_s * 1e6:.0f} us")
print("5. coalescing: sectors per warp load at stride s:",
      ", ".join(f"s={s}: {tricks.sectors_per_request(s)}" for s in (1, 2, 8, 32)))

# %%
six_tricks_plot(gpu)
