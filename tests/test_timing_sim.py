"""The simpy machine on hand-built programs: issue, pipes, latency, barriers, occupancy,
bandwidth and atomics behave as the timing model's docs say."""
from dataclasses import replace

import pytest
import simpy

from simgpu.hardware import H200
from simgpu.timing.memfacts import MemFacts
from simgpu.timing.memstats import MemStat
from simgpu.timing.params import TimingParams
from simgpu.timing.program import ALU, ATOM, BAR, LD, OpSpec
from simgpu.timing.sim import (STALL_BARRIER, STALL_DEPENDENCY, STALL_NOT_SELECTED, STALL_PIPE, Barrier, Server,
                               simulate_sm)

P = replace(TimingParams.from_gpu(H200), block_launch_cycles=0.0)


def alu(pipe="fp32", dst=-1, deps=(), n=1):
    return OpSpec(ALU, n, ((pipe, n),), P.op_latency({pipe: n}), dst, tuple(deps), None, 1)


def run(blocks, bps=1, wpb=1):
    cycles, sm = simulate_sm(P, [(b, 132) for b in blocks], bps, wpb)
    return cycles, sm


def test_independent_fp32_issue_one_per_cycle():
    """One warp issues 100 independent FFMAs in 100 cycles (one per cycle on its SMSP)."""
    prog = [(alu(), None)] * 100
    cycles, sm = run([[prog]])
    assert cycles == 100
    assert sm.counters.issued == 100


def test_dependent_chain_waits_for_latency():
    """A chain of 10 dependent FFMAs takes 9 latencies plus one issue cycle; the waiting
    is counted as a dependency stall."""
    prog = [(alu(dst=0, deps=(0,)), None) for _ in range(10)]
    cycles, sm = run([[prog]])
    assert cycles == 9 * H200.fp32_latency_cycles + 1
    assert sm.counters.stall[STALL_DEPENDENCY] == 9 * (H200.fp32_latency_cycles - 1)


def test_sfu_pipe_limits_issue():
    """MUFU has 16 lanes per SM = 4 per SMSP: a warp instruction holds the pipe 8 cycles, so
    20 independent ones on one SMSP take 19 * 8 + 1 cycles, waiting on the pipe."""
    prog = [(alu("sfu"), None)] * 20
    cycles, sm = run([[prog]])
    assert cycles == 19 * 8 + 1
    assert sm.counters.stall[STALL_PIPE] == 19 * 7


def test_four_schedulers_issue_in_parallel():
    """Four warps of one block land on the four SMSPs and issue side by side; eight warps
    share them two by two (each SMSP issues one instruction per cycle)."""
    prog = [(alu(), None)] * 50
    c4, _ = run([[prog] * 4], wpb=4)
    c8, sm8 = run([[prog] * 8], wpb=8)
    assert c4 == 50
    assert c8 == 100
    assert sm8.counters.stall[STALL_NOT_SELECTED] > 0          # not selected: the other warp had the port


def test_occupancy_limit_queues_blocks():
    """With one block slot per SM, three one-warp blocks run one after the other; with three
    slots they run side by side (slots 0, 1, 2 put their warp on SMSPs 0, 1, 2)."""
    prog = [(alu(), None)] * 30
    cycles, _ = run([[prog], [prog], [prog]], bps=1)
    assert cycles == 90
    cycles2, _ = run([[prog], [prog], [prog]], bps=3)
    assert cycles2 == 30


def test_barrier_holds_warps_until_block_arrives():
    """A warp that reaches the barrier first waits (barrier stall) for the slow warp."""
    bar = OpSpec(BAR, 1, (("barrier", 1),), 0.0, -1, (), None, 2)
    fast = [(bar, None), (alu(), None)]
    slow = [(alu(), None)] * 40 + [(bar, None), (alu(), None)]
    cycles, sm = run([[fast, slow]], wpb=2)
    assert cycles == 42
    assert sm.counters.stall[STALL_BARRIER] == 40


def test_server_saturates():
    """A 10 B/cycle server finishes 5 requests of 100 B arriving together at 10..50 cycles."""
    s = Server(10.0)
    assert [s.serve(0.0, 100) for _ in range(5)] == [10.0, 20.0, 30.0, 40.0, 50.0]
    assert s.serve(100.0, 50) == 105.0


def test_dram_bandwidth_share_bounds_streaming_loads():
    """Many independent 128 B DRAM loads on one SM cannot beat the SM's share of DRAM
    bandwidth (total / 132): the time is at least bytes / share."""
    st = MemStat(1.0, 0.0, 32.0)
    ld = OpSpec(LD, 1, (("lsu", 1),), 0.0, -1, (), None, 7, stat=st)
    prog = [(ld, MemFacts(sectors=4, lines=1))] * 200
    cycles, sm = run([[prog] * 8], wpb=8)
    share = P.dram_bytes_per_cycle / 132
    assert cycles >= 8 * 200 * 128 / share
    assert sm.dram.bytes == pytest.approx(8 * 200 * 128)


def test_atomics_on_one_address_serialise():
    """Atomic lane operations on one hot address queue at one server: 64 warps x 32 lanes
    take 64 * 32 * atomic_cycles at least; on 64 distinct addresses they overlap."""
    st = MemStat(1.0, 1.0, 0.0)
    at = OpSpec(ATOM, 1, (("lsu", 1),), 0.0, 0, (), None, 9, stat=st)
    hot = [[[(at, MemFacts(sectors=1, lines=1, serial=32.0, hot=5))] for _ in range(8)] for _ in range(8)]
    spread = [[[(at, MemFacts(sectors=1, lines=1, serial=1.0, hot=100 + 8 * b + w))] for w in range(8)] for b in range(8)]
    c_hot, _ = run(hot, bps=8, wpb=8)
    c_spread, _ = run(spread, bps=8, wpb=8)
    assert c_hot >= 64 * 32 * P.atomic_cycles
    assert c_spread < c_hot / 4


def test_barrier_releases_when_a_warp_exits():
    """A warp that exits no longer counts at later barriers (as CUDA's exited threads)."""
    env = simpy.Environment()
    b = Barrier(env, 3)
    e1 = b.arrive()
    e2 = b.arrive()
    assert not e1.triggered
    b.leave()
    assert e1.triggered and e2.triggered
