"""Latency-bound code (issue 22): the loads ptxas hoists go out together, also in a loop that
NVVM unrolled in the PTX and ptxas did not unroll further (a SASS loop of one copy); a warp
overlaps independent loads and waits at their first use; an L1-hit chase pays the L1 latency,
an L2 one the L2's."""
from collections import defaultdict
from dataclasses import replace

from simgpu.hardware import H200
from simgpu.sass.disasm import SassInstr
from simgpu.sass.flow import KernelPlan, plan_function, ptx_functions
from simgpu.timing.memfacts import MemFacts
from simgpu.timing.memstats import MemStat
from simgpu.timing.params import TimingParams
from simgpu.timing.program import ALU, LD, OpSpec
from simgpu.timing.sass_stream import SassStream
from simgpu.timing.sim import simulate_sm

# NVVM's shape of `for i: acc += a[2i] + a[2i+1]` unrolled twice: load, add, load, add
PTX = """.version 8.0
.target sm_90
.address_size 64

.visible .entry k(.param .u64 p, .param .u32 n)
{
\t.reg .pred %p<3>;
\t.reg .f32 %f<5>;
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
\tld.global.f32 %f3, [%rd1+4];
\tadd.f32 %f4, %f1, %f3;
\tmov.f32 %f1, %f4;
\tadd.s64 %rd1, %rd1, 8;
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


PARAM, GUARD = _line("ld.param.u64"), _line("@%p1 bra")
LD1, ADD1, LD2, ADD2 = (_line(t) for t in ("ld.global.f32 %f2", "add.f32 %f1", "ld.global.f32 %f3", "add.f32 %f4"))
INC, CMP, BRA, ST, RET = (_line(t) for t in ("add.s32", "setp.lt", "@%p2 bra", "st.global", "ret"))


def _plan(body):
    """The PTX loop as one SASS loop of one copy whose body is `body` (PTX line, opcode)."""
    rows = ([(PARAM, "", "LDC", "R6, c[0x0][0x218]", ""),
             (GUARD, "", "ISETP.NE.AND", "P0, PT, R6, RZ, PT", ""),
             (GUARD, "@!P0", "BRA", "`(.L_x_3)", "")]
            + [(ln, "", op, ops, ".L_x_0" if j == 0 else "") for j, (ln, op, ops) in enumerate(body)]
            + [(INC, "", "IADD3", "R7, R7, 0x1, RZ", ""),
               (CMP, "", "ISETP.LT.U32.AND", "P1, PT, R7, R6, PT", ""),
               (BRA, "@P1", "BRA", "`(.L_x_0)", ""),
               (ST, "", "STG.E", "desc[UR4][R4.64], R0", ".L_x_3"),
               (RET, "", "EXIT", "", "")])
    code = [SassInstr(offset=16 * k, opcode=op, operands=operands, predicate=pred, ptx_line=line,
                      function="k", label=label) for k, (line, pred, op, operands, label) in enumerate(rows)]
    f = ptx_functions(PTX)["k"]
    plan = plan_function(code, f)
    kp = KernelPlan.__new__(KernelPlan)
    kp.plans, kp.lines, kp.subroutines = {"k": plan}, set(f.index), {}
    kp.heads, kp.exits = defaultdict(list), defaultdict(list)
    for lp, (head, exits) in plan.tracked_loops().items():
        kp.heads[head].append(("k", lp))
        for e in exits:
            kp.exits[e].append(("k", lp))
    return f, plan, SassStream(kp)


def _warp_lines(f, n):
    loop = [ln for ln in f.lines if LD1 <= ln <= BRA]
    return [ln for ln in f.lines if ln < LD1] + loop * n + [ln for ln in f.lines if ln > BRA]


HOISTED = [(LD1, "LDG.E", "R2, desc[UR4][R4.64]"), (LD2, "LDG.E", "R3, desc[UR4][R4.64+0x4]"),
           (ADD1, "FADD", "R0, R0, R2"), (ADD2, "FADD", "R0, R0, R3")]
REGS = {LD1: (("%f2",), ("%rd1",)), ADD1: (("%f1",), ("%f1", "%f2")), LD2: (("%f3",), ("%rd1",)),
        ADD2: (("%f4",), ("%f1", "%f3"))}


def test_a_loop_of_one_sass_copy_issues_its_hoisted_loads_first():
    f, plan, stream = _plan(HOISTED)
    assert set(plan.unroll.values()) == {1}           # ptxas did not unroll further
    n = 3
    lines = _warp_lines(f, n)
    order = stream.order(lines, REGS)
    assert sorted(order) == list(range(len(lines)))
    issued = [lines[x] for x in order if lines[x] in (LD1, LD2, ADD1, ADD2)]
    assert issued == [LD1, LD2, ADD1, ADD2] * n       # each iteration in the SASS body's order


def test_the_sass_order_never_moves_a_read_before_the_write_it_reads():
    # a body whose SASS order would put the second add before the load it reads
    f, plan, stream = _plan([(LD1, "LDG.E", "R2, desc[UR4][R4.64]"), (ADD2, "FADD", "R0, R0, R3"),
                             (LD2, "LDG.E", "R3, desc[UR4][R4.64+0x4]"), (ADD1, "FADD", "R0, R0, R2")])
    lines = _warp_lines(f, 2)
    issued = [lines[x] for x in stream.order(lines, REGS) if lines[x] in (LD1, LD2, ADD1, ADD2)]
    assert issued == [LD1, LD2, ADD1, ADD2] * 2


P = replace(TimingParams.from_gpu(H200), block_launch_cycles=0.0)
L1_HIT, L2_HIT = MemStat(0.0, 1.0, 0.0), MemStat(1.0, 1.0, 0.0)


def _ld(iid, dst, deps, stat):
    return OpSpec(LD, 1, (("lsu", 1),), 0.0, dst, tuple(deps), None, iid, stat=stat)


def _use(dst, deps):
    return OpSpec(ALU, 1, (("fp32", 1),), P.op_latency({"fp32": 1}), dst, tuple(deps), None, 99)


def _cycles(prog):
    cycles, _ = simulate_sm(P, [([prog], 132)], 1, 1)
    return cycles


def test_independent_loads_overlap_and_the_warp_waits_at_the_first_use():
    f = MemFacts(sectors=1, lines=1)
    hoisted = [(_ld(1, 1, (), L2_HIT), f), (_ld(2, 2, (), L2_HIT), f), (_use(3, (1, 2)), None)]
    serial = [(_ld(1, 1, (), L2_HIT), f), (_use(3, (1,)), None), (_ld(2, 2, (3,), L2_HIT), f), (_use(4, (2,)), None)]
    one = [(_ld(1, 1, (), L2_HIT), f), (_use(3, (1,)), None)]
    assert _cycles(hoisted) < _cycles(one) + 0.1 * P.l2_hit_cycles       # two loads cost one latency
    assert _cycles(serial) > _cycles(one) + 0.9 * P.l2_hit_cycles        # a dependent one pays twice


def test_a_chase_pays_the_latency_of_the_level_that_serves_it():
    f = MemFacts(sectors=1, lines=1)

    def chase(stat, n=20):
        return [(_ld(1, 1, (1,), stat), f) for _ in range(n)]

    l1 = (_cycles(chase(L1_HIT, 40)) - _cycles(chase(L1_HIT, 20))) / 20
    l2 = (_cycles(chase(L2_HIT, 40)) - _cycles(chase(L2_HIT, 20))) / 20
    # the spec's latencies are load-to-use (what a pointer chase step measures on the card)
    assert abs(l1 - H200.l1.hit_latency_cycles) < 0.5
    assert abs(l2 - H200.l2.hit_latency_cycles) < 2.0     # + the sector's time at the SM's L2 share


def test_a_two_interval_opcode_has_its_own_latency_not_a_routines():
    # IMAD.WIDE: one instruction holding the IMAD pipe two intervals; 8.0 cycles measured
    assert P.op_latency({"imad": 2}, 8.0, instructions=1) == 8.0
    assert P.op_latency({"imad": 2}, 8.0, instructions=2) > 8.0     # two instructions: a routine


# ptxas's IEEE sqrt.rn.f32 (validation/data/latency_mlp/h100_latency_mlp_card.json, mb_sqrt_chain):
# a MUFU fast path behind a branch over a CALL to the slow-path subroutine, in a BSSY/BSYNC region
SQRT = [(7, "", "FADD", "R11, R0, 1.5", ""),
        (8, "", "BSSY", "B0, `(.L_x_2)", ""),
        (8, "", "VIADD", "R0, R11, 0xf3000000", ""),
        (8, "", "MUFU.RSQ", "R10, R11", ""),
        (9, "", "IADD3", "R12, P0, R12, 0x1, RZ", ""),
        (8, "", "ISETP.GT.U32.AND", "P1, PT, R0, 0x727fffff, PT", ""),
        (8, "@!P1", "BRA", "`(.L_x_3)", ""),
        (8, "", "IMAD.MOV.U32", "R0, RZ, RZ, R11", ""),
        (8, "", "MOV", "R16, 0x390", ""),
        (8, "", "CALL.REL.NOINC", "`($__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath)", ""),
        (8, "", "BRA", "`(.L_x_4)", ""),
        (8, "", "FMUL.FTZ", "R0, R11, R10", ".L_x_3"),
        (8, "", "FMUL.FTZ", "R10, R10, 0.5", ""),
        (8, "", "FFMA", "R11, -R0, R0, R11", ""),
        (8, "", "FFMA", "R0, R11, R10, R0", ""),
        (8, "", "BSYNC", "B0", ".L_x_4,.L_x_2")]


def _sqrt_code():
    return [SassInstr(offset=16 * k, opcode=op, operands=ops, predicate=pred, ptx_line=line, function="k",
                      label=label) for k, (line, pred, op, ops, label) in enumerate(SQRT)]


def test_a_slow_path_region_routine_is_its_fast_path_with_the_branch_taken():
    from simgpu.timing.sass_stream import operand_registers, region_routines
    code = _sqrt_code()
    got = region_routines(code)
    assert set(got) == {8}                              # the sqrt's line; not the FADD's, not the IADD3's
    path, others = got[8]
    assert [i.opcode for i, _ in path] == ["VIADD", "MUFU.RSQ", "ISETP.GT.U32.AND", "BRA", "FMUL.FTZ", "FMUL.FTZ",
                                           "FFMA", "FFMA", "BSYNC"]     # no slow-path instruction
    assert [how for _, how in path].count("taken") == 1 and path[3][1] == "taken"
    assert others == 1                                  # the IADD3 ptxas put inside it
    assert operand_registers(code[4]) == (("R12", "P0"), ("R12",))          # a carry out is written
    assert operand_registers(code[6]) == ((), ("P1",))                      # the guard is read
    assert operand_registers(code[13]) == (("R11",), ("R0", "R0", "R11"))   # negation is no register


def test_a_region_routine_costs_its_critical_path_and_the_taken_branch():
    from simgpu.timing.sass_stream import region_routines, routine_timing
    path, _ = region_routines(_sqrt_code())[8]
    lat = {"VIADD": 4.0, "MUFU.RSQ": 17.0, "ISETP.GT.U32.AND": 4.0, "FMUL.FTZ": 4.0, "FFMA": 4.0}.get
    free, _ = routine_timing(path, lambda op: lat(op, 0.0), 0.0)
    # MUFU (issued second) bounds it: FMUL at 1 + 17, then FMUL -> FFMA -> FFMA
    assert free == 1 + 17 + 4 + 4 + 4
    slow, resume = routine_timing(path, lambda op: lat(op, 0.0), 32.0)
    # the branch waits for VIADD -> ISETP (issued at 8); the fast path 32 cycles after it
    assert slow == 8 + 32 + 4 + 4 + 4
    assert resume == 8 + 32 + 1 + 4 + 4 + 1            # the BSYNC issued: the warp may go on


def test_dram_latencies_spread_keep_their_mean_and_k_loads_wait_for_the_slowest():
    dram = MemStat(1.0, 0.0, 1.0)              # every request missing the L1 and the L2
    f = MemFacts(sectors=1, lines=1)
    spread = P.dram_spread_cycles
    assert spread > 0                          # the H200 preset's (H100-measured) spread
    fixed = replace(P, dram_spread_cycles=0.0)

    def cycles(prog, params=P):
        return simulate_sm(params, [([prog], 132)], 1, 1)[0]

    def chase(n):
        return [(_ld(1, 1, (1,), dram), f) for _ in range(n)]

    step = (cycles(chase(400)) - cycles(chase(200))) / 200
    assert abs(step - (cycles(chase(400), fixed) - cycles(chase(200), fixed)) / 200) < 0.1 * spread

    def k_loads(k, n=100, params=P):           # n steps of k independent chains
        prog = []
        for _ in range(n):
            prog += [(_ld(c + 1, c + 1, (c + 1,), dram), f) for c in range(k)]
        return cycles(prog, params)

    one, four = k_loads(1), k_loads(4)
    assert four - one > 0.1 * spread * 100     # the slowest of four, less what the next step overlaps
    assert abs(k_loads(4, params=fixed) - k_loads(1, params=fixed)) < 0.05 * spread * 100
