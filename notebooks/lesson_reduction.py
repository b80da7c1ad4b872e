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

N, BLOCK = 8192, 256


def reduce_interleaved(x, out):
    sdata = cuda.shared.array(256, np.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    sdata[t] = x[i]
    cuda.syncthreads()
    s = 1
    while s < cuda.blockDim.x:
        if t % (2 * s) == 0:            # lanes 0, 2, 4, ... then 0, 4, 8, ...: the warp diverges
            sdata[t] += sdata[t + s]
        cuda.syncthreads()
        s *= 2
    if t == 0:
        out[cuda.blockIdx.x] = sdata[0]


def reduce_sequential(x, out):
    sdata = cuda.shared.array(256, np.float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    sdata[t] = x[i]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:                       # threads 0..s-1: whole warps stay on or drop out
            sdata[t] += sdata[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sdata[0]


def make_args():
    x = np.random.default_rng(1).integers(0, 10, N).astype(np.float32)
    return x, np.zeros(N // BLOCK, dtype=np.float32)


# %%
for k in (reduce_interleaved, reduce_sequential):
    x, out = make_args()
    rep = simgpu.launch(k, N // BLOCK, BLOCK, (x, out), executor="ir")
    assert np.array_equal(out, x.reshape(-1, BLOCK).sum(axis=1))
    print(f"{k.__name__:<18} SIMT efficiency {100 * rep.simt_efficiency:5.1f} %   "
          f"warp instructions {rep.metrics['smsp__inst_executed.sum']:,.0f}")

# %% [markdown]
# ## Warp 1 (threads 32..63) of `reduce_interleaved`, step by step

# %%
st = simgpu.step(reduce_interleaved, N // BLOCK, BLOCK, make_args(), block_idx=0, warp=1, executor="ir")
st.run()
print(f"warp 1's SIMT efficiency: {100 * st.state.simt_efficiency:.1f} %")
st

# %%
st.plot()
