"""simgpu.sweep: one row per case, failures per case, local processes, Dask, resume from a cache."""
import csv
import linecache

import numpy as np
import pytest

import simgpu
from simgpu import cuda
from simgpu.sweeps import SweepTable, grid

import sweep_cases as sc

EXECUTOR = "ir"


def test_rows_follow_the_params_and_carry_the_reports_metrics():
    params = [{"blocks": b} for b in (3, 1, 2)]
    tab = simgpu.sweep(sc.launch_report, params, workers=0, progress=False)
    assert [r["blocks"] for r in tab.rows] == [3, 1, 2]
    for r in tab.rows:
        n = r["blocks"] * 32
        x = np.ones(n, np.float32)
        rep = simgpu.launch(sc.add, r["blocks"], 32, (x, x, np.zeros_like(x)), executor="ir")
        assert r["warp_inst"] == rep.metrics["smsp__inst_executed.sum"]
        assert r["dram_bytes"] == rep.metrics["dram__bytes.sum"]
        assert r["time_us"] == pytest.approx(rep.metrics["gpu__time_duration.sum"] / 1e3)
        assert r["bottleneck"] == rep.extras["bottleneck"]
        assert r["error"] is None and r["case_s"] > 0


def test_a_failing_case_is_a_row_with_its_error_and_the_others_run():
    params = grid(blocks=[1, 2, 3], fail=[False])
    params[1]["fail"] = True
    tab = simgpu.sweep(sc.launch_add, params, workers=0, progress=False)
    assert len(tab) == 3 and len(tab.errors) == 1 and len(tab.ok) == 2
    assert tab.rows[1]["error"] == "ValueError: case 2 fails on purpose"
    assert all(r["correct"] for r in tab.ok)
    assert tab.ok[0]["rep.warp_inst"] < tab.ok[1]["rep.warp_inst"]


def test_a_kernel_error_names_the_source_line():
    def bad(x):
        i = cuda.grid(1)
        x[i + 1000] = 1.0

    tab = simgpu.sweep(lambda p: simgpu.launch(bad, 1, 32, (np.zeros(32, np.float32),), executor="ir"),
                       [{"a": 1}], workers=0, progress=False)
    err = tab.rows[0]["error"]
    assert err.startswith("KernelError: ") and "test_sweep.py:" in err and "thread (0, 0, 0)" in err


def test_a_dict_of_lists_is_its_cartesian_product():
    tab = simgpu.sweep(lambda p: {"prod": p["a"] * p["b"]}, {"a": [1, 2], "b": [10, 20, 30]},
                       workers=0, progress=False)
    assert [(r["a"], r["b"], r["prod"]) for r in tab] == [(a, b, a * b) for a in (1, 2) for b in (10, 20, 30)]


def test_local_worker_processes_give_the_same_rows_as_one_process():
    params = [{"blocks": b} for b in range(1, 9)]
    one = simgpu.sweep(sc.launch_add, params, workers=0, progress=False)
    two = simgpu.sweep(sc.launch_add, params, workers=2, progress=False)
    assert two.workers == 2 and two.backend == "local processes"
    strip = lambda t: [{k: v for k, v in r.items() if k != "case_s"} for r in t.rows]  # noqa: E731
    assert strip(one) == strip(two)
    assert all(r["correct"] for r in two.rows)


def test_lambdas_and_closures_reach_the_workers_with_their_kernels_source():
    """A kernel defined where no file holds it (a notebook cell): the payload carries its source."""
    src = ("def twice(x, out):\n"
           "    i = cuda.grid(1)\n"
           "    if i < out.size:\n"
           "        out[i] = 2 * x[i]\n")
    name = "<simgpu-test-cell-1>"
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    ns = {"cuda": simgpu.cuda}
    exec(compile(src, name, "exec"), ns)
    twice = ns["twice"]
    scale = np.float32(3)

    def case(p):
        x = np.arange(p["n"], dtype=np.float32) * scale
        out = np.zeros_like(x)
        simgpu.launch(twice, 1, p["n"], (x, out), executor="ir")
        return {"sum": float(out.sum())}

    tab = simgpu.sweep(case, [{"n": 32}, {"n": 64}], workers=1, mp_context="spawn", progress=False)
    assert tab.errors == []
    assert [r["sum"] for r in tab] == [float(2 * 3 * sum(range(n))) for n in (32, 64)]


def test_an_interrupted_sweep_resumes_from_its_cache(tmp_path, monkeypatch):
    params = [{"i": i} for i in range(10)]
    monkeypatch.setenv("SIMGPU_TEST_SWEEP_STOP", "6")
    with pytest.raises(KeyboardInterrupt):
        simgpu.sweep(sc.square_or_interrupt, params, workers=0, cache_dir=tmp_path, progress=False)
    with open(tmp_path / "rows.jsonl") as f:
        assert len(f.readlines()) == 6                 # cases 0..5 finished and were kept
    monkeypatch.delenv("SIMGPU_TEST_SWEEP_STOP")
    calls = []
    tab = simgpu.sweep(lambda p: calls.append(p["i"]) or sc.square_or_interrupt(p), params, workers=0,
                       cache_dir=tmp_path, progress=False)
    assert calls == [6, 7, 8, 9]
    assert tab.n_cached == 6
    assert [r["sq"] for r in tab] == [i * i for i in range(10)]


def test_half_a_sweep_on_processes_then_the_rest(tmp_path):
    params = [{"blocks": b} for b in range(1, 11)]
    first = simgpu.sweep(sc.launch_add, params[:5], workers=2, cache_dir=tmp_path, progress=False)
    assert first.errors == []
    # the second run may only run cases 6..10: the first five fail if they run again
    def only_new(p):
        if p["blocks"] <= 5:
            raise AssertionError("ran a cached case again")
        return sc.launch_add(p)

    tab = simgpu.sweep(only_new, params, workers=2, cache_dir=tmp_path, progress=False)
    assert tab.errors == [] and tab.n_cached == 5 and len(tab) == 10
    assert all(r["correct"] for r in tab)


def test_a_cache_made_with_other_metrics_is_refused(tmp_path):
    simgpu.sweep(sc.launch_report, [{"blocks": 1}], workers=0, cache_dir=tmp_path, progress=False)
    with pytest.raises(ValueError, match="metric columns"):
        simgpu.sweep(sc.launch_report, [{"blocks": 1}], workers=0, cache_dir=tmp_path, progress=False,
                     metrics=["dram__bytes.sum"])


def test_the_table_as_csv_text_html_and_pandas(tmp_path):
    tab = simgpu.sweep(sc.launch_report, [{"blocks": b} for b in (1, 2)], workers=0, progress=False,
                       metrics={"insts": "smsp__inst_executed.sum", "threads": lambda r: r.threads})
    assert tab.columns == ["blocks", "insts", "threads", "error", "case_s"]
    path = tab.to_csv(tmp_path / "t.csv")
    with open(path) as f:
        rows = list(csv.DictReader(f))
    assert [int(r["threads"]) for r in rows] == [32, 64]
    assert "SweepTable: 2 cases, 0 failed" in repr(tab) and "insts" in repr(tab)
    assert "<table>" in tab._repr_html_() and "<th>insts</th>" in tab._repr_html_()
    pd = pytest.importorskip("pandas")
    df = tab.to_pandas()
    assert isinstance(df, pd.DataFrame) and list(df["threads"]) == [32, 64]


def test_the_cost_formula_is_cases_times_per_case_over_workers():
    rows = [{"a": i, "error": None, "case_s": t} for i, t in enumerate([1.0, 2.0, 3.0])]
    tab = SweepTable(rows, param_names=["a"], workers=2)
    assert tab.per_case_s == 2.0
    assert tab.cost_s() == 3 * 2.0 / 2
    assert tab.cost_s(n_cases=10_000, workers=100) == 10_000 * 2.0 / 100


def test_bad_arguments_are_clear():
    with pytest.raises(TypeError, match="non-string parameter"):
        simgpu.sweep(sc.launch_report, [{1: 2}], workers=0, progress=False)
    with pytest.raises(ValueError, match="workers"):
        simgpu.sweep(sc.launch_report, [{"blocks": 1}], workers=-1, progress=False)


def test_on_a_dask_cluster_in_threads_and_by_address():
    distributed = pytest.importorskip("distributed")
    # in this process, one worker thread (two simulations at once in one process are not what
    # sweeps do: they use one process per worker)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as lc:
        with distributed.Client(lc) as client:
            params = [{"blocks": b, "fail": b == 4} for b in range(1, 9)]
            tab = simgpu.sweep(sc.launch_add, params, client=client, progress=False)
            assert tab.backend == "dask" and tab.workers == 1
            assert [r["blocks"] for r in tab] == list(range(1, 9))
            assert [r["blocks"] for r in tab.errors] == [4]
            assert all(r["correct"] for r in tab.ok)
        tab2 = simgpu.sweep(lambda p: {"sq": p["i"] ** 2}, [{"i": i} for i in range(5)],
                            client=lc.scheduler_address, progress=False)
        assert [r["sq"] for r in tab2] == [0, 1, 4, 9, 16]


def test_a_local_worker_that_dies_stops_the_sweep_and_a_rerun_finishes_it(tmp_path):
    from concurrent.futures.process import BrokenProcessPool
    params = [{"i": i, "die": i == 5} for i in range(8)]
    with pytest.raises(BrokenProcessPool):
        simgpu.sweep(sc.square_or_die, params, workers=2, chunk=1, cache_dir=tmp_path, progress=False)
    calls = []

    def safe(p):
        calls.append(p["i"])
        return {"sq": p["i"] ** 2}

    tab = simgpu.sweep(safe, params, workers=0, cache_dir=tmp_path, progress=False)
    assert 5 in calls and tab.n_cached + len(calls) == 8
    assert [r["sq"] for r in tab] == [i * i for i in range(8)] and tab.errors == []
