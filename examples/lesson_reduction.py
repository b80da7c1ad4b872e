"""Lesson: tree reduction in shared memory -- interleaved vs sequential addressing.

Both kernels sum a block's 256 values in shared memory in 8 halving steps.  Interleaved
addressing keeps the threads whose index is a multiple of 2s working at step s: 16 of a
warp's 32 lanes in the first step, then 8, 4, 2, 1, and every warp stays busy with a few
lanes.  Sequential addressing keeps threads 0..s-1 working: whole warps drop out together
and the warps that remain are full until fewer than 32 threads are left.

    python examples/lesson_reduction.py
    simgpu step examples/lesson_reduction.py::reduce_interleaved --executor ir --block 256 --script "b 30 c c c"
"""
import numpy as np

import simgpu
from simgpu import cuda
from simgpu.stepper import step

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


def args_reduce_interleaved():
    x = np.random.default_rng(1).integers(0, 10, N).astype(np.float32)
    return x, np.zeros(N // BLOCK, dtype=np.float32)


args_reduce_sequential = args_reduce_interleaved


def main():
    results = {}
    print(__doc__.splitlines()[0])
    print(f"  {N} values, blocks of {BLOCK}, one partial sum per block\n")
    print(f"  {'addressing':<14}{'SIMT efficiency':>16}{'warp instructions':>20}   correct")
    for name, k in (("interleaved", reduce_interleaved), ("sequential", reduce_sequential)):
        x, out = args_reduce_interleaved()
        # The IR path runs the branches as written; the compiled code (executor="ptx") may turn a
        # short branch into a select and not diverge at all -- compare the two.
        rep = simgpu.launch(k, N // BLOCK, BLOCK, (x, out), executor="ir")
        eff, cost = rep.simt_efficiency, rep.metrics["smsp__inst_executed.sum"]
        ok = bool(np.array_equal(out, x.reshape(-1, BLOCK).sum(axis=1)))
        results[k.__name__] = (eff, cost, ok)
        print(f"  {name:<14}{100 * eff:>15.1f} %{cost:>20,.0f}   {ok}")
    print("  (warp instructions: smsp__inst_executed.sum of the simulated launch)\n")
    for k in (reduce_interleaved, reduce_sequential):
        print(f"{k.__name__}: lanes of warp 1 (threads 32..63) that add, step by step")
        st = step(k, N // BLOCK, BLOCK, args_reduce_interleaved(), block_idx=0, warp=1, executor="ir")
        test = st.find_line("while s ")
        branch = st.find_line("if t % (2 * s)" if k is reduce_interleaved else "if t < s")
        rows = []
        while True:
            st.run(until_line=test)
            if st.peek() is None or st.peek().line != branch:
                break                   # the loop has ended
            s = int(st.value("s")[0])
            st.run(until_line=branch)
            taken = st.state.taken
            n = bin(taken).count("1")
            rows.append(n)
            print(f"  s = {s:>3}: " + "".join("#" if (taken >> j) & 1 else "." for j in range(32))
                  + f"  {n:>2} lanes add" + ("" if n else "  (the whole warp skips the add)"))
        st.run()
        print(f"  warp 1's SIMT efficiency: {100 * st.state.simt_efficiency:.1f} %\n")
        results[k.__name__ + "_warp1_adders"] = rows
    return results


if __name__ == "__main__":
    main()
