"""Differential test of the compiled straight-line runs (simgpu/ptx/blocks.py, issue 26).

Every kernel runs twice on the PTX path, with the runs compiled (``settings.ptx_blocks``, the
default) and with every instruction interpreted alone; outputs, metrics (instruction counts,
memory, timing) and every observer event (instruction, memory with its addresses and lanes,
branch with its lanes, barrier), in order, must be the same bit for bit.  Kernels: the
validation suite and holdout at their tiny sizes, the kernel library, and kernels written here
for what the runs must get right (divergent loops where lanes run alone, uniform registers,
predicated code between runs, f64 and NaNs, a runaway loop stopped by the step budget)."""
from __future__ import annotations

import hashlib
import math
import os
import sys

import numpy as np
import pytest
from numba import cuda

import simgpu
from simgpu import settings
from simgpu.events import Observer
from simgpu.ptx import blocks
from simgpu.ptx.parser import parse
from simgpu.ptx.runner import Kernel, run as ptx_run
from simgpu.sass.toolchain import compiled_path_available

pytestmark = pytest.mark.skipif(not compiled_path_available()[0], reason="needs numba-cuda and ptxas")

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "validation")


def _validation_cases():
    """The suite's and the holdout's cases at their tiny sizes (as tests/test_sanitize_suite.py
    loads them: VALIDATION_TINY, sys.path and the imported validation modules restored)."""
    old_tiny = os.environ.get("VALIDATION_TINY")
    before = set(sys.modules)
    os.environ["VALIDATION_TINY"] = "1"
    sys.path[:0] = [ROOT, os.path.join(ROOT, "holdout")]
    try:
        import kernels as holdout           # validation/holdout/kernels.py
        from run_suite import collect_cases
        cases = {c["name"]: c for c in collect_cases() if "_error" not in c}
        cases.update({c["name"]: c for c in holdout.cases(tiny=True)})
    finally:
        del sys.path[:2]
        if old_tiny is None:
            os.environ.pop("VALIDATION_TINY", None)
        else:
            os.environ["VALIDATION_TINY"] = old_tiny
        root = os.path.realpath(ROOT)
        for name in set(sys.modules) - before:
            f = getattr(sys.modules[name], "__file__", None) or ""
            if f and os.path.realpath(f).startswith(root + os.sep):
                del sys.modules[name]
    return cases


class Recorder(Observer):
    """A digest of every event the executor reports, in order (arrays by their bytes)."""

    def __init__(self):
        self.h = hashlib.sha256()
        self.n = 0

    def _add(self, *parts):
        self.n += 1
        for p in parts:
            if isinstance(p, np.ndarray):
                self.h.update(str(p.dtype).encode() + str(p.shape).encode())
                self.h.update(np.ascontiguousarray(p).tobytes())
            else:
                self.h.update(repr(p).encode())
            self.h.update(b"|")

    def chunk_begin(self, chunk):
        self._add("chunk", chunk.first_block, chunk.n_blocks)

    def inst(self, ev):
        self._add("inst", ev.ins.id, ev.ins.op, np.asarray(ev.lanes))

    def mem(self, ev):
        self._add("mem", ev.inst.id, ev.space, ev.kind, ev.size, ev.mask.arr, ev.addr[ev.mask.arr],
                  ev.array.name)

    def branch(self, ev):
        self._add("branch", ev.node.id, ev.mask.arr, None if ev.taken is None else ev.taken.arr)

    def barrier(self, ev):
        self._add("barrier", ev.ins.id, ev.scope, ev.mask.arr)


def _numbers(metrics):
    return {k: v for k, v in metrics.items() if isinstance(v, (int, float, str))}


def _launch(kernel, grid, block, host, fused, **kw):
    args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in host)
    rec = Recorder()
    with settings.override(ptx_blocks=fused):
        rep = simgpu.launch(kernel, grid, block, args, executor="ptx", observers=[rec], **kw)
    return args, rep, rec


def assert_same(kernel, grid, block, host, **kw):
    a0, r0, e0 = _launch(kernel, grid, block, host, False, **kw)
    a1, r1, e1 = _launch(kernel, grid, block, host, True, **kw)
    for x, y in zip(a0, a1):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes()
    assert e0.n == e1.n and e0.h.hexdigest() == e1.h.hexdigest()
    assert _numbers(r0.metrics) == _numbers(r1.metrics)
    assert e0.n > 0
    return r1


VCASES = _validation_cases()


@pytest.mark.parametrize("name", sorted(VCASES))
def test_validation_kernels_same_with_compiled_runs(name):
    c = VCASES[name]
    host = c["args"](np.random.default_rng(0))
    assert_same(c["kernel"], tuple(c["grid"]), tuple(c["block"]), host, memory=True, timing=False)


TIMED = ["nc_matmul_f64", "gp_dot_f32", "transpose_tiled_padded_L2", "layernorm_rows_7x100_f32"]


@pytest.mark.parametrize("name", [n for n in TIMED if n in VCASES])
def test_timing_model_same_with_compiled_runs(name):
    c = VCASES[name]
    host = c["args"](np.random.default_rng(0))
    rep = assert_same(c["kernel"], tuple(c["grid"]), tuple(c["block"]), host, memory=True, timing=True)
    assert rep.metrics.get("gpu__time_duration.sum", 0) > 0


# ---- kernels for what the runs must get right ------------------------------------------------
def collatz(n0, out):
    i = cuda.grid(1)
    if i < out.size:
        n = n0[i]
        s = 0
        while n != 1:               # lanes leave the loop at different iterations
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            s += 1
        out[i] = s


def f64_mix(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        a = x[i]
        b = y[i]
        acc = 0.0
        for k in range(i % 7 + 3):  # per-lane trip counts
            acc = acc * 0.5 + a * b - k
            if acc > 10.0:
                acc = math.sqrt(acc)
        out[i] = acc + a / b


def uniform_math(out, n, scale):
    i = cuda.grid(1)
    m = n * 3 + 1                   # uniform: stays scalar
    f = scale * 2.0
    if i < out.size:
        out[i] = (i + m) * f


def runaway(out):
    i = cuda.grid(1)
    k = 0
    while out[0] == 0:              # never ends: stopped by the instruction budget
        k += i
    out[i] = k


def test_divergent_loop_collatz():
    n = 200
    host = (np.arange(1, n + 1, dtype=np.int64) * 7919 + 3, np.zeros(n, np.int64))
    assert_same(collatz, (4,), (64,), host, memory=True, timing=True)


def test_f64_with_nans_and_divergence():
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(96), rng.standard_normal(96)
    x[5], y[9], y[11] = np.nan, np.nan, 0.0
    x[13], y[17] = np.inf, -np.inf
    host = (x, y, np.zeros(96))
    assert_same(f64_mix, (3,), (32,), host, memory=True, timing=False)


def test_uniform_values():
    host = (np.zeros(100, np.float64), np.int32(5), 1.5)
    assert_same(uniform_math, (2,), (64,), host, memory=False, timing=False)


def test_kernel_library():
    import simgpu.kernels as K
    from simgpu.validate.runner import as_numba_function
    rng = np.random.default_rng(0)
    a, b = rng.random(1000, dtype=np.float32), rng.random(1000, dtype=np.float32)
    assert_same(as_numba_function(K.vadd), (4,), (256,), (a, b, np.zeros(1000, np.float32)),
                memory=True, timing=True)
    A, B = rng.random((40, 40), dtype=np.float32), rng.random((40, 40), dtype=np.float32)
    assert_same(as_numba_function(K.matmul_tiled_shape), (3, 3), (16, 16),
                (A, B, np.zeros((40, 40), np.float32)), memory=True, timing=True)
    x = rng.random(1000, dtype=np.float32)
    assert_same(as_numba_function(K.tree_reduce), (8,), (128,), (x, np.zeros(8, np.float32)),
                memory=True, timing=True)


def test_runaway_loop_is_stopped_the_same_way():
    msgs = []
    for fused in (False, True):
        with settings.override(ptx_blocks=fused), pytest.raises(simgpu.errors.KernelError) as e:
            simgpu.launch(runaway, (1,), (32,), (np.zeros(32, np.int64),), executor="ptx",
                          memory=False, timing=False, budget=simgpu.Budget(instructions=5000))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


PTX_LOOP = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .reg .pred %p<3>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, 0;
  mov.u32 %r4, 1;
L_loop:
  add.u32 %r3, %r3, %r4;
  mul.lo.u32 %r5, %r3, 3;
  xor.b32 %r4, %r5, %r2;
  and.b32 %r4, %r4, 1023;
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p1, %r3, %r1;
  setp.lt.u32 %p2, %r3, %r2;
  or.pred %p1, %p1, %p2;
  @%p1 bra L_loop;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


def test_hand_written_ptx_loop_and_the_runs_found():
    """A loop whose body is one block: the run covers its straight-line part; lanes leave the
    loop at different iterations; the low-level runner gives the same memory and steps."""
    k = Kernel(parse(PTX_LOOP), "k")
    assert [(r.start, r.n) for r in k.runs.values()] == [(3, 2), (5, 8), (14, 2)]
    assert k.runs[5].source.count("# pc ") == 8     # the loop body up to its bra
    outs = []
    for fused in (False, True):
        out = np.zeros(64, np.uint32)
        with settings.override(ptx_blocks=fused):
            im = ptx_run(PTX_LOOP, "k", (1,), (64,), [out, np.uint32(50)], max_steps=10 ** 6)
        outs.append(out)
        assert im.kernel.runs.keys() == k.runs.keys()
    assert outs[0].tobytes() == outs[1].tobytes()
    assert (outs[0] >= 50).all()


def test_unknown_ops_are_never_fused():
    """Only instructions the builders mark fusable are fused: memory, control, and anything
    else (new op modules) run alone."""
    k = Kernel(parse(PTX_LOOP), "k")
    for r in k.runs.values():
        for pc in range(r.start, r.start + r.n):
            assert k.linked.code[pc].opcode in ("add", "mul", "xor", "and", "setp", "or", "mov")
    assert blocks.MIN_RUN >= 2
