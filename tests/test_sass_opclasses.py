"""simgpu.sass.opclasses: SASS opcodes map to Nsight Compute pipe names; unknown opcodes are
reported, never fatal; the table covers everything ptxas emits for the test kernels."""
import pytest

from simgpu.sass.opclasses import PIPES, base_opcode, pipe_histogram, pipe_of, unknown_opcodes
from simgpu.sass.ptxas import parse_ptxas_log


@pytest.mark.parametrize("opcode,pipe", [
    ("FFMA", "fma"), ("FADD.FTZ", "fma"), ("FMUL", "fma"),
    ("IMAD.WIDE.U32", "fmaheavy"), ("IMAD.MOV.U32", "fmaheavy"),
    ("IADD3", "alu"), ("LOP3.LUT", "alu"), ("ISETP.GE.U32.AND", "alu"), ("FSETP.GTU.FTZ.AND", "alu"),
    ("SHF.R.S32.HI", "alu"), ("LEA.HI.X", "alu"), ("SEL", "alu"),
    ("MUFU.RCP", "xu"), ("I2F.F64", "xu"), ("F2I.TRUNC", "xu"), ("POPC", "xu"), ("FCHK", "xu"),
    ("LDG.E.128", "lsu"), ("STG.E", "lsu"), ("LDS", "lsu"), ("STS", "lsu"), ("LD.E", "lsu"),
    ("LDL", "lsu"), ("ATOMG.E.ADD.F32", "lsu"), ("RED.E.ADD", "lsu"), ("SHFL.BFLY", "lsu"),
    ("S2R", "lsu"), ("S2UR", "adu"),
    ("LDC.64", "adu"), ("BAR.SYNC.DEFER_BLOCKING", "adu"), ("BRX", "adu"),
    ("BRA", "none"), ("EXIT", "cbu"), ("CALL.REL.NOINC", "cbu"), ("BSSY", "cbu"), ("RET.REL.NODEC", "cbu"),
    ("ULDC.64", "none"), ("UMOV", "none"), ("UIADD3", "uniform"), ("ULOP3.LUT", "uniform"), ("R2UR", "uniform"),
    ("VIADD", "fmaheavy"),
    ("DFMA", "fp64"), ("DADD", "fp64"),
    ("HMMA.16816.F32", "tensor"), ("HGMMA.64x128x16.F32", "tensor"),
])
def test_known_opcodes_map_to_their_pipe(opcode, pipe):
    """Each listed opcode (with modifiers) maps to the Nsight Compute pipe named."""
    assert pipe_of(opcode) == pipe


def test_s2r_pipe_depends_on_the_special_register():
    """Measured on the H100 (the holdout's per-pipe counts under ncu): an S2R of the thread index
    issues on the LSU, one of a CTA-uniform register (SR_CTAID.*, SR_CgaCtaId) on the ADU, as
    every S2UR does; SassInstr.pipe passes its operands."""
    from simgpu.sass.disasm import SassInstr
    assert pipe_of("S2R", operands="R2, SR_TID.X") == "lsu"
    assert pipe_of("S2R", operands="R5, SR_CTAID.X") == "adu" == pipe_of("S2R", operands="R16, SR_CgaCtaId")
    assert pipe_of("S2UR", operands="UR4, SR_CTAID.X") == "adu"
    assert SassInstr(0, "S2R", "R5, SR_CTAID.Y").pipe == "adu"
    assert SassInstr(0, "S2R", "R2, SR_TID.X").pipe == "lsu"


def test_fp16_pipe_depends_on_the_chip():
    """HFMA2 runs on the fp16 pipe on sm_80/sm_90, on the fma pipe on sm_86/sm_89."""
    assert pipe_of("HFMA2", (9, 0)) == "fp16" == pipe_of("HFMA2", (8, 0))
    assert pipe_of("HFMA2", (8, 6)) == "fma" == pipe_of("HFMA2.MMA", (8, 9))


def test_unknown_opcodes_are_listed_not_fatal():
    """An opcode the table lacks is 'unknown' and is listed once, by base mnemonic."""
    ops = ["FFMA", "ZZTOP.X", "ZZTOP", "QUUX.Y"]
    assert pipe_of("ZZTOP.X") == "unknown"
    assert unknown_opcodes(ops) == ["QUUX", "ZZTOP"]
    assert pipe_histogram(ops) == {"fma": 1, "unknown": 3}
    assert base_opcode("IMAD.WIDE.U32") == "IMAD"
    assert all(op == op.upper() and "." not in op for op in PIPES)


def test_real_kernels_use_only_known_opcodes():
    """Every SASS opcode ptxas emits for the test kernels (incl. the fp32 division slow path
    and a local-memory kernel) is in the table."""
    pytest.importorskip("numba_cuda")
    facts_tests = pytest.importorskip("test_sass_facts")
    import numpy as np
    from simgpu.sass import compile_kernel
    x = np.ones(256, np.float32)
    kernels = [(facts_tests.saxpy, (np.float32(2), x, x, x)), (facts_tests.divide, (x, x, x)),
               (facts_tests.local_dynamic, (x, x, 3)), (facts_tests.reverse_shared, (x, x))]
    for func, args in kernels:
        for gpu in ("H200", "A100"):
            assert compile_kernel(func, args, gpu=gpu).unknown_opcodes() == [], func.__name__


def test_parse_ptxas_log():
    """ptxas -v text (CUDA 12 and 13 wording) becomes per-function resources."""
    log = """ptxas info    : 16 bytes gmem, 64 bytes cmem[3], 16 bytes cmem[4]
ptxas info    : Compiling entry function 'kern' for 'sm_80'
ptxas info    : Function properties for kern
    256 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem, 380 bytes cmem[0]
ptxas info    : Compile time = 32.045 ms
ptxas info    : Function properties for helper
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas warning : Registers are spilled to local memory in function 'kern', 8 bytes spill stores, 12 bytes spill loads
"""
    rep = parse_ptxas_log(log, "sm_80")
    assert rep.gmem_bytes == 16 and rep.cmem == {3: 64, 4: 16}
    k = rep.functions["kern"]
    assert (k.kind, k.registers, k.barriers, k.stack_frame, k.spill_stores, k.spill_loads) == (
        "entry", 32, 1, 256, 8, 12)
    assert (k.shared_bytes, k.cumulative_stack, k.cmem, k.compile_time_ms) == (1024, 256, {0: 380}, 32.045)
    h = rep.functions["helper"]
    assert h.kind == "function" and h.stack_frame == 16 and h.registers is None
    assert len(rep.warnings) == 1 and "spilled" in rep.warnings[0]
