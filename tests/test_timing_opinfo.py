"""What IR ops cost: FMA contraction, free casts, pipe mixes, FLOPs and the register estimate."""
import math

import numpy as np

import simgpu
from simgpu import cuda
from simgpu.hardware import H200
from simgpu.ir.nodes import Instr, walk
from simgpu.ir.passes import contract
from simgpu.sass.costs import flops, pipe_mix, sass_count
from simgpu.runtime import Kernel
from simgpu.timing.registers import estimate_registers, max_live_registers


def axpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


def trig(x, y):
    i = cuda.grid(1)
    y[i] = math.sin(x[i]) + math.exp(x[i])


def typed(fn, args):
    k = Kernel(fn)
    simgpu.launch(k, (1,), (32,), args, memory=False, timing=False)
    return next(iter(k._typed.values()))


def instrs(fn):
    return [s for s in walk(fn.body) if isinstance(s, Instr)]


def test_mul_feeding_add_is_one_fma():
    """a * x[i] + y[i]: the multiply is contracted into the add (one FFMA), and the pair
    still counts two FLOPs per thread."""
    fn = typed(axpy, (np.float32(2), np.ones(32, np.float32), np.ones(32, np.float32)))
    assert contract(fn) == 1
    mul = [s for s in instrs(fn) if s.op == "mul" and s.ty == simgpu.ir.types.FLOAT32][0]
    add = [s for s in instrs(fn) if s.op == "add" and s.ty == simgpu.ir.types.FLOAT32][0]
    assert sass_count(mul) == 0 and sass_count(add) == 1
    assert flops(mul) + flops(add) == 2


def test_memory_access_costs_address_arithmetic_outside_shared():
    fn = typed(axpy, (np.float32(2), np.ones(32, np.float32), np.ones(32, np.float32)))
    contract(fn)
    ld = [s for s in instrs(fn) if s.op == "ld"][0]
    assert ld.attrs["space"] == "global"
    # the address (IMAD.WIDE/LEA) and numba's negative-index wrap-around, which ptxas keeps
    # even for i = cuda.grid(1): numba makes it a signed int64
    assert sass_count(ld) == 8 and pipe_mix(ld) == {"lsu": 1, "int": 2 + 5}


def rows_of(a, out):
    acc = np.float32(0)
    for k in range(a.shape[0]):
        acc += a[k, cuda.threadIdx.x] + a[cuda.blockIdx.x, k]
    out[cuda.grid(1)] = acc


def test_a_row_index_the_loop_changes_pays_the_64_bit_stride_multiply():
    fn = typed(rows_of, (np.ones((4, 32), np.float32), np.ones(32, np.float32)))
    contract(fn)
    lds = [s for s in instrs(fn) if s.op == "ld"]
    by_row, by_col = lds[0], lds[1]
    # a[k, tid]: LEA pair, 64-bit add, the k x stride multiply (4), k's wrap-around (5)
    assert pipe_mix(by_row) == {"lsu": 1, "int": 2 + 5, "iadd": 3, "imad": 3}
    # a[bid, k]: the row part is hoisted out of the loop
    assert pipe_mix(by_col) == {"lsu": 1, "int": 2 + 5, "iadd": 2}


def unsigned_index(x, out):
    i = np.uint32(cuda.grid(1))
    if i < x.size:
        out[i] = x[i & np.uint32(0xFFFF)]


def test_unsigned_and_masked_indices_skip_the_wrap_around():
    fn = typed(unsigned_index, (np.ones(32, np.float32), np.ones(32, np.float32)))
    contract(fn)
    for s in instrs(fn):
        if s.op in ("ld", "st"):
            assert s.attrs.get("wrap_dims", 0) == 0, s


def test_math_routines_have_pipe_mixes_summing_to_their_count():
    fn = typed(trig, (np.ones(32, np.float32), np.ones(32, np.float32)))
    for s in instrs(fn):
        if s.op == "math":
            assert sum(pipe_mix(s).values()) == sass_count(s)
    sin = [s for s in instrs(fn) if s.op == "math" and s.attrs["fn"] == "sin"][0]
    assert pipe_mix(sin)["fp32"] > pipe_mix(sin).get("sfu", 0)


def test_constant_casts_are_free():
    fn = typed(axpy, (np.float32(2), np.ones(32, np.float32), np.ones(32, np.float32)))
    assert all(sass_count(s) == 0 for s in instrs(fn) if s.op == "cast" and not isinstance(s.args[0], str))


def test_register_estimate_counts_live_values():
    """axpy keeps a handful of values live (index, two pointers, a product): tens of
    registers at most, and never fewer than the minimum allocation."""
    fn = typed(axpy, (np.float32(2), np.ones(32, np.float32), np.ones(32, np.float32)))
    assert 4 <= max_live_registers(fn) <= 16
    assert 16 <= estimate_registers(fn, H200) <= 32


# These check the IR path's own SASS estimate (sass/costs.py) and register estimate.
EXECUTOR = "ir"
