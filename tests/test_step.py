"""The warp stepper API: one warp of one block, one instruction at a time.

Each test states what a teacher relies on: which lanes are active where, where they rejoin,
what each lane holds, what memory requests look like, and that bad requests say clearly
what is wrong."""
import inspect

import numpy as np
import pytest
from numba import cuda, float32

from simgpu import settings  # noqa: E402
import simgpu
from simgpu.stepper import StepError, Stepper, step


@pytest.fixture(autouse=True)
def ir_stepper():
    """These tests are about the stepper on simgpu's IR (executor="ir"), whatever the machine's
    default executor; the stepper on the compiled code is tested in test_step_ptx.py."""
    with settings.override(executor="ir"):
        yield


def parity(x, out):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        if i % 2 == 0:
            v = v * 2.0
        else:
            v = v + 1.0
        out[i] = v


def line_of(fn, text):
    src, first = inspect.getsourcelines(fn)
    return first + next(k for k, t in enumerate(src) if text in t)


def parity_args(n=128):
    x = np.arange(n, dtype=np.float32)
    return x, np.zeros_like(x)


def test_step_returns_a_stepper_at_the_start():
    """Before any step the state shows the first line to run, every lane of the warp active,
    an empty stack, and the scalar parameters only."""
    st = step(parity, 2, 64, parity_args())
    assert isinstance(st, Stepper) and st.pos == 0
    s = st.state
    assert (s.step, s.line, s.active_mask, s.stack, s.values, s.memory) == \
        (0, line_of(parity, "i = cuda.grid(1)"), 0xFFFFFFFF, [], {}, None)
    assert s.source.strip() == "i = cuda.grid(1)"
    assert s.simt_efficiency == 1.0 and not s.done


def test_an_if_on_lane_parity_runs_both_sides_with_half_the_lanes():
    """The then-side runs with the even lanes, the else-side with the odd lanes, and after
    the if all 32 lanes are active again."""
    st = step(parity, 2, 64, parity_args())
    assert st.run(until_line=line_of(parity, "v * 2.0")).active_mask == 0x55555555
    assert st.run(until_line=line_of(parity, "v + 1.0")).active_mask == 0xAAAAAAAA
    assert st.run(until_line=line_of(parity, "out[i] = v")).active_mask == 0xFFFFFFFF


def test_the_branch_step_says_which_lanes_take_the_if_side():
    st = step(parity, 2, 64, parity_args())
    s = st.run(until_line=line_of(parity, "if i % 2 == 0"))
    assert (s.kind, s.active_mask, s.taken) == ("if", 0xFFFFFFFF, 0x55555555)


def test_the_stack_holds_each_enclosing_if_its_mask_and_where_lanes_rejoin():
    """Inside the inner if: two entries, outermost first; the inner one rejoins at the store,
    the outer one at the end of the kernel (None)."""
    st = step(parity, 2, 64, parity_args())
    s = st.run(until_line=line_of(parity, "v * 2.0"))
    outer, inner = s.stack
    assert (outer.kind, outer.line, outer.mask, outer.rejoin_line) == \
        ("if", line_of(parity, "if i < x.size"), 0xFFFFFFFF, None)
    assert (inner.kind, inner.line, inner.mask, inner.rejoin_line) == \
        ("if", line_of(parity, "if i % 2"), 0xFFFFFFFF, line_of(parity, "out[i] = v"))


def test_values_are_per_lane_arrays_of_the_chosen_warp():
    """Warp 1 of block 1 (64 threads per block) holds global indices 96..127."""
    st = step(parity, 2, 64, parity_args(), block_idx=(1, 0, 0), warp=1)
    s = st.run()
    assert s.values["i"].tolist() == list(range(96, 128))
    expect = np.where(np.arange(96, 128) % 2 == 0, np.arange(96, 128) * 2.0, np.arange(96, 128) + 1.0)
    assert s.values["v"].tolist() == expect.tolist()
    assert set(s.values) == {"i", "v"}


def test_block_idx_may_be_an_int_or_a_short_tuple():
    a = step(parity, (2, 2), 32, parity_args(), block_idx=(1, 1)).run()
    assert a.values["i"].tolist() == list(range(32, 64))        # grid(1) is x only: block x = 1
    assert step(parity, 4, 32, parity_args(), block_idx=3).run().values["i"][0] == 96


def test_back_undoes_a_step_exactly():
    st = step(parity, 2, 64, parity_args())
    st.run(until_line=line_of(parity, "v * 2.0"))
    before = st.state
    st.step()
    after = st.back()
    assert (after.step, after.line, after.active_mask) == (before.step, before.line, before.active_mask)
    assert all(np.array_equal(after.values[k], before.values[k]) for k in before.values)


def test_next_line_runs_a_whole_line_and_stops_on_the_next_one():
    st = step(parity, 2, 64, parity_args())
    lines = [st.next_line().line for _ in range(4)]
    assert lines == [line_of(parity, t) for t in ("i = cuda.grid", "if i < x.size", "v = x[i]", "if i % 2")]
    assert st.peek().line == line_of(parity, "v * 2.0")


def test_run_without_a_line_goes_to_the_end():
    st = step(parity, 2, 64, parity_args())
    s = st.run()
    assert s.done and st.done and s.step == len(st) and st.peek() is None


def test_simt_efficiency_and_cost_match_the_report_for_a_one_warp_launch():
    """The stepper weights instructions as the Report counts them, so for a launch of one
    warp the two agree exactly."""
    args = parity_args(32)
    rep = simgpu.launch(parity, 1, 32, parity_args(32))
    s = step(parity, 1, 32, args).run()
    assert s.simt_efficiency == pytest.approx(rep.simt_efficiency, abs=1e-12)
    assert s.inst_executed == rep.metrics["smsp__inst_executed.sum"]


def test_arrays_are_updated_as_a_launch_updates_them():
    x, out = parity_args(64)
    st = step(parity, 1, 64, (x, out))
    assert out[:4].tolist() == [0.0, 2.0, 4.0, 4.0] and st.report is not None


def strided(x, out, stride):
    sm = cuda.shared.array(1024, float32)
    t = cuda.threadIdx.x
    sm[t * stride] = 1.0
    out[t] = x[t * stride] + sm[0]


@pytest.mark.parametrize("stride, sectors, wavefronts", [(1, 4, 1), (2, 8, 2), (32, 32, 32)])
def test_memory_shows_sectors_of_global_and_banks_of_shared_requests(stride, sectors, wavefronts):
    """Stride s over float32: global loads touch 4*s sectors (up to 32); shared stores hit
    min(s, 32)-way bank conflicts; reading one shared word is a broadcast."""
    x = np.ones(1024, np.float32)
    st = step(strided, 1, 32, (x, np.zeros(32, np.float32), stride))
    st.run(until_line=line_of(strided, "sm[t * stride] = 1.0"))
    sh = st.state.memory
    assert (sh.space, sh.kind, sh.wavefronts, sh.conflicts) == ("shared", "st", wavefronts, wavefronts - 1)
    assert sh.banks.tolist() == [(t * stride) % 32 for t in range(32)]
    st.step()
    while st.state.memory is None or st.state.memory.space != "global":
        st.step()
    g = st.state.memory
    assert (g.kind, g.n_lanes, len(g.sectors), g.ideal_sectors) == ("ld", 32, sectors, 4)
    while st.state.memory is None or st.state.memory.space != "shared":
        st.step()
    assert (st.state.memory.wavefronts, st.state.memory.conflicts) == (1, 0)


def trips(out):
    t = cuda.threadIdx.x
    acc = 0
    for k in range(t % 4):
        acc += 1
    out[t] = acc


def test_a_per_lane_loop_idles_lanes_that_are_done_and_tracks_the_loop_variable():
    st = step(trips, 1, 32, (np.zeros(32, np.int64),))
    body = line_of(trips, "acc += 1")
    masks = []
    while True:
        s = st.run(until_line=body)
        if s.line != body:
            break
        masks.append(s.active_mask)
    lane = np.arange(32)
    assert masks == [sum(1 << int(l) for l in lane[lane % 4 > k]) for k in range(3)]
    assert st.state.values["acc"].tolist() == (lane % 4).tolist()
    assert st.state.assigned["k"] == sum(1 << int(l) for l in lane[lane % 4 > 0])


def branch_only(out):
    t = cuda.threadIdx.x
    if t < 8:
        y = t * 10
        out[t] = y


def test_a_variable_set_in_a_branch_is_assigned_only_in_the_lanes_that_ran_it():
    s = step(branch_only, 1, 32, (np.zeros(32, np.int64),)).run()
    assert s.assigned["y"] == 0xFF and s.values["y"][:8].tolist() == [0, 10, 20, 30, 40, 50, 60, 70]


def tree(x, out):
    sm = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    sm[t] = x[t]
    cuda.syncthreads()
    s = 32
    while s > 0:
        if t < s:
            sm[t] += sm[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        out[0] = sm[0]


def test_shared_arrays_show_the_whole_blocks_contents_including_other_warps_stores():
    """Warp 0 watches sm after the first store: warp 1's values are there too, because the
    rest of the block runs alongside."""
    x = np.arange(64, dtype=np.float32)
    st = step(tree, 1, 64, (x, np.zeros(1, np.float32)), warp=0)
    st.run(until_line=line_of(tree, "cuda.syncthreads()"))
    assert st.value("sm").tolist() == x.tolist()
    st.run()
    assert st.value("sm")[0] == x.sum()


def test_a_partial_warp_has_lanes_without_threads():
    s = step(parity, 1, 40, parity_args(40), warp=1)
    assert (s.state.active_mask, s.valid) == (0xFF, 0xFF)
    assert s.run().values["i"][:8].tolist() == list(range(32, 40))


@simgpu.jit(device=True)
def relu(v):
    if v > 0:
        return v
    return 0.0


def uses_device(x, out):
    i = cuda.grid(1)
    out[i] = relu(x[i])


def test_inlined_device_functions_are_stepped_into_with_prefixed_names():
    x = np.arange(-16, 16, dtype=np.float32)
    st = step(uses_device, 1, 32, (x, np.zeros(32, np.float32)))
    lines = {s.line for s in st.steps}
    assert line_of(relu.py_func, "if v > 0") in lines
    assert "relu1.v" in st.variables
    assert st.run().values["relu1.v"].tolist() == x.tolist()


def test_find_line_names_a_line_by_its_text():
    st = step(parity, 1, 32, parity_args(32))
    assert st.find_line("out[i] = v") == line_of(parity, "out[i] = v")
    with pytest.raises(StepError, match="contains 'nothing like this'"):
        st.find_line("nothing like this")


def test_states_lists_every_state_and_goto_reaches_any():
    st = step(parity, 1, 32, parity_args(32))
    states = st.states()
    assert len(states) == len(st) + 1 and [s.step for s in states] == list(range(len(st) + 1))
    assert st.goto(5).line == states[5].line and st.reset().step == 0


# -- bad requests -----------------------------------------------------------------------------
@pytest.mark.parametrize("kw, msg", [
    (dict(block_idx=(2, 0, 0)), r"block \(2, 0, 0\) is not in the grid \(2, 1, 1\)"),
    (dict(block_idx=(0, 1)), r"block \(0, 1, 0\) is not in the grid"),
    (dict(warp=2), r"warp 2 is not in the block: a block of 64 threads has 2 warp\(s\), numbered 0..1"),
    (dict(warp=-1), r"warp -1 is not in the block"),
])
def test_asking_for_a_block_or_warp_the_launch_lacks_is_a_clear_error(kw, msg):
    with pytest.raises(StepError, match=msg):
        step(parity, 2, 64, parity_args(), **kw)


def test_errors_are_simgpu_errors_and_value_errors():
    assert issubclass(StepError, simgpu.SimGPUError) and issubclass(StepError, ValueError)


def test_a_line_with_no_code_is_refused_with_the_lines_that_have_code():
    st = step(parity, 1, 32, parity_args(32))
    first = line_of(parity, "def parity")
    with pytest.raises(StepError, match=f"line {first} has no code in kernel 'parity' "
                                        rf"\(lines with code: {first + 1}-{first + 5}, {first + 7}-{first + 8}\)"):
        st.run(until_line=first)


def test_an_unknown_variable_names_the_variables_there_are():
    st = step(parity, 1, 32, parity_args(32))
    with pytest.raises(StepError, match=r"no variable 'w' in kernel 'parity' \(variables: i, v\)"):
        st.value("w")
    with pytest.raises(StepError, match=r"'v' has no value yet at step 0 \(it is first assigned on line"):
        st.value("v")


def test_stepping_past_either_end_says_so():
    st = step(parity, 1, 32, parity_args(32))
    with pytest.raises(StepError, match="already at the start"):
        st.back()
    st.run()
    with pytest.raises(StepError, match="the warp has finished"):
        st.step()
    with pytest.raises(StepError, match="step 99 does not exist"):
        st.goto(99)


def faults(x):
    i = cuda.grid(1)
    x[i] = 1.0
    if cuda.blockIdx.x == 1:
        x[i + 1000] = 2.0


def test_a_fault_in_another_block_keeps_this_warps_record_and_reports_the_error():
    st = step(faults, 2, 32, (np.zeros(64, np.float32),), block_idx=0)
    s = st.run()
    assert isinstance(st.error, simgpu.KernelError) and s.error is st.error
    assert "out of bounds" in str(s.error)
