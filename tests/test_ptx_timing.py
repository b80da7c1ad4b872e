"""The timing model on the compiled path: PTX instructions costed by ptxas' SASS
(simgpu/timing/ptx_trace.py), with the sampling, SM simulation and report of the IR path."""
import numpy as np
import pytest

import simgpu
from simgpu.hardware import H200
from simgpu.sass import compile_kernel
from simgpu.timing.ptx_trace import PtxCode, operand_registers, sim_pipe
from simgpu.ptx.parser import parse
from simgpu.ptx.program import analyse, link

from test_timing_model import _f32, copy, divergent, fma_loop, uniform


def _predict(kernel, grid, block, args, **kw):
    return simgpu.launch(kernel, grid, block, args, executor="ptx", timing=True, **kw)


def test_sass_opcodes_map_to_the_simulator_pipes():
    assert sim_pipe("FFMA") == "fp32" and sim_pipe("DFMA") == "fp64"
    assert sim_pipe("IMAD.WIDE") == "imad" and sim_pipe("IMAD.MOV.U32") == "imad"
    assert sim_pipe("IADD3") == "int" and sim_pipe("ISETP.GE.AND") == "int"
    assert sim_pipe("VIADD") == "imad" and sim_pipe("MOV") == "int"     # measured: no choice of pipe
    assert sim_pipe("MUFU.EX2") == "sfu" and sim_pipe("F2I.TRUNC") == "conv"
    assert sim_pipe("LDG.E.128") == "lsu" and sim_pipe("SHFL.BFLY") == "shfl"
    assert sim_pipe("BAR.SYNC.DEFER_BLOCKING") == "adu" and sim_pipe("BRA") == "branch"
    assert sim_pipe("ULDC.64") == "none" and sim_pipe("UMOV") == "none" and sim_pipe("UIADD3") == "uniform"


def test_operand_registers_of_loads_stores_and_guards():
    m = parse(""".version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
 .reg .f32 %f<5>; .reg .b64 %rd<4>; .reg .pred %p<2>;
 ld.global.v2.f32 {%f1, %f2}, [%rd1+16];
 @!%p1 st.global.f32 [%rd2], %f3;
 setp.lt.f32 %p1, %f1, %f2;
 ret;
}""")
    body = [s for s in m.functions["k"].body if not isinstance(s, tuple)]
    assert operand_registers(body[0], "k") == (("k:%f1", "k:%f2"), ("k:%rd1",))
    assert operand_registers(body[1], "k") == ((), ("k:%rd2", "k:%f3", "k:%p1"))
    assert operand_registers(body[2], "k") == (("k:%p1",), ("k:%f1", "k:%f2"))


def test_loops_are_found_in_the_linked_program():
    """fma_loop has one loop; its head is the first pc of a range closed by a back edge,
    and every PtxOp of the loop body costs the SASS ptxas made from its line."""
    n = 256
    args = (_f32(n), np.zeros(n, np.float32), np.int32(8))
    ck = compile_kernel(fma_loop, args, gpu="H200")
    m = parse(ck.ptx)
    linked = link({ck.entry: analyse(m.functions[ck.entry])}, ck.entry)
    sass = {}
    for ks in ck.facts.kernels.values():
        for ins in ks.instructions:
            if ins.ptx_line is not None:
                sass.setdefault(ins.ptx_line, []).append(ins.opcode)
    code = PtxCode(linked, sass, ck.ptx_source)
    assert len(code.end) >= 1
    head = min(code.end)
    body = [code.op(pc) for pc in range(head, code.end[head] + 1)]
    fmas = [o for o in body if o.opcode == "fma"]
    assert fmas and all(o.mix.get("fp32", 0) >= 1 and o.flops == 2 * o.mix["fp32"] for o in fmas)


def test_fma_chain_is_compute_bound_and_counts_the_sass_flops():
    n = 132 * 8 * 256
    iters = 64
    rep = _predict(fma_loop, (n // 256,), (256,), (_f32(n), np.zeros(n, np.float32), np.int32(iters)))
    r = rep.extras["timing"]
    assert r.registers == rep.extras["ptx"]["registers"] and not r.registers_estimated
    assert "FP32" in r.bottleneck or "issue" in r.bottleneck
    assert r.flops >= 8 * iters * n            # 4 FFMA per iteration per thread (+ the prologue)
    assert r.flops <= 8 * (iters + 2) * n


def test_copy_agrees_with_the_ir_path_and_respects_the_dram_bound():
    """A copy's memory traffic is the same on both paths (one 4-byte load and store per
    thread), so the predicted cycles agree within 5 %; both stay above the HBM bound."""
    n = 132 * 8 * 256 * 4
    args = (_f32(n), np.zeros(n, np.float32))
    ptx = _predict(copy, (n // 256,), (256,), args).extras["timing"]
    ir = simgpu.launch(copy, (n // 256,), (256,), args, executor="ir").extras["timing"]
    assert ptx.cycles == pytest.approx(ir.cycles, rel=0.05)
    assert ptx.bottleneck.split(" (")[0] == ir.bottleneck.split(" (")[0]
    assert ptx.time_s > 2 * 4 * n / H200.dram.bandwidth_bytes_per_s


@pytest.mark.parametrize("kernel", [fma_loop, divergent])
def test_loop_cutting_error_is_small_on_the_compiled_path(kernel):
    """A 256-iteration loop recorded for 16 and 32 iterations and extrapolated: within 3 %
    of recording every iteration (the IR path's bound, tests/test_timing_sampling.py)."""
    n = 132 * 8 * 32
    args = (_f32(n), np.zeros(n, np.float32), np.int32(256))
    full = _predict(kernel, (n // 32,), (32,), args, timing_detail="full").extras["timing"]
    auto = _predict(kernel, (n // 32,), (32,), args).extras["timing"]
    assert auto.loop_factors and not full.loop_factors
    assert auto.cycles == pytest.approx(full.cycles, rel=0.03)


def test_divergent_halves_take_about_twice_the_uniform_time():
    """Lane-parity divergence runs both loops one after the other on every warp; block-parity
    branching runs one loop per warp: the compiled path sees the same ~2x as the IR path."""
    n = 132 * 8 * 256
    args = (_f32(n), np.zeros(n, np.float32), np.int32(256))
    div = _predict(divergent, (n // 256,), (256,), args).extras["timing"]
    uni = _predict(uniform, (n // 256,), (256,), args).extras["timing"]
    assert 1.6 < div.cycles / uni.cycles < 2.4


def test_a_tma_load_and_the_wait_on_its_mbarrier_share_a_pseudo_register():
    """A TMA load's data is what waits on the same mbarrier wait for: the pseudo register is
    named per mbarrier address (the address register's value at each execution), so a
    pipeline's wait on stage 0 does not wait for the copy into stage 1 issued after it."""
    from types import SimpleNamespace

    import numpy as np

    from simgpu.timing.ptx_trace import PtxOp, mbarrier_tag
    m = parse(""".version 8.0
.target sm_90a
.address_size 64
.visible .entry k(.param .u64 p)
{
 .reg .b32 %r<9>; .reg .b64 %rd<4>; .reg .pred %p<2>;
 cp.async.bulk.tensor.2d.shared::cta.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4+8];
 mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r5], %r6;
 ret;
}""")
    tma, wait = [PtxOp(s, "k", (), None) for s in m.functions["k"].body if not isinstance(s, tuple)][:2]
    assert tma.dsts == ("k:%tma",) and "k:%tma" in wait.srcs

    def ev(reg, value):                      # an execution whose first lane holds `value`
        return SimpleNamespace(state=SimpleNamespace(regs={("k", reg): np.array([value, 7, 7], np.uint32)}),
                               lanes=np.array([0, 1]))
    a = tma.at_mbarrier(mbarrier_tag(tma.mbar, ev("%r4", 1000)))          # mbarrier 1008
    b = tma.at_mbarrier(mbarrier_tag(tma.mbar, ev("%r4", 1008)))          # mbarrier 1016
    w = wait.at_mbarrier(mbarrier_tag(wait.mbar, ev("%r5", 1008)))
    assert a.dsts == ("k:%tma@1008",) and b.dsts == ("k:%tma@1016",) and "k:%tma@1008" in w.srcs
    assert tma.at_mbarrier(1008) is a and a.id == tma.id and a.tag == 1008 and tma.tag is None
    assert mbarrier_tag(wait.mbar, SimpleNamespace(state=SimpleNamespace(regs={}), lanes=None)) is None
