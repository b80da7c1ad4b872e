"""hypothesis-generated kernels (random expression trees, branches and loops over lane and
block ids, shared-memory exchanges with barriers) give identical results in simgpu and in a
direct numpy evaluation of the same program."""
import importlib.util
import itertools

import numpy as np
from hypothesis import given, settings, strategies as st, HealthCheck

import simgpu

BLOCK = 64
GRID = 3
_counter = itertools.count()

leaf = st.sampled_from(["tid", "bid", "v", "1", "3", "7", "-2"])


def exprs():
    return st.recursive(
        leaf,
        lambda sub: st.one_of(
            st.tuples(st.sampled_from(["+", "-", "*", "&", "|", "^"]), sub, sub).map(
                lambda t: f"({t[1]} {t[0]} {t[2]})"),
            st.tuples(st.sampled_from(["//", "%"]), sub, sub).map(
                lambda t: f"({t[1]} {t[0]} (abs({t[2]}) % 5 + 1))"),
            st.tuples(st.sampled_from(["min", "max"]), sub, sub).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        ),
        max_leaves=6,
    )


conds = st.tuples(exprs(), st.sampled_from(["<", ">", "==", "!=", "<=", ">="]), exprs()).map(
    lambda t: f"{t[0]} {t[1]} {t[2]}")

stmt = st.one_of(
    exprs().map(lambda e: ("assign", e)),
    st.tuples(conds, exprs(), exprs()).map(lambda t: ("if", *t)),
    st.tuples(st.integers(1, 5), exprs()).map(lambda t: ("loop", *t)),
    st.integers(1, BLOCK - 1).map(lambda c: ("shared", c)),
)


def kernel_source(prog):
    lines = ["from numba import cuda, int64", "", "def gen(out):",
             "    s = cuda.shared.array(64, int64)",
             "    tid = cuda.threadIdx.x", "    bid = cuda.blockIdx.x", "    v = tid * 3 + bid"]
    for st_ in prog:
        if st_[0] == "assign":
            lines.append(f"    v = ({st_[1]}) % 1000003")
        elif st_[0] == "if":
            lines += [f"    if {st_[1]}:", f"        v = ({st_[2]}) % 1000003", "    else:",
                      f"        v = ({st_[3]}) % 1000003"]
        elif st_[0] == "loop":
            lines += [f"    for k in range(tid % {st_[1]}):", f"        v = (v + ({st_[2]}) * k) % 1000003"]
        else:
            lines += ["    s[tid] = v", "    cuda.syncthreads()", f"    v = s[(tid + {st_[1]}) % 64]",
                      "    cuda.syncthreads()"]
    lines.append("    out[bid * 64 + tid] = v")
    return "\n".join(lines) + "\n"


def numpy_eval(prog):
    tid = np.tile(np.arange(BLOCK, dtype=np.int64), GRID)
    bid = np.repeat(np.arange(GRID, dtype=np.int64), BLOCK)
    env = {"tid": tid, "bid": bid, "min": np.minimum, "max": np.maximum, "abs": np.abs}

    def ev(e):
        return np.asarray(eval(e, {}, env), dtype=np.int64) * np.ones_like(tid)
    env["v"] = tid * 3 + bid
    for st_ in prog:
        if st_[0] == "assign":
            env["v"] = ev(st_[1]) % 1000003
        elif st_[0] == "if":
            c = ev(st_[1].replace("==", "__EQ__").replace("!=", "__NE__")
                   .replace("<=", "__LE__").replace(">=", "__GE__")
                   .replace("__EQ__", "==").replace("__NE__", "!=").replace("__LE__", "<=").replace("__GE__", ">="))
            env["v"] = np.where(c != 0, ev(st_[2]) % 1000003, ev(st_[3]) % 1000003)
        elif st_[0] == "loop":
            v = env["v"].copy()
            for k in range(st_[1]):
                active = k < tid % st_[1]
                env["k"] = np.int64(k)
                env["v"] = v
                v = np.where(active, (v + ev(st_[2]) * k) % 1000003, v)
            env["v"] = v
        else:
            v = env["v"].reshape(GRID, BLOCK)
            env["v"] = v[:, (np.arange(BLOCK) + st_[1]) % 64].reshape(-1)
    return env["v"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(stmt, min_size=1, max_size=5))
def test_generated_kernel_matches_numpy(tmp_path_factory, prog):
    src = kernel_source(prog)
    path = tmp_path_factory.mktemp("gen") / f"gen{next(_counter)}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = np.zeros(GRID * BLOCK, np.int64)
    simgpu.launch(mod.gen, GRID, BLOCK, (out,), memory=False)
    assert np.array_equal(out, numpy_eval(prog)), src
