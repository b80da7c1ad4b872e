"""simgpu.validate: prediction beside measurement; clear notes when there is no GPU."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import simgpu
from simgpu.kernels import saxpy
from simgpu.validate.runner import device_available

NCU_CSV = '''==PROF== Connected to process 1234 (/usr/bin/python3)
==WARNING== Some warning about clocks
==PROF== Profiling "saxpy": 0%....50%....100% - 8 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes_read.sum","gpu__time_duration.sum","lts__t_sector_hit_rate.pct","smsp__inst_executed.sum"
"","","","","","","","","","","","Mbyte","usecond","%","inst"
"0","1234","python3","host","saxpy","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","8.39","5.12","33.5","1,048,576"
"1","1234","python3","host","saxpy","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","8.40","5.10","33.6","1,048,576"
'''


def test_load_ncu_csv_reads_raw_page_with_warnings(tmp_path):
    """Warning lines are skipped; units are converted to plain bytes, ns, %, counts."""
    p = tmp_path / "prof.csv"
    p.write_text(NCU_CSV)
    rows = simgpu.validate.load_ncu_csv(str(p))
    assert len(rows) == 2
    assert rows[0]["kernel"] == "saxpy"
    assert rows[0]["dram__bytes_read.sum"] == pytest.approx(8.39e6)
    assert rows[0]["gpu__time_duration.sum"] == pytest.approx(5120.0)
    assert rows[1]["smsp__inst_executed.sum"] == 1048576


def test_compare_report_with_measured_metrics():
    x = np.ones(4096, np.float32)
    rep = simgpu.launch(saxpy, 16, 256, (np.float32(2), x, x.copy(), np.zeros_like(x)))
    cmp = simgpu.validate.compare(rep, {"smsp__inst_executed.sum": rep.metrics["smsp__inst_executed.sum"] * 2})
    assert cmp.error("smsp__inst_executed.sum") == pytest.approx(-0.5)
    assert "smsp__inst_executed.sum" in str(cmp) and "-50.0%" in str(cmp)
    assert "<table>" in cmp._repr_html_()
    assert '"kernel": "saxpy"' in cmp.to_json()


@pytest.mark.skipif(device_available()[0], reason="a CUDA device is present")
def test_without_a_gpu_validate_says_so():
    x = np.ones(1000, np.float32)
    cmp = simgpu.validate.against_gpu(saxpy, 4, 256, (np.float32(2), x, x.copy(), np.zeros_like(x)))
    assert "no CUDA device was found" in str(cmp)
    assert cmp.rows == []


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.skipif(device_available()[0], reason="a CUDA device is present")
def test_without_a_gpu_validate_prints_the_full_prediction(tmp_path, capsys):
    """Issue 23: `simgpu validate` with no GPU printed "showing the prediction only" and no
    prediction, and its JSON held "metrics": [].  The exact repro: the report in full, and
    the JSON with every predicted metric (measured null)."""
    from simgpu.cli import main
    path = tmp_path / "v.json"
    assert main(["validate", os.path.join(ROOT, "examples", "lesson_relu.py") + "::relu_if",
                 "--grid", "32", "--block", "128", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "showing the prediction only" in out
    assert "simgpu report: relu_if" in out and "predicted time" in out and "Memory" in out
    d = json.loads(path.read_text())
    assert d["predicted_only"] is True
    names = {m["metric"]: m for m in d["metrics"]}
    assert names["gpu__time_duration.sum"]["predicted"] > 0
    assert names["gpu__time_duration.sum"]["measured"] is None
    assert "smsp__inst_executed.sum" in names and len(names) > 20


def test_results_compared_by_dtype_tolerance():
    from simgpu.validate.compare import compare_results
    a = np.array([1.0, 2.0], np.float32)
    rows = compare_results([a], [a + np.float32(1e-6)])
    assert rows[0]["equal"]
    rows = compare_results([a], [a + 1])
    assert not rows[0]["equal"]
    rows = compare_results([np.array([1, 2])], [np.array([1, 3])])
    assert rows[0]["n_diff"] == 1


def test_auto_scaled_count_units_are_converted(tmp_path):
    """ncu may print counts as Kinst / Msector; they come back as plain counts."""
    text = NCU_CSV.replace('"Mbyte","usecond","%","inst"', '"Mbyte","usecond","%","Kinst"')
    rows = simgpu.validate.parse_ncu_csv(text)
    assert rows[0]["smsp__inst_executed.sum"] == 1048576 * 1e3


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_suite_reads_ncu_csv_with_the_librarys_parser_without_simgpu(tmp_path):
    """validation/ncu_csv.py loads simgpu/validate/ncu_csv.py by its path: it works where simgpu
    cannot be imported, and reads what simgpu.validate.parse_ncu_csv reads."""
    p = tmp_path / "prof.csv"
    p.write_text(NCU_CSV)
    code = ("import sys, json; sys.modules['simgpu'] = None; sys.path.insert(0, sys.argv[1]); import ncu_csv; "
            "h, u, rows = ncu_csv.parse_csv(open(sys.argv[2]).read()); "
            "print(json.dumps([r['metrics'] for r in ncu_csv.rows_to_dicts(h, u, rows)]))")
    r = subprocess.run([sys.executable, "-c", code, os.path.join(ROOT, "validation"), str(p)],
                       capture_output=True, text=True, cwd=str(tmp_path), env={"PATH": os.environ.get("PATH", "")})
    assert r.returncode == 0, r.stderr
    suite = json.loads(r.stdout)
    lib = simgpu.validate.load_ncu_csv(str(p))
    assert [{k: v for k, v in m.items() if "__" in k} for m in suite] == \
        [{k: v for k, v in d.items() if k not in ("id", "kernel")} for d in lib]


def test_the_numpy_patch_for_numba_lives_in_two_places_only():
    """np.row_stack is patched by simgpu/_compat.py (simgpu's code) and validation/_common.py (the
    suite, which runs without simgpu); nowhere else."""
    found = set()
    for top in ("simgpu", "validation", "tests", "examples", "benchmarks"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith(".py"):
                    path = os.path.join(dirpath, f)
                    if re.search(r"np\.row_stack\s*=", open(path, encoding="utf-8").read()):
                        found.add(os.path.relpath(path, ROOT))
    assert found == {os.path.join("simgpu", "_compat.py"), os.path.join("validation", "_common.py")}
