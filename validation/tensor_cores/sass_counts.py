"""Here (diagnosis): the SASS of one target case with simgpu's warp executions of every SASS
instruction, block by block with each block's counting rule (sass/flow.py), to find where
smsp__inst_executed differs from ncu's.  The counts are the launch's counter pass (the largest
call of KernelPlan.sass_executions, observed).

    PYTHONPATH=<simgpu>:<triton 3.6> SIMGPU_TOOLCHAIN=/work/tc13 python sass_counts.py CASE [OUT.txt]

Found with it (2026-12-07, against targets/h100): the FA-2 kernels' try_wait retry loops made
the whole kernel a 'loop' (fixed in sass/flow.py), the unaligned matmuls' SASS came from another
ptxas than the card's Triton used (fixed in the Triton front door), and the device-descriptor
FA-2's tensormap.replace code, predicated on thread 0 in PTX, is a branch in SASS that warps
1-3 jump over (not modelled: +13 %)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import sass_dump as common  # noqa: E402  (validation/sass_dump.py: the observer and the dump)


def main():
    common.observe()
    import targets_sim
    import targets_cases
    from simgpu.validate import unprofiled
    name = sys.argv[1]
    make = dict(targets_cases.cases(targets_sim.Sim(unprofiled("H100"))))[name]
    launch, _ = make()
    rep = launch()
    out = open(sys.argv[2], "w") if len(sys.argv) > 2 else sys.stdout
    common.dump(name, rep, out)


if __name__ == "__main__":
    main()
