#!/usr/bin/env python3
"""Here (diagnosis): the SASS of one validation case with simgpu's warp executions of every SASS
instruction, block by block with each block's counting rule (sass/flow.py), to find where
smsp__inst_executed (or a pipe's count) differs from ncu's.  The counts are the launch's counter
pass (the largest call of KernelPlan.sass_executions, observed), over all blocks unless --sample.

    PYTHONPATH=<simgpu> python validation/sass_dump.py CASE [--kernels validation/holdout]
        [--toolchain /work/tc13] [--sample] [--out OUT.txt]
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import simgpu.sass.flow as flow  # noqa: E402

_CALLS = []
_orig = flow.KernelPlan.sass_executions


def _observed(self, *a, **k):
    r = _orig(self, *a, **k)
    _CALLS.append((self, r))
    return r


def observe():
    """Record every KernelPlan.sass_executions call from now on (in _CALLS)."""
    flow.KernelPlan.sass_executions = _observed


def dump(title, rep, out):
    """The largest observed call: every SASS instruction with its warp executions, slow-path
    mark, PTX line, predicate, opcode and operands, block by block with the block's rule."""
    plan_k, rows = max(_CALLS, key=lambda c: sum(x[1] for x in c[1]))
    count = {id(ins): c for ins, c, *_ in rows}
    print(f"{title}: smsp__inst_executed.sum {rep.metrics['smsp__inst_executed.sum']:,.0f}", file=out)
    for fn, plan in plan_k.plans.items():
        for b, blk in enumerate(plan.sass_cfg.blocks):
            print(f"--- {fn} block {b}: {plan.rules[b]}", file=out)
            for i in range(blk.start, blk.end):
                ins = plan.instructions[i]
                slow = " slow" if i in plan.slow else ""
                print(f"{count.get(id(ins), 0):12,.0f}{slow:5s} {ins.pipe:8s} L{ins.ptx_line} "
                      f"{ins.predicate} {ins.opcode} {ins.operands}", file=out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case")
    ap.add_argument("--kernels", default=os.path.join(HERE, "holdout"))
    ap.add_argument("--toolchain", default=None)
    ap.add_argument("--sample", action="store_true")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    import compare_timing as ct
    import simgpu
    ct.use_toolchain(a.toolchain)
    c = [c for c in ct.load_cases(f"^{a.case}$", a.kernels)][0]
    observe()
    rep = simgpu.launch(c["kernel"], c["grid"], c["block"], c["args"](np.random.default_rng(0)), executor="ptx",
                        memory=False, timing=False, sample=a.sample)
    out = open(a.out, "w") if a.out else sys.stdout
    dump(c["name"], rep, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
