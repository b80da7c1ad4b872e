"""The timing model issues, per warp, the SASS that sass/flow.py says runs
(simgpu/timing/sass_stream.py): an unrolled loop's copies per unrolled iteration, slow paths
not taken cost nothing, the per-line rule only where flow.py is undecided."""
from collections import Counter, defaultdict

import numpy as np
import pytest

import simgpu
import simgpu.timing.model as timing_model
from simgpu.sass.flow import KernelPlan
from simgpu.sass.toolchain import compiled_path_available
from simgpu.timing.sass_stream import SassStream

from test_sass_flow import (ADD, BRA, CMP, INC, LD, PARAM, PTX, RET, ST, UNROLLED, _body,  # noqa: F401
                            _plan)


def _kernel_plan(f, plan):
    """A KernelPlan of one synthetic function (what KernelPlan(compiled) builds)."""
    kp = KernelPlan.__new__(KernelPlan)
    kp.plans, kp.lines, kp.subroutines = {"k": plan}, set(f.index), {}
    kp.heads, kp.exits = defaultdict(list), defaultdict(list)
    for lp, (head, exits) in plan.tracked_loops().items():
        kp.heads[head].append(("k", lp))
        for e in exits:
            kp.exits[e].append(("k", lp))
    return kp


def _warp_lines(f, n):
    """The PTX lines one warp executes for a trip of n iterations of the loop."""
    loop = [ln for ln in f.lines if LD <= ln <= BRA]
    before = [ln for ln in f.lines if ln < LD]
    after = [ln for ln in f.lines if ln > BRA]
    return before + loop * n + after


def _issued(issue):
    return Counter(op for pats in issue.by_line.values() for p in pats for op in p) + Counter(issue.leftover)


@pytest.mark.parametrize("n", [3, 4, 10, 13])
def test_an_unrolled_loop_issues_its_sass_block_counts_one_copy_per_ptx_iteration(n):
    f, plan = _plan(UNROLLED)
    stream = SassStream(_kernel_plan(f, plan))
    issue = stream.warp(_warp_lines(f, n))
    counts = plan.block_counts(*_one_warp(stream, f, n))
    want = Counter()
    for b, c in zip(plan.sass_cfg.blocks, counts):
        for i in range(b.start, b.end):
            want[plan.instructions[i].opcode] += c
    want = +Counter({k: int(round(v)) for k, v in want.items()})
    assert _issued(issue) == want
    assert want["LDG.E"] == n                       # one load per PTX iteration ...
    assert issue.by_line[LD] == [("LDG.E",)] * n      # ... issued at each PTX load
    assert issue.by_line[ADD] == [("FADD",)] * n
    # the loop's compare and branch: once per SASS iteration (floor(n/4) + n mod 4), not per copy
    assert want["ISETP.LT.U32.AND"] == n // 4 + n % 4
    assert issue.per_line == 0


def _one_warp(stream, f, n):
    execs, trips = stream.trips(_warp_lines(f, n))
    return execs, {lp: h for (fn, lp), h in trips.items()}


def test_a_slow_path_behind_its_branch_is_not_issued():
    sub = "$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath"
    rows = [(PARAM, "", "LDC", "R6, c[0x0][0x218]", ""),
            (ST, "", "FCHK", "P0, R0, R3", ""),
            (ST, "@!P0", "BRA", "`(.L_x_1)", ""),
            (ST, "", "MOV", "R8, 0x2a0", ""),
            (ST, "", "CALL.REL.NOINC", f"`({sub})", ""),
            (ST, "", "STG.E", "desc[UR4][R2.64], R7", ".L_x_1"),
            (RET, "", "EXIT", "", "")]
    f, plan = _plan(rows)
    stream = SassStream(_kernel_plan(f, plan))
    issue = stream.warp(_warp_lines(f, 0))
    got = _issued(issue)
    assert "CALL.REL.NOINC" not in got and "MOV" not in got
    assert got["FCHK"] == 1 and got["STG.E"] == 1


def test_sass_the_flow_cannot_place_is_counted_as_the_per_line_rule():
    rows = list(UNROLLED)
    rows.insert(1, (None, "", "NOP", "", ""))       # no line: flow.py takes the block before's count
    rows.insert(1, (None, "@P0", "BRA", "`(.L_x_9)", ""))
    rows.insert(3, (None, "", "NOP", "", ".L_x_9"))
    f, plan = _plan(rows)
    assert any(r.undecided for r in plan.rules)
    issue = SassStream(_kernel_plan(f, plan)).warp(_warp_lines(f, 5))
    assert issue.per_line > 0


needs_toolchain = pytest.mark.skipif(not compiled_path_available(),
                                     reason="needs numba-cuda and the CUDA toolchain")


def _predict(kernel, grid, block, args, stream=True, monkeypatch=None):
    monkeypatch.setattr(timing_model, "SASS_STREAM", stream)
    return simgpu.predict(kernel, grid, block, args, executor="ptx", detail="full")


@needs_toolchain
def test_a_numba_loop_ptxas_unrolled_issues_what_the_counters_count(monkeypatch):
    from numba import cuda as ncuda

    @ncuda.jit
    def strided_sum(a, out, n):
        i = ncuda.threadIdx.x
        s = np.float32(0)
        k = i
        while k < n:
            s += a[k]
            k += 32
        out[i] = s

    n = 32 * 4 * 7
    args = [np.ones(n, np.float32), np.zeros(32, np.float32), np.int32(n)]
    rep = _predict(strided_sum, 1, 32, args, True, monkeypatch)      # one warp, every instruction
    inst = rep.metrics["smsp__inst_executed.sum"]
    assert rep.extras["timing"].totals["issued"] == inst
    assert rep.extras["timing_sass_issue"]["per_line"] == 0
    old = _predict(strided_sum, 1, 32, args, False, monkeypatch)
    assert old.extras["timing"].totals["issued"] > 3 * inst           # the per-line rule's over-issue
    assert rep.extras["timing"].cycles < old.extras["timing"].cycles


@needs_toolchain
@pytest.mark.parametrize("what", ["div", "sin"])
def test_an_untaken_slow_path_costs_no_issue_cycles(what, monkeypatch):
    import math

    from numba import cuda as ncuda

    @ncuda.jit
    def div(a, b, out):
        i = ncuda.grid(1)
        if i < out.size:
            out[i] = a[i] / b[i]

    @ncuda.jit
    def sin(a, b, out):
        i = ncuda.grid(1)
        if i < out.size:
            out[i] = math.sin(a[i]) + b[i]

    kernel = div if what == "div" else sin
    n = 256
    args = [np.linspace(0.5, 3.0, n).astype(np.float32), np.full(n, 3.0, np.float32), np.zeros(n, np.float32)]
    rep = _predict(kernel, 1, n, args, True, monkeypatch)
    warps = n // 32
    issued = rep.extras["timing"].totals["issued"]
    assert issued == rep.metrics["smsp__inst_executed.sum"]          # flow.py's count, warp by warp
    assert issued % warps == 0
    # every SASS instruction the kernel has, slow paths and subroutines included
    from simgpu.sass import compile_kernel
    ck = compile_kernel(kernel, args)
    listed = len(ck.sass.instructions) + sum(len(v) for v in ck.sass.subroutines.values())
    assert issued / warps < listed
    if what == "div":
        assert ck.sass.subroutines, "ptxas no longer calls a division slow path"


@needs_toolchain
def test_the_sass_stream_prediction_is_deterministic(monkeypatch):
    from numba import cuda as ncuda

    @ncuda.jit
    def poly(a, out, m):
        i = ncuda.grid(1)
        if i < out.size:
            s = np.float32(0)
            for k in range(m):
                s = s * a[i] + np.float32(k) / a[i]
            out[i] = s

    n = 2048
    args = [np.linspace(1, 2, n).astype(np.float32), np.zeros(n, np.float32), np.int32(37)]
    monkeypatch.setattr(timing_model, "SASS_STREAM", True)
    a = simgpu.predict(poly, 8, 256, args, executor="ptx")
    b = simgpu.predict(poly, 8, 256, args, executor="ptx")
    ta, tb = a.extras["timing"], b.extras["timing"]
    assert ta.cycles == tb.cycles
    assert ta.totals == tb.totals
    assert a.extras["timing_sass_issue"] == b.extras["timing_sass_issue"]


def test_an_unrolled_main_loop_issues_its_k_iterations_in_the_sass_order():
    # ptxas's main loop: the four copies' loads first, then the four adds
    loads_first = ([(LD, "", "LDG.E", "R2, desc[UR4][R4.64+0x%x]" % (4 * c), ".L_x_0" if c == 0 else "")
                    for c in range(4)] + [(ADD, "", "FADD", "R0, R0, R2", "") for _ in range(4)])
    rows = UNROLLED[:5] + loads_first + UNROLLED[13:]
    f, plan = _plan(rows)
    stream = SassStream(_kernel_plan(f, plan))
    n = 10                                          # 2 main iterations (8 PTX ones) + 2 remainder
    lines = _warp_lines(f, n)
    order = stream.order(lines)
    assert sorted(order) == list(range(len(lines)))
    issued = [lines[x] for x in order if lines[x] in (LD, ADD)]
    assert issued == [LD] * 4 + [ADD] * 4 + [LD] * 4 + [ADD] * 4 + [LD, ADD, LD, ADD]
    assert [lines[x] for x in order] != lines and stream.order(lines) == order
