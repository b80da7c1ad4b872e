"""Work-arounds for known trouble in the environments simgpu runs in."""
import numpy as np


def patch_numpy_for_numba():
    """numba 0.68.0 calls np.row_stack, which numpy 2.5 removed; give it back (as vstack,
    which row_stack always was) before numba.cuda is imported."""
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
