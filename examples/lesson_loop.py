"""Lesson: a loop whose trip count differs per lane.

A warp keeps looping while any of its lanes still has iterations left; lanes that are done
sit idle until the last lane finishes.  Here lane l of each warp loops l times (0..31):
the warp runs 31 iterations while its lanes need 15.5 on average, so about half of the
lanes' slots are idle.  Giving every lane of a warp the same trip count (it depends on the
warp index instead) does the same total work with no idle lanes.

    python examples/lesson_loop.py
    simgpu step examples/lesson_loop.py::trips_by_lane --executor ir --block 64 --script "b 27 c c c p acc"
"""
import numpy as np

import simgpu
from simgpu import cuda
from simgpu.stepper import step

N, BLOCK = 4096, 128


def trips_by_lane(x, out):
    i = cuda.grid(1)
    if i < x.size:
        n = i & 31                      # 0..31: differs between the lanes of a warp
        acc = 0.0
        for k in range(n):
            acc += x[i]
        out[i] = acc


def trips_by_warp(x, out):
    i = cuda.grid(1)
    if i < x.size:
        n = (i >> 5) & 31               # 0..31: the same for all lanes of a warp
        acc = 0.0
        for k in range(n):
            acc += x[i]
        out[i] = acc


def args_trips_by_lane():
    x = np.ones(N, dtype=np.float32)
    return x, np.zeros_like(x)


args_trips_by_warp = args_trips_by_lane


def main():
    results = {}
    print(__doc__.splitlines()[0])
    print(f"  {N} threads in blocks of {BLOCK}; both kernels do {sum(i & 31 for i in range(N)):,} "
          "loop iterations in all\n")
    print(f"  {'trip count from':<24}{'SIMT efficiency':>16}{'warp instructions':>20}")
    for name, k in (("lane index (i & 31)", trips_by_lane), ("warp index (i >> 5 & 31)", trips_by_warp)):
        # The IR path runs the branches as written; the compiled code (executor="ptx") may turn a
        # short branch into a select and not diverge at all -- compare the two.
        rep = simgpu.launch(k, N // BLOCK, BLOCK, args_trips_by_lane(), executor="ir")
        eff, cost = rep.simt_efficiency, rep.metrics["smsp__inst_executed.sum"]
        results[k.__name__] = (eff, cost)
        print(f"  {name:<24}{100 * eff:>15.1f} %{cost:>20,.0f}")
    print("  (warp instructions: smsp__inst_executed.sum of the simulated launch)\n")
    st = step(trips_by_lane, N // BLOCK, BLOCK, args_trips_by_lane(), block_idx=0, warp=0, executor="ir")
    body = st.find_line("acc += x[i]")
    print("trips_by_lane, warp 0 of block 0: active lanes at each pass through the loop body")
    passes = 0
    while True:
        st.run(until_line=body)
        if st.state.line != body:
            break
        passes += 1
        if passes in (1, 2, 16, 31):
            print(f"  pass {passes:>2}: " + "".join("#" if b else "." for b in st.state.lanes)
                  + f"  {st.state.n_active}/32")
    print(f"  {passes} passes; this warp's SIMT efficiency: {100 * st.state.simt_efficiency:.1f} %")
    results["warp0_passes"] = passes
    results["warp0_lane"] = st.state.simt_efficiency
    return results


if __name__ == "__main__":
    main()
