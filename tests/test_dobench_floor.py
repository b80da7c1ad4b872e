"""do_bench's floor (simgpu.validate.dobench_seconds), the H100 preset's shared die, the L2's wide
read rate, and the lecture's math-path kernels (issue 27 step 5).  Behaviour, not timings."""
import importlib.util
import os
import shutil
import sys

import numpy as np
import pytest

import simgpu
from simgpu.hardware import A100, H100, H200
from simgpu.timing.params import WIDE_SECTORS, TimingParams
from simgpu.validate import dobench_seconds

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

HERE = os.path.dirname(os.path.abspath(__file__))
LECTURE = os.path.join(HERE, "..", "validation", "tensor_cores", "lecture")


@triton.jit
def _one_store(x_ptr):
    tl.store(x_ptr + tl.program_id(0), 1)


def test_dobench_seconds_is_kernel_time_plus_the_gpus_floor():
    x = np.zeros(64, np.int32)
    for gpu in ("H200", "H100", A100):
        rep = simgpu.launch(_one_store, (4,), None, (x,), gpu=gpu, num_warps=4)
        g = rep.gpu
        assert dobench_seconds(rep) == pytest.approx(rep.metrics["gpu__time_duration.sum"] * 1e-9
                                                     + g.dobench_floor_ns * 1e-9)
    assert H100.dobench_floor_ns > 1000 and H200.dobench_floor_ns > 1000      # measured: about 2.3 us
    assert A100.dobench_floor_ns == 0                                         # not measured: nothing added
    assert dobench_seconds(rep, gpu="H100") > dobench_seconds(rep)            # another GPU's floor on request


def test_h100_has_the_h200s_sm_and_its_own_memory():
    for f in ("tensor_fp16_flops_per_sm_cycle", "wgmma_latency_cycles", "mma_sync_16816_cycles",
              "fp32_latency_cycles", "shared_latency_cycles", "branch_region_cycles", "l2_read_wide_bytes_per_s"):
        assert getattr(H100, f) == getattr(H200, f) != 0
    # measured on an H100 itself (validation/microbench/latency_mlp.py): its DRAM latency and
    # launch floor; do_bench's floor was derived against the H200's launch overhead, so the
    # two together still give what do_bench measured
    assert H100.dram.latency_ns != H200.dram.latency_ns and H100.launch_overhead_ns > H200.launch_overhead_ns
    assert H100.launch_overhead_ns + H100.dobench_floor_ns == pytest.approx(H200.launch_overhead_ns + 2310.0)
    assert H100.l2.size_bytes == 50 * 2 ** 20 < H200.l2.size_bytes
    assert H100.dram.bandwidth_bytes_per_s == 3.35e12 < H200.dram.bandwidth_bytes_per_s


def test_wide_requests_read_the_l2_at_the_measured_wide_rate():
    P = TimingParams.from_gpu(H200)
    assert P.l2_wide_cost == pytest.approx(H200.l2_read_bytes_per_s / H200.l2_read_wide_bytes_per_s)
    assert 0 < P.l2_wide_cost < 1
    assert TimingParams.from_gpu(A100).l2_wide_cost == 1.0                    # one rate known: one rate used
    assert WIDE_SECTORS == 16                                                 # 32 lanes x 16 bytes / 32 B


def test_math_path_kernels_compute_attention():
    os.makedirs("/tmp/simgpu_lecture", exist_ok=True)
    shutil.copy(os.path.join(LECTURE, "kernels.py"), "/tmp/simgpu_lecture/kernels.py")
    name = "_simgpu_lecture_kernels"     # its own name: other tests import other `kernels` modules
    spec = importlib.util.spec_from_file_location(name, "/tmp/simgpu_lecture/kernels.py")
    L = importlib.util.module_from_spec(spec)
    sys.modules[name] = L
    spec.loader.exec_module(L)
    Z, H, N, D = 1, 2, 128, 64
    rng = np.random.default_rng(0)
    q, k, v = ((rng.standard_normal((Z * H, N, D)) * 0.5).astype(np.float16) for _ in range(3))
    s = np.zeros((Z * H, N, N), np.float16)
    p, o = np.zeros_like(s), np.zeros((Z * H, N, D), np.float16)
    for _, kern, grid, meta, make in L.math_path_launches(Z, H, N, D):
        simgpu.launch(kern, grid, None, make(q, k, v, s, p, o), **meta)
    sf = q.astype(np.float32) @ k.astype(np.float32).transpose(0, 2, 1)
    e = np.exp(sf - sf.max(-1, keepdims=True))
    ref = (e / e.sum(-1, keepdims=True)) @ v.astype(np.float32)
    assert np.abs(s - sf).max() < 1e-2
    assert np.abs(o - ref).max() < 5e-3


def _request(stride, lanes_per_line, elem=2):
    """Addresses of a warp's load as l1_lines.py issues it: lane l reads row l // (32 / L)."""
    lane = np.arange(32)
    per = 32 // lanes_per_line
    return (lane // per) * stride + (lane % per) * elem


def test_l1_cycles_of_a_request_over_many_lines():
    from simgpu.timing.memfacts import distinct_count, l1_cycles
    g = H200

    def cyc(a):
        a = np.asarray(a, np.int64)[None, :]
        mk = np.ones_like(a, bool)
        return int(l1_cycles(a, mk, distinct_count(a // 32, mk), distinct_count(a // 128, mk),
                             g.l1_line_cycles, g.l1_tag_banks)[0])
    assert cyc(_request(1024, 32)) == 32              # one tag bank: a cycle a line (measured 32.0)
    assert cyc(_request(1024, 8)) == 8
    assert 12 <= cyc(_request(3000, 32)) <= 13        # lines over the banks: measured 12.6
    assert 6 <= cyc(_request(3000, 16)) <= 7          # measured 6.95
    assert cyc(np.arange(32) * 4) == 1                # coalesced 4-byte: one line
    assert cyc(np.arange(32) * 16) == 4               # coalesced 16-byte: 512 bytes of data
    a = np.asarray(_request(3000, 32), np.int64)[None, :]
    mk = np.ones_like(a, bool)
    n = distinct_count(a // 128, mk)
    assert int(l1_cycles(a, mk, distinct_count(a // 32, mk), n)[0]) == int(n[0])   # defaults: a line a cycle


def test_wgmma_shared_operand_bytes():
    from types import SimpleNamespace
    from simgpu.timing.ptx_trace import wgmma_smem_bytes
    mods = ("mma_async", "sync", "aligned", "m64n256k16", "f32", "f16", "f16")
    d = ("vec", [("reg", f"%f{i}") for i in range(128)])
    ss = SimpleNamespace(opcode="wgmma", mods=mods, operands=[d, ("reg", "%rd1"), ("reg", "%rd2")])
    rs = SimpleNamespace(opcode="wgmma", mods=mods, operands=[d, ("vec", [("reg", "%r1")] * 4), ("reg", "%rd2")])
    assert wgmma_smem_bytes(ss) == 16 * 256 * 2 + 64 * 16 * 2      # B and A through descriptors
    assert wgmma_smem_bytes(rs) == 16 * 256 * 2                    # A from registers
    assert wgmma_smem_bytes(SimpleNamespace(opcode="wgmma", mods=("commit_group", "sync", "aligned"),
                                            operands=[])) == 0
    assert wgmma_smem_bytes(SimpleNamespace(opcode="mma", mods=("sync",), operands=[])) == 0


@triton.jit
def _spin(x_ptr, n):
    # one program of dependent fp32 FMAs: SM-bound, no memory to speak of
    acc = tl.load(x_ptr + tl.arange(0, 128))
    for _ in range(n):
        acc = acc * 0.999 + 0.001
    tl.store(x_ptr + tl.arange(0, 128), acc)


def test_unprofiled_clock_is_the_measured_one():
    """The H200's SM clock outside a profiler is what its microbenchmarks' %clock64 spans and
    CUDA-event times give (validation/tensor_cores/clock/derive_h200.py); the H100's is its own
    do_bench-launched wgmma clock (clock/derive_h100.py)."""
    import json
    from simgpu.validate import unprofiled
    R = json.load(open(os.path.join(HERE, "..", "validation", "tensor_cores", "pipe", "h200", "h200_pipe.json")))["results"]
    fs = []
    for a, b in (("wgmma_n128_p4_1wg_sm", "wgmma_n256_p4_1wg_sm"), ("wgmma_n128_p4_2wg_sm", "wgmma_n256_p4_2wg_sm")):
        fs.append((R[b]["span_cycles_max"] - R[a]["span_cycles_max"]) / ((R[b]["ms"] - R[a]["ms"]) * 1e-3))
    assert H200.unprofiled_clock_hz == pytest.approx(sum(fs) / len(fs), rel=2e-3)
    # the H100's own (validation/tensor_cores/clock/h100/clock.json, derive_h100.py)
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "derive_h100", os.path.join(HERE, "..", "validation", "tensor_cores", "clock", "derive_h100.py"))
    d = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(d)
    assert H100.unprofiled_clock_hz == pytest.approx(d.h100_unprofiled_clock_hz(), rel=1e-4)
    assert H100.unprofiled_clock_hz < H100.clock_hz and H200.unprofiled_clock_hz < H200.clock_hz
    assert unprofiled("H100").clock_hz == H100.unprofiled_clock_hz
    assert unprofiled("H100").l2_read_wide_bytes_per_s == H100.l2_read_wide_bytes_per_s   # bytes/s kept
    assert unprofiled(A100) is A100 or unprofiled(A100).clock_hz == A100.clock_hz        # not measured


def test_an_sm_bound_launch_slows_by_the_clock_ratio_outside_a_profiler():
    from simgpu.validate import unprofiled
    x = np.ones(128, np.float32)
    a = simgpu.launch(_spin, (1,), None, (x.copy(), 4000), gpu="H100", num_warps=4)
    b = simgpu.launch(_spin, (1,), None, (x.copy(), 4000), gpu=unprofiled("H100"), num_warps=4)
    over = H100.launch_overhead_ns * 1e-9
    t = lambda r: r.metrics["gpu__time_duration.sum"] * 1e-9 - over
    ratio = t(b) / t(a)
    assert ratio == pytest.approx(H100.clock_hz / H100.unprofiled_clock_hz, rel=0.01)


def _launch_floor_kernels():
    spec = importlib.util.spec_from_file_location(
        "_simgpu_launch_floor_kernels", os.path.join(LECTURE, "launch_floor_kernels.py"))
    K = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(K)
    return K


def test_dobench_floor_of_tensor_descriptor_launches():
    """Triton's launcher encodes a tensor map per host TensorDescriptor and allocates the global
    scratch of the kernel's tl.make_tensor_descriptor per call: do_bench's floor grows by the
    GPU's measured cost per descriptor of each kind (lecture/h100/launch_floor)."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    K = _launch_floor_kernels()
    mats = [np.ones((64, 64), np.float16) for _ in range(2)]
    descs = [TensorDescriptor.from_tensor(simgpu.as_tensor(m), [16, 16]) for m in mats]
    o = np.zeros(16, np.float16)
    host = simgpu.jit(K.host_desc_2)[(1,)](o, *descs, gpu="H100", num_warps=4)
    dev = simgpu.jit(K.dev_desc_1)[(1,)](o, mats[0], gpu="H100", num_warps=4)
    plain = simgpu.jit(K.empty_ptr)[(1,)](o, gpu="H100", num_warps=4)
    assert host.extras["triton_launch"]["host_tensor_descriptors"] == 2
    assert host.extras["triton_launch"]["device_tensor_descriptors"] == 0
    assert dev.extras["triton_launch"] == {"host_tensor_descriptors": 0, "device_tensor_descriptors": 1,
                                           "global_scratch_bytes": 128}
    assert plain.extras["triton_launch"]["host_tensor_descriptors"] == 0
    t = lambda r: r.metrics["gpu__time_duration.sum"] * 1e-9                          # noqa: E731
    assert dobench_seconds(plain) == pytest.approx(t(plain) + H100.dobench_floor_ns * 1e-9)
    assert dobench_seconds(host) == pytest.approx(t(host) + (H100.dobench_floor_ns + 2 * H100.dobench_host_desc_ns) * 1e-9)
    assert dobench_seconds(dev) == pytest.approx(t(dev) + (H100.dobench_floor_ns + H100.dobench_device_desc_ns) * 1e-9)
    assert 0 < H100.dobench_host_desc_ns < H100.dobench_device_desc_ns < 1000         # measured: 105 and 506 ns
    assert dobench_seconds(host, gpu=A100) == pytest.approx(t(host))                  # not measured there: nothing
