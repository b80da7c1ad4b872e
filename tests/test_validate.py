"""simgpu.validate: prediction beside measurement; clear notes when there is no GPU."""
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
