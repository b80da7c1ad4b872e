"""SASS executions per SASS basic block from the PTX execution (simgpu/sass/flow.py): a loop
ptxas unrolled into a main loop of k copies and a remainder runs floor(n/k) and n mod k
iterations for a trip of n, not n times every copy."""
import numpy as np
import pytest

import simgpu
from simgpu.sass.disasm import SassInstr
from simgpu.sass.flow import KernelPlan, Node, build_cfg, plan_function, ptx_functions
from simgpu.sass.toolchain import compiled_path_available

PTX = """.version 8.0
.target sm_90
.address_size 64

.visible .entry k(.param .u64 p, .param .u32 n)
{
\t.reg .pred %p<3>;
\t.reg .f32 %f<4>;
\t.reg .b32 %r<4>;
\t.reg .b64 %rd<4>;
\tld.param.u64 %rd1, [p];
\tld.param.u32 %r1, [n];
\tmov.u32 %r2, 0;
\tmov.f32 %f1, 0f00000000;
\tsetp.eq.s32 %p1, %r1, 0;
\t@%p1 bra $L__BB0_3;
$L__BB0_2:
\tld.global.f32 %f2, [%rd1];
\tadd.f32 %f1, %f1, %f2;
\tadd.s64 %rd1, %rd1, 4;
\tadd.s32 %r2, %r2, 1;
\tsetp.lt.u32 %p2, %r2, %r1;
\t@%p2 bra $L__BB0_2;
$L__BB0_3:
\tst.global.f32 [%rd1], %f1;
\tret;
}
"""


def _line(text):
    return next(n for n, s in enumerate(PTX.splitlines(), 1) if s.strip().startswith(text))


LD, ADD, INC, CMP, BRA, ST, RET = (_line(t) for t in (
    "ld.global", "add.f32", "add.s32", "setp.lt", "@%p2 bra", "st.global", "ret"))
PARAM, GUARD = _line("ld.param.u64"), _line("@%p1 bra")


def _code(rows):
    return [SassInstr(offset=16 * k, opcode=op, operands=operands, predicate=pred, ptx_line=line,
                      function="k", label=label)
            for k, (line, pred, op, operands, label) in enumerate(rows)]


def _body(copies, label=""):
    rows = []
    for c in range(copies):
        rows += [(LD, "", "LDG.E", "R2, desc[UR4][R4.64+0x%x]" % (4 * c), label if c == 0 else ""),
                 (ADD, "", "FADD", "R0, R0, R2", "")]
    return rows


# ptxas's shape for the PTX loop: guard, a main loop of 4 copies, a guard, a remainder loop
UNROLLED = ([(PARAM, "", "LDC", "R6, c[0x0][0x218]", ""),
             (GUARD, "", "ISETP.NE.AND", "P0, PT, R6, RZ, PT", ""),
             (GUARD, "@!P0", "BRA", "`(.L_x_3)", ""),
             (CMP, "", "ISETP.GE.U32.AND", "P1, PT, R6, 0x4, PT", ""),
             (BRA, "@!P1", "BRA", "`(.L_x_1)", "")]
            + _body(4, ".L_x_0")
            + [(INC, "", "IADD3", "R7, R7, 0x4, RZ", ""),
               (CMP, "", "ISETP.LT.U32.AND", "P1, PT, R7, R8, PT", ""),
               (BRA, "@P1", "BRA", "`(.L_x_0)", ""),
               (CMP, "", "ISETP.NE.AND", "P2, PT, R9, RZ, PT", ".L_x_1"),
               (BRA, "@!P2", "BRA", "`(.L_x_3)", "")]
            + _body(1, ".L_x_2")
            + [(INC, "", "IADD3", "R7, R7, 0x1, RZ", ""),
               (CMP, "", "ISETP.LT.U32.AND", "P2, PT, R7, R6, PT", ""),
               (BRA, "@P2", "BRA", "`(.L_x_2)", ""),
               (ST, "", "STG.E", "desc[UR4][R4.64], R0", ".L_x_3"),
               (RET, "", "EXIT", "", "")])


def _plan(rows):
    f = ptx_functions(PTX)["k"]
    return f, plan_function(_code(rows), f)


def test_the_ptx_cfg_has_one_loop_with_its_header_and_exit():
    f = ptx_functions(PTX)["k"]
    assert len(f.cfg.loops) == 1
    assert f.header_line(0) == LD
    assert f.exit_lines(0) == [ST]


def test_a_cfg_finds_nested_natural_loops():
    # 0: a; 1: b (inner head); 2: bra 1; 3: bra 0; 4: exit
    nodes = [Node(("A",)), Node(("B",)), Node(kind="branch", target="B", predicated=True),
             Node(kind="branch", target="A", predicated=True), Node(kind="exit")]
    cfg = build_cfg(nodes)
    assert len(cfg.loops) == 2
    outer, inner = cfg.loops
    assert inner.parent == outer.id and outer.parent is None
    assert inner.body < outer.body


def test_an_unrolled_by_4_loop_and_its_remainder_follow_the_trip_counts():
    f, plan = _plan(UNROLLED)
    assert sorted(plan.unroll.values()) == [1, 4]
    trips = {0: {10: 3, 3: 2}}          # three warp entries of 10 iterations, two of 3
    iters = 10 * 3 + 3 * 2
    execs = {PARAM: 6, LD: iters, ADD: iters, ST: 6, RET: 6}     # one warp skipped the loop
    counts = plan.block_counts(execs, trips)
    blocks = plan.sass_cfg.blocks
    by_first = {plan.instructions[b.start].offset // 16: c for b, c in zip(blocks, counts)}
    assert by_first[0] == 6                             # entry block: a straight-line PTX block
    assert by_first[3] == 5                             # guard of the main loop: once an entry
    assert by_first[5] == 3 * (10 // 4) + 2 * (3 // 4)  # the main loop: floor(n/4)
    main = 5 + 8 + 3
    assert by_first[main] == 5                          # guard of the remainder: once an entry
    assert by_first[main + 2] == 3 * (10 % 4) + 2 * (3 % 4)   # the remainder loop: n mod 4
    assert by_first[main + 7] == 6
    # every copy of the PTX body runs once per PTX iteration: the LDGs run `iters` times
    ldg = sum(c for b, c in zip(blocks, counts)
              for i in range(b.start, b.end) if plan.instructions[i].opcode == "LDG.E")
    assert ldg == iters


def test_the_set_up_of_a_main_loop_runs_only_on_the_trips_that_enter_it():
    """ptxas's set-up between the main loop's guard and the loop (the GPU-Puzzles axis sum's
    16-load loop: 3 instructions that ran on every trip of 4, 1.7 % of the kernel) runs on the
    trips of at least k iterations, as the loop is entered, not once per entry."""
    setup = [(INC, "", "IADD3", "R21, R6, -0x3, RZ", "")]
    f, plan = _plan(UNROLLED[:5] + setup + UNROLLED[5:])
    blocks = plan.sass_cfg.blocks
    b = next(b for b in blocks if b.start == 5)
    assert b.end == 6 and plan.rules[b.id].kind == "preheader"
    trips = {0: {10: 3, 3: 2, 4: 1}}
    iters = 10 * 3 + 3 * 2 + 4
    counts = plan.block_counts({PARAM: 7, LD: iters, ADD: iters, ST: 7, RET: 7}, trips)
    assert counts[b.id] == 3 + 1                        # the trips of 10 and 4 enter the main loop
    main = next(c for bb, c in zip(blocks, counts) if bb.start == 6)
    assert main == 3 * (10 // 4) + 2 * (3 // 4) + 4 // 4


def test_a_guard_holding_hoisted_parameter_loads_runs_with_its_branch_not_with_the_loop():
    """ULDCs of kernel parameters hoisted into a loop's guard carry the line of the loop body
    that uses them; they do not vote (layernorm: the guard of its skipped remainder loop ran 0
    times a warp instead of 1), so the guard, whose only other instruction is its predicated
    BRA, runs with the BRA's PTX block: once a warp, also for the warp that skips the loop."""
    rows = [(PARAM, "", "LDC", "R6, c[0x0][0x218]", ""),
            (GUARD, "", "ISETP.NE.AND", "P0, PT, R6, RZ, PT", ""),
            (PARAM, "@!P0", "BRA", "`(.L_x_9)", ""),
            (LD, "", "ULDC.64", "UR4, c[0x0][0x210]", ".L_x_9"),
            (ADD, "", "ULDC.64", "UR6, c[0x0][0x220]", ""),
            (GUARD, "@!P0", "BRA", "`(.L_x_3)", "")] + UNROLLED[3:]
    f, plan = _plan(rows)
    b = plan.sass_cfg.blocks[plan.sass_cfg.block_of[3]]
    assert b.start == 3 and b.end == 6 and plan.rules[b.id].kind == "line"
    counts = plan.block_counts({PARAM: 6, LD: 36, ADD: 36, ST: 6, RET: 6}, {0: {10: 3, 3: 2}})
    assert counts[b.id] == 6                            # not the loop's 5 entries


def test_straight_line_copies_of_a_remainder_run_at_most_once_a_trip():
    rows = UNROLLED[:5] + _body(4, ".L_x_0") + UNROLLED[13:16] + [
        (CMP, "", "ISETP.GE.AND", "P2, PT, R9, 0x2, PT", ".L_x_1"),
        (BRA, "@!P2", "BRA", "`(.L_x_4)", "")] + _body(2) + [
        (CMP, "", "ISETP.NE.AND", "P2, PT, R10, RZ, PT", ".L_x_4"),
        (BRA, "@!P2", "BRA", "`(.L_x_3)", "")] + _body(1) + UNROLLED[-2:]
    f, plan = _plan(rows)
    kinds = [r.kind for r in plan.rules]
    assert kinds.count("copies") == 2
    for n in (4, 5, 6, 7, 9, 11):
        counts = plan.block_counts({PARAM: 1, LD: n, ADD: n, ST: 1, RET: 1}, {0: {n: 1}})
        ldg = sum(c for b, c in zip(plan.sass_cfg.blocks, counts)
                  for i in range(b.start, b.end) if plan.instructions[i].opcode == "LDG.E")
        assert ldg == n, n


def test_a_slow_path_the_branch_jumps_over_runs_zero_times():
    sub = "$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath"
    rows = [(PARAM, "", "LDC", "R6, c[0x0][0x218]", ""),
            (ST, "", "FCHK", "P0, R0, R3", ""),
            (ST, "@!P0", "BRA", "`(.L_x_1)", ""),
            (ST, "", "MOV", "R8, 0x2a0", ""),
            (ST, "", "CALL.REL.NOINC", f"`({sub})", ""),
            (ST, "", "STG.E", "desc[UR4][R2.64], R7", ".L_x_1"),
            (RET, "", "EXIT", "", "")]
    f, plan = _plan(rows)
    assert plan.slow == {3, 4}


@pytest.mark.skipif(not compiled_path_available(), reason="needs numba-cuda and the CUDA toolchain")
def test_a_numba_loop_ptxas_unrolled_counts_one_main_iteration_per_four_ptx_iterations():
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

    def count(trips):           # one warp; NVVM's 4-copy PTX loop runs `trips` times
        n = 32 * 4 * trips
        a, out = np.ones(n, np.float32), np.zeros(32, np.float32)
        rep = simgpu.launch(strided_sum, 1, 32, [a, out, np.int32(n)], executor="ptx",
                            memory=False, timing=False)
        assert np.allclose(out, 4 * trips)
        return rep.metrics["smsp__inst_executed.sum"], rep

    # by hand from the SASS: ptxas unrolls the PTX loop 4 more times (16 LDGs per iteration)
    # into one loop, then 2 copies, then 1, each behind its guard
    from simgpu.sass import compile_kernel
    ck = compile_kernel(strided_sum, [np.ones(4, np.float32), np.zeros(32, np.float32), np.int32(4)])
    code = ck.sass.instructions
    at = {lab: i for i, ins in enumerate(code) for lab in ins.label.split(",") if lab}
    main = None
    for i, ins in enumerate(code):
        if ins.base == "BRA" and ins.predicate and (t := at.get(ins.operands.strip("`()"))) is not None \
                and t <= i and sum(c.base == "LDG" for c in code[t:i + 1]) == 16:
            main = i + 1 - t            # SASS instructions of one main-loop iteration
    assert main is not None, "ptxas no longer unrolls this loop into 16 LDGs per iteration"
    c4, rep = count(4)
    c8, _ = count(8)
    assert c8 - c4 == main                  # 4 more PTX iterations: one SASS main iteration
    assert rep.extras["sass_counts"]["undecided_inst_executed"] == 0
    # the 2-copy and 1-copy remainders: 5 and 6 PTX iterations add one copy each
    c5, _ = count(5)
    c6, _ = count(6)
    assert 0 < c5 - c4 < c6 - c4 < main


def test_a_lone_bsync_at_a_join_runs_with_the_code_after_it_not_the_line_it_carries():
    # the BSYNC closing a skipped body carries the body's PTX line; it runs whenever the
    # block after it does
    rows = [(PARAM, "", "LDC", "R6, c[0x0][0x218]", ""),
            (GUARD, "", "BSSY", "B0, `(.L_x_1)", ""),
            (GUARD, "@P0", "BRA", "`(.L_x_1)", ""),
            (LD, "", "LDG.E", "R2, desc[UR4][R4.64]", ""),
            (ADD, "", "FADD", "R0, R0, R2", ""),
            (ADD, "", "BSYNC", "B0", ".L_x_1"),
            (ST, "", "STG.E", "desc[UR4][R4.64], R0", ".L_x_2"),   # (a later branch's target)
            (RET, "", "EXIT", "", "")]
    f, plan = _plan(rows)
    counts = plan.block_counts({PARAM: 8, LD: 3, ADD: 3, ST: 8, RET: 8}, {0: {1: 3}})
    first = {plan.instructions[b.start].opcode: c for b, c in zip(plan.sass_cfg.blocks, counts)}
    assert first["LDC"] == 8
    assert first["LDG.E"] == 3          # three warp entries of one iteration (no SASS loop)
    assert first["BSYNC"] == 8
    assert first["STG.E"] == 8


def test_a_bsync_runs_once_more_for_every_divergent_execution_of_a_branch_inside_its_region():
    # BSSY names the reconvergence point (after the BSYNC); a warp that the guard's branch
    # splits reaches the BSYNC in two parts, and each part executes it
    rows = [(PARAM, "", "LDC", "R6, c[0x0][0x218]", ""),
            (GUARD, "", "BSSY", "B0, `(.L_x_2)", ""),
            (GUARD, "@P0", "BRA", "`(.L_x_1)", ""),
            (LD, "", "LDG.E", "R2, desc[UR4][R4.64]", ""),
            (ADD, "", "FADD", "R0, R0, R2", ""),
            (ADD, "", "BSYNC", "B0", ".L_x_1"),
            (ST, "", "STG.E", "desc[UR4][R4.64], R0", ".L_x_2"),
            (RET, "", "EXIT", "", "")]
    f, plan = _plan(rows)
    assert plan.joins == {5: {GUARD: 1.0}}
    kp = KernelPlan.__new__(KernelPlan)
    kp.plans, kp.subroutines = {"k": plan}, {}
    execs = {PARAM: 8, LD: 3, ADD: 3, ST: 8, RET: 8}
    runs = {ins.opcode: c for ins, c, *_ in kp.sass_executions(execs, {("k", 0): {1: 3}}, {GUARD: 2})}
    assert runs["BSYNC"] == 8 + 2       # two of the eight warps were split by the guard
    assert runs["STG.E"] == 8
    runs = {ins.opcode: c for ins, c, *_ in kp.sass_executions(execs, {("k", 0): {1: 3}})}
    assert runs["BSYNC"] == 8


WAIT_PTX = """.version 8.0
.target sm_90
.address_size 64

.visible .entry w(.param .u64 p)
{
\t.reg .pred %p<2>;
\t.reg .b32 %r<3>;
\t.reg .b64 %rd<3>;
\t.shared .align 8 .b64 bar;
\tld.param.u64 %rd1, [p];
\tmov.u32 %r1, 0;
$L__BB0_1:
\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], %r1;
\t@!%p1 bra $L__BB0_1;
\tst.global.u32 [%rd1], %r1;
\tret;
}
"""


def test_an_mbarrier_retry_loop_out_of_line_is_no_loop_around_the_kernel_and_runs_zero_times():
    """ptxas' shape of ``L: try_wait; @!p bra L``: the first try in line, the retry loop and the
    jump back at the function's end.  The jump back is no back edge (its target does not
    dominate it), so the kernel's code is straight-line; the retry blocks run 0 times (the
    model's try_wait succeeds at once; on the card each retry is 2 warp instructions)."""
    f = ptx_functions(WAIT_PTX)["w"]
    line = lambda t: next(n for n, s in enumerate(WAIT_PTX.splitlines(), 1) if s.strip().startswith(t))  # noqa: E731
    P, TW, TB, ST, RT = (line(t) for t in ("ld.param", "mbarrier.try_wait", "@!%p1 bra", "st.global", "ret"))
    rows = [(P, "", "LDC", "R2, c[0x0][0x210]", ""),
            (TW, "", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "P0, [UR4], R1", ""),
            (TB, "@!P0", "BRA", "`(.L_x_0)", ""),
            (ST, "", "STG.E", "desc[UR6][R2.64], R1", ".L_x_1"),
            (RT, "", "EXIT", "", ""),
            (TW, "", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "P0, [UR4], R1", ".L_x_0"),
            (TB, "@!P0", "BRA", "`(.L_x_0)", ""),
            (TB, "", "BRA", "`(.L_x_1)", "")]
    code = [SassInstr(offset=16 * k, opcode=op, operands=o, predicate=pr, ptx_line=ln, function="w", label=lb)
            for k, (ln, pr, op, o, lb) in enumerate(rows)]
    plan = plan_function(code, f)
    cfg = plan.sass_cfg
    assert [sorted(lp.body) for lp in cfg.loops] == [[cfg.block_of[5]]]      # the retry loop only
    assert plan.slow == {5, 6, 7}
    counts = plan.block_counts({P: 3, TW: 3, TB: 3, ST: 3, RT: 3}, {0: {1: 3}})   # 3 warps, no retry
    per = {i: c for b, c in zip(cfg.blocks, counts) for i in range(b.start, b.end)}
    assert [per[i] for i in range(5)] == [3] * 5


def test_per_pipe_counts_put_a_block_index_read_on_the_adu_and_a_thread_index_read_on_the_lsu():
    """smsp__inst_executed_pipe_* of a launch take each SASS instruction's pipe with its operands
    (measured on the H100, sass/opclasses.py): here S2R SR_CTAID.X and every S2UR count on the
    ADU, S2R SR_TID.X on the LSU, by hand from the kernel's SASS (one execution per warp)."""
    if not compiled_path_available():
        pytest.skip("no NVVM/ptxas")
    from numba import cuda as ncuda

    @ncuda.jit
    def scale(a):
        i = ncuda.blockIdx.x * ncuda.blockDim.x + ncuda.threadIdx.x
        a[i] = a[i] * np.float32(2)

    a = np.ones(4 * 64, np.float32)
    rep = simgpu.launch(scale, 4, 64, [a], executor="ptx", memory=False, timing=False)
    assert np.all(a == 2)
    from simgpu.sass import compile_kernel
    code = compile_kernel(scale, [np.ones(4, np.float32)]).sass.instructions
    assert all(not ins.predicate for ins in code if ins.base in ("S2R", "S2UR", "LDC", "LDG", "STG"))
    uniform_sr = [ins for ins in code if ins.base == "S2UR" or (ins.base == "S2R" and "SR_CTAID" in ins.operands)]
    assert uniform_sr, "ptxas no longer reads the block index with S2R/S2UR"
    warps = 4 * 2
    adu = sum(ins.base in ("S2UR", "LDC") or ins in uniform_sr for ins in code)
    lsu = sum(ins.base in ("LDG", "STG") or (ins.base == "S2R" and "SR_TID" in ins.operands) for ins in code)
    assert rep.metrics["smsp__inst_executed_pipe_adu.sum"] == warps * adu
    assert rep.metrics["smsp__inst_executed_pipe_lsu.sum"] == warps * lsu
    assert rep.metrics.get("smsp__inst_executed_pipe_uniform.sum", 0) == warps * sum(
        ins.pipe == "uniform" for ins in code)


def test_code_ptxas_copied_behind_a_predicated_exit_runs_only_for_the_warps_that_stay():
    """ptxas turns ``@p bra RET`` into ``@P EXIT`` and copies the PTX return block (an EXIT)
    after the code only lane 0 runs: warp 1, all of whose lanes leave at ``@P EXIT``, runs
    neither (by hand from the SASS, as ncu counts it on the GPU-Puzzles dot product), though
    the PTX return block runs for both warps."""
    if not compiled_path_available():
        pytest.skip("no NVVM/ptxas")
    from numba import cuda as ncuda

    @ncuda.jit
    def first_lane_writes(out, a):
        i = ncuda.threadIdx.x
        s = ncuda.shared.array(64, np.float32)
        s[i] = a[i]
        ncuda.syncthreads()
        if i == 0:
            out[ncuda.blockIdx.x] = s[0] + s[63]

    a, out = np.arange(64, dtype=np.float32), np.zeros(1, np.float32)
    from simgpu.sass import compile_kernel
    code = compile_kernel(first_lane_writes, [out, a]).sass.instructions
    ex = [i for i, ins in enumerate(code) if ins.base == "EXIT"]
    assert len(ex) == 2 and code[ex[0]].predicate and not code[ex[1]].predicate and ex[1] == len(code) - 1, \
        "ptxas no longer leaves through a predicated EXIT and a copied final EXIT"
    assert not any(ins.base == "BRA" for ins in code)
    rep = simgpu.launch(first_lane_writes, 1, 64, [out, a], executor="ptx", memory=False, timing=False)
    assert out[0] == 63
    # two warps up to the @P EXIT, then warp 0 alone
    assert rep.metrics["smsp__inst_executed.sum"] == 2 * (ex[0] + 1) + (len(code) - ex[0] - 1)
    assert rep.metrics["smsp__inst_executed_pipe_cbu.sum"] == 2 + 1


def test_a_bsync_counts_the_split_of_a_branch_whose_sass_bra_carries_another_line():
    """GPU-Puzzles pooling's shape (0.996x of the H100's count before): ptxas decides `if t - k
    >= 0` by a BRA that carries a neighbouring line (the next bra.uni, or code after it), found
    from the BRA's predicate, which the PTX setp of that branch wrote.  Warp 0 splits on each of
    the two ifs (lanes 0..k-1 go the other way), so each BSYNC runs 3 times: once for each
    warp and once more for warp 0's second part; BSSY and EXIT once a warp.  By hand from the
    SASS: the cbu pipe's count."""
    if not compiled_path_available():
        pytest.skip("no NVVM/ptxas")
    from numba import cuda as ncuda

    @ncuda.jit
    def pooling(out, a, size):
        s = ncuda.shared.array(64, np.float32)
        i = ncuda.blockIdx.x * ncuda.blockDim.x + ncuda.threadIdx.x
        t = ncuda.threadIdx.x
        if i < size:
            s[t] = a[i]
        ncuda.syncthreads()
        if i < size:
            acc = s[t]
            for k in range(1, 3):
                if t - k >= 0:
                    acc += s[t - k]
                elif i - k >= 0:
                    acc += a[i - k]
            out[i] = acc

    a, out = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    args = [out, a, np.int64(64)]
    from simgpu.sass import compile_kernel
    code = compile_kernel(pooling, args).sass.instructions
    n = {op: sum(ins.base == op for ins in code) for op in ("BSSY", "BSYNC", "EXIT")}
    assert n["BSYNC"] == 2, "ptxas no longer makes one convergence region per if"
    rep = simgpu.launch(pooling, 1, 64, args, executor="ptx", memory=False, timing=False)
    assert np.array_equal(out, a + np.concatenate([[0], a[:-1]]) + np.concatenate([[0, 0], a[:-2]]))
    assert rep.metrics["smsp__inst_executed_pipe_cbu.sum"] == 2 * n["BSSY"] + 3 * n["BSYNC"] + 2 * n["EXIT"]
