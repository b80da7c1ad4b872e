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
# N = 576 does not.

# %%
from numba import float32  # noqa: E402

TILE = 16


def mm_tiled(A, B, C, n):
    sA = cuda.shared.array((TILE, TILE), float32)
    sB = cuda.shared.array((TILE, TILE), float32)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    acc = float32(0)
    for t in range((n + TILE - 1) // TILE):
        ka = t * TILE + tx
        kb = t * TILE + ty
        sA[ty, tx] = A[row, ka] if row < n and ka < n else float32(0)
        sB[ty, tx] = B[kb, col] if kb < n and col < n else float32(0)
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = acc


def one_size(p):
    n = p["n"]
    rng = np.random.default_rng(n)
    A, B = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    C = np.zeros((n, n), np.float32)
    g = -(-n // TILE)
    rep = simgpu.launch(mm_tiled, (g, g), (TILE, TILE), (A, B, C, np.int64(n)), sample=True)
    t = rep.metrics["gpu__time_duration.sum"] * 1e-9
    return {"blocks": g * g, "waves": rep.metrics["launch__waves_per_multiprocessor"],
            "time_us": t * 1e6, "tflops": 2 * n ** 3 / t / 1e12}


tab = simgpu.sweep(one_size, {"n": [256, 512, 576]}, progress=False)
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
