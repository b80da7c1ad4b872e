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
# # FlashAttention = tiling + online softmax + fusion + recomputation, with numbers
#
# The online softmax checked against the ordinary one, then the HBM traffic, FLOPs and roofline
# time of naive and Flash attention (`simgpu.model.attention`), forward and backward.

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

from simgpu.hardware import get_gpu
from simgpu.model.attention import (attention_reference, flash_attention, naive_attention, online_attention,
                                    online_softmax, softmax)
from simgpu.plot.model import attention_plot

gpu = get_gpu("H200")
D, HEADS = 64, 32
rng = np.random.default_rng(0)
x = rng.normal(size=(4, 1000)) * 10
q, k, v = (rng.normal(size=(256, D)) for _ in range(3))
err = np.abs(online_softmax(x, 128) - softmax(x)).max()
err_att = np.abs(online_attention(q, k, v, 64) - attention_reference(q, k, v)).max()
print(f"online softmax (tiles of 128) against softmax: max |difference| = {err:.1e}")
print(f"online attention (K/V tiles of 64) against softmax(QK^T/sqrt(d))V: max |difference| = {err_att:.1e}")
assert err < 1e-12 and err_att < 1e-10

# %%
for n in (1024, 4096, 16384):
    for direction in ("forward", "backward"):
        a, f = (fn(gpu, n, D, HEADS, "fp16", direction) for fn in (naive_attention, flash_attention))
        print(f"N={n:>6} {direction:<8}: HBM {a.hbm_bytes / 2**20:8.0f} -> {f.hbm_bytes / 2**20:6.0f} MiB, "
              f"time {a.time_s * 1e3:7.3f} -> {f.time_s * 1e3:6.3f} ms ({a.time_s / f.time_s:.1f}x)")

# %%
attention_plot(gpu, d=D, heads=HEADS)
