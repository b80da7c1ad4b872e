"""validation/microbench/opcodes.py (per-opcode benches) and validation/ncu_bottleneck/pipe_counts.py:
the PTX they write and how they count, without a GPU or ptxas."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(rel, name):
    spec = importlib.util.spec_from_file_location(name, ROOT / rel)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def ob():
    return _load("validation/microbench/opcodes.py", "opcodes_bench")


@pytest.fixture(scope="module")
def pc():
    return _load("validation/ncu_bottleneck/pipe_counts.py", "pipe_counts")


def test_uniform_benches_take_operands_from_the_parameters(ob):
    ptx = ob.make_ptx("uiadd3", 2, 4)
    assert "ld.param.u32 %a0" in ptx and "ld.global" not in ptx.split("LOOP:")[0]
    assert "mad.lo.u32 %x1, %r1," in ptx            # chains from the seed parameter, not the thread
    assert "mad.lo.u32 %x0, %r6," in ob.make_ptx("iadd3", 1, 4)


def test_constant_array_labels_and_immediates(ob):
    ptx = ob.make_ptx("uldc", 8, 2)
    assert ".const .align 4 .b32 cbuf[128]" in ptx and "mov.u64 %cb, cbuf;" in ptx
    bra = ob.make_ptx("bra_bssy", 8, 4)
    labels = [ln for ln in bra.splitlines() if ln.startswith("SK_")]
    assert len(labels) == len(set(labels)) == 32     # one skip label per chain and step
    umov = ob.make_ptx("umov", 2, 2)
    body = umov.split("LOOP:")[1].split("bar.sync")[0]
    imms = [w.rstrip(";") for w in body.split() if w.startswith("0d")]
    assert len(imms) == 4
    assert len(set(imms)) == 4                       # a distinct f64 immediate per chain and step


def test_counting_by_regex_and_expected_counts(ob):
    ops = {"ISETP.GT.U32.AND": 128, "ISETP.GT.U32.AND.EX": 128, "SEL": 256, "BRA": 1}
    assert ob.count_of("ISETP.EX", ops, "isetp_ex") == 128
    assert ob.count_of(("ISETP.GT.U32.AND", "SEL"), ops) == 128 + 128 + 256   # longer names count too
    assert ob.expected("isetp_sel") == 2 and ob.expected("viadd") < 1 and ob.expected("ffma") == 1
    assert ob.bench_opts("bra_bssy")["thr_steps"] < ob.R_THR


def test_loop_opcodes_reads_the_backward_branch_loop(ob):
    sass = "\n".join([
        "        /*0000*/                   MOV R1, c[0x0][0x28] ;",
        ".L_x_0:",
        "        /*0010*/                   VIADD R2, R2, 0x1 ;",
        "        /*0020*/               @P0 BRA `(.L_x_1) ;",
        "        /*0030*/                   LOP3.LUT R2, R2, R3, RZ, 0x3c, !PT ;",
        ".L_x_1:",
        "        /*0040*/              @!P1 BRA `(.L_x_0) ;",
        "        /*0050*/                   EXIT ;"])
    assert ob.loop_opcodes(sass) == {"VIADD": 1, "BRA": 2, "LOP3.LUT": 1}


def test_pipe_counts_from_the_table_and_from_ncu(pc):
    pred = pc.predicted_pipes({"IMAD.WIDE.U32": 2, "FFMA": 3, "IADD3": 4, "BSSY": 1, "ULDC.64": 5, "LDC": 1})
    assert pred["fma"] == 5 and pred["fmaheavy"] == 2 and pred["alu"] == 4
    assert pred["cbu"] == 1 and pred["uniform"] == 5 and pred["adu"] == 1 and pred["total"] == 16
    assert pc.predicted_pipes({"VIADD": 7}, {"VIADD": "alu"})["alu"] == 7     # --try
    meas = pc.measured_pipes({"sm__inst_executed_pipe_alu.sum": 10.0, "smsp__inst_executed.sum": 30.0,
                              "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active": 50.0})
    assert meas == {"alu": 10.0, "total": 30.0}
