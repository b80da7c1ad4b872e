"""Fallback tiny target (one numba kernel launch) for validation/ncu_metrics.py when nvcc is absent."""
import numpy as np
np.row_stack = getattr(np, "row_stack", np.vstack)
from numba import cuda  # noqa: E402


@cuda.jit
def tiny(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] = a[i] * np.float32(2.0) + np.float32(1.0)


d = cuda.to_device(np.ones(1 << 20, np.float32))
tiny[(1 << 20) // 256, 256](d)
cuda.synchronize()
print("tiny_numba ok")
