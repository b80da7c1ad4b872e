"""Each lecture example runs and prints its key numbers (the examples are part of the spec)."""
import importlib
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

KEY_NUMBERS = {
    # wave cliff (289 tiles, 0.547), alignment (0.771), the 4096 row, saved figure
    "lecture_mystery_plot": ["289", "0.547", "0.771", "3.88", "mystery_plot.png"],
    # ridge points FP32 13.9 and fp16 tensor 206.1 FLOP/B; SAXPY AI 0.167
    "lecture_roofline": ["13.9", "206.1", "0.167", "roofline.png"],
    # 50 % divergence, 8 and 4 B/FLOP, 11 vs 2 accesses, 5/9 and 5/8, 32 sectors, 32x
    "lecture_six_tricks": ["0.500", "5/9 = 0.556", "0.625", "11", "32x", "six_tricks.png"],
    # block sizes, traffic cut, Theta constant
    "lecture_flashattention": ["454 rows", "11.8x", "8.04", "flashattention.png"],
    # the GEMM/attention model beside the H200: align1 fallback, vocab padding, knee, flash vs math
    "lecture_gemm": ["sm75_align1", "vocab padding", "knee", "flash vs math", "lecture_gemm.png",
                     "repeated 5x", "lecture_gemm_repeats.png", "fresh hold-out", "lecture_gemm_holdout.png",
                     "sm_clock_hz=", "do_bench (L2 flushed", "lecture_gemm_dobench.png"],
    # 528 units vs 8, MXU padding of a 96 head dim
    "lecture_tpu": ["528", "0.562", "TPU v5p", "tpu_vs_gpu.png"],
}


@pytest.mark.parametrize("name", sorted(KEY_NUMBERS))
def test_example_prints_key_numbers(name, tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    module = importlib.import_module(name)
    assert module.main(["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for key in KEY_NUMBERS[name]:
        assert key in out, f"{name}: {key!r} missing from output"
    assert list(tmp_path.glob("*.png"))
