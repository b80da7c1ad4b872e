"""Child-process side of tests/test_host_ipc.py (a module a spawned child can import)."""


def add_one_in_child(handle):
    """Open the parent's shared array, add 1 to it on the child's modelled GPU, read it back."""
    from numba import cuda          # the child installs simgpu on this import (SIMGPU_INSTALL)

    @cuda.jit
    def inc(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 1

    with handle as darr:
        inc[1, darr.size](darr)
        return darr.copy_to_host()
