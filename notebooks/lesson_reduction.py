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
# # Lesson: tree reduction in shared memory, interleaved against sequential addressing
#
# Both kernels sum a block's 256 values in shared memory in 8 halving steps. Interleaved
# addressing keeps the threads whose index is a multiple of 2s working at step s: every warp
# stays busy with a few lanes. Sequential addressing keeps threads 0..s-1 working: whole warps
# drop out together, and the warps that remain are full until fewer than 32 threads are left.

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
# The two kernels are those of `examples/lesson_reduction.py` (`python examples/lesson_reduction.py`
# prints the same comparison, and every step of warp 1): imported from there, and their source shown
# with `inspect.getsource`.

# %%
# %matplotlib inline
import inspect

import numpy as np

import simgpu

# the kernels and their inputs, from examples/
from lesson_reduction import BLOCK, N, args_reduce_interleaved, reduce_interleaved, reduce_sequential

for k in (reduce_interleaved, reduce_sequential):
    print(inspect.getsource(k))

# %%
for k in (reduce_interleaved, reduce_sequential):
    x, out = args_reduce_interleaved()
    rep = simgpu.launch(k, N // BLOCK, BLOCK, (x, out), executor="ir")
    assert np.array_equal(out, x.reshape(-1, BLOCK).sum(axis=1))
    print(f"{k.__name__:<18} SIMT efficiency {100 * rep.simt_efficiency:5.1f} %   "
          f"warp instructions {rep.metrics['smsp__inst_executed.sum']:,.0f}")

# %% [markdown]
# ## Warp 1 (threads 32..63) of `reduce_interleaved`, step by step

# %%
st = simgpu.step(reduce_interleaved, N // BLOCK, BLOCK, args_reduce_interleaved(), block_idx=0, warp=1,
                 executor="ir")
st.run()
print(f"warp 1's SIMT efficiency: {100 * st.state.simt_efficiency:.1f} %")
st

# %%
st.plot()
