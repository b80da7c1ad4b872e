"""Lesson: ReLU written with an if vs as a multiply by a mask.

The lecture's first trick: avoid control divergence.  `if v > 0` on random data sends
some lanes of every warp each way, so the warp runs both sides one after the other with
part of its lanes idle.  `v * (v > 0)` is the same ReLU with no branch: every lane does
the same compare and multiply, and the warp never splits.
(The IR path runs the `if` as written; a compiler may make such a branch straight-line.  Both
at once: `simgpu step examples/lesson_relu.py::relu_if --block 128 --side-by-side`.)

    python examples/lesson_relu.py
    simgpu step examples/lesson_relu.py::relu_if --executor ir --block 128 --script "b 27 c c p v"
"""
import numpy as np

import simgpu
from simgpu import cuda
from simgpu.stepper import step

N, BLOCK = 4096, 128


def relu_if(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if v > 0:
            out[i] = v
        else:
            out[i] = 0.0


def relu_mask(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out[i] = v * (v > 0)            # multiply by the mask: no branch


def args_relu_if():
    x = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    return x, np.zeros_like(x)


args_relu_mask = args_relu_if


def main():
    results = {}
    print(__doc__.splitlines()[0])
    print(f"  {N} random normal inputs, blocks of {BLOCK}\n")
    print(f"  {'kernel':<12}{'SIMT efficiency':>16}{'warp instructions':>20}   correct")
    for k in (relu_if, relu_mask):
        x, out = args_relu_if()
        # The IR path runs the branches as written; the compiled code (executor="ptx") may turn a
        # short branch into a select and not diverge at all -- compare the two.
        rep = simgpu.launch(k, N // BLOCK, BLOCK, (x, out), executor="ir")
        eff, cost = rep.simt_efficiency, rep.metrics["smsp__inst_executed.sum"]
        ok = bool(np.array_equal(out, np.maximum(x, 0)))
        results[k.__name__] = (eff, cost, ok)
        print(f"  {k.__name__:<12}{100 * eff:>15.1f} %{cost:>20,.0f}   {ok}")
    print("  (warp instructions: smsp__inst_executed.sum of the simulated launch)\n")
    st = step(relu_if, N // BLOCK, BLOCK, args_relu_if(), block_idx=0, warp=0, executor="ir")
    st.run(until_line=st.find_line("if v > 0"))
    taken = st.state.taken
    print(f"relu_if, warp 0 of block 0 at `if v > 0`: {bin(taken).count('1')} lanes go to the "
          f"if-side, {32 - bin(taken).count('1')} to the else-side; both sides run, one after the other.")
    st.run()
    print(f"  this warp's SIMT efficiency: {100 * st.state.simt_efficiency:.1f} %")
    results["warp0_if"] = st.state.simt_efficiency
    return results


if __name__ == "__main__":
    main()
