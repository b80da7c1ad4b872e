"""`simgpu gemm`, `simgpu attention`, `simgpu mystery`: the library cost model from the command line."""
import pytest

from simgpu.cli import main
from simgpu.model import attention, gemm


def test_gemm_prints_the_models_choice(capsys):
    assert main(["gemm", "8192", "50257", "768"]) == 0
    out = capsys.readouterr().out
    est = gemm(8192, 50257, 768)
    assert est.kernel in out and "2-byte aligned" in out
    assert f"{est.seconds * 1e6:.1f} us" in out


def test_gemm_clock_and_candidates(capsys):
    assert main(["gemm", "8192", "8192", "8192", "--clock", "max", "--candidates", "3"]) == 0
    out = capsys.readouterr().out
    fast = gemm(8192, 8192, 8192, sm_clock_hz="max")
    assert f"{fast.seconds * 1e6:.1f} us" in out
    assert out.count("sm90_bf16_") >= 4            # the chosen line and three candidates
    assert main(["gemm", "4096", "4096", "4096", "--clock", "1.2e9"]) == 0
    assert f"{gemm(4096, 4096, 4096, sm_clock_hz=1.2e9).seconds * 1e6:.1f} us" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["gemm", "64", "64", "64", "--dtype", "int8"], "dtype must be one of"),
    (["gemm", "64", "64", "64", "--clock", "fast"], "--clock takes"),
    (["gemm", "64", "64", "64", "--layout", "XY"], "layout must be one of"),
    (["attention", "1", "1", "128", "64", "--backend", "xformers"], "backend must be one of"),
])
def test_bad_input_is_a_clear_error(capsys, argv, message):
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert message in cap.err and "Traceback" not in cap.err and cap.out == ""


def test_attention_lists_every_backend(capsys):
    assert main(["attention", "1", "16", "4096", "64", "--backward", "--kernels"]) == 0
    out = capsys.readouterr().out
    for be in ("flash", "efficient", "math"):
        e = attention(1, 16, 4096, 64, backend=be, backward=True)
        assert f"{e.seconds * 1e6:10.1f} us" in out
        assert f"{e.peak_bytes / 1e6:10.2f} MB" in out
    assert "efficient backward" in out and "forward + backward" in out


def test_mystery_writes_the_plot(tmp_path, capsys):
    out = tmp_path / "m.png"
    assert main(["mystery", "--out", str(out), "--step", "512", "--max", "4096"]) == 0
    assert out.stat().st_size > 10_000 and "cliffs labelled" in capsys.readouterr().out


def test_gemm_dobench_timing_and_a_named_kernel(capsys):
    assert main(["gemm", "4096", "4096", "4096", "--timing", "dobench"]) == 0
    assert f"{gemm(4096, 4096, 4096, timing='dobench').seconds * 1e6:.1f} us" in capsys.readouterr().out
    k = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
    assert main(["gemm", "4096", "4096", "4096", "--timing", "dobench", "--kernel", k]) == 0
    assert "128x256" in capsys.readouterr().out
