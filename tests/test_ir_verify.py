"""The IR verifier accepts what the frontend produces and names what is malformed."""
import numpy as np
import pytest

from simgpu import cuda
from simgpu.ir.nodes import Break, Const, Instr, Loc
from simgpu.ir.verify import IRError, verify
from simgpu.runtime.program import KernelProgram

L = Loc("k.py", 3)


def axpy(a, x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + out[i]


def _fn():
    return KernelProgram(axpy).lower()


def test_lowered_and_typed_kernels_verify():
    """A lowered kernel and its typed specialisation are well formed."""
    k = KernelProgram(axpy)
    verify(k.lower())
    from simgpu.ir import types as T
    verify(k.specialize([T.FLOAT32, T.ArrayType(T.FLOAT32, 1, "global"), T.ArrayType(T.FLOAT32, 1, "global")]))


@pytest.mark.parametrize("stmt, message", [
    (Instr("frobnicate", "t", (), L), "unknown op"),
    (Instr("math", "t", (Const(1.0),), L), "missing attribute 'fn'"),
    (Instr("add", "t", ("nowhere", Const(1)), L), "reads 'nowhere', which nothing defines"),
    (Instr("add", "t", (3, Const(1)), L), "neither a name nor a Const"),
    (Break(L), "break outside a loop"),
])
def test_malformed_ir_is_named(stmt, message):
    """Each kind of malformed statement is reported with its location."""
    fn = _fn()
    fn.body.append(stmt)
    with pytest.raises(IRError, match=message) as e:
        verify(fn)
    assert "k.py:3" in str(e.value)


def test_verify_runs_on_every_test_kernel():
    """conftest.py wraps lowering so every kernel launched by the tests is verified."""
    assert KernelProgram.lower.__name__ == "_verified_lower"
    out = np.zeros(4, np.float32)
    import simgpu
    simgpu.launch(axpy, 1, 4, (np.float32(2), np.ones(4, np.float32), out), memory=False, timing=False)
    assert out.tolist() == [2.0] * 4
