"""Typical learner mistakes (issue 12, part 5): each error points at the kernel's source line,
says what the user wrote and what to write instead.  The IR path raises simgpu's own DSLError
or TypingError; the compiled path raises numba-cuda's error (its type) with simgpu's reading of
the mistake first and numba's text trimmed after it (runtime/compile_errors.py), or, where numba
fails outside its typing (a TypeError or a NotImplementedError from its lowering), simgpu's
DSLError itself."""
import math
import re
import traceback

import numpy as np
import pytest
from numba import cuda, float32

import simgpu
from simgpu import settings
from simgpu.sass.toolchain import compiled_path_available

HERE = "test_learner_errors.py"


def store_to_thread_index(out, a):
    cuda.threadIdx.x = 0                                    # line +1
    out[0] = a[0]


def store_to_dim3(out, a):
    cuda.threadIdx = 1
    out[0] = a[0]


def forgot_x(out, a):
    i = cuda.threadIdx
    out[i] = a[i] + 10


def forgot_x_in_expression(out, a):
    i = cuda.threadIdx.x + cuda.blockIdx * cuda.blockDim.x
    out[i] = a[i]


def shared_size_from_argument(out, a, size):
    s = cuda.shared.array(size, float32)
    s[0] = a[0]
    out[0] = s[0]


def shared_without_dtype(out, a):
    s = cuda.shared.array(4)
    s[0] = a[0]
    out[0] = s[0]


def too_many_indices(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i, 0]


def store_whole_array(out, a):
    i = cuda.threadIdx.x
    out[i] = a


def whole_array_arithmetic(out, a):
    out = a + 10


def sqrt_of_array(out, a):
    out[0] = math.sqrt(a)


def sync_not_called(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i]
    cuda.syncthreads


def return_a_value(out, a):
    i = cuda.threadIdx.x
    return a[i]


def numpy_allocation(out, a):
    t = np.zeros(4)
    out[0] = t[0]


def float_index(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i / 2]


def undefined_name(out, a):
    i = cuda.threadIdx.x
    out[i] = a[i] + offset


def list_literal(out, a):
    t = [0.0, 0.0]
    out[0] = t[0]


def size_called(out, a):
    i = cuda.threadIdx.x
    if i < a.size():
        out[i] = a[i]


def misspelt_intrinsic(out, a):
    i = cuda.threadIdx.x
    cuda.syncthread()
    out[i] = a[i]


def grid_without_ndim(out, a):
    i = cuda.grid()
    out[i] = a[i]


def _line(fn, k):
    return fn.__code__.co_firstlineno + k


# kernel, line of the mistake (from its def), what was done, what to write instead,
# whether numba-cuda refuses it too (False: it compiles on the compiled path)
MISTAKES = [
    (store_to_thread_index, 1, "`cuda.threadIdx.x = ...` assigns to cuda.threadIdx.x, which is read-only",
     "store the value in a variable of your own", True),
    (store_to_dim3, 1, "`cuda.threadIdx = ...` assigns to cuda.threadIdx, which is read-only",
     "store the value in a variable of your own", True),
    (forgot_x, 1, "`i = cuda.threadIdx` uses cuda.threadIdx, which holds three numbers (.x, .y, .z)",
     "pick one component: cuda.threadIdx.x", True),
    (forgot_x_in_expression, 1, "`cuda.blockIdx` holds three numbers (.x, .y, .z), where one number is needed",
     "pick one component: cuda.blockIdx.x", True),
    (shared_size_from_argument, 1, "must be a constant known when the kernel is compiled, not `size`: "
     "'size' is a kernel argument", "module-level constant (TPB = 16", True),
    (shared_without_dtype, 1, "`cuda.shared.array(4)` is missing the dtype",
     "cuda.shared.array(16, numba.float32)", True),
    (too_many_indices, 2, "'a' is a 1-d array (global array(float32, 1d)) but is indexed with 2 indices",
     "use one index per dimension: a[i]", True),
    (store_whole_array, 2, "'a' is a whole array, stored into one element of 'out'",
     "store one element at a time: out[i] = a[i]", True),
    (whole_array_arithmetic, 1, "'a' is a whole array where + needs a number",
     "index it: a[i], with i = cuda.grid(1)", True),
    (sqrt_of_array, 1, "'a' is a whole array where math.sqrt() needs a number", "index it: a[i]", True),
    (return_a_value, 2, "a kernel cannot return a value (`return a[i]`)",
     "write the result into an output array", True),
    (numpy_allocation, 1, "`np.zeros(4)` allocates an array: kernels cannot allocate memory with numpy",
     "cuda.local.array(n, float32)", True),
    (float_index, 2, "an index of 'a' is a float64, and array indices must be integers",
     "divide with // (i // 2)", True),
    (undefined_name, 2, "name 'offset' is not defined", "define it at module level (offset = ...)", True),
    (list_literal, 1, "'List' expressions are not supported in kernels", "t = cuda.local.array(n, float32)",
     True),
    (size_called, 2, "`a.size()` calls a.size, which is a number, not a function",
     "drop the parentheses: a.size", True),
    (misspelt_intrinsic, 2, "cuda.syncthread() does not exist in numba.cuda", "did you mean cuda.syncthreads()?",
     True),
    (grid_without_ndim, 1, "cuda.grid() takes the number of dimensions (1, 2 or 3)", "i = cuda.grid(1)", True),
]
IDS = [m[0].__name__ for m in MISTAKES]


def _args(fn):
    base = (np.zeros(8, np.float32), np.arange(8, dtype=np.float32))
    return base + ((np.int64(4),) if fn.__code__.co_argcount == 3 else ())


@pytest.mark.parametrize("fn,k,did,instead,numba_refuses", MISTAKES, ids=IDS)
def test_ir_path_says_what_was_done_and_what_to_write(fn, k, did, instead, numba_refuses):
    with pytest.raises(simgpu.DSLError) as e:            # TypingError is a DSLError
        simgpu.launch(fn, 1, 8, _args(fn), executor="ir", timing=False)
    msg = str(e.value)
    assert f"{HERE}:{_line(fn, k)}:" in msg, msg
    assert did in msg, msg
    assert "hint: " in msg and instead in msg.split("hint: ", 1)[1], msg
    assert "Intrinsic(" not in msg and "'s0'" not in msg and "%t" not in msg


@pytest.mark.skipif(not compiled_path_available()[0], reason="no numba-cuda/ptxas")
@pytest.mark.parametrize("fn,k,did,instead,numba_refuses", [m for m in MISTAKES if m[4]],
                         ids=[i for i, m in zip(IDS, MISTAKES) if m[4]])
def test_compiled_path_adds_simgpus_reading(fn, k, did, instead, numba_refuses):
    with pytest.raises(Exception) as e:
        simgpu.launch(fn, 1, 8, _args(fn), executor="ptx", timing=False)
    err = e.value
    text = str(err)
    if isinstance(err, simgpu.DSLError):              # numba failed outside its typing
        assert isinstance(err.__context__, Exception)   # numba's own error kept (not printed)
        assert err.__cause__ is None and err.__suppress_context__
    else:                                             # numba's error type, simgpu's reading first
        assert type(err).__module__.startswith("numba")
        assert text.index(did) < text.index("numba-cuda's ")
        assert not getattr(err, "__notes__", ())
    assert f"{HERE}:{_line(fn, k)}:" in text and did in text and instead in text, text


@pytest.mark.skipif(not compiled_path_available()[0], reason="no numba-cuda/ptxas")
def test_simgpu_numba_errors_full_gives_numbas_error_unchanged():
    """SIMGPU_NUMBA_ERRORS=full: numba's text and traceback as numba raises them, simgpu's reading
    as a note at the end (the behaviour before issue 23)."""
    with settings.override(numba_errors="full"), pytest.raises(Exception) as e:
        simgpu.launch(shared_size_from_argument, 1, 8, _args(shared_size_from_argument), executor="ptx",
                      timing=False)
    assert type(e.value).__module__.startswith("numba")
    # numba's own text (numba highlights it with ANSI codes where its colour scheme is on)
    assert re.sub(r"\x1b\[[0-9;]*m", "", str(e.value)).startswith("No implementation of function")
    assert [n for n in e.value.__notes__ if n.startswith("simgpu's reading")]
    assert len(traceback.format_exception(e.value)) > 20          # numba's frames kept


@pytest.mark.parametrize("executor", ["ir", pytest.param("ptx", marks=pytest.mark.skipif(
    not compiled_path_available()[0], reason="no numba-cuda/ptxas"))])
def test_a_barrier_named_but_not_called_is_a_warning_at_its_line(executor):
    """numba compiles `cuda.syncthreads` (no parentheses) to nothing: the kernel runs, as
    numba would run it, with a warning at the line on both paths."""
    out = np.zeros(8, np.float32)
    with pytest.warns(simgpu.SimGPUWarning, match=r"`cuda.syncthreads` names a function without calling "
                      r"it: this line does nothing \(hint: call it: cuda.syncthreads\(\)\)") as w:
        simgpu.launch(sync_not_called, 1, 8, (out, np.arange(8, dtype=np.float32)), executor=executor,
                      timing=False)
    assert out[5] == 5
    hit = [x for x in w if issubclass(x.category, simgpu.SimGPUWarning)]
    assert hit[0].filename.endswith(HERE) and hit[0].lineno == _line(sync_not_called, 3)


def test_correct_kernel_gets_no_reading():
    def ok(out, a):
        i = cuda.threadIdx.x
        out[i] = a[i] + 1
    out = np.zeros(8, np.float32)
    simgpu.launch(ok, 1, 8, (out, np.arange(8, dtype=np.float32)), executor="ir", timing=False)
    assert out[3] == 4
