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
from simgpu.ptx import blocks, jitloop, jitseg
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
    assert [(r.start, r.n) for r in k.runs.values()] == [(0, 2), (3, 2), (5, 8), (14, 2)]
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
            assert k.linked.code[pc].opcode in ("add", "mul", "xor", "and", "setp", "or", "mov", "ld")
            c = k.linked.code[pc]
            if c.opcode == "ld":            # (kernel parameters, global loads: their own closure)
                assert "param" in c.mods or "global" in c.mods
    assert blocks.MIN_RUN >= 2


# ---- numba segments (simgpu/ptx/jitseg.py): the compiled path that observers that read no state
# between a run's instructions (the instruction counter, the loop watch) let run -----------------
def _launch_plain(kernel, grid, block, host, fused, **kw):
    args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in host)
    with settings.override(ptx_blocks=fused):
        rep = simgpu.launch(kernel, grid, block, args, executor="ptx", **kw)
    return args, rep


def _compiled_calls():
    """Numba segments and compiled loops run so far."""
    return jitseg.CALLS[0] + jitloop.CALLS[0]


def assert_same_segments(kernel, grid, block, host, need_segments=True, **kw):
    """Interpreter vs compiled runs with only the launch's own observers (so the numba segments
    and the compiled loops run): outputs, every metric and the counts per line bit for bit."""
    a0, r0 = _launch_plain(kernel, grid, block, host, False, **kw)
    before = _compiled_calls()
    a1, r1 = _launch_plain(kernel, grid, block, host, True, **kw)
    ran = _compiled_calls() - before
    for x, y in zip(a0, a1):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes()
    assert _numbers(r0.metrics) == _numbers(r1.metrics)
    assert r0.by_line() == r1.by_line()
    if need_segments:
        assert ran > 0
    return ran


def test_the_settings_turn_segments_off_and_limit_their_lanes():
    """settings.ptx_jit (SIMGPU_PTX_JIT) and ptx_jit_lanes (SIMGPU_PTX_JIT_LANES), read when a
    kernel's runs are built: off, or a lane limit of 0, no segment and no compiled loop runs."""
    n = 200
    host = (np.arange(1, n + 1, dtype=np.int64) * 7919 + 3, np.zeros(n, np.int64))
    for change in ({"ptx_jit": False}, {"ptx_jit_lanes": 0}):
        with settings.override(ptx_kernel_cache=False, **change):
            before = _compiled_calls()
            args, _ = _launch_plain(collatz, (4,), (64,), host, True, memory=False, timing=False)
            assert _compiled_calls() == before, change
    with settings.override(ptx_kernel_cache=False):
        before = _compiled_calls()
        same, _ = _launch_plain(collatz, (4,), (64,), host, True, memory=False, timing=False)
        assert _compiled_calls() > before
    assert args[1].tobytes() == same[1].tobytes()


@pytest.mark.parametrize("name", sorted(VCASES))
def test_validation_kernels_same_with_segments(name):
    c = VCASES[name]
    host = c["args"](np.random.default_rng(0))
    assert_same_segments(c["kernel"], tuple(c["grid"]), tuple(c["block"]), host,
                         need_segments=False, memory=False, timing=False)


def test_segments_on_loop_kernels():
    n = 200
    host = (np.arange(1, n + 1, dtype=np.int64) * 7919 + 3, np.zeros(n, np.int64))
    assert_same_segments(collatz, (4,), (64,), host, memory=False, timing=False)
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(96), rng.standard_normal(96)
    x[5], y[9], y[11] = np.nan, np.nan, 0.0
    x[13], y[17] = np.inf, -np.inf
    assert_same_segments(f64_mix, (3,), (32,), (x, y, np.zeros(96)), memory=False, timing=False)
    assert_same_segments(uniform_math, (2,), (64,), (np.zeros(100, np.float64), np.int32(5), 1.5),
                         need_segments=False, memory=False, timing=False)


def _bits_inputs(n, rng):
    """Bit patterns for the micro-operation test: random bits, f64 and f32 specials (NaNs with
    payloads and signs, infinities, zeros, subnormals, integers near rounding boundaries) and
    small integers (shift amounts)."""
    f64 = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, np.inf, -np.inf, 5e-324, -2.2e-308,
                    1.7976931348623157e308, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 4294967295.5,
                    -2147483648.5, 2147483647.5, 1e30, 3.0, 1.0 + 2.0 ** -52], np.float64).view(np.uint64)
    nan64 = np.array([0x7FF8000000000000, 0xFFF8000000000001, 0x7FF0000000000001,
                      0xFFF4000000000123], np.uint64)
    f32 = np.array([0.0, -0.0, 1.0, -1.0, 1.5, 2.5, -0.5, np.inf, -np.inf, 1e-45, -1.2e-38,
                    3.4028235e38, 2.0 ** 31, -2.0 ** 31, 2.0 ** 32, 16777217.0, 0.1],
                   np.float32).view(np.uint32).astype(np.uint64)
    nan32 = np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0xFFA00123], np.uint64)
    ints = np.array([0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF,
                     0xFFFFFFFFFFFFFFFF, 0x8000000000000000], np.uint64)
    pool = np.concatenate([f64, nan64, f32, nan32, ints])
    out = rng.integers(0, 2 ** 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, n, dtype=np.uint64)
    pick = rng.random(n) < 0.6
    out[pick] = rng.choice(pool, int(pick.sum()))
    small = rng.random(n) < 0.1                    # f64 values of every sign and size
    out[small] = (rng.standard_normal(int(small.sum())) * 10.0 ** rng.integers(-300, 300, int(small.sum()))).view(np.uint64)
    f32s = rng.random(n) < 0.15
    out[f32s] = (rng.standard_normal(int(f32s.sum())).astype(np.float32) * np.float32(1e3)).view(np.uint32)
    return out


_REG = {"f32": "%f", "f64": "%fd", "b32": "%r", "u32": "%r", "s32": "%r", "b64": "%rd", "u64": "%rd",
        "s64": "%rd", "pred": "%p"}


def _micro_kernel(lines):
    """A PTX kernel: each lane loads three 64-bit patterns a, b, c, views them as the typed
    registers %fd1-3 (f64), %f1-3 (f32, low word), %r1-3 (b32), %rd1-3 (b64), %p1-3 (low bit),
    runs ``lines`` (which write %fd9, %f9, %r9, %rd9 or %p9: every one is stored), stores."""
    body = "\n  ".join(lines)
    return f"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pout)
{{
  .reg .pred %p<12>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<24>;
  .reg .f32 %f<12>;
  .reg .f64 %fd<12>;
  ld.param.u64 %rd20, [pa];
  ld.param.u64 %rd21, [pout];
  mov.u32 %r10, %tid.x;
  mul.wide.u32 %rd22, %r10, 24;
  add.s64 %rd20, %rd20, %rd22;
  ld.global.u64 %rd1, [%rd20];
  ld.global.u64 %rd2, [%rd20+8];
  ld.global.u64 %rd3, [%rd20+16];
  mov.u64 %rd9, 0;
  mov.b64 %fd1, %rd1;
  mov.b64 %fd2, %rd2;
  mov.b64 %fd3, %rd3;
  cvt.u32.u64 %r1, %rd1;
  cvt.u32.u64 %r2, %rd2;
  cvt.u32.u64 %r3, %rd3;
  mov.b32 %f1, %r1;
  mov.b32 %f2, %r2;
  mov.b32 %f3, %r3;
  and.b32 %r4, %r1, 1;
  setp.ne.u32 %p1, %r4, 0;
  and.b32 %r4, %r2, 1;
  setp.ne.u32 %p2, %r4, 0;
  and.b32 %r4, %r3, 1;
  setp.ne.u32 %p3, %r4, 0;
  mov.f64 %fd9, 0d0000000000000000;
  mov.f32 %f9, 0f00000000;
  mov.u32 %r9, 0;
  setp.eq.u32 %p9, %r9, 1;
  {body}
  mov.b64 %rd10, %fd9;
  mov.b32 %r5, %f9;
  cvt.u64.u32 %rd11, %r5;
  cvt.u64.u32 %rd12, %r9;
  selp.u64 %rd13, 1, 0, %p9;
  mul.wide.u32 %rd22, %r10, 40;
  add.s64 %rd21, %rd21, %rd22;
  st.global.u64 [%rd21], %rd10;
  st.global.u64 [%rd21+8], %rd11;
  st.global.u64 [%rd21+16], %rd12;
  st.global.u64 [%rd21+24], %rd9;
  st.global.u64 [%rd21+32], %rd13;
  ret;
}}
"""


def _forms():
    """PTX lines for every form of the numba subset (one group per kernel)."""
    out = []
    for t in ("f32", "f64"):
        R = _REG[t]
        d, a, b, c = R + "9", R + "1", R + "2", R + "3"
        for op in ("add.rn", "sub.rn", "mul.rn", "div.rn", "add", "mul", "min", "max"):
            out.append([f"{op}.{t} {d}, {a}, {b};"])
        out.append([f"fma.rn.{t} {d}, {a}, {b}, {c};"])
        out.append([f"sqrt.rn.{t} {d}, {a};", f"abs.{t} {R}5, {b};", f"add.{t} {d}, {d}, {R}5;"])
        out.append([f"rcp.rn.{t} {d}, {a};", f"rcp.rn.{t} {R}5, {b};", f"sub.{t} {d}, {d}, {R}5;"])
        out.append([f"neg.{t} {d}, {a};", f"abs.{t} {R}5, {d};", f"sub.{t} {d}, {R}5, {c};"])
        out.append([f"selp.{t} {d}, {a}, {b}, %p3;"])
        for cmp in ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"):
            out.append([f"setp.{cmp}.{t} %p9|%p8, {a}, {b};", f"setp.{cmp}.and.{t} %p7|%p6, {a}, {c}, %p3;",
                        "xor.pred %p9, %p9, %p6;", "or.pred %p9, %p9, %p7;", "not.pred %p5, %p8;",
                        "and.pred %p9, %p9, %p5;"])
        for it in ("s32", "u32", "s64", "u64"):
            src = "%r1" if it[1:] == "32" else "%rd1"
            out.append([f"cvt.rn.{t}.{it} {d}, {src};"])
            dd = "%r9" if it[1:] == "32" else "%rd9"
            for rnd in ("rzi", "rni", "rmi", "rpi"):
                out.append([f"cvt.{rnd}.{it}.{t} {dd}, {a};"])
    out.append(["cvt.f64.f32 %fd9, %f1;", "cvt.rn.f32.f64 %f9, %fd2;"])
    for t in ("s32", "u32", "b32", "s64", "u64", "b64"):
        R = "%r" if t[1:] == "32" else "%rd"
        d, a, b, c = R + "9", R + "1", R + "2", R + "3"
        if t[0] != "b":
            out.append([f"add.{t} {d}, {a}, {b};", f"sub.{t} {d}, {d}, {c};", f"mul.lo.{t} {R}5, {d}, {b};",
                        f"mad.lo.{t} {d}, {R}5, {a}, {c};"])
            out.append([f"min.{t} {d}, {a}, {b};", f"max.{t} {R}5, {b}, {c};", f"add.{t} {d}, {d}, {R}5;"])
            for cmp in ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"):
                out.append([f"setp.{cmp}.{t} %p9, {a}, {b};", f"setp.{cmp}.or.{t} %p8, {b}, {c}, %p1;",
                            "xor.pred %p9, %p9, %p8;"])
            out.append([f"shr.{t} {d}, {a}, %r2;", f"shr.{t} {R}5, {b}, 3;", f"xor.b{t[1:]} {d}, {d}, {R}5;"])
        else:
            out.append([f"and.{t} {d}, {a}, {b};", f"or.{t} {R}5, {b}, {c};", f"xor.{t} {d}, {d}, {R}5;",
                        f"not.{t} {R}6, {d};", f"shl.{t} {d}, {R}6, %r3;", f"shl.{t} {R}5, {a}, 7;",
                        f"add.s{t[1:]} {d}, {d}, {R}5;", f"shr.{t} {d}, {d}, %r2;"])
            out.append([f"selp.{t} {d}, {a}, {b}, %p2;"])
    out.append(["abs.s32 %r9, %r1;", "neg.s32 %r5, %r2;", "add.s32 %r9, %r9, %r5;",
                "abs.s64 %rd9, %rd1;", "neg.s64 %rd5, %rd2;", "add.s64 %rd9, %rd9, %rd5;"])
    out.append(["mul.wide.s32 %rd9, %r1, %r2;", "mul.wide.u32 %rd5, %r2, %r3;", "add.s64 %rd9, %rd9, %rd5;",
                "mad.wide.s32 %rd5, %r1, %r3, %rd2;", "xor.b64 %rd9, %rd9, %rd5;",
                "mad.wide.u32 %rd5, %r3, %r1, %rd1;", "xor.b64 %rd9, %rd9, %rd5;"])
    out.append(["cvt.s64.s32 %rd9, %r1;", "cvt.u64.u32 %rd5, %r2;", "xor.b64 %rd9, %rd9, %rd5;",
                "cvt.u32.u64 %r9, %rd3;", "cvt.s32.s64 %r5, %rd1;", "add.s32 %r9, %r9, %r5;",
                "mov.b64 %rd6, %fd1;", "cvt.u32.u64 %r6, %rd6;", "add.u32 %r9, %r9, %r6;"])
    out.append(["ld.global.f32 %f5, [%rd20+4];", "ld.global.s8 %r5, [%rd20+9];",
                "ld.global.u16 %r6, [%rd20+2];", "ld.global.nc.s16 %r7, [%rd20+14];",
                "ld.global.f64 %fd5, [%rd20+8];", "add.f32 %f9, %f5, %f2;", "add.s32 %r9, %r5, %r6;",
                "xor.b32 %r9, %r9, %r7;", "add.f64 %fd9, %fd5, %fd1;", "ld.global.u8 %r8, [%rd20+23];",
                "add.u32 %r9, %r9, %r8;"])
    out.append(["mov.b64 {%r5, %r6}, %rd1;", "add.s32 %r6, %r6, %r2;", "mov.b64 %rd9, {%r6, %r5};",
                "mov.b64 {%r7, %r8}, %fd2;", "mov.b64 %fd9, {%r8, %r7};", "mov.b64 {%r9, %r4}, %rd9;"])
    return out


@pytest.mark.parametrize("k", range(len(_forms())))
def test_micro_operations_bit_identical(k):
    """Every form of the numba subset against the interpreter's numpy semantics, on random and
    special bit patterns (two launches: a run is compiled when reached the second time)."""
    lines = _forms()[k]
    src = _micro_kernel(lines)
    kern = Kernel(parse(src), "k")              # every form given is in the compiled subset
    body = {" ".join(x.rstrip(";").split()) for x in lines}
    pcs = [pc for pc, c in enumerate(kern.linked.code) if " ".join(c.text.rstrip(";").split()) in body]
    assert len(pcs) >= len(body) and all(jitseg.supported(kern, pc) for pc in pcs), lines
    n = 256
    rng = np.random.default_rng(k)
    host = _bits_inputs(3 * n, rng)
    abc = host.reshape(n, 3)
    same = rng.random(n) < 0.25                     # a, b, c of one scale (f64 and f32)
    abc[same] = rng.standard_normal((int(same.sum()), 3)).view(np.uint64)
    f32 = rng.random(n) < 0.2
    abc[f32] = rng.standard_normal((int(f32.sum()), 3)).astype(np.float32).view(np.uint32)
    with np.errstate(all="ignore"):                 # c = -RN(a*b): fma gives the rounding error
        cancel = rng.random(n) < 0.2
        a64, b64 = abc[cancel, 0].view(np.float64), abc[cancel, 1].view(np.float64)
        abc[cancel, 2] = (-(a64 * b64)).view(np.uint64)
        cancel = rng.random(n) < 0.2
        a32 = abc[cancel, 0].astype(np.uint32).view(np.float32)
        b32 = abc[cancel, 1].astype(np.uint32).view(np.float32)
        abc[cancel, 2] = (-(a32 * b32)).view(np.uint32)
    outs = []
    for fused in (False, True):
        with settings.override(ptx_blocks=fused):
            for _ in range(2):
                out = np.zeros(5 * n, np.uint64)
                before = jitseg.CALLS[0]
                ptx_run(src, "k", (2,), (128,), [host.copy(), out], max_steps=10 ** 6)
        if fused:
            assert jitseg.CALLS[0] > before, lines
        outs.append(out)
    bad = np.flatnonzero(outs[0] != outs[1])
    assert len(bad) == 0, (lines, [(int(i), hex(int(host[3 * (i // 5)])), hex(int(host[3 * (i // 5) + 1])),
                                    hex(int(outs[0][i])), hex(int(outs[1][i]))) for i in bad[:5]])


PTX_OOB = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pout, .param .u32 bad)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [pa];
  ld.param.u64 %rd2, [pout];
  ld.param.u32 %r1, [bad];
  mov.u32 %r2, %tid.x;
  setp.eq.u32 %p1, %r2, %r1;
  selp.u32 %r3, 4096, 0, %p1;
  add.u32 %r3, %r3, %r2;
  mul.wide.u32 %rd3, %r3, 4;
  add.s64 %rd4, %rd1, %rd3;
  ld.global.u32 %r4, [%rd4];
  add.u32 %r5, %r4, 1;
  mul.wide.u32 %rd5, %r2, 4;
  add.s64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6], %r5;
  ret;
}
""".replace(".reg .b32", ".reg .pred %p<2>;\n  .reg .b32")


def test_segment_load_that_faults_is_reported_as_the_interpreter_does():
    """A global load past its allocation inside a compiled segment: the segment changes nothing
    and the interpreter's path runs it, with its fault (the first launches compile the run)."""
    msgs = []
    for fused in (False, True):
        with settings.override(ptx_blocks=fused):
            for bad in (99, 99, 5):
                out = np.zeros(64, np.uint32)
                a = np.arange(64, dtype=np.uint32)
                if bad == 5:
                    with pytest.raises(simgpu.errors.KernelError) as e:
                        ptx_run(PTX_OOB, "k", (1,), (64,), [a, out, np.uint32(bad)], max_steps=10 ** 6)
                    msgs.append(str(e.value))
                else:
                    before = jitseg.CALLS[0]
                    ptx_run(PTX_OOB, "k", (1,), (64,), [a, out, np.uint32(bad)], max_steps=10 ** 6)
                    assert (out == a + 1).all()
        assert fused is False or jitseg.CALLS[0] > before
    assert msgs[0] == msgs[1] and "out-of-bounds" in msgs[0]


class OrderFreeRecorder(Recorder):
    """The event digest, declared order-free (it reads no executor state): the numba segments
    run with it, and it must see the same records as from the interpreter."""
    inst_order_free = True


class OrderFreeSharedRecorder(OrderFreeRecorder):
    """Also declares that it watches shared memory only: the segments' global loads run too."""
    mem_spaces = ("shared",)

    def mem(self, ev):
        if ev.space == "shared":
            super().mem(ev)


def _digests(kernel, grid, block, host, cls, **kw):
    out = []
    for fused in (False, True):
        args = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in host)
        rec = cls()
        before = jitseg.CALLS[0]
        with settings.override(ptx_blocks=fused):
            rep = simgpu.launch(kernel, grid, block, args, executor="ptx", observers=[rec], **kw)
        out.append((rec.n, rec.h.hexdigest(), _numbers(rep.metrics), jitseg.CALLS[0] - before,
                    [x.tobytes() for x in args if isinstance(x, np.ndarray)]))
    return out


@pytest.mark.parametrize("cls", [OrderFreeRecorder, OrderFreeSharedRecorder])
def test_order_free_observer_sees_the_same_events_through_segments(cls):
    """Every record (instruction, memory, branch, barrier), in order, is the same when the
    segments run (their records sent before they execute, after the first in one call)."""
    n = 200
    cases = [(collatz, (4,), (64,), (np.arange(1, n + 1, dtype=np.int64) * 7919 + 3, np.zeros(n, np.int64)))]
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(96), rng.standard_normal(96)
    x[5], y[9] = np.nan, np.nan
    cases.append((f64_mix, (3,), (32,), (x, y, np.zeros(96))))
    for name in ("nc_matmul_f64", "gp_dot_f32", "layernorm_rows_7x100_f32"):
        if name in VCASES:
            c = VCASES[name]
            cases.append((c["kernel"], tuple(c["grid"]), tuple(c["block"]), c["args"](np.random.default_rng(0))))
    ran = 0
    for kernel, grid, block, host in cases:
        (n0, h0, m0, _, a0), (n1, h1, m1, calls, a1) = _digests(kernel, grid, block, host, cls,
                                                                memory=False, timing=False)
        assert (n0, h0, m0, a0) == (n1, h1, m1, a1) and n0 > 0
        ran += calls
    assert ran > 0


# ---- compiled loops (simgpu/ptx/jitloop.py): a whole innermost loop in one numba call ---------
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernels_core  # noqa: E402  (tests/kernels_core.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))
import bench_compiled_blocks as bench  # noqa: E402
del sys.path[:2]


def loop_with_breaks(x, out):
    i = cuda.grid(1)
    if i < out.size:
        acc = 0.0
        v = x[i]
        for k in range(200):        # exits in the middle of the body, at per-lane iterations
            acc += v * k
            if acc > 50.0:
                break
            if v < 0.05:
                acc = -acc
                break
            acc = acc * 0.75
        out[i] = acc


def uniform_loop(out, n):
    i = cuda.grid(1)
    acc = 1
    for k in range(n):              # every lane the same trips: the loop runs on one column
        acc = acc * 3 + k
        if acc > 1000000:
            acc = acc & 1023
    if i < out.size:
        out[i] = acc + i


def loops_in_branches(x, out):
    i = cuda.grid(1)
    if i < out.size:
        n = x[i]
        s = 0
        if i % 3 == 0:              # one loop entered by a third of the lanes, the others wait
            while n > 1:
                n = n // 2 if n % 2 == 0 else 3 * n + 1
                s += 1
        else:
            while n > 7:
                n = n - (n >> 2)
                s += 2
        out[i] = s


def cycling(x, out):
    i = cuda.grid(1)
    n = x[i]
    s = 0
    while n != 0:                   # 1 -> 2 -> 4 -> 1 (mod 7): never ends, no progress
        n = (n * 2) % 7
        s += 1
    out[i] = s


def _loop_kernels():
    rng = np.random.default_rng(3)
    n = 200
    yield collatz, (4,), (64,), (np.arange(1, n + 1, dtype=np.int64) * 7919 + 3, np.zeros(n, np.int64))
    x, y = rng.standard_normal(96), rng.standard_normal(96)
    x[5], y[9], y[11] = np.nan, np.nan, 0.0
    yield f64_mix, (3,), (32,), (x, y, np.zeros(96))
    yield loop_with_breaks, (3,), (64,), (rng.random(150), np.zeros(150))
    yield uniform_loop, (2,), (64,), (np.zeros(128, np.int64), np.int64(40))
    yield loops_in_branches, (2,), (96,), (rng.integers(1, 10 ** 6, 180), np.zeros(180, np.int64))
    for name, shrink in (("online-softmax", 1), ("n-body", 4), ("Collatz", 4)):
        case = next(c for k, c in bench.cases().items() if k.startswith(name))
        fn, grid, block, args = case
        yield fn, tuple(max(1, g // shrink) for g in grid), block, args
    yield kernels_core.loops_and_control, (2,), (64,), (rng.integers(0, 40, 128), np.zeros(128, np.int64))
    yield kernels_core.rows_in_lockstep, (2,), (32,), (rng.random((24, 32), dtype=np.float32),
                                                     np.zeros(64, np.float32))
    yield kernels_core.math_mix, (1,), (64,), (rng.random(64, dtype=np.float32), np.zeros(64, np.float32))


@pytest.mark.parametrize("k", range(10))
def test_compiled_loops_same_as_the_interpreter(k):
    """Loops of every shape the compiler takes (if/else bodies, breaks, per-lane and uniform
    trips, loops entered by some lanes only), and the tests' own kernels: outputs, metrics and
    counts per line, interpreter vs compiled loops; the loops did run compiled."""
    kernel, grid, block, host = list(_loop_kernels())[k]
    before = jitloop.CALLS[0]
    assert_same_segments(kernel, grid, block, host, memory=False, timing=False)
    if k < 8:
        assert jitloop.CALLS[0] > before


def test_compiled_loops_with_every_model_on():
    """With the memory and timing models: the timing model takes no loop summed (no loop is
    compiled), the numba segments run under it (it is order-free), and nothing changes: outputs,
    metrics, the predicted time."""
    before = jitloop.CALLS[0]
    seg = jitseg.CALLS[0]
    cases = list(_loop_kernels())[:6]
    for name in TIMED:
        if name in VCASES:
            c = VCASES[name]
            cases.append((c["kernel"], tuple(c["grid"]), tuple(c["block"]), c["args"](np.random.default_rng(0))))
    for kernel, grid, block, host in cases:
        assert_same_segments(kernel, grid, block, host, need_segments=False, memory=True, timing=True)
    assert jitloop.CALLS[0] == before and jitseg.CALLS[0] > seg


def test_a_loop_without_progress_is_reported_as_the_interpreter_does():
    """The compiled call sees the state repeat, is thrown away, and the interpreter's loop watch
    reports the loop in its words."""
    msgs = []
    for fused in (False, True):
        x = np.array([0, 1, 0, 0] * 8, np.int64)
        with settings.override(ptx_blocks=fused), pytest.raises(simgpu.errors.KernelError) as e:
            simgpu.launch(cycling, (1,), (32,), (x, np.zeros(32, np.int64)), executor="ptx",
                          memory=False, timing=False)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and "progress" in msgs[0]


def test_the_loops_found():
    """The hand-written loop compiles (one block, its back edge the only exit); the same loop
    with a barrier in it, or around an inner loop, does not (the inner one does)."""
    k = Kernel(parse(PTX_LOOP), "k")
    lp = k.loop(5)
    assert lp is not None and (lp.head, lp.end) == (5, 13) and list(lp.exit_pcs) == [14]
    assert lp.term.shape == (1, 5) and lp.term[0, 0] == 1 and lp.term[0, 3] == -1
    bar = PTX_LOOP.replace("  setp.lt.u32 %p1, %r3, %r1;", "  bar.sync 0;\n  setp.lt.u32 %p1, %r3, %r1;")
    assert Kernel(parse(bar), "k").loop(5) is None
    nested = PTX_LOOP.replace("  mov.u32 %r4, 1;\nL_loop:\n", "L_outer:\n  mov.u32 %r4, 1;\nL_loop:\n").replace(
        "  @%p1 bra L_loop;\n", "  @%p1 bra L_loop;\n  setp.lt.u32 %p2, %r3, 7;\n  @%p2 bra L_outer;\n")
    kn = Kernel(parse(nested), "k")
    assert sorted(kn.loops) == [4, 5]
    assert kn.loop(4) is None and (kn.loop(5).head, kn.loop(5).end) == (5, 13)
