"""The one observer contract (simgpu/events.py): one recording observer, written once, runs
through both executors on the same kernels, and the hook sequences and their records agree
where the two programs agree (the same accesses by the same threads, the same barriers, the
same divergent branch) -- on the default (compiled) path as well as simgpu's IR path."""
import re
from collections import Counter

import numpy as np
import pytest

import simgpu
from simgpu import cuda
from simgpu.events import (BarrierEvent, BranchEvent, Chunk, InstrEvent, MemEvent, Observer,
                           overrides)


class Recorder(Observer):
    def __init__(self):
        self.hooks = []
        self.mem_threads = Counter()        # (line, space, kind) -> threads
        self.barrier_threads = Counter()    # (line, scope) -> threads
        self.divergent = Counter()          # line -> divergent warps
        self.inst_lines = set()

    def launch_begin(self, launch):
        self.hooks.append("launch_begin")

    def chunk_begin(self, chunk):
        assert isinstance(chunk, Chunk)
        self.hooks.append("chunk_begin")

    def inst(self, ev):
        assert isinstance(ev, InstrEvent) and ev.mask.any()
        self.hooks.append("inst")
        self.inst_lines.add(ev.line)

    def branch(self, ev):
        assert isinstance(ev, BranchEvent)
        self.hooks.append("branch")
        self.divergent[ev.line] += ev.divergent_warps

    def mem(self, ev):
        assert isinstance(ev, MemEvent)
        self.hooks.append("mem")
        if ev.space in ("global", "shared"):
            self.mem_threads[(ev.inst.loc.line, ev.space, ev.kind)] += ev.mask.n_threads

    def barrier(self, ev):
        assert isinstance(ev, BarrierEvent)
        self.hooks.append("barrier")
        self.barrier_threads[(ev.line, ev.scope)] += ev.mask.n_threads

    def chunk_end(self, chunk):
        self.hooks.append("chunk_end")

    def launch_end(self, launch):
        self.hooks.append("launch_end")


def relu_if(x, out):
    i = cuda.grid(1)
    if i < x.size:
        if x[i] > 0:
            out[i] = x[i] * 2
        else:
            out[i] = 0.0


def block_sum(x, out):
    s = cuda.shared.array(128, np.float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] if i < x.size else 0.0
    cuda.syncthreads()
    k = 64
    while k > 0:
        if t < k:
            s[t] += s[t + k]
        cuda.syncthreads()
        k //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


CASES = {
    "relu_if": (relu_if, 5, 128, lambda: (np.random.default_rng(1).standard_normal(600).astype(np.float32),
                                         np.zeros(600, np.float32))),
    "block_sum": (block_sum, 6, 128, lambda: (np.arange(700, dtype=np.float32), np.zeros(6, np.float32))),
}


def record(name, executor):
    fn, grid, block, make = CASES[name]
    args = make()
    rec = Recorder()
    simgpu.launch(fn, grid, block, args, observers=[rec], executor=executor, memory=False,
                  timing=False, chunk_lanes=2 * 128)
    return rec, args


GRAMMAR = re.compile(r"launch_begin( chunk_begin( (inst|branch|mem|barrier))* chunk_end)+ launch_end")


@pytest.mark.parametrize("name", sorted(CASES))
def test_both_executors_speak_the_one_contract(name):
    ptx, a_ptx = record(name, "ptx")
    ir, a_ir = record(name, "ir")
    for a, b in zip(a_ptx, a_ir):
        assert np.array_equal(a, b)
    for rec in (ptx, ir):
        assert GRAMMAR.fullmatch(" ".join(rec.hooks)), rec.hooks[:20]
        assert rec.hooks.count("chunk_begin") == 3      # blocks_per_chunk=2: the same chunks
        assert {"inst", "mem", "branch"} <= set(rec.hooks)
    # the same stores by the same threads at the same lines; loads too where the compiler kept
    # them (in relu_if it reuses the x[i] of the condition: one load less on line 64)
    stores = lambda r: {k: v for k, v in r.mem_threads.items() if k[2] == "st"}   # noqa: E731
    assert stores(ptx) == stores(ir)
    if name == "block_sum":
        assert ptx.mem_threads == ir.mem_threads
    else:
        assert set(ptx.mem_threads) <= set(ir.mem_threads)
    assert ptx.barrier_threads == ir.barrier_threads
    # within each executor the records agree: every access's line is a line of some instruction
    for rec in (ptx, ir):
        assert {k[0] for k in rec.mem_threads} <= rec.inst_lines


class Sequence(Observer):
    """The hook sequence, each record with the instruction it belongs to."""

    def __init__(self):
        self.seq = []

    def inst(self, ev):
        self.seq.append(("inst", ev.ins, ev.line))

    def mem(self, ev):
        self.seq.append((f"mem:{ev.space}:{ev.kind}", ev.inst, ev.inst.loc.line))

    def barrier(self, ev):
        self.seq.append((f"barrier:{ev.scope}", ev.ins, ev.line))

    def branch(self, ev):
        self.seq.append(("branch", ev.node, ev.line))


def per_instruction(name, executor):
    """The hook sequence as one group per executed instruction: its line, then the kinds of
    the records that follow its ``inst`` (events.py's order: ``inst``, then its barrier, mem
    and branch records); a record that does not follow its own instruction's ``inst`` fails."""
    fn, grid, block, make = CASES[name]
    obs = Sequence()
    simgpu.launch(fn, grid, block, make(), observers=[obs], executor=executor, memory=False,
                  timing=False, chunk_lanes=2 * 128)
    groups, current = [], None
    for kind, ins, line in obs.seq:
        if kind == "inst":
            current = ins
            groups.append([line])
        elif kind.startswith(("mem", "barrier")):
            assert ins is current, (executor, kind, line, "not after its instruction's inst")
            groups[-1].append(kind)
        elif ins is not current:            # an IR decision (if/loop): not an instruction
            current = None
    return groups


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_order_inst_then_its_records_on_both_executors(name):
    """Both executors emit an instruction's records after its ``inst``; where the programs
    agree (block_sum: the same accesses and barriers, in the same order) the sequences of the
    instructions that make records are the same, kind by kind."""
    seqs = {ex: per_instruction(name, ex) for ex in ("ptx", "ir")}
    for ex, groups in seqs.items():
        assert any(len(g) > 1 for g in groups), ex
    if name == "block_sum":
        with_records = {ex: [tuple(g) for g in groups if len(g) > 1] for ex, groups in seqs.items()}
        assert with_records["ptx"] == with_records["ir"]
        assert any(g[1:] == ("barrier:block",) for g in with_records["ir"])
        assert any(g[1:] == ("mem:shared:ld",) for g in with_records["ir"])


def test_the_data_dependent_branch_diverges_the_same_warps_on_both():
    ptx, _ = record("relu_if", "ptx")
    ir, _ = record("relu_if", "ir")
    line = relu_if.__code__.co_firstlineno + 3          # if x[i] > 0:
    assert ir.divergent[line] > 0
    assert ptx.divergent[line] == ir.divergent[line]
    nonzero = lambda d: {k: v for k, v in d.items() if v}   # noqa: E731
    assert nonzero(ptx.divergent) == nonzero(ir.divergent)


def test_a_hook_is_called_only_where_it_is_overridden():
    class OnlyMem(Observer):
        n = 0

        def mem(self, ev):
            OnlyMem.n += 1

    assert overrides(OnlyMem(), "mem") and not overrides(OnlyMem(), "inst")
    x = np.ones(64, np.float32)
    for ex in ("ptx", "ir"):
        simgpu.launch(relu_if, 1, 64, (x, np.zeros_like(x)), observers=[OnlyMem()], executor=ex,
                      memory=False, timing=False)
    assert OnlyMem.n > 0


def test_the_example_observer_runs_on_both_executors(capsys):
    import importlib.util
    import os
    p = os.path.join(os.path.dirname(__file__), "..", "examples", "observer_line_efficiency.py")
    spec = importlib.util.spec_from_file_location("observer_line_efficiency", p)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main()
    out = capsys.readouterr().out
    assert "ptx:" in out and "ir:" in out and "if x[i] > 0:" in out


def test_there_is_no_raw_stream_the_ptx_executor_emits_the_records():
    """One event vocabulary: no class of simgpu has the old raw hooks (``instruction(ev)`` /
    ``mem_access(ev)``), simgpu/ptx/events.py and the runtime's adapter are gone, and the PTX
    executor itself hands simgpu.events records to a plain Observer (simgpu.ptx.run, no
    launch and no runtime in between)."""
    import ast
    import os
    from simgpu import events
    from simgpu.ptx import run as ptx_run
    pkg = os.path.dirname(simgpu.__file__)
    raw = set()
    for dirpath, _, files in os.walk(pkg):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, pkg)
            for node in ast.walk(ast.parse(open(path).read())):
                if isinstance(node, ast.ClassDef):
                    for d in node.body:
                        if isinstance(d, ast.FunctionDef) and d.name in ("instruction", "mem_access") \
                                and [a.arg for a in d.args.args] == ["self", "ev"]:
                            raw.add(f"{rel}:{node.name}")
    assert raw == set(), raw
    assert not os.path.exists(os.path.join(pkg, "ptx", "events.py"))
    from simgpu.runtime import ptx_path
    assert not hasattr(ptx_path, "_Adapter")

    class Rec(events.Observer):
        def __init__(self):
            self.kinds = []

        def inst(self, ev):
            assert isinstance(ev, events.InstrEvent) and isinstance(ev.chunk, events.Chunk)
            assert ev.chunk is ev.state.ch          # one Chunk: the record's is the executor's
            self.kinds.append(("inst", ev.ins.attrs["opcode"], ev.n_warps, ev.mask.n_threads))

        def mem(self, ev):
            assert isinstance(ev, events.MemEvent)
            self.kinds.append(("mem", ev.space, ev.kind, ev.mask.n_threads, ev.array.space))

        def branch(self, ev):
            self.kinds.append(("branch", ev.divergent_warps))

    from simgpu._compat import load_numba_cuda
    load_numba_cuda()
    import numba.cuda
    ns = {"cuda": numba.cuda}
    exec("def k(x, out):\n    i = cuda.grid(1)\n    if i < 40:\n        out[i] = x[i] * 2.0\n", ns)
    k = ns["k"]
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    r = Rec()
    from simgpu.ptx.runner import compile_numba
    ptx, name = compile_numba(k, (x, out))
    ptx_run(ptx, name, 1, 64, (x, out), observers=[r])
    np.testing.assert_array_equal(out[:40], x[:40] * 2)
    mems = [m for m in r.kinds if m[0] == "mem"]
    assert ("mem", "global", "ld", 40, "global") in mems and ("mem", "global", "st", 40, "global") in mems
    assert ("branch", 1) in r.kinds              # warp 1: lanes 32..39 go on, 40..63 leave
    assert any(m[0] == "inst" and m[2] == 2 and m[3] == 64 for m in r.kinds)


def test_every_executor_declares_the_whole_protocol_and_launch_probes_none():
    """launch asks an executor for what runtime/executor.py:Executor declares, directly: no
    getattr probes with defaults; every executor simgpu has implements all of it; an object
    that is not an executor is refused with the members it lacks."""
    import inspect
    from simgpu.errors import LaunchError
    from simgpu.host.kernels import CompiledPTXExecutor
    from simgpu.runtime import launch as launch_mod
    from simgpu.runtime.executor import EXECUTORS, Executor, get_executor
    from simgpu.runtime.foreign import ForeignPTXExecutor
    for cls in (*EXECUTORS.values(), ForeignPTXExecutor, CompiledPTXExecutor):
        for member in ("name", "binds_python", "supports_timing", "prepare", "make_counter", "run"):
            assert hasattr(cls, member), (cls, member)
        assert {"prepare", "make_counter", "run"} <= {n for n, _ in inspect.getmembers(cls, callable)}
    src = inspect.getsource(launch_mod)
    for member in ("binds_python", "supports_timing", "prepare", "make_counter", "fill_report", "name"):
        assert f'getattr(ex, "{member}"' not in src and f'getattr(executor, "{member}"' not in src
    assert isinstance(get_executor("ir"), Executor)

    class RunOnly:
        name = "mine"

        def run(self, program, launch, observers):
            return 0
    with pytest.raises(LaunchError, match="lacks binds_python, supports_timing, prepare, make_counter"):
        get_executor(RunOnly())


def _observer_classes():
    """(module path, class name, base names) of every class in simgpu/ that subclasses one."""
    import ast
    import os
    root = os.path.join(os.path.dirname(simgpu.__file__))
    out = []
    for d, _, files in os.walk(root):
        for f in files:
            if f.endswith(".py"):
                p = os.path.join(d, f)
                tree = ast.parse(open(p).read())
                for n in ast.walk(tree):
                    if isinstance(n, ast.ClassDef) and n.bases:
                        out.append((os.path.relpath(p, root), n.name,
                                    [ast.unparse(b).rsplit(".", 1)[-1] for b in n.bases]))
    return out


def test_the_counter_the_trace_recorder_and_the_stepper_recorder_exist_once():
    """Issue 21: one instruction counter, one timing trace recorder, one stepper recorder for
    both executors; what differs per executor is a cost source or a view given to them, never
    a second class (or a subclass) of the observer."""
    from simgpu.exec.counters import CompiledSass, InstCounter, IrSass
    from simgpu.runtime.executor import get_executor
    classes = _observer_classes()
    for one in ("InstCounter", "TraceRecorder", "Recorder"):
        assert [c for c in classes if c[1] == one], one
        assert not [c for c in classes if one in c[2]], f"{one} is subclassed"
    names = {c[1] for c in classes}
    for gone in ("SassInstCounter", "PtxTraceRecorder", "PtxRecorder"):
        assert gone not in names
    ir = get_executor("ir").make_counter(None)
    assert type(ir) is InstCounter and isinstance(ir.costs, IrSass)
    assert isinstance(get_executor("ptx").make_counter(type("L", (), {"ptx": None})()).costs, CompiledSass)
