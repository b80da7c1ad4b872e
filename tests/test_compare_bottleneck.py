"""The mapping of validation/compare_bottleneck.py on made-up ncu rows (no GPU, no simulation)."""
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def cb():
    spec = importlib.util.spec_from_file_location("compare_bottleneck",
                                                  os.path.join(ROOT, "validation", "compare_bottleneck.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def row(**pct):
    """{short name: %} -> an ncu row with full metric names."""
    names = {
        "dram": "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "dram_cycles": "dram__cycles_active.avg.pct_of_peak_sustained_elapsed",
        "lts": "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
        "l1": "l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed",
        "lsu": "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
        "fma": "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
        "fmaheavy": "sm__inst_executed_pipe_fmaheavy.avg.pct_of_peak_sustained_active",
        "fp64": "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
        "alu": "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active",
        "xu": "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",
        "issue": "smsp__issue_active.avg.pct_of_peak_sustained_active",
        "uniform": "sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active",
        "sm": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "mem": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    }
    out = {names[k]: v for k, v in pct.items()}
    out["gpu__time_duration.sum"] = 12345.0          # not a utilisation: ignored
    out["dram__throughput.max.pct_of_peak_sustained_elapsed"] = 99.0   # .max: ignored (units' average only)
    return out


def test_memory_units(cb):
    assert cb.ncu_unit(row(dram=85, dram_cycles=80, lts=60, l1=20, alu=10, sm=30, mem=85))[0] == "dram"
    assert cb.ncu_unit(row(dram=10, lts=87, l1=50))[0] == "l2"
    assert cb.ncu_unit(row(dram=1, lts=5, l1=40, lsu=83))[0] == "l1"     # the LSU pipe counts as L1


def test_pipes(cb):
    assert cb.ncu_unit(row(fma=20, fmaheavy=70, alu=50))[0] == "fma"
    assert cb.ncu_unit(row(fp64=77, dram=44))[0] == "fp64"
    assert cb.ncu_unit(row(alu=81, issue=79))[0] == "alu"
    assert cb.ncu_unit(row(alu=40, issue=75))[0] == "issue"
    assert cb.ncu_unit(row(xu=90))[0] == "xu"
    assert cb.ncu_unit(row(uniform=70, alu=20))[0] == "uniform"


def test_latency_threshold_and_aggregates(cb):
    # the cross-unit aggregates never make a unit busy
    kind, top, pct = cb.ncu_unit(row(dram=59.9, alu=30, sm=95, mem=95))
    assert (kind, top, pct) == ("latency", "dram", 59.9)
    assert cb.ncu_unit(row(dram=60.0))[0] == "dram"
    assert cb.ncu_unit({})[0] == "latency"
    assert cb.ncu_unmapped({"idc__requests.avg.pct_of_peak_sustained_elapsed": 3.0,
                            "sm__throughput.avg.pct_of_peak_sustained_elapsed": 9.0}) == [
        "idc__requests.avg.pct_of_peak_sustained_elapsed"]


def test_simgpu_side(cb):
    assert cb.simgpu_unit("resource", "int") == "alu"
    assert cb.simgpu_unit("resource", "fp32") == "fma"
    assert cb.simgpu_unit("resource", "atomic") == "l2"
    assert cb.simgpu_unit("resource", "shfl") == "l1"
    assert cb.simgpu_unit("resource", "sfu") == cb.simgpu_unit("resource", "conv") == "xu"
    assert cb.simgpu_unit("resource", "launch") == "latency"
    assert cb.simgpu_unit("resource", "imad") == "fma"        # IMADs: the FMA-heavy pipe
    # every resource simgpu reports maps to an ncu unit
    from simgpu.timing.sim import REPORTED_PIPES
    for r in REPORTED_PIPES + ("issue", "l1", "l2", "dram", "atomic", "launch"):
        assert r in cb.SIM_TO_NCU, r
    assert cb.simgpu_unit("latency", "dram") == "latency"
    assert cb.simgpu_unit("tail", None) == "latency"
    # every resource simgpu reports has a mapping
    from simgpu.timing.analysis import RESOURCE_WORDS
    assert set(RESOURCE_WORDS) == set(cb.SIM_TO_NCU)


def test_compare_rows(cb):
    cases = [{"name": "a"}, {"name": "b"}, {"name": "c"}]
    ncu = {"a": row(dram=85, lts=70), "b": row(alu=30, dram=20), "c": row(alu=90, fma=10)}
    pred = {"a": {"kind": "resource", "resource": "dram", "busy": 0.9, "bottleneck": "DRAM"},
            "b": {"kind": "latency", "resource": "l2", "busy": 0.3, "bottleneck": "latency"},
            "c": {"kind": "resource", "resource": "fp32", "busy": 0.7, "bottleneck": "FP32"}}
    rows = cb.compare(cases, ncu, pred)
    assert [r["agree"] for r in rows] == [True, True, False]
    assert [r["busiest_agree"] for r in rows] == [True, False, False]
    s = cb.summary(rows)
    assert (s["n"], s["agree"], s["busiest_agree"]) == (3, 2, 1)
    assert "Agreement: 2 of 3" in cb.markdown(rows, s)


def test_coarse(cb):
    # stored runs without per-pipe metrics: sm__throughput stands for the SM's pipes
    m = {"sm__throughput.avg.pct_of_peak_sustained_elapsed": 80.0,
         "dram__throughput.avg.pct_of_peak_sustained_elapsed": 40.0}
    rows = cb.compare([{"name": "k"}], {"k": m},
                      {"k": {"kind": "resource", "resource": "int", "busy": 0.9, "bottleneck": "integer"}},
                      coarse_units=True)
    assert rows[0]["ncu"] == rows[0]["simgpu"] == "compute" and rows[0]["agree"]
    assert cb.coarse("l2") == "l2" and cb.coarse("latency") == "latency"


def test_load_ncu_raw_csv(cb, tmp_path):
    # the device script's output: ncu's raw page (header, units row, one row per launch) + order file
    import json
    csv_text = "\n".join([
        '==PROF== Disconnected',
        '"ID","Process ID","Kernel Name","dram__throughput.avg.pct_of_peak_sustained_elapsed",'
        '"sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active","gpu__time_duration.sum"',
        '"","","","%","%","usecond"',
        '"0","1","copy[abc]","88.5","10.0","2.5"',
        '"1","1","spin(int)","1.0","77.0","3.0"',
    ])
    (tmp_path / "b.csv").write_text(csv_text)
    (tmp_path / "o.json").write_text(json.dumps({"launches": [
        {"index": 0, "name": "case_copy", "kernel": "copy"}, {"index": 1, "name": "case_spin", "kernel": "spin"}]}))
    ncu, problems = cb.load_ncu([(str(tmp_path / "b.csv"), str(tmp_path / "o.json"))])
    assert problems == []
    assert ncu["case_copy"]["gpu__time_duration.sum"] == 2500.0
    assert cb.ncu_unit(ncu["case_copy"])[0] == "dram"
    assert cb.ncu_unit(ncu["case_spin"])[0] == "alu"
