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
# # The roofline: memory-bound or compute-bound, with numbers
#
# The analytic roofline of the H200 (`simgpu.model.roofline`), then three kernels simulated on
# the model and placed on it from their predicted time, FLOPs and DRAM bytes.

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
import numpy as np

import simgpu
from simgpu import cuda
from simgpu.hardware import get_gpu
from simgpu.model import roofline as rl

gpu = get_gpu("H200")
for c in ("fp32", "fp16_tensor"):
    try:
        peak = rl.compute_roof(gpu, c)
    except ValueError:
        continue
    print(f"{c:<12} {peak / 1e12:7.1f} TFLOP/s, ridge at {peak / rl.memory_roof(gpu, 'dram'):.1f} FLOP/B of DRAM (HBM)")

# %%
def saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def poly(x, out):                     # 64 multiply-adds per element loaded: more FLOPs per byte
    i = cuda.grid(1)
    if i < out.size:
        v = x[i]
        acc = 0.0
        for k in range(64):
            acc = acc * v + 1.0
        out[i] = acc


n = 1 << 18
x = np.random.default_rng(0).random(n, dtype=np.float32)
reps = [simgpu.launch(saxpy, n // 256, 256, (np.float32(2), x, x.copy(), np.zeros_like(x))),
        simgpu.launch(poly, n // 256, 256, (x, np.zeros_like(x)))]
for r in reps:
    m = r.metrics
    print(f"{r.kernel:<6} {m['simgpu__flop.sum'] / max(1, m['dram__bytes.sum']):6.2f} FLOP/B, "
          f"{m['gpu__time_duration.sum'] / 1e3:7.2f} us, bottleneck: {r.extras.get('bottleneck')}")

# %%
simgpu.plot.roofline(reps, gpu)
