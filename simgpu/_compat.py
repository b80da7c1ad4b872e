"""Work-arounds for known trouble in the environments simgpu runs in.

Nothing here changes another package for good: ``import simgpu`` leaves numpy, numba and the
warnings filters as they were (tests/test_hidden_state.py).  This file imports only the
standard library and numpy: validate/ncu.py's child process loads it by its path.
"""
import importlib
import sys
import threading

import numpy as np

_lock = threading.RLock()     # re-entered: a child installs simgpu while numba.cuda loads


def load_numba_cuda():
    """Import numba.cuda (and the module of it that needs numpy's ``row_stack``) and return it
    (None where numba.cuda cannot be imported: the caller's own import then says why).

    numba-cuda 0.30 registers an overload of ``np.row_stack`` when its array registry loads (at
    the first compile), and numpy 2.5 removed ``row_stack``.  With such a numpy the name is
    lent, as ``vstack`` (which ``row_stack`` always was), only while that module is imported
    here, then taken back: numpy is left as it was found."""
    with _lock:
        lent = not hasattr(np, "row_stack")
        if lent:
            np.row_stack = np.vstack
        try:
            importlib.import_module("numba.cuda")
            importlib.import_module("numba.cuda.np.arrayobj")
        except ImportError:         # no numba.cuda, or numba's older built-in CUDA target
            pass
        finally:
            if lent and getattr(np, "row_stack", None) is np.vstack:
                del np.row_stack
    return sys.modules.get("numba.cuda")


patch_numpy_for_numba = load_numba_cuda   # its old name (it no longer patches numpy for good)
