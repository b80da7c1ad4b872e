"""Pipe utilisation counts each instruction on the pipe the simulation put it on: integer adds
("iadd": IADD3, VIADD, MOV, IMAD.IADD, IMAD.MOV), which the SM splits between the ALU and the
IMAD pipe, are reported on both as split, not all on the ALU (issue 22: the bottleneck named)."""
from simgpu.hardware import get_gpu
from simgpu.timing.params import TimingParams
from simgpu.timing.program import ALU, OpSpec
from simgpu.timing.sim import REPORTED_PIPES, TOTALS, simulate_sm, totals


def _run(pipes, n_ops=400, warps=8):
    P = TimingParams.from_gpu(get_gpu("H100"))
    ops = [OpSpec(ALU, 1, pipes, 4.0, -1, (), None, i) for i in range(n_ops)]
    progs = [[(sp, None) for sp in ops] for _ in range(warps)]
    cycles, sm = simulate_sm(P, [(progs, 1)], 1, warps)
    t = dict(zip(TOTALS, totals(cycles, sm)))
    return P, t


def test_integer_adds_are_counted_on_both_integer_pipes():
    P, t = _run((("iadd", 1),))
    work = 400 * 8 * P.interval["iadd"]          # cycles of one integer pipe the adds need
    assert "imad" in REPORTED_PIPES
    assert t["pipe_int"] > 0 and t["pipe_imad"] > 0
    # the split conserves the work (each part at its own pipe's interval) ...
    assert abs(t["pipe_int"] / P.interval["int"] + t["pipe_imad"] / P.interval["imad"]
               - work / P.interval["iadd"]) < 1e-6 * work
    # ... and no pipe is busier than the time allows (all on the ALU it was: 2x the time)
    per_smsp = t["cycles"] * P.schedulers
    assert t["pipe_int"] <= per_smsp and t["pipe_imad"] <= per_smsp


def test_alu_only_work_stays_on_the_alu():
    P, t = _run((("int", 1),))
    assert t["pipe_imad"] == 0.0
    assert abs(t["pipe_int"] - 400 * 8 * P.interval["int"]) < 1e-9
