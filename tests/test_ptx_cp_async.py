"""simgpu.ptx's cp.async (ops_async.py): zero fill, commit groups, wait_group N / wait_all, a
missing wait visible as poison, memory events for both levels; against numpy and the bytes an
H200 returned for the same kernel (validation/data/h200_tensor_cores.npz)."""
from __future__ import annotations

import importlib.util
import os

import numpy as np

from simgpu.events import Observer
import pytest

from simgpu.errors import KernelError
from simgpu.ptx.runner import run

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# validation/tensor_cores/kernels.py under its own name: a module called `kernels` left in
# sys.modules would shadow validation/holdout/kernels.py for tests/test_sanitize_suite.py
_spec = importlib.util.spec_from_file_location(
    "simgpu_tensor_core_kernels", os.path.join(ROOT, "validation", "tensor_cores", "kernels.py"))
K = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(K)

NPZ = os.path.join(ROOT, "validation", "data", "h200_tensor_cores.npz")
PREFILL, POISON = 0xA5, 0xFF


def expected(src, first=True, second=True, poison_first=False, poison_second=False):
    """The kernel's 1536 shared bytes: group 1 = three copies with src-size lane % 17 / % 5 / % 9
    (zero fill after), group 2 = 4 bytes per lane into bytes 640.. of region 2."""
    sb = src.view(np.uint8)
    e = np.full(1536, PREFILL, np.uint8)
    for lane in range(32):
        for base, size, k in ((0, 16, lane % 17), (512, 4, lane % 5), (1024, 8, lane % 9)):
            d = base + lane * size
            e[d:d + size] = POISON if poison_first else 0
            if first and not poison_first:
                e[d:d + k] = sb[d:d + k]
    for lane in range(32):
        d = 640 + 4 * lane
        if poison_second:
            e[d:d + 4] = POISON
        elif second:
            e[d:d + 4] = sb[768 + 4 * lane:772 + 4 * lane]
    return e


def _run(ptx, src):
    out = np.zeros(384, np.uint32)
    run(ptx, "k", 1, 32, (src, out))
    return out.view(np.uint8)


def _src(seed=0):
    return np.random.default_rng(seed).integers(0, 1 << 32, 512, dtype=np.uint64).astype(np.uint32)


def test_zero_fill_and_groups_against_numpy_and_the_h200():
    src = _src()
    np.testing.assert_array_equal(_run(K.CP_ASYNC_PTX, src), expected(src))
    if not os.path.exists(NPZ):
        pytest.skip("no stored H200 data")
    z = np.load(NPZ)
    src, want = z["cp_async/src"], z["cp_async/out"]
    np.testing.assert_array_equal(expected(src), want.view(np.uint8))   # the H200 agrees
    np.testing.assert_array_equal(_run(K.CP_ASYNC_PTX, src.copy()), want.view(np.uint8))


def test_a_missing_wait_reads_poison_not_the_data():
    src = _src(1)
    got = _run(K.CP_ASYNC_PTX.replace(" cp.async.wait_group 0;\n", ""), src)
    np.testing.assert_array_equal(got, expected(src, poison_first=True, poison_second=True))


def test_wait_group_1_leaves_the_newest_group_pending():
    src = _src(2)
    got = _run(K.CP_ASYNC_PTX.replace("cp.async.wait_group 0;", "cp.async.wait_group 1;"), src)
    np.testing.assert_array_equal(got, expected(src, poison_second=True))


def test_wait_all_commits_the_open_group_too():
    """wait_all = commit_group + wait_group 0: copies not yet committed land as well."""
    src = _src(3)
    ptx = K.CP_ASYNC_PTX.replace(" cp.async.commit_group;\n cp.async.wait_group 0;",
                                 " cp.async.wait_all;")
    assert ptx != K.CP_ASYNC_PTX
    np.testing.assert_array_equal(_run(ptx, src), expected(src))
    ptx = K.CP_ASYNC_PTX.replace(" cp.async.commit_group;\n cp.async.wait_group 0;",
                                 " cp.async.wait_group 0;")
    np.testing.assert_array_equal(_run(ptx, src), expected(src, poison_second=True))


def test_src_size_larger_than_cp_size_is_an_error():
    ptx = K.CP_ASYNC_PTX.replace("rem.u32 %r6, %r1, 17;", "add.u32 %r6, %r1, 17;")
    with pytest.raises(KernelError, match="src-size .* larger than its cp-size 16"):
        _run(ptx, _src())


class _Mem(Observer):
    def __init__(self):
        self.ev = []

    def mem(self, ev):
        if ev.inst.attrs["opcode"] == "cp":
            self.ev.append((ev.space, ev.kind, ev.size, ev.mask.n_threads))


def test_memory_events_count_both_levels():
    """Each cp.async reports a global load (lanes with src-size > 0) when it executes and a shared
    store of its cp-size bytes per lane when its data lands: the memory model counts the bytes
    at each level, and a sanitizer sees the destination written at the wait."""
    obs = _Mem()
    out = np.zeros(384, np.uint32)
    run(K.CP_ASYNC_PTX, "k", 1, 32, (_src(), out), observers=[obs])
    nz = lambda m: sum(1 for lane in range(32) if lane % m)  # noqa: E731
    assert obs.ev == [("global", "ld", 16, nz(17)), ("global", "ld", 4, nz(5)),
                      ("global", "ld", 8, nz(9)), ("global", "ld", 4, 32),
                      ("shared", "st", 16, 32), ("shared", "st", 4, 32),    # at the wait
                      ("shared", "st", 8, 32), ("shared", "st", 4, 32)]
    obs = _Mem()
    run(K.CP_ASYNC_PTX.replace(" cp.async.wait_group 0;\n", ""), "k", 1, 32, (_src(), out),
        observers=[obs])
    assert [e for e in obs.ev if e[0] == "shared"] == []          # never landed: never written


def test_cache_hint_modifiers_parse():
    from simgpu.ptx.parser import parse
    m = parse(""".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p)
{
 .reg .b32 %r<4>;
 .reg .b64 %rd<4>;
 cp.async.cg.shared::cta.global.L2::128B [%r1], [%rd1], 16, %r2;
 ret;
}""")
    ins = m.functions["k"].body[0]
    assert ins.mods == ("async", "cg", "shared", "global", "L2::128B")


def test_ignore_src_writes_zeros():
    """cp.async ... 16, p: a true ignore-src predicate reads nothing and writes 16 zeros."""
    ptx = K.CP_ASYNC_PTX.replace(" rem.u32 %r6, %r1, 17;\n cp.async.cg.shared.global [%r5], [%rd4], 16, %r6;",
                                 " setp.lt.u32 %p1, %r1, 8;\n cp.async.cg.shared.global [%r5], [%rd4], 16, %p1;")
    ptx = ptx.replace(" .reg .b32 %r<40>;", " .reg .b32 %r<40>;\n .reg .pred %p<2>;")
    src = _src(4)
    got = _run(ptx, src)
    want = expected(src)
    sb = src.view(np.uint8)
    for lane in range(32):
        want[16 * lane:16 * lane + 16] = 0 if lane < 8 else sb[16 * lane:16 * lane + 16]
    np.testing.assert_array_equal(got, want)


def test_cp_async_mbarrier_arrive_is_refused_by_name():
    ptx = K.CP_ASYNC_PTX.replace(" cp.async.wait_group 0;", " cp.async.mbarrier.arrive.shared.b64 [%r2];")
    with pytest.raises(Exception, match="cp.async.mbarrier.arrive"):
        _run(ptx, _src())


def test_whole_or_nothing_copies_match_the_byte_rules():
    """Lanes that read all of their 16 bytes or none (src-size 16 or 0: ops_async moves one
    16-byte element a lane) land as the byte-wise rules say: data, or zeros for src-size 0;
    poison before the wait."""
    ptx = K.CP_ASYNC_PTX.replace("rem.u32 %r6, %r1, 17;", "and.b32 %r6, %r1, 16;")
    src = _src(3)
    want = expected(src)
    sb = src.view(np.uint8)
    for lane in range(32):
        k = lane & 16
        want[16 * lane:16 * lane + 16] = 0
        want[16 * lane:16 * lane + k] = sb[16 * lane:16 * lane + k]
    np.testing.assert_array_equal(_run(ptx, src), want)
    got = _run(ptx.replace(" cp.async.wait_group 0;\n", ""), src)
    np.testing.assert_array_equal(got[:512], np.full(512, POISON, np.uint8))
