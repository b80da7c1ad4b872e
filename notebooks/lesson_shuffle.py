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
# # Lesson: a warp-shuffle reduction
#
# `cuda.shfl_down_sync(mask, v, d)` hands each lane the `v` of the lane d places above it, in
# one instruction, without shared memory or a barrier. Five shuffles (d = 16, 8, 4, 2, 1) sum a
# warp's 32 values into lane 0; all 32 lanes execute each shuffle.

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

# %% [markdown]
# The kernel is that of `examples/lesson_shuffle.py` (`python examples/lesson_shuffle.py` also
# compares it with the shared-memory tree): imported from there, and its source shown with
# `inspect.getsource`.

# %%
# %matplotlib inline
import inspect

import numpy as np

import simgpu

# the kernels and their inputs, from examples/
from lesson_shuffle import BLOCK, N, args_reduce_shuffle, reduce_shuffle

print(inspect.getsource(reduce_shuffle))

# %%
x, out = args_reduce_shuffle()
rep = simgpu.launch(reduce_shuffle, N // BLOCK, BLOCK, (x, out), executor="ir")
assert np.array_equal(out, x.reshape(-1, BLOCK).sum(axis=1))
rep

# %% [markdown]
# ## Warp 0, shuffle by shuffle: `v` in lanes 0..7 as each shuffle is reached

# %%
x, out = args_reduce_shuffle()
st = simgpu.step(reduce_shuffle, N // BLOCK, BLOCK, (x, out), block_idx=0, warp=0, executor="ir")
shfl = st.find_line("v += cuda.shfl_down_sync(0xffffffff, v, d)")
for _ in range(5):
    st.run(until_line=shfl)
    print(f"d = {int(st.value('d')[0]):>2}: v[0:8] = " + " ".join(f"{v:g}" for v in st.value("v")[:8]))
st.run()
print(f"the warp's 32 inputs sum to {x[:32].sum():g}")
st

# %%
st.plot()
