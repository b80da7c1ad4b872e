"""The compiled coalescer + L1 + L2 + DRAM engine computes exactly what the pure-Python
reference (simgpu/memory/reference.py) states, for random accesses on small caches."""
import numpy as np
from hypothesis import given, settings, strategies as st

from simgpu.memory import counters as C
from simgpu.memory.cache import EngineParams, dirty_bytes, new_l1, new_l2
from simgpu.memory.engine import ATOM, LD, LOCAL_LD, LOCAL_ST, ST, global_event, new_scratch
from simgpu.memory.reference import ReferenceMemory
from simgpu.memory.schedule import Schedule

N_SMS, BLOCKS_PER_SM, WPB = 2, 2, 2          # 8 warps per event


def _setup(sets1, ways1, sets2, ways2, gran, dirty=0):
    prm = EngineParams(line_bytes=128, sector_bytes=32, l1_sets=sets1, l1_ways=ways1, l2_sets=sets2,
                       l2_ways=ways2, dram_access_sectors=gran, dirty_lines=dirty).array()
    assert prm.tolist() == [7, 5, 4, sets1, ways1, sets2, ways2, gran, 32, dirty]
    return prm, new_l1(sets1, ways1, N_SMS), new_l2(sets2, ways2, 128)


@st.composite
def events(draw):
    size = draw(st.sampled_from([1, 2, 4, 8, 16]))
    kind = draw(st.sampled_from([LD, ST, ATOM, LOCAL_LD, LOCAL_ST]))
    n = N_SMS * BLOCKS_PER_SM * WPB * 32
    pattern = draw(st.sampled_from(["affine", "random", "uniform"]))
    if pattern == "affine":
        stride = draw(st.sampled_from([-size, 0, size, 2 * size, 40, 128, -256, 384, 4096]))
        base = draw(st.integers(0, 64)) * size + 4096
        addr = base + np.arange(n, dtype=np.int64) * stride + 4096
    elif pattern == "uniform":
        addr = np.full(n, draw(st.integers(0, 512)) * size, dtype=np.int64)
    else:
        addr = np.array(draw(st.lists(st.integers(0, 255), min_size=n, max_size=n)), dtype=np.int64) * size
    if draw(st.booleans()):
        mask = np.ones(n, dtype=bool)
    else:
        mask = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    halves = draw(st.sampled_from(["", "repeat", "shift"]))
    a2, m2 = addr.reshape(-1, 2, 16), mask.reshape(-1, 2, 16)
    if halves == "repeat":                  # lanes 16..31 repeat 0..15 (a 16-wide block's access)
        a2[:, 1], m2[:, 1] = a2[:, 0], m2[:, 0]
    elif halves == "shift":                 # ... or another row's (threadIdx.y + 1)
        a2[:, 1] = a2[:, 0] + draw(st.sampled_from([-4 * size, -size, size, 64, 4096]))
    return addr + (1 << 20), mask, size, kind


@given(st.lists(events(), min_size=1, max_size=6), st.sampled_from([(1, 2, 2, 2), (2, 4, 4, 2), (4, 2, 1, 4)]),
       st.sampled_from([1, 2, 4]), st.sampled_from([0, 1, 3, 5]))
@settings(max_examples=150, deadline=None)
def test_engine_matches_reference(evs, geometry, gran, dirty):
    """Counters, DRAM traffic and the dirty bytes left in L2 agree exactly, with and without
    a limit on the dirty lines (eager write-back)."""
    prm, (l1tag, l1), (l2, l2r) = _setup(*geometry, gran, dirty)
    ref = ReferenceMemory(prm, N_SMS)
    sched = Schedule(N_SMS, BLOCKS_PER_SM, WPB)
    order, sm_order, warp_sm = sched.order(0, N_SMS * BLOCKS_PER_SM)
    nw = len(order)
    cnt = C.new_table(len(evs))
    clk = np.zeros(2, dtype=np.int64)
    scratch = new_scratch(nw, 128)
    for slot, (addr, mask, size, kind) in enumerate(evs):
        global_event(addr, mask, mask.view(np.uint8), size, kind, order, sm_order, warp_sm, slot, cnt, l1tag, l1,
                     l2, l2r, prm, clk, scratch)
        ref.global_event(addr, mask, size, kind, order, sm_order, warp_sm, slot)
    got_dirty = dirty_bytes(l2, l2r, prm, cnt, C.DIRTY_END)
    assert got_dirty == ref.dirty_bytes()
    for slot in range(len(evs)):
        want = ref.cnt.get(slot, [0] * C.N_COUNTERS)
        got = [int(x) for x in cnt[slot]]
        got[C.DIRTY_END] = got[C.DIRTY_END_BUSY] = 0
        assert got == want, {C.NAMES[i]: (g, w) for i, (g, w) in enumerate(zip(got, want)) if g != w}
