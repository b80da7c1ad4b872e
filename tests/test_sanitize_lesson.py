"""examples/lesson_sanitizer.py: the race is invisible without the sanitizer, caught with it
(both lines), gone after the fix; the uninitialised read shows as NaN and is named."""
import importlib.util
import os

import numpy as np
import pytest

from simgpu.sass.toolchain import compiled_path_available

LESSON = os.path.join(os.path.dirname(__file__), os.pardir, "examples", "lesson_sanitizer.py")


def load():
    spec = importlib.util.spec_from_file_location("lesson_sanitizer", LESSON)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("executor", ["ir", pytest.param("ptx", marks=pytest.mark.skipif(
    not compiled_path_available()[0], reason="needs numba-cuda and ptxas"))])
def test_lesson_catches_and_fixes_the_race(executor, capsys):
    res = load().main(executor)
    out = capsys.readouterr().out
    assert "-- right (the model runs every write before the read)" in out
    (race,) = res["race"]
    assert race.tool == "racecheck" and race.kind == "RAW"
    assert race.loc.endswith("lesson_sanitizer.py:32") and race.other_loc.endswith("lesson_sanitizer.py:28")
    assert res["fixed"] == []
    (un,) = res["uninit"]
    assert un.tool == "initcheck" and un.block == (3, 0, 0) and un.loc.endswith("lesson_sanitizer.py:58")
    assert np.isnan(res["sums"][3]) and np.isfinite(res["sums"][:3]).all()
    assert out.count("ERROR SUMMARY: 1 error") == 2 and "ERROR SUMMARY: 0 errors" in out
