"""issue 15's done-when: a sweep of 1,000 simulated launches on a 4-worker Dask LocalCluster
(worker processes), every launch's result checked. The scaling is measured by
benchmarks/bench_sweep.py, not here (tests never time anything)."""
import numpy as np
import pytest

import simgpu

import sweep_cases as sc

distributed = pytest.importorskip("distributed")


def test_1000_launches_on_a_4_worker_local_cluster(tmp_path):
    params = [{"blocks": 1 + i % 8, "seed": i} for i in range(1000)]
    with distributed.LocalCluster(n_workers=4, threads_per_worker=1, processes=True,
                                  dashboard_address=None, local_directory=str(tmp_path)) as lc:
        with distributed.Client(lc) as client:
            tab = simgpu.sweep(sc.launch_add, params, client=client, progress=False,
                               metrics={"warp_inst": "smsp__inst_executed.sum", "dram_bytes": "dram__bytes.sum"})
    assert len(tab) == 1000 and tab.errors == []
    assert all(r["correct"] for r in tab)          # every launch computed x + y exactly
    assert tab.workers == 4 and tab.backend == "dask"
    # one launch per block count, on this process, gives the same counters as the cluster did
    for b in range(1, 9):
        n = b * 32
        x = np.arange(n, dtype=np.float32)
        rep = simgpu.launch(sc.add, b, 32, (x, np.full(n, 2, np.float32), np.zeros(n, np.float32)), executor="ir")
        got = {(r["rep.warp_inst"], r["rep.dram_bytes"]) for r in tab if r["blocks"] == b}
        assert got == {(rep.metrics["smsp__inst_executed.sum"], rep.metrics["dram__bytes.sum"])}


def test_a_case_that_kills_its_worker_is_an_error_row_and_not_cached(tmp_path):
    """Dask restarts the dead worker and resubmits what it held (`retries`); the case that kills
    its worker every time runs out of retries and becomes that row's error (a case that happened
    to sit on the dying worker twice may share that fate: Dask cannot tell them apart); the rows
    that finished are right and cached, the failed ones are not, and a resumed sweep runs
    exactly those again."""
    dask = pytest.importorskip("dask")
    params = [{"i": i, "die": i == 3} for i in range(6)]
    with dask.config.set({"distributed.scheduler.allowed-failures": 0,
                          "distributed.scheduler.worker-saturation": 1.0}):
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None, local_directory=str(tmp_path)) as lc:
            with distributed.Client(lc) as client:
                tab = simgpu.sweep(sc.square_or_die, params, client=client, progress=False, retries=1,
                                   chunk=1, cache_dir=tmp_path / "cache")
    failed = [r["i"] for r in tab.errors]
    assert 3 in failed and len(failed) <= 3
    assert all("KilledWorker" in r["error"] for r in tab.errors)
    assert all(r["sq"] == r["i"] ** 2 for r in tab.ok)
    with open(tmp_path / "cache" / "rows.jsonl") as f:
        assert len(f.readlines()) == len(tab.ok)
    calls = []

    def safe(p):
        calls.append(p["i"])
        return {"sq": p["i"] ** 2}

    again = simgpu.sweep(safe, params, workers=0, cache_dir=tmp_path / "cache", progress=False)
    assert sorted(calls) == sorted(failed) and again.errors == []
