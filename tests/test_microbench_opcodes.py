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
    assert pred["cbu"] == 1 and pred["uniform"] == 0 and pred["adu"] == 1 and pred["total"] == 16   # ULDC: no pipe
    assert pc.predicted_pipes({"VIADD": 7}, {"VIADD": "alu"})["alu"] == 7     # --try
    meas = pc.measured_pipes({"sm__inst_executed_pipe_alu.sum": 10.0, "smsp__inst_executed.sum": 30.0,
                              "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active": 50.0})
    assert meas == {"alu": 10.0, "total": 30.0}


BENCH_CSV = ROOT / "validation" / "data" / "opcodes" / "h100_opcodes2_ncu.csv"
BENCH_JSON = ROOT / "validation" / "data" / "h100_opcodes.json"
HOLDOUT = ROOT / "validation" / "data" / "bottleneck" / "h100_2026-12-07"


def test_pipe_table_matches_the_cards_counts_on_the_benches(pc):
    """sass/opclasses.py's pipe of each opcode against ncu's sm__inst_executed_pipe_*.sum of the
    opcode benches on the H100 (VIADD in fmaheavy; BRA, ULDC and UMOV in no pipe).  Left out:
    the branch benches (their loops hold a block that never runs), ldc (the ADU counts each of
    the ~25 addresses of a divergent LDC) and fmaheavy in ffma (FFMA is split over fmaheavy and
    fmalite, which the table counts as fma)."""
    rows = pc.bench_pipes(str(BENCH_CSV), str(BENCH_JSON))
    checked = 0
    for r in rows:
        assert "error" not in r, r
        if r["bench"].startswith("bra_") or r["bench"] == "ldc":
            continue
        for p in ("alu", "fma", "fmaheavy", "fp64", "uniform", "cbu", "adu", "xu", "lsu", "total"):
            if p == "fmaheavy" and r["bench"] == "ffma":
                continue
            assert abs(r["per_warp_iteration"].get(p, 0.0) - r["table"].get(p, 0.0)) < 0.6, (r["bench"], r["mode"], p)
        checked += 1
    assert checked >= 20


def test_pipe_table_matches_the_cards_counts_on_the_holdout(pc):
    """The same on the 36 holdout kernels (simgpu's executed SASS per opcode, the card's toolchain,
    against ncu's per-pipe counts on the H100): the pipes whose opcodes the benches placed are
    within 2 % of the executed instructions, summed over the kernels."""
    import json
    import sys
    sys.path.insert(0, str(ROOT / "validation"))
    from compare_bottleneck import load_ncu
    ncu, problems = load_ncu([(str(HOLDOUT / "bneck_holdout.csv"), str(HOLDOUT / "profile_order_holdout.json"))])
    inst = json.loads((ROOT / "validation" / "data" / "inst_holdout_vs_h100_tc130.json").read_text())["rows"]
    rows = pc.compare_holdout(ncu, inst)       # the launches' own per-pipe counts (S2R by operand)
    assert len(rows) == 36
    err = pc.pipe_errors(rows)
    for p in ("alu", "fmaheavy", "cbu", "uniform", "lsu"):
        assert err[p] < 0.02, (p, err[p])
    for p in ("adu", "xu", "cbu", "uniform"):   # S2R/S2UR on the ADU, FCHK on the XU
        assert err[p] < 0.001, (p, err[p])
    # by opcode alone with S2UR on the uniform pipe and FCHK on the ALU (the table before; every
    # S2R then on the LSU): the ADU, LSU and uniform pipe were off
    was = pc.pipe_errors(pc.compare_holdout(ncu, inst, {"S2UR": "uniform", "FCHK": "alu"}))
    assert was["adu"] > 0.01 and was["lsu"] > 0.004 and was["uniform"] > 0.005
    # the table before the card's counts (VIADD on fma, BRA on cbu, ULDC/UMOV uniform) was not
    old = pc.pipe_errors(pc.compare_holdout(ncu, inst, {"VIADD": "fma", "BRA": "cbu", "ULDC": "uniform",
                                                        "UMOV": "uniform"}))
    assert old["cbu"] > 0.03 and old["uniform"] > 0.05


def test_pipe_table_matches_the_cards_counts_on_whole_one_warp_kernels(pc):
    """Whole latency kernels of the opcode benches (one warp, H100, ncu 2025.3; not the holdout):
    ncu's per-pipe counts against the kernel's SASS, prologue and epilogue included, so the
    S2R/S2UR outside the loop count: S2R SR_TID.X on the LSU, S2R SR_CTAID.X and S2UR
    (SR_VIRTUALSMID) not on the LSU nor the uniform pipe (the old table put them there: LSU +1,
    uniform +1 a kernel).  The ADU counts 2 more than the table on every kernel (the two
    `CS2R R, SR_CLOCKLO` clock reads, which the ALU counts too: not modelled).  Left out: the
    branch benches (blocks that never run) and the indexed constant loads (the ADU replays)."""
    rows = pc.one_warp_benches(str(BENCH_CSV), str(BENCH_JSON), str(ROOT / "validation" / "data" / "opcodes"
                                                                       / "h100_opcodes2_sass.txt"))
    checked = 0
    for r in rows:
        if r["bench"].startswith("bra_") or r["bench"] in ("ldc", "uldc"):
            continue
        for p in ("alu", "fma", "fmaheavy", "fp64", "xu", "lsu", "cbu", "uniform"):
            assert r["measured"].get(p, 0.0) == r["sass"][p], (r["bench"], p)
        assert r["measured"]["adu"] - r["sass"]["adu"] == 2, r["bench"]
        checked += 1
    assert checked >= 10
