"""Warps alike share one program (simgpu/timing/program.py, issue 26) and a uniform address's
memory facts are made without lane arrays (simgpu/timing/memfacts.py): neither may change a
prediction.  Differential: kernels with shared memory, atomics, divergent loops and barriers
run with sharing on and off (``program.SHARE_ALIKE``); every metric must be the same bit for
bit.  Unit: the warp classes of known activity and facts; the uniform facts against the
general rules on the same (broadcast) addresses."""
from __future__ import annotations

import types

import numpy as np
import pytest
from numba import cuda

import simgpu
from simgpu.sass.toolchain import compiled_path_available
from simgpu.timing import memfacts, program
from simgpu.timing.program import warp_classes

from test_ptx_blocks import VCASES, _numbers, collatz

needs_ptx = pytest.mark.skipif(not compiled_path_available()[0], reason="needs numba-cuda and ptxas")

CASES = ("matmul_tiled_n32", "hist_shared_L2", "hist_global_4bins_L2", "nbody_forces_n512", "softmax_rows_5x700_f32",
         "divergent_lane_parity", "spmv_csr_vector_f32", "nc_mandel_f64_48x32_it64")


def _metrics(kernel, grid, block, host, share):
    args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in host)
    old = program.SHARE_ALIKE
    program.SHARE_ALIKE = share
    try:
        rep = simgpu.launch(kernel, grid, block, args, executor="ptx", memory=True, timing=True)
    finally:
        program.SHARE_ALIKE = old
    return _numbers(rep.metrics)


def assert_same(kernel, grid, block, host):
    m0 = _metrics(kernel, grid, block, host, False)
    m1 = _metrics(kernel, grid, block, host, True)
    assert m0 == m1
    assert m1.get("gpu__time_duration.sum", 0) > 0


@needs_ptx
@pytest.mark.parametrize("name", [c for c in CASES if c in VCASES])
def test_validation_kernels_same_with_shared_programs(name):
    c = VCASES[name]
    assert_same(c["kernel"], tuple(c["grid"]), tuple(c["block"]), c["args"](np.random.default_rng(0)))


@needs_ptx
def test_collatz_divergent_warps_same():
    n0 = np.arange(1, 193, dtype=np.int64) * 7919 + 3
    assert_same(cuda.jit(collatz), (2,), (96,), (n0, np.zeros(192, np.int64)))


def test_warp_classes_group_alike_warps():
    acts = np.array([[1, 1, 1, 1, 0],
                     [1, 1, 0, 1, 0],
                     [1, 1, 1, 1, 1]], dtype=bool)
    mem = {"sectors": np.array([4, 4, 4, 8, 4]), "lines": np.array([1, 1, 1, 1, 1])}
    # warps 0 and 1 alike; 3 differs from them by its sectors; 2 and 4 by their activity
    assert warp_classes(acts, [mem]) == [(0, [0, 1]), (2, [2]), (3, [3]), (4, [4])]
    mem["l1"] = np.array([2, 3, 2, 2, 2])       # the L1 data path's cycles tell warps apart too
    assert warp_classes(acts, [mem]) == [(0, [0]), (1, [1]), (2, [2]), (3, [3]), (4, [4])]
    del mem["l1"]
    atom = {"sectors": np.ones(5), "lines": np.ones(5), "serial": np.ones(5), "hot": np.full(5, 7),
            "unit_load": [((1, 2.0),), ((1, 2.0),), (), ((1, 2.0),), ((3, 1.0),)]}
    assert warp_classes(acts, [atom]) == [(0, [0, 1, 3]), (2, [2]), (4, [4])]
    atom["unit_load"][1] = ((1, 3.0),)         # the atomics' unit passes tell warps apart
    assert warp_classes(acts, [atom]) == [(0, [0, 3]), (1, [1]), (2, [2]), (4, [4])]
    old = program.SHARE_ALIKE
    program.SHARE_ALIKE = False
    try:
        assert warp_classes(acts, [mem]) == [(w, [w]) for w in range(5)]
    finally:
        program.SHARE_ALIKE = old


def _event(space, kind, size, addr, mask):
    return types.SimpleNamespace(space=space, kind=kind, size=size, addr=addr,
                                 mask=types.SimpleNamespace(arr=mask))


@pytest.mark.parametrize("space,size", [("shared", 4), ("shared", 8), ("shared", 16), ("const", 4),
                                        ("global", 4), ("global", 8)])
def test_uniform_address_facts_as_general_rules(space, size):
    rng = np.random.default_rng(3)
    mask = rng.random(6 * 32) < 0.6
    mask[2 * 32:3 * 32] = False                 # a warp with no active lane
    lanes = np.arange(6 * 32).reshape(6, 32)
    act = mask.reshape(6, 32).any(axis=1)
    for kind, kw in (("ld", {}), ("st", {}), ("ld", {"line_cycles": 0.394, "tag_banks": 4}),
                     ("st", {"line_cycles": 2.6, "tag_banks": 4})):
        addr = 4096 + 8 * 37
        fast = memfacts.memory_info(_event(space, kind, size, addr, mask), lanes, act, **kw)
        general = memfacts.memory_info(_event(space, kind, size, np.full(6 * 32, addr, np.int64), mask), lanes, act,
                                       **kw)
        assert fast.keys() == general.keys()
        for k in fast:
            assert fast[k].dtype == general[k].dtype, k
            assert fast[k].tolist() == general[k].tolist(), k
        # the general rules themselves, on addresses not all equal but one per warp
        per_warp = np.repeat(4096 + 128 * np.arange(6), 32).astype(np.int64)
        got = memfacts.memory_info(_event(space, kind, size, per_warp, mask), lanes, act, **kw)
        for k in fast:
            assert got[k].tolist() == fast[k].tolist(), k


def test_uniform_address_facts_from_the_general_rules():
    """What the uniform facts stand for, counted by the general rules' own functions."""
    mask = np.ones((2, 32), bool)
    mask[1, 5:] = False
    a = np.full((2, 32), 4100, np.int64)
    assert memfacts.distinct_count(a // 32, mask).tolist() == [1, 1]
    assert memfacts.bank_wavefronts(a, mask, 8).tolist() == [2, 2]


def test_compiled_bank_and_distinct_counts_match_numpy():
    """memfacts' compiled per-row counts (what the sampled warps' facts use) against the numpy
    rules they replace, on strided, broadcast, conflicting, random and negative addresses with
    random masks and every access width."""
    rng = np.random.default_rng(26)
    rows = []
    lane = np.arange(32)
    for stride in (0, 1, 2, 4, 8, 12, 16, 32, 64, 128, 132, 4096):
        rows.append(1024 + lane * stride)
    rows.append(np.repeat(np.arange(4) * 128, 8))
    rows.append(rng.integers(0, 4096, 32))
    rows.append(rng.integers(0, 64, 32) * 128)
    rows.append(rng.integers(-64, 64, 32))
    a = np.array(rows, np.int64)
    for trial in range(4):
        mk = rng.random(a.shape) < (1.0, 0.7, 0.2, 0.0)[trial]
        for size in (1, 2, 4, 8, 16):
            for banks, bank_bytes in ((32, 4), (16, 8)):
                ideal = max(1, (size * 32) // (banks * bank_bytes))
                got = memfacts.bank_wavefronts(a, mk, size, banks, bank_bytes)
                want = memfacts._bank_wavefronts_numpy(a, mk, bank_bytes, banks, ideal)
                assert got.tolist() == want.tolist(), (trial, size, banks)
        for d in (1, 32, 128):
            got = memfacts.distinct_count(a // d, mk)
            assert got.tolist() == memfacts._distinct_count_numpy(a // d, mk).tolist(), (trial, d)
    # memory_info's compiled shared-memory path (rows read through `lanes`) against its general
    # one (int32 lane indices take that)
    flat, mflat = a.ravel(), rng.random(a.size) < 0.8
    lanes = np.arange(a.size, dtype=np.int64).reshape(a.shape)[::-1].copy()
    for size in (4, 8, 16):
        for kind in ("ld", "st"):
            ev = _event("shared", kind, size, flat, mflat)
            act = mflat[lanes].any(axis=1)
            fast = memfacts.memory_info(ev, lanes, act)
            general = memfacts.memory_info(ev, lanes.astype(np.int32), act)
            assert fast.keys() == general.keys()
            for k in fast:
                assert fast[k].dtype == general[k].dtype and fast[k].tolist() == general[k].tolist(), k
