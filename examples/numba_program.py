"""An ordinary numba.cuda program -- nothing in it mentions simgpu.

    python examples/numba_program.py               # on a real GPU (numba.cuda)
    simgpu run examples/numba_program.py           # on the modelled GPU, with a per-launch summary

It moves arrays to the device, runs a kernel with shared memory on a stream between two
events, a grid-stride `forall` kernel, and draws random numbers with cuda.random.
"""
import sys

import numpy as np
from numba import cuda
from numba.cuda.random import create_xoroshiro128p_states, xoroshiro128p_uniform_float32

TPB = 128


@cuda.jit
def block_sums(x, out):
    buf = cuda.shared.array(TPB, dtype=np.float32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    buf[t] = x[i] if i < x.size else 0
    cuda.syncthreads()
    s = TPB // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = buf[0]


@cuda.jit
def scale(a, x):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        x[i] *= a


@cuda.jit
def uniforms(states, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = xoroshiro128p_uniform_float32(states, i)


def main(n=4096):
    x = np.arange(n, dtype=np.float32)
    dx = cuda.to_device(x)
    blocks = (n + TPB - 1) // TPB
    dsums = cuda.device_array(blocks, dtype=np.float32)
    stream = cuda.stream()
    start, end = cuda.event(), cuda.event()
    start.record(stream)
    block_sums[blocks, TPB, stream](dx, dsums)
    end.record(stream)
    end.synchronize()
    total = dsums.copy_to_host().sum()
    print(f"sum of 0..{n - 1}: {total:.0f} (expected {n * (n - 1) // 2}); "
          f"kernel time {cuda.event_elapsed_time(start, end):.4f} ms")

    scale.forall(n)(np.float32(0.5), dx)
    print("forall scale correct:", np.array_equal(dx.copy_to_host(), x * 0.5))

    states = create_xoroshiro128p_states(256, seed=1)
    dr = cuda.device_array(256, dtype=np.float32)
    uniforms[2, 128](states, dr)
    r = dr.copy_to_host()
    print(f"256 uniforms in [0, 1): {bool(((r >= 0) & (r < 1)).all())}, mean {r.mean():.3f}")
    return total == n * (n - 1) // 2


if __name__ == "__main__":
    sys.exit(0 if main(int(sys.argv[1]) if len(sys.argv) > 1 else 4096) else 1)
