"""The SASS a PTX line runs (simgpu/sass/paths.py): ptxas's slow paths behind a predicated
branch are walked apart from the fast path, so a float32 division counts the ten SASS
instructions it executes and not the 117 ptxas made from it."""
import numpy as np
import pytest

import simgpu
from simgpu import cuda
from simgpu.sass import compile_kernel
from simgpu.sass.disasm import SassInstr
from simgpu.sass.facts import SassFacts
from simgpu.sass.paths import line_paths
from simgpu.sass.toolchain import compiled_path_available

SUB = "$__internal_0_$__cuda_sm3x_div_rn_noftz_f32_slowpath"


def _code(rows):
    out = []
    for k, (line, pred, op, operands, label) in enumerate(rows):
        out.append(SassInstr(offset=16 * k, opcode=op, operands=operands, predicate=pred, ptx_line=line,
                             function="k", label=label))
    return out


# the shape ptxas gives div.rn.f32 (nvdisasm of a numba-cuda kernel, sm_90)
DIV = [(81, "", "LDG.E", "R0, desc[UR4][R10.64]", ""),
       (82, "", "BSSY", "B0, `(.L_x_1)", ""),
       (82, "", "MUFU.RCP", "R12, R3", ""),
       (82, "", "FCHK", "P0, R0, R3", ""),
       (82, "", "FFMA", "R7, -R3, R12, 1", ""),
       (82, "@!P0", "BRA", "`(.L_x_1)", ""),
       (82, "", "MOV", "R8, 0x2a0", ""),
       (82, "", "CALL.REL.NOINC", f"`({SUB})", ""),
       (82, "", "IMAD.MOV.U32", "R7, RZ, RZ, R0", ""),
       (82, "", "BSYNC", "B0", ".L_x_1"),
       (83, "", "STG.E", "desc[UR4][R2.64], R7", "")]
# the shape of sqrt.rn.f32: the slow path jumps over the fast path's tail
SQRT = [(84, "", "BSSY", "B0, `(.L_x_0)", ""),
        (84, "", "MUFU.RSQ", "R9, R0", ""),
        (84, "", "ISETP.GT.U32.AND", "P0, PT, R8, 0x727fffff, PT", ""),
        (84, "@!P0", "BRA", "`(.L_x_1)", ""),
        (84, "", "MOV", "R13, 0x1d0", ""),
        (84, "", "CALL.REL.NOINC", "`($__internal_2_$__cuda_sm20_sqrt_rn_f32_slowpath)", ""),
        (84, "", "BRA", "`(.L_x_2)", ""),
        (84, "", "FMUL.FTZ", "R11, R0, R9", ".L_x_1"),
        (84, "", "FFMA", "R0, R0, R9, R11", ""),
        (84, "", "BSYNC", "B0", ".L_x_2")]


def test_a_division_runs_its_fast_path_and_the_slow_path_is_kept_apart():
    sub = _code([(None, "", "FADD", "R0, R0, 1", "")] * 7)
    paths = line_paths(_code(DIV), {SUB: sub})
    p = paths[82]
    assert p.fast == ("BSSY", "MUFU.RCP", "FCHK", "FFMA", "BRA", "BSYNC")
    assert p.slow == ("BSSY", "MUFU.RCP", "FCHK", "FFMA", "BRA", "MOV", "CALL.REL.NOINC", *["FADD"] * 7,
                      "IMAD.MOV.U32", "BSYNC")
    assert p.subroutine == SUB
    assert paths[81].slow is None and paths[81].fast == ("LDG.E",)


def test_a_slow_path_that_jumps_back_over_the_fast_path():
    p = line_paths(_code(SQRT), {})[84]
    assert p.fast == ("BSSY", "MUFU.RSQ", "ISETP.GT.U32.AND", "BRA", "FMUL.FTZ", "FFMA", "BSYNC")
    assert p.slow == ("BSSY", "MUFU.RSQ", "ISETP.GT.U32.AND", "BRA", "MOV", "CALL.REL.NOINC", "BRA", "BSYNC")


def test_lines_without_the_shape_run_everything_they_list():
    """A predicated branch over no call, or a call that is not skipped, is not a slow path."""
    rows = [(90, "@P0", "BRA", "`(.L_x_9)", ""), (90, "", "FADD", "R1, R1, 1", ""),
            (90, "", "CALL.REL.NOINC", "`(helper)", ""), (90, "", "FMUL", "R1, R1, 2", ".L_x_9")]
    sub = {"helper": _code([(None, "", "IADD3", "R2, R2, 1, RZ", "")] * 3)}
    p = line_paths(_code(rows), sub)[90]
    assert p.slow is None and p.fast == ("BRA", "FADD", "CALL.REL.NOINC", "IADD3", "IADD3", "IADD3", "FMUL")


@pytest.mark.skipif(not compiled_path_available()[0], reason="no numba-cuda/ptxas")
def test_a_compiled_division_counts_its_fast_path_per_warp():
    """The kernel's smsp__inst_executed is the sum over executed PTX lines of their fast paths:
    the division's slow-path subroutine (over 100 SASS instructions) is not in it."""
    def k(a, b, o):
        i = cuda.grid(1)
        if i < o.size:
            o[i] = a[i] / b[i]
    n = 4096
    a = np.linspace(1, 2, n, dtype=np.float32)
    b = np.linspace(3, 4, n, dtype=np.float32)
    o = np.zeros_like(a)
    rep = simgpu.launch(k, n // 256, 256, (a, b, o), executor="ptx", timing=False, memory=False)
    assert np.array_equal(o, a / b)
    facts = SassFacts(compile_kernel(k, (a, b, o)))
    (line,) = facts.slow_paths                      # the division's line
    path = facts.slow_paths[line]
    assert "FCHK" in path.fast and len(path.slow) > 100 and facts.sass[line] == list(path.fast)
    per_warp = rep.metrics["smsp__inst_executed.sum"] / (n // 32)
    # every warp runs every line once here (no lane fails the guard): the fast paths' sum
    assert per_warp == sum(facts.count.values()) < len(path.slow)
