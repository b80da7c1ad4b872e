"""simgpu.ptx: a kernel's analysed, linked and compiled program (runner.Kernel) is built once
and shared by its launches; everything a launch sets -- parameter values, grid, block,
dynamic shared size, the launch's memory and the ``.global`` variables placed in it (fresh,
from their initializers), the const bank, print() output -- must be the launch's own.  Each
test launches the same kernel several times with different values and checks every result
against numpy and against a fresh, uncached Kernel (``SIMGPU_PTX_KERNEL_CACHE=0``)."""
import numpy as np
import pytest

from simgpu import settings  # noqa: E402
from simgpu._compat import patch_numpy_for_numba

patch_numpy_for_numba()
from numba import cuda, int32  # noqa: E402

import simgpu  # noqa: E402
from simgpu.ptx import runner  # noqa: E402
from simgpu.ptx.memory import DeviceMemory  # noqa: E402
from simgpu.ptx.parser import parse  # noqa: E402
from simgpu.ptx.runner import compile_numba, run  # noqa: E402

PTX = """.version 8.0
.target sm_90
.address_size 64
.global .align 4 .u32 counter = 5;
.global .align 4 .u32 tbl[4] = {1, 2, 3, 4};
.const .align 4 .u32 cst[2] = {100, 200};
.extern .shared .align 16 .b8 dyn[];

.visible .entry k(.param .u64 out_p, .param .u64 in_p, .param .u32 scale)
{
  .reg .pred %p<4>; .reg .b32 %r<30>; .reg .b64 %rd<20>;
  ld.param.u64 %rd1, [out_p];
  ld.param.u64 %rd2, [in_p];
  ld.param.u32 %r1, [scale];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mad.lo.u32 %r5, %r3, %r4, %r2;
  mul.wide.u32 %rd3, %r5, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r6, [%rd4];
  mul.lo.u32 %r7, %r6, %r1;
  and.b32 %r8, %r2, 3;
  mul.wide.u32 %rd5, %r8, 4;
  mov.u64 %rd6, tbl;
  add.s64 %rd7, %rd6, %rd5;
  ld.global.u32 %r9, [%rd7];
  add.u32 %r7, %r7, %r9;
  atom.global.add.u32 %r10, [counter], 1;
  ld.const.u32 %r11, [cst+4];
  add.u32 %r7, %r7, %r11;
  mov.u32 %r12, %nctaid.x;
  mov.u32 %r13, %dynamic_smem_size;
  mov.u32 %r14, dyn;
  mul.lo.u32 %r15, %r2, 4;
  add.u32 %r16, %r14, %r15;
  st.shared.u32 [%r16], %r5;
  bar.sync 0;
  add.u32 %r17, %r2, 1;
  rem.u32 %r17, %r17, %r4;
  mul.lo.u32 %r18, %r17, 4;
  add.u32 %r19, %r14, %r18;
  ld.shared.u32 %r20, [%r19];
  bar.sync 0;
  add.u32 %r21, %r14, %r13;
  sub.u32 %r21, %r21, 4;
  st.shared.u32 [%r21], %r5;
  mul.wide.u32 %rd8, %r5, 24;
  add.s64 %rd9, %rd1, %rd8;
  st.global.v2.u32 [%rd9], {%r7, %r10};
  st.global.v2.u32 [%rd9+8], {%r12, %r13};
  st.global.v2.u32 [%rd9+16], {%r20, %r4};
  ret;
}
"""

# (grid, block, dynamic shared bytes, scale, seed): sizes differ, so the arrays -- and the
# .global variables placed after them -- sit at different addresses in each launch's memory
LAUNCHES = [(2, 32, 128, 3, 0), (3, 64, 512, 7, 1), (1, 96, 400, 11, 2), (2, 32, 128, 3, 3)]


def launch(module, grid, block, dyn, scale, seed):
    n = grid * block
    x = np.random.default_rng(seed).integers(0, 1 << 20, n).astype(np.uint32)
    out = np.zeros((n, 6), np.uint32)
    image = run(PTX, "k", grid, block, (out, x, np.uint32(scale)), dynamic_shared_bytes=dyn,
                module=module)
    return image, x, out


def expected(x, grid, block, dyn, scale):
    n = grid * block
    i = np.arange(n)
    t = i % block
    want = np.zeros((n, 6), np.uint32)
    want[:, 0] = x * np.uint32(scale) + np.array([1, 2, 3, 4], np.uint32)[t % 4] + np.uint32(200)
    want[:, 2], want[:, 3], want[:, 5] = grid, dyn, block
    want[:, 4] = i - t + (t + 1) % block
    return want


def test_repeated_launches_use_each_launchs_values(monkeypatch):
    module = parse(PTX)
    kernels = set()
    for grid, block, dyn, scale, seed in LAUNCHES:
        image, x, out = launch(module, grid, block, dyn, scale, seed)
        kernels.add(id(image.kernel))
        want = expected(x, grid, block, dyn, scale)
        cols = [0, 2, 3, 4, 5]
        np.testing.assert_array_equal(out[:, cols], want[:, cols])
        # the counter starts at its initializer in every launch: each thread got one old value
        np.testing.assert_array_equal(np.sort(out[:, 1]), 5 + np.arange(grid * block))
        with settings.override(ptx_kernel_cache=False):       # the same launch, prepared from scratch
            fresh_image, _, fresh = launch(module, grid, block, dyn, scale, seed)
        assert fresh_image.kernel is not image.kernel
        np.testing.assert_array_equal(out, fresh)
    assert len(kernels) == 1            # every cached launch shared one Kernel


def test_globals_are_placed_fresh_in_each_launchs_memory():
    """The .global variables are allocated, from their initializers, in each launch's memory:
    the counter a launch incremented does not carry into the next one."""
    module = parse(PTX)
    a, _, _ = launch(module, 2, 32, 128, 3, 0)
    b, _, _ = launch(module, 3, 64, 512, 7, 1)
    assert a.kernel is b.kernel and a.memory is not b.memory
    assert a.global_addr["counter"] != b.global_addr["counter"]     # other arrays before it

    def counter(im):
        return int(im.memory.bufs[im.memory.names.index("counter")].view(np.uint32)[0])
    assert (counter(a), counter(b)) == (5 + 64, 5 + 192)


def test_entry_errors_and_parameter_count_stay_per_launch():
    module = parse(PTX)
    out, x = np.zeros((64, 6), np.uint32), np.zeros(64, np.uint32)
    run(PTX, "k", 2, 32, (out, x, np.uint32(1)), dynamic_shared_bytes=128, module=module)
    with pytest.raises(simgpu.SimGPUError, match="takes 3 parameter values"):
        runner.Image(module, "k", (1, 1, 1), (32, 1, 1), [0, 0], DeviceMemory())
    with pytest.raises(simgpu.SimGPUError, match="no kernel 'nope'"):
        runner.Image(module, "nope", (1, 1, 1), (32, 1, 1), [], DeviceMemory())


def test_cache_is_bounded_and_keyed_on_the_module(monkeypatch):
    monkeypatch.setattr(runner, "KERNEL_CACHE_SIZE", 2)
    monkeypatch.setattr(runner, "_KERNELS", type(runner._KERNELS)())
    mods = [parse(PTX) for _ in range(3)]
    ks = [runner.kernel_for(m, "k") for m in mods]
    assert len({id(k) for k in ks}) == 3 and len(runner._KERNELS) == 2
    assert runner.kernel_for(mods[2], "k") is ks[2]
    assert runner.kernel_for(mods[0], "k") is not ks[0]        # evicted: built again


# ---- numba-cuda's PTX: kernel parameters (flattened arrays), const memory, dynamic shared,
# print(), device-function calls --------------------------------------------------------------
COEF = np.array([3, 5, 7, 11], np.int32)


@cuda.jit(device=True)
def twice(v):
    return 2 * v


def numba_kernel(out, x, k):
    c = cuda.const.array_like(COEF)
    dyn = cuda.shared.array(0, int32)
    i = cuda.grid(1)
    t = cuda.threadIdx.x
    dyn[t] = x[i] + k
    cuda.syncthreads()
    out[i] = twice(dyn[(t + 1) % cuda.blockDim.x]) + c[t % 4] * k
    if i == 0:
        print("k", k, "n", x.size)


def test_numba_kernel_relaunched_with_other_arguments(capsys):
    args0 = None
    for grid, block, k in [(2, 32, 3), (4, 64, -9), (1, 128, 100)]:
        n = grid * block
        x = np.arange(n, dtype=np.int32) * 7 - 50
        out = np.zeros(n, np.int32)
        if args0 is None:
            args0 = (out, x, np.int32(k))
            ptx, name = compile_numba(numba_kernel, args0)
        image = run(ptx, name, grid, block, (out, x, np.int32(k)), dynamic_shared_bytes=4 * block)
        t = np.arange(n) % block
        nb = np.arange(n) - t + (t + 1) % block
        np.testing.assert_array_equal(out, 2 * (x[nb] + k) + COEF[t % 4] * k)
        assert image.printed == [f"k {k} n {n}"]
    assert capsys.readouterr().out.splitlines() == ["k 3 n 64", "k -9 n 256", "k 100 n 128"]


def test_simgpu_launch_relaunched_on_the_ptx_path():
    """simgpu.launch (runtime/ptx_path.py) with other arguments, grid and dynamic shared size
    each time: results as numpy computes them."""
    for grid, block, k in [(2, 32, 3), (3, 64, 5)]:
        n = grid * block
        x = np.arange(n, dtype=np.int32) - 17
        out = np.zeros(n, np.int32)
        simgpu.launch(numba_kernel, grid, block, (out, x, np.int32(k)), executor="ptx",
                      memory=False, timing=False, shared_bytes=4 * block)
        t = np.arange(n) % block
        nb = np.arange(n) - t + (t + 1) % block
        np.testing.assert_array_equal(out, 2 * (x[nb] + k) + COEF[t % 4] * k)
