"""The notebooks (notebooks/): one per divergence lesson and two lecture examples, each a jupytext
pair kept in sync, opening with a cell that installs simgpu (Colab), committed executed with
the stepper's replay and the figures in them. CI executes them all
(`pytest --nbmake notebooks/`, .ci/run); this checks what is committed."""
import glob
import json
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NB = os.path.join(ROOT, "notebooks")
NOTEBOOKS = sorted(glob.glob(os.path.join(NB, "*.ipynb")))


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# the divergence lessons (examples/lesson_perfect_memory.py, a timing-model experiment, is not one)
DIVERGENCE = {"lesson_relu", "lesson_divergence", "lesson_loop", "lesson_reduction", "lesson_shuffle"}


def test_every_divergence_lesson_has_a_notebook():
    lessons = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "examples", "lesson_*.py"))}
    assert DIVERGENCE <= lessons
    have = {os.path.basename(p)[:-6] for p in NOTEBOOKS}
    assert DIVERGENCE <= have
    assert {"lecture_mystery_plot", "lecture_roofline", "lecture_six_tricks", "lecture_flashattention",
            "lecture_tpu"} <= have


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_the_pair_is_in_sync(path):
    jupytext = pytest.importorskip("jupytext")
    py = path[:-6] + ".py"
    assert os.path.exists(py), f"{py} missing: jupytext --set-formats ipynb,py:percent {path}"
    a = [c.source for c in jupytext.read(py).cells if c.cell_type == "code"]
    b = [c.source for c in jupytext.read(path).cells if c.cell_type == "code"]
    assert a == b, f"out of sync: jupytext --sync {py}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_the_first_cell_installs_simgpu_when_missing(path):
    code = [c for c in load(path)["cells"] if c["cell_type"] == "code"]
    first = "".join(code[0]["source"])
    assert 'find_spec("simgpu") is None' in first and '"pip", "install"' in first


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_committed_executed_with_figures_and_no_errors(path):
    outs = [o for c in load(path)["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outs if o["output_type"] == "error"]
    assert any("image/png" in o.get("data", {}) for o in outs), "no figure: execute it (pytest --nbmake --overwrite)"
    if os.path.basename(path).startswith("lesson_"):
        html = [o["data"]["text/html"] for o in outs if "text/html" in o.get("data", {})]
        assert any("<iframe srcdoc=" in "".join(h) for h in html), "the stepper's replay is not embedded"
