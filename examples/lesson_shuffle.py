"""Lesson: a warp-shuffle reduction.

`cuda.shfl_down_sync(mask, v, d)` hands each lane the `v` of the lane d places above it,
in one instruction, without shared memory or a barrier.  Five shuffles (d = 16, 8, 4, 2, 1)
sum a warp's 32 values into lane 0; all 32 lanes execute each shuffle, so nothing
diverges until the one lane that writes.  Compared with the shared-memory tree (sequential
addressing), the block needs one barrier instead of nine and far fewer instructions.

    python examples/lesson_shuffle.py
    simgpu step examples/lesson_shuffle.py::reduce_shuffle --executor ir --block 256 --show v --script "b 29 c c c"
"""
import numpy as np

import simgpu
from simgpu import cuda
from simgpu.stepper import step

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


def reduce_tree(x, out):
    sdata = cuda.shared.array(256, np.float32)
    t = cuda.threadIdx.x
    sdata[t] = x[cuda.blockIdx.x * cuda.blockDim.x + t]
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            sdata[t] += sdata[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[cuda.blockIdx.x] = sdata[0]


def args_reduce_shuffle():
    x = np.random.default_rng(2).integers(0, 10, N).astype(np.float32)
    return x, np.zeros(N // BLOCK, dtype=np.float32)


args_reduce_tree = args_reduce_shuffle


def main():
    results = {}
    print(__doc__.splitlines()[0])
    print(f"  {N} values, blocks of {BLOCK}, one partial sum per block\n")
    print(f"  {'kernel':<16}{'SIMT efficiency':>16}{'warp instructions':>20}{'barriers':>10}   correct")
    for k in (reduce_shuffle, reduce_tree):
        x, out = args_reduce_shuffle()
        # The IR path runs the branches as written; the compiled code (executor="ptx") may turn a
        # short branch into a select and not diverge at all -- compare the two.
        rep = simgpu.launch(k, N // BLOCK, BLOCK, (x, out), executor="ir")
        eff, cost = rep.simt_efficiency, rep.metrics["smsp__inst_executed.sum"]
        st = step(k, N // BLOCK, BLOCK, args_reduce_shuffle(), block_idx=0, warp=0, executor="ir")
        bars = sum("syncthreads(" in s.text for s in st.steps)
        ok = bool(np.array_equal(out, x.reshape(-1, BLOCK).sum(axis=1)))
        results[k.__name__] = (eff, cost, bars, ok)
        print(f"  {k.__name__:<16}{100 * eff:>15.1f} %{cost:>20,.0f}{bars:>10}   {ok}")
    print("  (warp instructions: smsp__inst_executed.sum of the simulated launch;"
          " barriers: cuda.syncthreads() per block)\n")
    x, out = args_reduce_shuffle()
    st = step(reduce_shuffle, N // BLOCK, BLOCK, (x, out), block_idx=0, warp=0, executor="ir")
    shfl = st.find_line("v += cuda.shfl_down_sync(0xffffffff, v, d)")
    print("reduce_shuffle, warp 0 of block 0: v in lanes 0..7 after each shuffle "
          f"(the warp's 32 inputs sum to {x[:32].sum():g})")
    for _ in range(5):
        st.run(until_line=shfl)
        d = int(st.value("d")[0])
        print(f"  d = {d:>2}: {st.state.n_active}/32 lanes active, v[0:8] = "
              + " ".join(f"{v:g}" for v in st.value("v")[:8]))
    results["warp0_lane0"] = float(st.value("v")[0])
    return results


if __name__ == "__main__":
    main()
