"""The default launch's light shared-memory hazard check (issue 25 item 2): a single-block
shared-memory tile loop missing the barrier at the end of its body (as a FlashAttention tile
loop) warns, naming the racing lines; the same kernel with the barrier is quiet; the setting
turns it off."""
import inspect
import warnings

import numpy as np
import pytest
from numba import cuda, float32

import simgpu
from simgpu import settings
from simgpu.errors import SimGPUWarning

from compiled_path import compiled_path_available

pytestmark = pytest.mark.skipif(not compiled_path_available()[0], reason="needs numba-cuda and ptxas")
T = 64


def tile_loop_racy(x, out, ntiles):
    tile = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    acc = 0.0
    for k in range(ntiles):
        tile[t] = x[k * T + t]              # <- STORE
        cuda.syncthreads()
        acc += tile[(t + 32) % T]           # <- LOAD
        # missing: cuda.syncthreads() -- the next iteration's store races with this load
    out[t] = acc


def tile_loop_ok(x, out, ntiles):
    tile = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    acc = 0.0
    for k in range(ntiles):
        tile[t] = x[k * T + t]
        cuda.syncthreads()
        acc += tile[(t + 32) % T]
        cuda.syncthreads()
    out[t] = acc


def _line(fn, tag):
    src, first = inspect.getsourcelines(fn)
    return first + next(k for k, s in enumerate(src) if f"<- {tag}" in s)


def _launch(kernel):
    x = np.arange(4 * T, dtype=np.float32)
    out = np.zeros(T, np.float32)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        rep = simgpu.launch(kernel, 1, T, (x, out, 4), timing=False, memory=False)
    return rep, [str(m.message) for m in w if issubclass(m.category, SimGPUWarning)]


def test_the_racy_tile_loop_warns_naming_the_lines():
    rep, w = _launch(tile_loop_racy)
    (r,) = rep.races
    f = tile_loop_racy.__code__.co_filename
    assert r["kind"] == "WAR"
    assert r["loc"] == f"{f}:{_line(tile_loop_racy, 'STORE')}"
    assert r["other_loc"] == f"{f}:{_line(tile_loop_racy, 'LOAD')}"
    (msg,) = w
    assert f":{_line(tile_loop_racy, 'STORE')}" in msg and f":{_line(tile_loop_racy, 'LOAD')}" in msg
    assert "may differ" in msg and "check=True" in msg
    assert "Possible shared-memory races" in str(rep)


def test_with_the_barrier_it_is_quiet():
    rep, w = _launch(tile_loop_ok)
    assert rep.races == [] and w == []


def test_the_setting_turns_it_off():
    with settings.override(race_check=False):
        rep, w = _launch(tile_loop_racy)
    assert rep.races == [] and w == []


def blocks_part_ways(x, out, ntiles):
    """Blocks alike at first (racy tile loop), then block 2 writes more and reads at its own
    offsets, and blocks >= 1 skip the barrier of the last tile."""
    tile = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    acc = 0.0
    for k in range(ntiles):
        if t < 48:
            tile[t] = x[k * T + t]
        cuda.syncthreads()
        acc += tile[(t + 32) % T]
    if b == 2:
        tile[(t + b) % T] = acc
    if b == 0:
        cuda.syncthreads()
    acc += tile[(t * 3 + b) % T]
    out[b * T + t] = acc


@pytest.mark.parametrize("kernel, block", [(tile_loop_racy, T), (blocks_part_ways, T), (blocks_part_ways, 40)])
def test_alike_blocks_find_what_each_block_finds(kernel, block, monkeypatch):
    """The check keeps one row of state while the blocks of a chunk do the same: its findings
    (kinds, lines, first block, counts) are those of a row per block."""
    from simgpu.sanitize.hazards import HazardCheck
    found = []
    for alike in (True, False):
        monkeypatch.setattr(HazardCheck, "alike_blocks", alike)
        x = np.arange(4 * T, dtype=np.float32)
        out = np.zeros(5 * T, np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rep = simgpu.launch(kernel, 5, block, (x, out, 4), timing=False, memory=False)
        found.append(sorted(map(repr, rep.races)))
    assert found[0] == found[1]
    assert found[0] and all("'count': 0" not in r for r in found[0])


def blocks_own_offsets(x, out, ntiles):
    tile = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    tile[t] = x[t]
    cuda.syncthreads()
    out[b * T + t] = tile[(t + b) % T] + tile[(t + 1) % T]


def test_the_executors_rows_alike_is_what_the_addresses_say():
    """MemEvent.rows_alike, where the executor sets it (a shared [reg+off] access by every lane),
    says what comparing the blocks' rows of addresses says: True for a tile loop whose blocks
    index shared memory alike, False where blocks use their own offsets."""
    from simgpu.events import Observer
    from simgpu.ptx.memory import rows_repeat

    class Seen(Observer):
        def __init__(self):
            self.flags = []

        def mem(self, ev):
            if ev.space == "shared" and ev.rows_alike is not None:
                m = ev.mask
                self.flags.append((ev.rows_alike, rows_repeat(m.arr, ev.addr, ev.chunk.lanes_per_block, True)))

    for kernel, want in ((tile_loop_racy, {True}), (blocks_own_offsets, {True, False})):
        seen = Seen()
        x = np.arange(4 * T, dtype=np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            simgpu.launch(kernel, 5, T, (x, np.zeros(5 * T, np.float32), 4), timing=False, memory=False,
                          observers=[seen])
        assert seen.flags and all(a == b for a, b in seen.flags)
        assert {a for a, _ in seen.flags} == want
