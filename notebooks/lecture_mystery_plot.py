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
# # The matmul "mystery plot": why some sizes are much slower than their neighbours
#
# Two views of the same lecture figure:
#
# 1. **analytic** (`simgpu.model.matmul`): tile quantisation (edge tiles do full work), wave
#    quantisation (tiles against SMs x blocks per SM) and alignment (rows that start mid-sector),
#    in closed form for N = 256..6144;
# 2. **simulated**: a 16x16 shared-memory tiled float32 matmul run on the timing model at a few
#    sizes around the end of the first wave, the sizes run as a `simgpu.sweep`.

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
from simgpu.hardware import get_gpu
from simgpu.model.matmul import matmul_throughput, mystery_curve
from simgpu.plot.model import mystery_plot

gpu = get_gpu("H200")
for n in (2048, 2049, 4096, 4097):
    r = matmul_throughput(gpu, n)
    print(f"N={n}: {r.n_tiles} tiles, {r.waves:.2f} waves, tile eff {r.tile_efficiency:.3f}, "
          f"sector eff {r.sector_efficiency:.3f} -> {r.tflops:.0f} TFLOP/s ({r.bound})")

# %%
mystery_plot(gpu, curve=mystery_curve(gpu, np.arange(256, 6145)))

# %% [markdown]
# ## Simulated: a tiled matmul on the timing model, as a sweep
#
# One case per N; `simgpu.sweep` runs them on this machine's cores (or on a Dask cluster with
# `client=`) and returns a table. With 16x16 tiles, N = 512 gives 1,024 blocks; the H200's
# 132 SMs hold a little more than that in one wave, so N = 528 (1,089 blocks) still fits and
# N = 576 does not. The kernel and the case function are those of
# `examples/mystery_plot_simulated.py` (`python examples/mystery_plot_simulated.py` runs the
# whole curve): imported from there, and their source shown with `inspect.getsource`.

# %%
import inspect  # noqa: E402

from mystery_plot_simulated import mm_tiled, one_size  # noqa: E402

print(inspect.getsource(mm_tiled))
print(inspect.getsource(one_size))

# %%
tab = simgpu.sweep(one_size, {"n": [256, 512, 576], "gpu": ["H200"]}, progress=False)
assert tab.errors == [], tab.errors
tab

# %%
import matplotlib.pyplot as plt  # noqa: E402

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.plot(tab.column("n"), tab.column("tflops"), "o-")
ax.set_xlabel("N")
ax.set_ylabel("predicted TFLOP/s")
ax.set_title("16x16 tiled float32 matmul on the modelled H200")
ax.grid(alpha=0.3)
