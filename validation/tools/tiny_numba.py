"""Fallback tiny target (one numba kernel launch) for validation/ncu_metrics.py when nvcc is absent."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import _common  # noqa: E402,F401  (patches np.row_stack before numba.cuda is imported)
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
