"""simgpu.ptx runtime behaviour: errors, warp collectives, atomics, observers, arguments."""
import numpy as np
import pytest

from simgpu._compat import patch_numpy_for_numba

patch_numpy_for_numba()
from numba import cuda, int32  # noqa: E402

from simgpu.errors import KernelError, SimGPUError  # noqa: E402
from simgpu.events import Observer  # noqa: E402
from simgpu.ptx.args import flatten_args  # noqa: E402
from simgpu.ptx.memory import GLOBAL_BASE  # noqa: E402
from simgpu.ptx.runner import launch_numba, run  # noqa: E402


def unguarded(x, out):
    i = cuda.grid(1)
    out[i] = x[i] * 2


def test_out_of_bounds_names_thread_block_and_line():
    """Reading past an array is a KernelError naming the first faulting thread and block and
    the user's source line (the .loc of the faulting load)."""
    x = np.arange(100, dtype=np.int32)
    out = np.zeros(200, np.int32)
    with pytest.raises(KernelError) as e:     # x[100..127]: inside cuMemAlloc's 512-byte rounding
        launch_numba(unguarded, 3, 64, (x, out))
    err = e.value
    assert err.block == (2, 0, 0) and err.thread == (0, 0, 0)
    assert err.loc.endswith(f"test_ptx_runtime.py:{unguarded.__code__.co_firstlineno + 2}")
    assert "out-of-bounds" in str(err)


PTX_HEAD = """.version 8.0
.target sm_90
.address_size 64
"""


def test_unsupported_instruction_is_a_clear_error():
    """An opcode no table knows raises SimGPUError naming the instruction and source line
    when executed -- never a silently wrong result."""
    ptx = PTX_HEAD + """.file 1 "k.py"
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<3>;
    .loc 1 7 0
    frobnicate.b32 %r1, %r2;
    ret;
}"""
    with pytest.raises(SimGPUError, match=r"k.py:7.*frobnicate.b32 %r1, %r2"):
        run(ptx, "k", 1, 32, (np.uint64(0),))


def test_shfl_modes_follow_the_isa():
    """shfl.sync up/down/bfly/idx with clamp and segment masks (width 8 via c = 0x1807 /
    0x1800): values and the in-range predicate follow the PTX ISA pseudo-code."""
    ptx = PTX_HEAD + """
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<5>; .reg .b32 %r<12>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %laneid;
    mul.lo.u32 %r2, %r1, 10;
    shfl.sync.up.b32 %r3|%p1, %r2, 3, 6144, -1;
    shfl.sync.down.b32 %r4|%p2, %r2, 3, 6151, -1;
    shfl.sync.bfly.b32 %r5|%p3, %r2, 5, 31, -1;
    shfl.sync.idx.b32 %r6|%p4, %r2, 9, 6151, -1;
    selp.u32 %r7, 1, 0, %p1;
    selp.u32 %r8, 1, 0, %p2;
    mul.wide.u32 %rd2, %r1, 24;
    add.s64 %rd3, %rd1, %rd2;
    st.global.v2.u32 [%rd3], {%r3, %r4};
    st.global.v2.u32 [%rd3+8], {%r5, %r6};
    st.global.v2.u32 [%rd3+16], {%r7, %r8};
    ret;
}"""
    out = np.zeros((32, 6), np.uint32)
    run(ptx, "k", 1, 32, (out,))
    lane = np.arange(32)
    seg = lane & ~7                                   # width 8 segments
    up_ok = lane - 3 >= seg
    down_ok = lane + 3 <= seg + 7
    np.testing.assert_array_equal(out[:, 0], np.where(up_ok, lane - 3, lane) * 10)
    np.testing.assert_array_equal(out[:, 1], np.where(down_ok, lane + 3, lane) * 10)
    np.testing.assert_array_equal(out[:, 2], (lane ^ 5) * 10)
    np.testing.assert_array_equal(out[:, 3], (seg | 1) * 10)       # 9 & 7 == 1 in segment
    np.testing.assert_array_equal(out[:, 4], up_ok)
    np.testing.assert_array_equal(out[:, 5], down_ok)


def votes(a, out):
    i = cuda.grid(1)
    p = a[i] > 0
    out[i, 0] = cuda.ballot_sync(0xffffffff, p)
    out[i, 1] = cuda.all_sync(0xffffffff, p)
    out[i, 2] = cuda.any_sync(0xffffffff, p)
    out[i, 3] = cuda.activemask()


def test_vote_and_activemask():
    """ballot/all/any over full warps, activemask of a converged warp."""
    a = np.zeros(64, np.int32)
    a[3] = a[40] = 1
    a[32:] = 1
    a[33] = 0
    out = np.zeros((64, 4), np.uint32)
    launch_numba(votes, 1, 64, (a, out))
    assert (out[:32, 0] == 1 << 3).all() and (out[32:, 0] == 0xFFFFFFFF ^ 2).all()
    assert (out[:, 1] == 0).all() and (out[:, 2] == 1).all()
    assert (out[:, 3] == 0xFFFFFFFF).all()


def atomics(a, res, old):
    i = cuda.grid(1)
    old[i, 0] = cuda.atomic.max(res, 0, a[i])
    old[i, 1] = cuda.atomic.min(res, 1, a[i])
    old[i, 2] = cuda.atomic.exch(res, 2, a[i])
    old[i, 3] = cuda.atomic.cas(res, 3, i - 1, i)
    old[i, 4] = cuda.atomic.add(res, 4 + i % 2, a[i])


def test_atomics_serialise_in_lane_order():
    """max/min/exch/cas/add return the value each lane saw when the lanes update in
    increasing lane order (the executor's documented order); final values agree."""
    n = 96
    a = np.random.default_rng(0).integers(-100, 100, n).astype(np.int32)
    res = np.array([-1000, 1000, 7, -1, 0, 0], np.int32)
    old = np.zeros((n, 5), np.int32)
    exp_res, exp_old = res.copy(), np.zeros_like(old)
    for i in range(n):                                # sequential reference
        v = int(a[i])
        exp_old[i] = [exp_res[0], exp_res[1], exp_res[2], exp_res[3], exp_res[4 + i % 2]]
        exp_res[0] = max(exp_res[0], v)
        exp_res[1] = min(exp_res[1], v)
        exp_res[2] = v
        if exp_res[3] == i - 1:
            exp_res[3] = i
        exp_res[4 + i % 2] += v
    launch_numba(atomics, 1, n, (a, res, old))
    np.testing.assert_array_equal(res, exp_res)
    np.testing.assert_array_equal(old, exp_old)


class Recorder(Observer):
    def __init__(self):
        self.instr, self.mems, self.chunks = [], [], []

    def inst(self, ev):
        self.instr.append((ev.ins.attrs["opcode"], len(ev.lanes), ev.ins.id))

    def mem(self, ev):
        self.mems.append(ev)

    def chunk_begin(self, chunk):
        self.chunks.append((chunk.first_block, chunk.n_blocks))


def copy_kernel(x, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = x[i]


def test_observer_events():
    """One load and one store event per chunk with the lanes' device addresses (4-byte,
    global), warps ids by block; chunks cover the grid; the bounds branch reports the lanes
    that executed it."""
    x = np.arange(100, dtype=np.int32)
    out = np.zeros(100, np.int32)
    rec = Recorder()
    launch_numba(copy_kernel, 4, 32, (x, out), observers=[rec], max_lanes=64)
    assert rec.chunks == [(0, 2), (2, 2)]
    loads = [e for e in rec.mems if e.kind == "ld"]
    stores = [e for e in rec.mems if e.kind == "st"]
    assert len(loads) == 2 and len(stores) == 2
    addrs = np.concatenate([e.addr[e.mask.arr] for e in loads])
    np.testing.assert_array_equal(addrs, GLOBAL_BASE + 4 * np.arange(100))
    assert all(e.space == "global" and e.size == 4 for e in rec.mems)
    lanes = np.concatenate([np.flatnonzero(e.mask.arr) + 64 * e.chunk.index for e in loads])
    np.testing.assert_array_equal(lanes // 32, np.arange(100) // 32)     # global warp ids
    last = int(np.flatnonzero(loads[1].mask.arr)[-1])
    assert loads[1].chunk.block_of(last) == (3, 0, 0)
    np.testing.assert_array_equal(out, x)
    ld_lanes = [n for op, n, _ in rec.instr if op == "ld" and n < 64]
    assert 36 in ld_lanes                        # the last chunk: 100 - 64 threads pass


def test_flatten_args_layout():
    """numba's flattening: a 2-d array is meminfo, parent, nitems, itemsize, data, 2 shapes,
    2 strides; Python ints are int64, floats float64; allocations 512-byte aligned, a 512-byte gap after each one's rounding."""
    a = np.zeros((3, 5), np.float32)
    b = np.zeros(7, np.int8)
    vals, mem, _ = flatten_args((a, 3, 2.5, b))
    assert [int(v) for v in vals[:9]] == [0, 0, 15, 4, GLOBAL_BASE, 3, 5, 20, 4]
    assert vals[9].dtype == np.int64 and vals[10].dtype == np.float64
    assert int(vals[15]) == GLOBAL_BASE + 1024 and len(vals) == 9 + 2 + 7
