"""The records the memory model hands to other code: EngineParams (the compiled engine's
geometry) and the per-instruction MemStats the timing model reads."""
import numpy as np
import pytest

from simgpu.hardware import H200
from simgpu.hardware.spec import HardwareError
from simgpu.memory import counters as C
from simgpu.memory.cache import (P_GRAN, P_LINE_SHIFT, P_SECTOR_BYTES, P_SECTOR_SHIFT, P_SETS1, P_SETS2, P_SPL,
                                 P_WAYS1, P_WAYS2, EngineParams)
from simgpu.memory.stats import MemStat, dram_bytes, evicted_fraction, instruction_stats


def test_engine_params_of_the_h200():
    p = EngineParams.for_gpu(H200, l1_ways=6)
    prm = p.array()
    assert prm.dtype == np.int64
    assert prm[P_LINE_SHIFT] == 7 and prm[P_SECTOR_SHIFT] == 5 and prm[P_SPL] == 4
    assert (prm[P_SETS1], prm[P_WAYS1]) == (H200.l1.sets, 6)
    assert (prm[P_SETS2], prm[P_WAYS2]) == (H200.l2.sets, H200.l2.ways)
    assert prm[P_SECTOR_BYTES] == 32
    assert prm[P_GRAN] * 32 == p.dram_access_bytes == max(32, H200.dram.access_bytes)


def test_engine_params_round_the_dram_access_to_a_divisor_of_the_line():
    gpu = H200.with_(dram=H200.dram.__class__(H200.dram.bandwidth_bytes_per_s, H200.dram.size_bytes, 96))
    assert EngineParams.for_gpu(gpu, 4).dram_access_sectors == 4     # 3 sectors -> 4 (divides 4)


def test_engine_params_need_powers_of_two():
    with pytest.raises(HardwareError, match="power-of-two line size"):
        EngineParams(96, 32, 4, 4, 8, 4, 1)
    with pytest.raises(HardwareError, match="power-of-two sector size"):
        EngineParams(128, 24, 4, 4, 8, 4, 1)


def _table():
    t = C.new_table(4)
    ld, st, at = t[0], t[1], t[2]          # row 3: a shared-memory instruction
    ld[[C.GLD_SECT, C.GLD_HIT, C.L2_RD, C.L2_RD_HIT, C.DRAM_RD, C.L1_PEND, C.L2_PEND]] = 100, 40, 60, 30, 960, 10, 3
    ld[C.DRAM_RD_BUSY] = 1024
    st[[C.GST_SECT, C.L2_WR, C.L2_WR_HIT, C.DRAM_WR, C.DIRTY_END, C.DIRTY_END_BUSY]] = 50, 50, 50, 320, 640, 640
    at[[C.GAT_SECT, C.L2_AT, C.L2_AT_HIT, C.DRAM_RD]] = 8, 8, 6, 64
    t[3, [C.SLD_REQ, C.SLD_WF]] = 4, 4
    return t


def test_instruction_stats_per_kind():
    s = instruction_stats(_table(), {"ld": 0, "st": 1, "at": 2, "sh": 3}, 1.0, 0, 2.0)
    assert set(s) == {"ld", "st", "at"}
    assert s["ld"] == MemStat(0.6, 0.5, 16.0, 0.25, 0.1, 1024 / 60)
    assert s["st"] == MemStat(1.0, 1.0, 320 / 50, dram_busy_per_l2=0.0)
    assert s["at"] == MemStat(1.0, 0.75, 8.0, dram_busy_per_l2=0.0)


def test_sampled_runs_charge_the_write_backs_a_full_run_would_do():
    t = _table()
    assert evicted_fraction(t.sum(axis=0), 1.0, 0) == 0.0
    # the full run (4x the sample) ends with at most 1000 bytes dirty: of the 640 * 4 the sample
    # leaves dirty, scaled, it has written back all but those 1000 (the 320 * 4 the sample wrote
    # back itself are counted as they are)
    ev = evicted_fraction(t.sum(axis=0), 4.0, 1000)
    assert ev == 1.0 - 1000 / (640 * 4.0)
    assert evicted_fraction(t.sum(axis=0), 4.0, 640 * 4) == 0.0      # it all fits: nothing more
    st = instruction_stats(t, {"st": 1}, 4.0, 1000, 1.0)["st"]
    assert st.dram_per_l2 == (320 + ev * 640) / 50
    assert st.dram_busy_per_l2 == ev * 640 / 50
    assert dram_bytes(t, 4.0, 1000) == (960 + 64 + 320 + ev * 640) * 4.0
    # written in all: (320 + 640) * 4; left dirty: 1000; so written back (the store's share):
    assert (320 + ev * 640) * 4.0 == (320 + 640) * 4.0 - 1000


def test_a_sampled_launch_keeps_no_more_dirty_than_the_gpus_limit():
    """MemoryModel's capacity for the estimate is the GPU's dirty limit (the engine's eager
    write-back), not its whole L2 (a full run never ends with more dirty)."""
    from simgpu.events import Launch, ProgramFacts
    from simgpu.memory import MemoryModel
    mm = MemoryModel(H200, Launch("k", None, H200, (1, 1, 1), (32, 1, 1), [], 0, facts=ProgramFacts()))
    assert 0 < H200.l2_dirty_max_bytes < H200.l2.size_bytes
    assert mm.dirty_capacity(H200.l2.size_bytes) == H200.l2_dirty_max_bytes // 128 * 128
    assert mm.dirty_capacity(1000) == 1000
    no_limit = H200.with_(l2_dirty_max_bytes=0)
    mm = MemoryModel(no_limit, Launch("k", None, no_limit, (1, 1, 1), (32, 1, 1), [], 0, facts=ProgramFacts()))
    assert mm.dirty_capacity(no_limit.l2.size_bytes) == no_limit.l2.size_bytes


def test_the_memory_schedule_takes_the_launch_registers():
    """The memory model's waves are the card's: with ptxas' registers (the launch's), not 32
    assumed, where the launch knows them (a 256-thread block at 40 registers: 6 per SM on the
    H200, at 32: 8)."""
    from simgpu.events import Launch, ProgramFacts
    from simgpu.memory import MemoryModel

    def bps(regs):
        launch = Launch("k", None, H200, (4096, 1, 1), (256, 1, 1), [], 0, registers_per_thread=regs,
                        facts=ProgramFacts())
        return MemoryModel(H200, launch).schedule.blocks_per_sm

    assert bps(None) == bps(32) == 8
    assert bps(40) == 6
