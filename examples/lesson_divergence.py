"""Lesson: control divergence -- an if/else on lane parity vs on warp index.

All 32 lanes of a warp execute the same instruction.  When an `if` tests a value that
differs between the lanes of one warp (here: is my index even?), the warp runs the
then-side with the odd lanes switched off, then the else-side with the even lanes switched
off, and the lanes meet again after the `if`.  Testing something that is the same for the
whole warp (its warp index) sends each warp down one side only: same work, no idle lanes.
(`i & 1` is `i % 2` and `i >> 5` is `i // 32`, written as the compiler emits them.)

    python examples/lesson_divergence.py
    simgpu step examples/lesson_divergence.py::by_parity --executor ir --block 128 --script "n n n n n p i"
"""
import numpy as np

import simgpu
from simgpu import cuda
from simgpu.stepper import step

N, BLOCK = 4096, 128


def by_parity(x, out):
    i = cuda.grid(1)
    if i < x.size:
        if i & 1 == 0:                  # differs between neighbouring lanes: the warp diverges
            out[i] = x[i] * 2.0
        else:
            out[i] = x[i] + 1.0


def by_warp(x, out):
    i = cuda.grid(1)
    if i < x.size:
        if (i >> 5) & 1 == 0:           # the same for all 32 lanes of a warp: no divergence
            out[i] = x[i] * 2.0
        else:
            out[i] = x[i] + 1.0


def args_by_parity():
    x = np.arange(N, dtype=np.float32)
    return x, np.zeros_like(x)


args_by_warp = args_by_parity


def lanes(mask):
    return "".join("#" if (mask >> i) & 1 else "." for i in range(32))


def main():
    results = {}
    print(__doc__.splitlines()[0])
    print(f"  {N} threads in blocks of {BLOCK}\n")
    print(f"  {'branch on':<22}{'SIMT efficiency':>16}{'warp instructions':>20}")
    for name, k in (("lane parity (i & 1)", by_parity), ("warp index (i >> 5)", by_warp)):
        # The IR path runs the branches as written; the compiled code (executor="ptx") may turn a
        # short branch into a select and not diverge at all -- compare the two.
        rep = simgpu.launch(k, N // BLOCK, BLOCK, args_by_parity(), executor="ir")
        eff, cost = rep.simt_efficiency, rep.metrics["smsp__inst_executed.sum"]
        results[k.__name__] = (eff, cost)
        print(f"  {name:<22}{100 * eff:>15.1f} %{cost:>20,.0f}")
    print("  (warp instructions: smsp__inst_executed.sum of the simulated launch)\n")
    st = step(by_parity, N // BLOCK, BLOCK, args_by_parity(), block_idx=0, warp=0, executor="ir")
    st.run(until_line=st.find_line("x[i] * 2.0"))
    print(f"by_parity, warp 0 of block 0 at line {st.state.line}: {st.state.source.strip()}")
    print(f"  lanes {lanes(st.state.active_mask)}  {st.state.n_active}/32 active")
    st.run(until_line=st.find_line("x[i] + 1.0"))
    print(f"  ... then line {st.state.line}: {st.state.source.strip()}")
    print(f"  lanes {lanes(st.state.active_mask)}  {st.state.n_active}/32 active")
    st.run()
    print(f"  this warp's SIMT efficiency: {100 * st.state.simt_efficiency:.1f} %")
    results["warp0_parity"] = st.state.simt_efficiency
    return results


if __name__ == "__main__":
    main()
