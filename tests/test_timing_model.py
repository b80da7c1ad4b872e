"""The timing model through simgpu.launch: the Report's metrics, the words of the
bottleneck, and launches the driver would refuse."""
import math

import numpy as np
import pytest

import simgpu
from simgpu import cuda
from simgpu.errors import LaunchError
from simgpu.model.occupancy import occupancy
from simgpu import predict
from kernels_core import rows_in_lockstep


def copy(a, b):
    i = cuda.grid(1)
    if i < a.size:
        b[i] = a[i]


def fma_loop(x, out, iters):
    i = cuda.grid(1)
    a0 = x[i]
    a1 = a0 + np.float32(1.0)
    a2 = a0 + np.float32(2.0)
    a3 = a0 + np.float32(3.0)
    for it in range(iters):
        a0 = a0 * np.float32(0.999) + np.float32(0.001)
        a1 = a1 * np.float32(0.999) + np.float32(0.001)
        a2 = a2 * np.float32(0.999) + np.float32(0.001)
        a3 = a3 * np.float32(0.999) + np.float32(0.001)
    out[i] = a0 + a1 + a2 + a3


def sin_loop(x, out, iters):
    i = cuda.grid(1)
    a = x[i]
    for it in range(iters):
        a = math.sin(a)
    out[i] = a


def divergent(x, out, iters):
    i = cuda.grid(1)
    a = x[i]
    if cuda.threadIdx.x % 2 == 0:
        for it in range(iters):
            a = a * np.float32(0.999) + np.float32(0.001)
    else:
        for it in range(iters):
            a = a * np.float32(0.998) + np.float32(0.002)
    out[i] = a


def uniform(x, out, iters):
    i = cuda.grid(1)
    a = x[i]
    if cuda.blockIdx.x % 2 == 0:
        for it in range(iters):
            a = a * np.float32(0.999) + np.float32(0.001)
    else:
        for it in range(iters):
            a = a * np.float32(0.998) + np.float32(0.002)
    out[i] = a


def smem_stride(out, stride, iters):
    sh = cuda.shared.array(4096, np.float32)
    tid = cuda.threadIdx.x
    for k in range(tid, 4096, 256):
        sh[k] = np.float32(k)
    cuda.syncthreads()
    for it in range(iters):
        idx = ((tid + it) * stride) & 4095
        sh[idx] = sh[idx] * np.float32(1.0001)
    cuda.syncthreads()
    out[cuda.blockIdx.x * 256 + tid] = sh[tid]


def atomic_one(out, n):
    for k in range(n):
        cuda.atomic.add(out, 0, np.float32(1.0))


def atomic_spread(out, n):
    i = cuda.grid(1)
    for k in range(n):
        cuda.atomic.add(out, i, np.float32(1.0))


def _f32(n):
    return np.random.default_rng(0).random(n, dtype=np.float32)


def time_of(rep):
    return rep.metrics["gpu__time_duration.sum"]


def cycles_of(rep):
    """The kernel's own cycles, without the launch overhead."""
    return rep.extras["timing"].cycles


@pytest.fixture(scope="module")
def copy_rep():
    n = 132 * 8 * 256 * 4
    return simgpu.launch(copy, (n // 256,), (256,), (_f32(n), np.zeros(n, np.float32)))


def test_report_has_the_timing_metrics(copy_rep):
    """Every metric the issue names is in the Report, with Nsight Compute's names."""
    m = copy_rep.metrics
    for k in ("gpu__time_duration.sum", "sm__cycles_elapsed.avg", "sm__warps_active.avg.pct_of_peak_sustained_active",
              "sm__maximum_warps_per_active_cycle_pct", "launch__waves_per_multiprocessor",
              "launch__occupancy_limit_blocks", "launch__occupancy_limit_registers",
              "launch__occupancy_limit_shared_mem", "launch__occupancy_limit_warps", "launch__registers_per_thread",
              "simgpu__warp_stall_memory.pct", "simgpu__warp_stall_dependency.pct", "simgpu__warp_stall_barrier.pct",
              "simgpu__warp_stall_pipe.pct", "simgpu__warp_stall_not_selected.pct"):
        assert k in m, k
    assert m["launch__waves_per_multiprocessor"] == 4.0
    assert m["sm__cycles_elapsed.avg"] == pytest.approx(m["gpu__time_duration.sum"] * 1e-9 * 1.98e9)
    assert 0 < m["sm__warps_active.avg.pct_of_peak_sustained_active"] <= 100


def test_print_leads_with_time_bottleneck_and_roofline(copy_rep):
    """print(rep) starts with the Timing section: predicted time, bottleneck, roofline point."""
    text = str(copy_rep).splitlines()
    assert text[3].startswith("Timing")
    assert "predicted time" in text[4] and "bottleneck" in text[5] and "roofline point" in text[6]


def test_occupancy_metrics_follow_the_calculator(copy_rep):
    r = copy_rep.extras["timing"]
    occ = occupancy(simgpu.hardware.H200, 256, r.registers, 0)
    assert copy_rep.metrics["sm__maximum_warps_per_active_cycle_pct"] == 100.0 * occ.theoretical_occupancy
    assert copy_rep.metrics["launch__occupancy_limit_warps"] == occ.limit_warps


def test_streaming_copy_is_memory_side_bound(copy_rep):
    """A copy with one element per thread is limited by how fast SMs start its small blocks
    and DRAM serves them (the H200 measures 2.7 TB/s for it), and cannot beat DRAM."""
    assert copy_rep.extras["bottleneck"].startswith(("DRAM bandwidth", "block starts", "latency"))
    r = copy_rep.extras["timing"]
    assert r.utilisation["launch"] > 0.5 or r.utilisation["dram"] > 0.5
    m = copy_rep.metrics
    assert m["dram__bytes.sum"] / (m["gpu__time_duration.sum"] * 1e-9) <= simgpu.hardware.H200.dram_bandwidth


def test_fma_loop_is_issue_bound_at_half_the_peak():
    """Four independent FMA chains per thread at full occupancy keep the schedulers busy, but
    numba's range loop adds 3.5 SASS per iteration to the 4 FFMAs: about half the FP32 peak
    (the H200 measures 51 % for this loop shape)."""
    n = 132 * 8 * 256
    rep = simgpu.launch(fma_loop, (n // 256,), (256,), (_f32(n), np.zeros(n, np.float32), np.int32(256)))
    r = rep.extras["timing"]
    assert r.bottleneck.startswith(("issue", "FP32"))
    rate = r.flops / (r.cycles / r.params.clock_hz)
    assert 0.45 * simgpu.hardware.H200.fp32_flops < rate < 0.6 * simgpu.hardware.H200.fp32_flops


def test_sin_uses_many_instructions_per_call():
    """libdevice sin is a routine of ~25 SASS (ptxas' count on the compiled path): a loop of
    one sin per iteration takes well over twice the time of four FMAs per iteration."""
    n = 132 * 8 * 256
    a = (_f32(n), np.zeros(n, np.float32), np.int32(128))
    t_sin = cycles_of(simgpu.launch(sin_loop, (n // 256,), (256,), a))
    t_fma = cycles_of(simgpu.launch(fma_loop, (n // 256,), (256,), a))
    assert t_sin > 2.5 * t_fma


def test_divergence_runs_both_sides():
    """Lane-parity branching makes each warp run both loops: about twice the uniform time."""
    n = 132 * 8 * 256
    a = (_f32(n), np.zeros(n, np.float32), np.int32(256))
    t_div = cycles_of(simgpu.launch(divergent, (n // 256,), (256,), a))
    t_uni = cycles_of(simgpu.launch(uniform, (n // 256,), (256,), a))
    assert 1.6 < t_div / t_uni < 2.2


def test_bank_conflicts_slow_shared_memory():
    """32-way bank conflicts (stride 32) take far longer than conflict-free (stride 1), and
    the bottleneck names shared memory."""
    g = 132 * 2
    args = lambda s: (np.zeros(g * 256, np.float32), np.int32(s), np.int32(32))
    r1 = simgpu.launch(smem_stride, (g,), (256,), args(1))
    r32 = simgpu.launch(smem_stride, (g,), (256,), args(32))
    assert cycles_of(r32) > 5 * cycles_of(r1)
    assert r32.extras["bottleneck"].startswith("shared memory")


def test_atomics_to_one_address_serialise():
    g = 132 * 2
    one = simgpu.launch(atomic_one, (g,), (256,), (np.zeros(1, np.float32), np.int32(2)))
    spread = simgpu.launch(atomic_spread, (g,), (256,), (np.zeros(g * 256, np.float32), np.int32(2)))
    assert cycles_of(one) > 5 * cycles_of(spread)
    assert one.extras["bottleneck"].startswith("atomics")


def test_small_grid_is_latency_bound():
    """Sixteen blocks leave 116 SMs idle: the words say latency and name the idle SMs."""
    n = 16 * 256
    rep = simgpu.launch(copy, (16,), (256,), (_f32(n), np.zeros(n, np.float32)))
    assert rep.extras["bottleneck"].startswith("latency")
    assert "16 of 132 SMs" in rep.extras["bottleneck"]


def test_partial_last_wave_is_a_tail():
    """One block per SM (64 registers x 1024 threads fill the register file): 133 blocks
    run in two waves, the second with one block: the bottleneck is the tail."""
    n = 133 * 1024
    rep = predict(fma_loop, (133,), (1024,), (_f32(n), np.zeros(n, np.float32), np.int32(16)),
                  registers_per_thread=64)
    r = rep.extras["timing"]
    assert r.occupancy.blocks_per_sm == 1
    assert r.bottleneck.startswith("tail")
    one_wave = predict(fma_loop, (132,), (1024,), (_f32(132 * 1024), np.zeros(132 * 1024, np.float32),
                                                   np.int32(16)), registers_per_thread=64)
    assert 1.7 < cycles_of(rep) / cycles_of(one_wave) < 2.1


def test_registers_estimate_and_override():
    """Registers: ptxas' count on the compiled path, the IR's estimate on the IR path; an
    override wins on both."""
    n = 256
    rep = simgpu.launch(copy, (1,), (256,), (_f32(n), np.zeros(n, np.float32)), executor="ir")
    assert 16 <= rep.metrics["launch__registers_per_thread"] <= 40
    rep = simgpu.launch(copy, (1,), (256,), (_f32(n), np.zeros(n, np.float32)), executor="ptx")
    assert rep.metrics["launch__registers_per_thread"] == rep.extras["ptx"]["registers"]
    rep2 = predict(copy, (1,), (256,), (_f32(n), np.zeros(n, np.float32)), registers_per_thread=128)
    assert rep2.metrics["launch__registers_per_thread"] == 128
    assert rep2.metrics["launch__occupancy_limit_registers"] == 2


def test_too_many_registers_is_a_launch_error():
    """1024 threads x 255 registers exceed the 64K-register file: the driver refuses."""
    with pytest.raises(LaunchError, match="registers"):
        predict(copy, (1,), (1024,), (_f32(1024), np.zeros(1024, np.float32)), registers_per_thread=255)


def test_prediction_is_deterministic(copy_rep):
    n = 132 * 8 * 256 * 4
    again = simgpu.launch(copy, (n // 256,), (256,), (_f32(n), np.zeros(n, np.float32)))
    assert time_of(again) == time_of(copy_rep)


def test_timing_off_leaves_no_metric():
    rep = simgpu.launch(copy, (1,), (32,), (_f32(32), np.zeros(32, np.float32)), timing=False)
    assert "gpu__time_duration.sum" not in rep.metrics


def rows_of_my_own(a, out):
    acc = np.float32(0)
    for k in range(a.shape[0] // 1056):
        acc += a[k * 1056 + cuda.blockIdx.x, cuda.threadIdx.x]
    out[cuda.grid(1)] = acc


def test_lines_in_flight_make_a_lockstep_loop_wait_for_dram():
    """Every block reads the same new row each iteration: one SM fetches it from DRAM and the
    others hit it in the L2 while it is in flight, so each iteration costs about a DRAM
    latency (less what the loads ptxas hoists out of NVVM's unrolled copies overlap), far more
    than an L2 hit, even though almost every access is an L2 hit (the naive matmul's B
    accesses).  A loop that reads rows nobody else reads at the same time pays the same
    latency with real misses; the one over rows it hits in flight may not be faster."""
    rows, blocks, block = 32, 132 * 8, 256
    shared = simgpu.launch(rows_in_lockstep, (blocks,), (block,),
                           (np.ones((rows, block), np.float32), np.zeros(blocks * block, np.float32)))
    P = shared.extras["timing"].params
    per_iter = cycles_of(shared) / rows
    assert shared.metrics["lts__t_sector_hit_rate.pct"] > 95
    assert per_iter > 1.5 * P.l2_hit_cycles
    own = simgpu.launch(rows_of_my_own, (blocks,), (block,),
                        (np.ones((rows * blocks, block), np.float32), np.zeros(blocks * block, np.float32)))
    assert own.metrics["lts__t_sector_hit_rate.pct"] < 60
    assert per_iter > 0.8 * cycles_of(own) / rows


def hist_global(data, hist):
    i = cuda.grid(1)
    while i < data.size:
        cuda.atomic.add(hist, data[i], np.uint32(1))
        i += cuda.gridsize(1)


def test_hot_atomic_lines_are_served_in_passes():
    """Atomics that every warp sends to the same few lines queue at the L2 slices' atomic
    units (two units for 1 KiB): one pass per line per request, a pass per lane on one
    address; the time follows the passes, not the lanes."""
    from simgpu.timing.memfacts import line_passes
    addr = np.array([[0, 0, 4, 128, 128, 128] + [1024] * 26])
    rows, lines, passes = line_passes(addr, np.ones_like(addr, dtype=bool))
    assert lines.tolist() == [0, 1, 8] and passes.tolist() == [2, 3, 26]
    n, blocks = 1 << 20, 132 * 8
    rng = np.random.default_rng(0)
    P = simgpu.launch(hist_global, (blocks,), (256,), (rng.integers(0, 4, n, dtype=np.uint8),
                                                        np.zeros(256, np.uint32)), sample=True)
    spread = simgpu.launch(hist_global, (blocks,), (256,), (rng.integers(0, 256, n, dtype=np.uint8),
                                                             np.zeros(256, np.uint32)), sample=True)
    t = P.extras["timing"].params
    warp_insts = n // 32
    # 4 bins: one line, 8 lanes per address: 8 passes per request at one unit
    assert time_of(P) > 0.9 * warp_insts * 8 * t.atomic_pass_cycles / t.clock_hz * 1e9
    # 256 bins: 8 lines over 2 units, ~1.2 passes per line: ~4.8 passes per unit per request
    assert 0.3 < time_of(spread) / time_of(P) < 0.9
