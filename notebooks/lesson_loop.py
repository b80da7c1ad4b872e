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
# # Lesson: a loop whose trip count differs per lane
#
# A warp keeps looping while any of its lanes still has iterations left; lanes that are done
# sit idle until the last lane finishes. Here lane l of each warp loops l times (0..31): the
# warp runs 31 iterations while its lanes need 15.5 on average. Giving every lane of a warp the
# same trip count (from the warp index) does the same total work with no idle lanes.

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
# The two kernels are those of `examples/lesson_loop.py` (`python examples/lesson_loop.py` prints
# the same comparison): imported from there, and their source shown with `inspect.getsource`.

# %%
# %matplotlib inline
import inspect

import simgpu

# the kernels and their inputs, from examples/
from lesson_loop import BLOCK, N, args_trips_by_lane, trips_by_lane, trips_by_warp

for k in (trips_by_lane, trips_by_warp):
    print(inspect.getsource(k))

# %%
for k in (trips_by_lane, trips_by_warp):
    rep = simgpu.launch(k, N // BLOCK, BLOCK, args_trips_by_lane(), executor="ir")
    print(f"{k.__name__:<14} SIMT efficiency {100 * rep.simt_efficiency:5.1f} %   "
          f"warp instructions {rep.metrics['smsp__inst_executed.sum']:,.0f}")

# %% [markdown]
# ## Warp 0 of `trips_by_lane`: active lanes at each pass through the loop body

# %%
st = simgpu.step(trips_by_lane, N // BLOCK, BLOCK, args_trips_by_lane(), block_idx=0, warp=0, executor="ir")
body = st.find_line("acc += x[i]")
passes = 0
while True:
    st.run(until_line=body)
    if st.state.line != body:
        break
    passes += 1
    if passes in (1, 2, 16, 31):
        print(f"pass {passes:>2}: " + "".join("#" if b else "." for b in st.state.lanes) + f"  {st.state.n_active}/32")
assert passes == 31
print(f"{passes} passes; SIMT efficiency of this warp {100 * st.state.simt_efficiency:.1f} %")
st

# %%
st.plot()
