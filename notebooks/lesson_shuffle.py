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


def reduce_shuffle(x, out):
    warp_sums = cuda.shared.array(8, np.float32)
    t = cuda.threadIdx.x
    lane = t & 31
    w = t >> 5
    v = x[cuda.blockIdx.x * cuda.blockDim.x + t]
    d = 16
    while d > 0:                                    # 32 values -> lane 0, in 5 shuffles
        v += cuda.shfl_down_sync(0xffffffff, v, d)
        d //= 2
    if lane == 0:
        warp_sums[w] = v
    cuda.syncthreads()
    if w == 0:                                      # warp 0 sums the 8 warps' sums
        v = 0.0
        if lane < 8:
            v = warp_sums[lane]
        d = 4
        while d > 0:
            v += cuda.shfl_down_sync(0xffffffff, v, d)
            d //= 2
        if lane == 0:
            out[cuda.blockIdx.x] = v


def make_args():
    x = np.random.default_rng(2).integers(0, 10, N).astype(np.float32)
    return x, np.zeros(N // BLOCK, dtype=np.float32)


# %%
x, out = make_args()
rep = simgpu.launch(reduce_shuffle, N // BLOCK, BLOCK, (x, out), executor="ir")
assert np.array_equal(out, x.reshape(-1, BLOCK).sum(axis=1))
rep

# %% [markdown]
# ## Warp 0, shuffle by shuffle: `v` in lanes 0..7 as each shuffle is reached

# %%
x, out = make_args()
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
