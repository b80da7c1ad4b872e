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
# Run in Colab (or any Jupyter): install simgpu when it is missing. SIMGPU_PIP may name a wheel
# or a git URL instead of the package index.
import importlib.util
import os
import subprocess
import sys

if importlib.util.find_spec("simgpu") is None:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", os.environ.get("SIMGPU_PIP", "simgpu")])

# %%
# %matplotlib inline
import numpy as np

import simgpu
from simgpu import cuda

N, BLOCK = 4096, 128


def by_parity(x, out):
    i = cuda.grid(1)
    if i < x.size:
        if i & 1 == 0:                  # differs between neighbouring lanes: the warp diverges
            out[i] = x[i] * 2.0
        else:
            out[i] = x[i] + 1.0


def by_warp(x, out):
    i = cuda.grid(1)
    if i < x.size:
        if (i >> 5) & 1 == 0:           # the same for all 32 lanes of a warp: no divergence
            out[i] = x[i] * 2.0
        else:
            out[i] = x[i] + 1.0


def make_args():
    x = np.arange(N, dtype=np.float32)
    return x, np.zeros_like(x)


def lanes(mask):
    return "".join("#" if (mask >> i) & 1 else "." for i in range(32))


# %%
eff = {}
for k in (by_parity, by_warp):
    rep = simgpu.launch(k, N // BLOCK, BLOCK, make_args(), executor="ir")
    eff[k.__name__] = rep.simt_efficiency
    print(f"{k.__name__:<10} SIMT efficiency {100 * rep.simt_efficiency:5.1f} %   "
          f"warp instructions {rep.metrics['smsp__inst_executed.sum']:,.0f}")
assert eff["by_parity"] < eff["by_warp"]

# %% [markdown]
# ## Warp 0 of `by_parity`, step by step

# %%
st = simgpu.step(by_parity, N // BLOCK, BLOCK, make_args(), block_idx=0, warp=0, executor="ir")
st.run(until_line=st.find_line("x[i] * 2.0"))
print(f"line {st.state.line}: {st.state.source.strip():<22} lanes {lanes(st.state.active_mask)}")
st.run(until_line=st.find_line("x[i] + 1.0"))
print(f"line {st.state.line}: {st.state.source.strip():<22} lanes {lanes(st.state.active_mask)}")
st.run()
st

# %%
st.plot()
