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
# # Lesson: control divergence, an if/else on lane parity against one on the warp index
#
# All 32 lanes of a warp execute the same instruction. When an `if` tests a value that differs
# between the lanes of one warp (is my index even?), the warp runs the then-side with the odd
# lanes switched off, then the else-side with the even lanes switched off. Testing something
# that is the same for the whole warp (its warp index) sends each warp down one side only.

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
# The two kernels are those of `examples/lesson_divergence.py` (`python examples/lesson_divergence.py`
# prints the same comparison): imported from there, and their source shown with `inspect.getsource`.

# %%
# %matplotlib inline
import inspect

import simgpu

# the kernels and their inputs, from examples/
from lesson_divergence import BLOCK, N, args_by_parity, by_parity, by_warp, lanes

for k in (by_parity, by_warp):
    print(inspect.getsource(k))

# %%
eff = {}
for k in (by_parity, by_warp):
    rep = simgpu.launch(k, N // BLOCK, BLOCK, args_by_parity(), executor="ir")
    eff[k.__name__] = rep.simt_efficiency
    print(f"{k.__name__:<10} SIMT efficiency {100 * rep.simt_efficiency:5.1f} %   "
          f"warp instructions {rep.metrics['smsp__inst_executed.sum']:,.0f}")
assert eff["by_parity"] < eff["by_warp"]

# %% [markdown]
# ## Warp 0 of `by_parity`, step by step

# %%
st = simgpu.step(by_parity, N // BLOCK, BLOCK, args_by_parity(), block_idx=0, warp=0, executor="ir")
st.run(until_line=st.find_line("x[i] * 2.0"))
print(f"line {st.state.line}: {st.state.source.strip():<22} lanes {lanes(st.state.active_mask)}")
st.run(until_line=st.find_line("x[i] + 1.0"))
print(f"line {st.state.line}: {st.state.source.strip():<22} lanes {lanes(st.state.active_mask)}")
st.run()
st

# %%
st.plot()
