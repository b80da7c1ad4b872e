"""simgpu.ptx: mbarrier (init, arrive, test_wait/try_wait, parity) on .shared::cta, per the PTX
ISA's phase semantics (simgpu/ptx/ops_mbarrier.py), on hand-written PTX."""
import numpy as np
import pytest

from simgpu.errors import SimGPUError
from simgpu.ptx.parser import parse
from simgpu.ptx.runner import run

HEAD = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out_p)
{
  .reg .pred %p<8>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<20>;
  .shared .align 8 .b64 bar;
  .shared .align 8 .b64 bar2;
  .shared .align 8 .b64 bar3;
  ld.param.u64 %rd1, [out_p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r13, %ctaid.x;
  mov.u32 %r15, %ntid.x;
  mad.lo.u32 %r14, %r13, %r15, %r1;
  mul.wide.u32 %rd2, %r14, 24;
  add.s64 %rd3, %rd1, %rd2;
  mov.u32 %r2, bar;
  mov.u32 %r10, bar2;
  mov.u32 %r16, bar3;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $SKIP;
  mov.u32 %r11, 64;
  mbarrier.init.shared.b64 [%r2], %r11;
  mov.u32 %r11, 16;
  mbarrier.init.shared::cta.b64 [%r10], %r11;
$SKIP:
  bar.sync 0;
"""

PHASES = HEAD + """
  mov.u64 %rd4, 0;
  setp.lt.u32 %p2, %r1, 40;
  @%p2 mbarrier.arrive.shared::cta.b64 %rd4, [%r2];
  mbarrier.test_wait.shared::cta.b64 %p3, [%r2], %rd4;
  selp.u32 %r3, 1, 0, %p3;
  st.global.u32 [%rd3], %r3;
  @!%p2 mbarrier.arrive.release.cta.shared::cta.b64 %rd4, [%r2];
  mbarrier.try_wait.shared::cta.b64 %p3, [%r2], %rd4;
  selp.u32 %r3, 1, 0, %p3;
  st.global.u32 [%rd3+4], %r3;
  mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r2], 0;
  selp.u32 %r3, 1, 0, %p4;
  st.global.u32 [%rd3+8], %r3;
  mbarrier.test_wait.parity.shared::cta.b64 %p4, [%r2], 1;
  selp.u32 %r3, 1, 0, %p4;
  st.global.u32 [%rd3+12], %r3;
  mbarrier.arrive.shared::cta.b64 %rd5, [%r10];
  setp.lt.u32 %p5, %r1, 8;
  mov.u32 %r12, 2;
  @%p5 mbarrier.arrive.shared::cta.b64 %rd5, [%r10], %r12;
  mbarrier.try_wait.shared::cta.b64 %p3, [%r10], %rd5;
  selp.u32 %r3, 1, 0, %p3;
  st.global.u32 [%rd3+16], %r3;
  setp.lt.u32 %p6, %r1, 4;
  @%p6 mbarrier.arrive.shared::cta.b64 %rd5, [%r10];
  mbarrier.test_wait.shared::cta.b64 %p3, [%r10], %rd5;
  @!%p6 mbarrier.test_wait.parity.shared::cta.b64 %p3, [%r10], 0;
  selp.u32 %r3, 1, 0, %p3;
  st.global.u32 [%rd3+20], %r3;
  ret;
}
"""


def test_phases_arrivals_and_waits():
    out = np.full((2 * 64, 6), 7, np.uint32)
    run(PHASES, "k", 2, 64, (out,))
    t = np.arange(128) % 64
    assert (out[:, 0] == 0).all()          # 40 of 64 arrived: the phase is not complete
    assert (out[:, 1] == 1).all()          # all 64: phase 0 completed (each lane's own state)
    assert (out[:, 2] == 1).all()          # parity 0 (phase 0) completed ...
    assert (out[:, 3] == 0).all()          # ... phase 1 (parity 1) has not
    # bar2 (16 per phase): 64 arrivals complete phases 0-3 in one instruction; then 8 lanes
    # with count 2 complete phase 4 exactly: every lane's phase is complete
    assert (out[:, 4] == 1).all()
    # 4 more arrivals start phase 5: their phase is not complete; the others see parity 0
    # (phase 4) completed
    np.testing.assert_array_equal(out[:, 5], np.where(t < 4, 0, 1))


def test_parser_reads_shared_cta_as_shared():
    fn = parse(PHASES).functions["k"]
    ins = [i for i in fn.body if getattr(i, "opcode", "") == "mbarrier"]
    assert ins and all("shared" in i.mods and "shared::cta" not in i.mods for i in ins)


BAD = HEAD + """
  mov.u32 %r12, {count};
  {guard} mbarrier.arrive.shared::cta.b64 %rd5, [{which}], %r12;
  ret;
}}
"""


@pytest.mark.parametrize("count,guard,which,msg", [
    (17, "@%p1", "%r10", "larger than the arrivals pending"),      # pending is 16
    (1, "", "%r16", "not initialised"),                             # bar3: never initialised
])
def test_undefined_arrivals_are_errors(count, guard, which, msg):
    src = BAD.replace("{count}", str(count)).replace("{guard}", guard).replace("{which}", which)
    src = src.replace("}}", "}")
    with pytest.raises(SimGPUError, match=msg):
        run(src, "k", 1, 32, (np.zeros((32, 6), np.uint32),))


def test_arrivals_in_lane_order_match_a_sequential_reference():
    """The vectorised arrive (segmented prefix sums) against one arrival at a time."""
    from simgpu.ptx.ops_mbarrier import _arrive, _valid, pack, unpack

    class Ex:
        pass

    rng = np.random.default_rng(5)
    for trial in range(20):
        n_obj = 3
        expected = rng.integers(1, 6, n_obj)
        pending = np.array([rng.integers(1, e + 1) for e in expected])
        phase = rng.integers(0, 9, n_obj)
        view = pack(pending, expected, phase).astype(np.uint64)
        ex = Ex()
        _valid(ex, view)[:] = True
        idx = rng.integers(0, n_obj, 40)
        c = np.ones(40, np.int64)
        ref_view, ref_state = [list(t) for t in zip(pending, expected, phase)], []
        for k in idx:                                   # one arrival at a time, in lane order
            p, e, ph = ref_view[k]
            ref_state.append((p, e, ph))
            p -= 1
            if p == 0:
                p, ph = e, ph + 1
            ref_view[k] = [p, e, ph]
        state = _arrive(ex, None, view, idx, c, False)
        got = np.stack(unpack(state), axis=1)
        np.testing.assert_array_equal(got, np.array(ref_state), err_msg=f"trial {trial}")
        np.testing.assert_array_equal(np.stack(unpack(view), axis=1), np.array(ref_view))
