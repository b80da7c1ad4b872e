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

import simgpu.sass.flow as flow  # noqa: E402

_CALLS = []
_orig = flow.KernelPlan.sass_executions


def _observed(self, *a, **k):
    r = _orig(self, *a, **k)
    _CALLS.append((self, r))
    return r


def main():
    flow.KernelPlan.sass_executions = _observed
    import targets_sim
    import targets_cases
    from simgpu.validate import unprofiled
    name = sys.argv[1]
    make = dict(targets_cases.cases(targets_sim.Sim(unprofiled("H100"))))[name]
    launch, _ = make()
    rep = launch()
    plan_k, rows = max(_CALLS, key=lambda c: sum(x[1] for x in c[1]))
    count = {id(ins): c for ins, c, *_ in rows}
    out = open(sys.argv[2], "w") if len(sys.argv) > 2 else sys.stdout
    print(f"{name}: smsp__inst_executed.sum {rep.metrics['smsp__inst_executed.sum']:,.0f}", file=out)
    for fn, plan in plan_k.plans.items():
        for b, blk in enumerate(plan.sass_cfg.blocks):
            print(f"--- {fn} block {b}: {plan.rules[b]}", file=out)
            for i in range(blk.start, blk.end):
                ins = plan.instructions[i]
                slow = " slow" if i in plan.slow else ""
                print(f"{count.get(id(ins), 0):10,.0f}{slow:5s} L{ins.ptx_line} {ins.predicate} {ins.opcode} {ins.operands}",
                      file=out)


if __name__ == "__main__":
    main()
