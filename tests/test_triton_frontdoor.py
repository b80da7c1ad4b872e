"""Triton's front door (issue 27 item 1): @triton.jit kernels launched on the modelled GPU with
Triton's call syntax, specialised as Triton's JIT specialises, through launch()'s steps."""
import numpy as np
import pytest

from simgpu.sass.toolchain import compiled_path_available

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

import simgpu  # noqa: E402
from simgpu.errors import ArgumentError, LaunchError  # noqa: E402
from simgpu.runtime.launch import _TUNED  # noqa: E402
from simgpu.runtime.triton_door import triton_function  # noqa: E402

pytestmark = pytest.mark.skipif(not compiled_path_available()[0], reason="needs ptxas (NVIDIA's wheels)")


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float('inf'))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


@triton.jit
def scale_bias(x_ptr, b_ptr, out_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m) * s
    if b_ptr is not None:
        v += tl.load(b_ptr + offs, mask=m)
    tl.store(out_ptr + offs, v, mask=m)


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 512}, num_warps=4),
                          triton.Config({"BLOCK": 2048}, num_warps=8)], key=["n"])
@triton.jit
def tuned_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 3.0, mask=m)


def vectors(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random(n, np.float32), rng.random(n, np.float32), np.zeros(n, np.float32)


def test_vector_add_n_not_a_multiple_of_block():
    n = 3000
    x, y, out = vectors(n)
    rep = simgpu.jit(add_kernel)[lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)](x, y, out, n, BLOCK_SIZE=1024)
    np.testing.assert_array_equal(out, x + y)
    assert rep.grid == (3, 1, 1) and rep.block == (128, 1, 1)        # num_warps=4: Triton's default
    assert rep.metrics["smsp__inst_executed.sum"] > 0
    assert rep.metrics["launch__registers_per_thread"] > 0
    assert rep.metrics["dram__bytes_read.sum"] >= 2 * n * 4
    assert rep.metrics["gpu__time_duration.sum"] > 0
    assert rep.extras["ptx"]["compiled"].versions["triton"] == triton.__version__
    assert any("tl.load(x_ptr + offsets" in text for text in rep.source.values())


def test_launch_with_tuple_grid_and_meta():
    n = 4096
    x, y, out = vectors(n, 1)
    rep = simgpu.launch(add_kernel, (n // 256,), None, (x, y, out, n), BLOCK_SIZE=256, num_warps=2)
    np.testing.assert_array_equal(out, x + y)
    assert rep.block == (64, 1, 1)


def test_specialised_as_tritons_jit():
    """16-divisible pointers and sizes give vector loads; n == 1 becomes a constexpr (one PTX
    parameter fewer); the compiled kernel is kept per specialisation."""
    tf = triton_function(add_kernel)
    x, y, out = vectors(4096, 2)
    ptx16 = simgpu.launch(add_kernel, (4,), None, (x, y, out, 4096), BLOCK_SIZE=1024).extras["ptx"]["compiled"]
    assert "ld.global.v4.b32" in ptx16.ptx and ptx16.argtypes[:4] == ["*fp32"] * 3 + ["i32"]
    np.testing.assert_array_equal(out, x + y)
    ptx = simgpu.launch(add_kernel, (3,), None, (x, y, out, 3000), BLOCK_SIZE=1024).extras["ptx"]["compiled"]
    assert "ld.global.v4.b32" not in ptx.ptx
    one = simgpu.launch(add_kernel, (1,), None, (x, y, out, 1), BLOCK_SIZE=1024).extras["ptx"]["compiled"]
    assert one.argtypes[3] == "constexpr"
    assert one.ptx.count(".param ") == ptx.ptx.count(".param ") - 1
    n = len(tf.compiled)
    simgpu.launch(add_kernel, (4,), None, (x, y, out, 4096), BLOCK_SIZE=1024)
    assert len(tf.compiled) == n                 # the same specialisation: compiled once


def test_view_with_an_unaligned_start_is_not_16_divisible():
    """x[1:] starts 4 bytes into its allocation: Triton's JIT does not mark it 16-divisible,
    so its loads are scalar while y's stay vectorised (what a GPU's launch compiles)."""
    x, y, out = vectors(4100, 3)
    aligned = simgpu.launch(add_kernel, (4,), None, (x[:4096], y[:4096], out[:4096], 4096), BLOCK_SIZE=1024)
    assert aligned.extras["ptx"]["compiled"].ptx.count("ld.global.v4.b32") == 4
    rep = simgpu.launch(add_kernel, (4,), None, (x[1:4097], y[:4096], out[:4096], 4096), BLOCK_SIZE=1024)
    assert rep.extras["ptx"]["compiled"].ptx.count("ld.global.v4.b32") == 2
    np.testing.assert_array_equal(out[:4096], x[1:4097] + y[:4096])


@pytest.mark.parametrize("rows,cols", [(37, 781), (16, 1024)])
def test_fused_softmax(rows, cols):
    rng = np.random.default_rng(cols)
    a = rng.standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros_like(a)
    block = triton.next_power_of_2(cols)
    # num_stages=1: the row loop is not pipelined (num_stages >= 2 makes Triton use cp.async)
    rep = simgpu.jit(softmax_kernel)[(min(rows, 20),)](out, a, a.strides[0] // 4, out.strides[0] // 4, rows, cols,
                                                       BLOCK_SIZE=block, num_stages=1, num_warps=8)
    e = np.exp(a.astype(np.float64) - a.max(1, keepdims=True))
    ref = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(out, ref, rtol=2e-6, atol=1e-9)
    assert rep.block == (256, 1, 1)
    assert rep.metrics["launch__shared_mem_per_block_dynamic"] > 0      # Triton's metadata.shared
    assert rep.metrics["smsp__inst_executed.sum"] > 0


def test_none_is_an_unused_pointer():
    n = 1000
    x, b, out = vectors(n, 4)
    simgpu.jit(scale_bias)[(4,)](x, None, out, n, 2.0, BLOCK=256)
    np.testing.assert_array_equal(out, x * np.float32(2))
    simgpu.jit(scale_bias)[(4,)](x, b, out, n, 2.0, BLOCK=256)
    np.testing.assert_array_equal(out, x * np.float32(2) + b)


def test_autotune_picks_the_fastest_predicted():
    n = 1 << 16
    x = np.arange(n, dtype=np.float32)
    out = np.zeros_like(x)
    rep = simgpu.jit(tuned_copy)[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n)
    np.testing.assert_array_equal(out, x * 3)
    tune = rep.extras["autotune"]
    assert len(tune["predicted_ns"]) == 3
    assert tune["best"] == min(tune["predicted_ns"], key=tune["predicted_ns"].get)
    assert rep.grid[0] * int(tune["best"].split("BLOCK: ")[1].split(",")[0]) == n
    hits = len(_TUNED)
    rep2 = simgpu.jit(tuned_copy)[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n)
    assert len(_TUNED) == hits and rep2.extras["autotune"]["best"] == tune["best"]


def test_wrong_argument_count_and_types():
    x, y, out = vectors(16)
    with pytest.raises(ArgumentError, match="missing n_elements"):
        simgpu.jit(add_kernel)[(1,)](x, y, out, BLOCK_SIZE=16)
    with pytest.raises(ArgumentError, match="5 parameter"):
        simgpu.jit(add_kernel)[(1,)](x, y, out, 16, 16, 16, BLOCK_SIZE=16)
    with pytest.raises(ArgumentError, match="cannot pass a list"):
        simgpu.jit(add_kernel)[(1,)](x, [1.0], out, 16, BLOCK_SIZE=16)
    with pytest.raises(LaunchError, match="block is 32 x num_warps"):
        simgpu.launch(add_kernel, (1,), (128,), (x, y, out, 16), BLOCK_SIZE=16)
    with pytest.raises(ArgumentError, match="meta-parameters are for Triton"):
        simgpu.launch(simgpu.cuda_source("__global__ void k(float* a) {}", "k"), 1, 32, (x,), BLOCK=4)


def test_cpu_torch_tensors_filled_in_place():
    torch = pytest.importorskip("torch")
    n = 1000
    x, y = torch.rand(n), torch.rand(n)
    out = torch.empty(n)
    simgpu.jit(add_kernel)[(1,)](x, y, out, n, BLOCK_SIZE=1024)
    assert torch.equal(out, x + y)


@triton.heuristics(values={"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def heur_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 1.0)
    else:
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1.0, mask=m)


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 256})], key=["n"],
                 restore_value=["acc_ptr"])
@triton.jit
def accumulate(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(acc_ptr + offs, tl.load(acc_ptr + offs, mask=m) + tl.load(x_ptr + offs, mask=m), mask=m)


def test_heuristics():
    for n in (1024, 1000):
        x = np.arange(n, dtype=np.float32)
        out = np.zeros_like(x)
        rep = simgpu.jit(heur_copy)[(triton.cdiv(n, 256),)](x, out, n, BLOCK=256)
        np.testing.assert_array_equal(out, x + 1)
        assert ("setp.lt" in rep.extras["ptx"]["compiled"].ptx) == (n % 256 != 0)    # the masked branch


def test_autotune_restores_values_between_trials():
    """An in-place kernel: each trial starts from the values given (restore_value), so the
    result is one accumulation, not one per config tried."""
    n = 1000
    x = np.full(n, 2, np.float32)
    acc = np.ones(n, np.float32)
    simgpu.jit(accumulate)[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, acc, n)
    np.testing.assert_array_equal(acc, np.full(n, 3, np.float32))


def test_the_sass_comes_from_the_ptxas_tritons_jit_assembles_with():
    """On a GPU Triton assembles with its own ptxas (knobs.nvidia.ptxas: $TRITON_PTXAS_PATH or the
    bundled one), whose SASS can differ from another release's; the front door's SASS facts are
    that ptxas' -- unless simgpu is told another (settings.ptxas / $SIMGPU_PTXAS)."""
    from simgpu import settings
    from simgpu.runtime.triton_door import triton_ptxas_path
    from simgpu.sass.toolchain import _version_line, find_tool
    path = triton_ptxas_path((9, 0))
    if path is None:
        pytest.skip("this Triton has no ptxas of its own")
    x = np.ones(256, np.float32)
    rep = simgpu.jit(add_kernel)[(1,)](x, x, np.zeros_like(x), 256, BLOCK_SIZE=256, gpu="H100")
    with settings.override(ptxas=path):
        want = _version_line("ptxas")
    assert rep.extras["ptx"]["compiled"].facts.ptxas.ptxas_version == want
    other = find_tool("ptxas")                  # outside a Triton launch: simgpu's own choice
    with settings.override(ptxas=other):
        rep2 = simgpu.jit(add_kernel)[(1,)](x, x, np.zeros_like(x), 128, BLOCK_SIZE=256, gpu="H100")
        mine = _version_line("ptxas")
    assert rep2.extras["ptx"]["compiled"].facts.ptxas.ptxas_version == mine
