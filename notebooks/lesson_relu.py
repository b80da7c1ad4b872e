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
# # Lesson: ReLU with an `if` against a multiply by a mask
#
# The lecture's first trick: avoid control divergence. `if v > 0` on random data sends some
# lanes of every warp each way, so the warp runs both sides one after the other with part of
# its lanes idle. `v * (v > 0)` is the same ReLU with no branch: every lane does the same
# compare and multiply, and the warp never splits.
#
# simgpu's IR path (`executor="ir"`) runs the `if` as written, so you see the cost the source
# code describes (a real compiler often turns such a tiny if/else into a select).

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
# The two kernels are those of `examples/lesson_relu.py` (`python examples/lesson_relu.py` prints
# the same comparison): imported from there, and their source shown with `inspect.getsource`.

# %%
# %matplotlib inline
import inspect

import numpy as np

import simgpu

# the kernels and their inputs, from examples/
from lesson_relu import BLOCK, N, args_relu_if, relu_if, relu_mask

for k in (relu_if, relu_mask):
    print(inspect.getsource(k))

# %% [markdown]
# Both kernels on the modelled H200: SIMT efficiency (active lanes / 32) and warp instructions
# (`smsp__inst_executed.sum`).

# %%
for k in (relu_if, relu_mask):
    x, out = args_relu_if()
    rep = simgpu.launch(k, N // BLOCK, BLOCK, (x, out), executor="ir")
    assert np.array_equal(out, np.maximum(x, 0))
    print(f"{k.__name__:<10} SIMT efficiency {100 * rep.simt_efficiency:5.1f} %   "
          f"warp instructions {rep.metrics['smsp__inst_executed.sum']:,.0f}")

# %% [markdown]
# ## One warp, step by step
#
# The stepper runs warp 0 of block 0 one instruction at a time. Below: its replay (click
# *step* and *next line*; the lanes split at `if v > 0`), then every lane at every step.

# %%
st = simgpu.step(relu_if, N // BLOCK, BLOCK, args_relu_if(), block_idx=0, warp=0, executor="ir")
st.run(until_line=st.find_line("if v > 0"))
taken = bin(st.state.taken).count("1")
print(f"at `if v > 0`: {taken} lanes take the if-side, {32 - taken} the else-side")
st.run()
print(f"this warp's SIMT efficiency: {100 * st.state.simt_efficiency:.1f} %")
st

# %%
st.plot()
