"""The per-opcode table (simgpu/timing/opcosts.py): keys, the data it cites, and its use by the
compiled path's costs (ptx_trace.sass_mix / sass_latency)."""
import json
from pathlib import Path

import pytest

from simgpu.hardware import get_gpu
from simgpu.timing import opcosts
from simgpu.timing.opcosts import TABLE, cost_key, measured
from simgpu.timing.params import TimingParams
from simgpu.timing.ptx_trace import sass_latency, sass_mix, sim_pipe

DATA = Path(__file__).resolve().parents[1] / "validation" / "data" / "h100_opcodes.json"
DATA3 = DATA.parent / "opcodes" / "h100_opcodes3.json"      # the third run (fixed-address LDC)


@pytest.mark.parametrize("opcode,key", [
    ("IMAD.WIDE.U32", "IMAD.WIDE"), ("IMAD.MOV.U32", "IMAD"), ("F2I.TRUNC.NTZ", "F2I"),
    ("F2I.S64.TRUNC", "F2I.S64"), ("F2F.F64.F32", "F2F.F64.F32"), ("ISETP.GE.U32.AND", "ISETP"),
    ("ISETP.GE.AND.EX", "ISETP.EX"), ("LOP3.LUT", "LOP3"), ("MUFU.EX2", "MUFU.EX2"),
    ("HFMA2.MMA", "HFMA2.MMA"), ("LDG.E.128.CONSTANT", "LDG.128.CONSTANT"), ("SHFL.DOWN", "SHFL")])
def test_cost_keys(opcode, key):
    assert cost_key(opcode) == key


def test_every_entry_cites_a_bench_in_the_data():
    """Each measured entry names a bench of validation/data/h100_opcodes.json (or of the third
    run's opcodes/h100_opcodes3.json) that ran, and a rate taken straight from a bench equals the
    bench's measurement."""
    data = dict(json.loads(DATA3.read_text())["benches"])
    data.update(json.loads(DATA.read_text())["benches"])
    for key, e in TABLE.items():
        assert e.bench in data, key
        b = data[e.bench]
        assert "error" not in b.get("thr", {}) and "error" not in b.get("lat", {}), key
        if b["opcode"] == key or (isinstance(b["opcode"], str) and cost_key(b["opcode"]) == key):
            assert e.issue_per_sm == pytest.approx(b["issue_per_clk_per_sm"], rel=0.01), key


def test_only_hopper_uses_the_table():
    assert measured("IMAD.WIDE.U32", (9, 0)) is not None
    assert measured("IMAD.WIDE.U32", (8, 0)) is None
    assert measured("ATOMG.E.CAS.STRONG.GPU") is None


def test_the_compiled_path_costs_use_it():
    """I2FP issues on the ALU (measured: F2I + I2FP pairs run at the XU's F2I rate), a wide
    multiply holds the IMAD pipe twice, and an op's latency is its slowest opcode's measured one."""
    assert sim_pipe("I2FP.F32.S32") == "int" and sim_pipe("F2I.TRUNC.NTZ") == "conv"
    assert sass_mix(["IMAD.WIDE.U32", "IMAD", "LEA"]) == {"imad": 3, "int": 1}
    assert sass_mix(["IMAD.WIDE.U32"], cc=(8, 0)) == {"imad": 1}
    P = TimingParams.from_gpu(get_gpu("H200"))
    assert sass_latency(["IADD3", "MUFU.RCP"], P.latency) == pytest.approx(18.93)
    assert sass_latency(["ATOMG.E.ADD"], P.latency) == P.latency[sim_pipe("ATOMG.E.ADD")]
    assert sass_latency([], P.latency) is None
    assert P.op_latency({"int": 2}, 8.0) == 8.0 + P.latency["fp32"] * 0.5
    assert opcosts.__all__


def test_the_second_runs_opcodes():
    """The most-executed estimates measured on 2026-12-07 16:51: VIADD on the IMAD pipe, IADD3 on
    the ALU alone (no choice of pipe), the uniform pipe at 2 cycles, ULDC/UMOV/BRA an issue slot
    only; ISETP.EX and VIADD latencies; a branch's taken stall is no result's latency; the
    indexed-constant benches (ULDC, LDC) are not used for the fixed-address forms."""
    assert sass_mix(["VIADD", "IADD3", "IMAD.IADD", "UIADD3", "ULDC.64", "UMOV", "BRA"]) == {
        "imad": 2, "int": 1, "uniform": 1, "none": 2, "branch": 1}
    P = TimingParams.from_gpu(get_gpu("H100"))
    assert P.interval["uniform"] == 2.0 and P.interval["none"] == 1.0
    assert sass_latency(["ISETP.GE.U32.AND.EX"], P.latency) == pytest.approx(4.06)
    assert sass_latency(["VIADD"], P.latency) == pytest.approx(6.2)
    assert sass_latency(["FCHK", "BSSY", "BRA", "MUFU.RCP"], P.latency) == pytest.approx(18.93)
    assert sass_latency(["UIADD3"], P.latency) == P.latency["uniform"]
    assert measured("ULDC.64") is None
    assert measured("BRA").latency == pytest.approx(19.8) and measured("UMOV").pipe == "none"


def test_the_adu():
    """The third run (h100_opcodes3): LDC and LDC.64 at a fixed address run at the ADU's 0.5 a
    cycle per SM, one ADU instruction each; BAR and S2UR issue there too (ncu's ADU count), the
    barrier's wait staying its OpSpec kind's.  Hopper's ADU is one warp instruction per 8 SMSP
    cycles; a GPU without a measured ADU runs those at the LSU's rate on a pipe of their own."""
    assert measured("LDC").pipe == "adu" and measured("LDC.64") is measured("LDC")
    assert measured("LDC").issue_per_sm == pytest.approx(0.5, abs=0.01)
    assert sim_pipe("LDC.64") == sim_pipe("BAR.SYNC.DEFER_BLOCKING") == sim_pipe("S2UR") == "adu"
    assert sass_mix(["LDC.64", "BAR.SYNC.DEFER_BLOCKING", "S2UR", "LDG.E", "S2R"]) == {"adu": 3, "lsu": 2}
    P = TimingParams.from_gpu(get_gpu("H100"))
    assert P.interval["adu"] == pytest.approx(P.schedulers / 0.5) == pytest.approx(8.0)
    assert sass_latency(["LDC"], P.latency) == pytest.approx(30.1)
    A = TimingParams.from_gpu(get_gpu("A100"))
    assert A.interval["adu"] == A.interval["lsu"]
