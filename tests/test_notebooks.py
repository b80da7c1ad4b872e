"""The notebooks (notebooks/): one per divergence lesson and two lecture examples, each a jupytext
pair kept in sync, opening with a cell that installs simgpu (Colab), committed executed with
the stepper's replay and the figures in them. CI executes them all
(`pytest --nbmake notebooks/`, .ci/run); this checks what is committed.

A notebook imports the kernels and helpers that examples/ has (its setup cell puts examples/ first
on sys.path) and never copies them; the guard below fails on a copy. To regenerate after editing a
notebook's .py (from the repository root; the last line makes the replay's file names
repo-relative, e.g. examples/lesson_relu.py, instead of this checkout's absolute path):

    jupytext --sync notebooks/*.py
    python -m pytest --nbmake --overwrite notebooks/
    sed -i "s#$PWD/##g" notebooks/*.ipynb
"""
import ast
import glob
import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NB = os.path.join(ROOT, "notebooks")
NOTEBOOKS = sorted(glob.glob(os.path.join(NB, "*.ipynb")))
EXAMPLES = os.path.join(ROOT, "examples")


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


def code_cells(path):
    return ["".join(c["source"]) for c in load(path)["cells"] if c["cell_type"] == "code"]


def test_every_notebook_opens_with_the_same_setup_cell():
    """One setup cell (install simgpu, find examples/), the same in every notebook: edit it in all."""
    firsts = {os.path.basename(p): code_cells(p)[0] for p in NOTEBOOKS}
    assert len(set(firsts.values())) == 1, f"the first cells differ: {sorted(firsts)}"


@pytest.mark.parametrize("cwd", ["notebooks", ".", "examples"])
def test_the_setup_cell_puts_examples_first_on_the_path(cwd):
    """From notebooks/ (nbmake, Jupyter), the root or below: `import lesson_relu` is the example,
    not the notebook's own notebooks/lesson_relu.py of the same name."""
    setup = code_cells(NOTEBOOKS[0])[0]
    code = setup + "\nimport lesson_relu\nprint(lesson_relu.__file__)\nprint(EXAMPLES)\n"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("SIMGPU_EXAMPLES", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=os.path.join(ROOT, cwd), env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    assert os.path.samefile(out[0], os.path.join(EXAMPLES, "lesson_relu.py"))
    assert os.path.samefile(out[1], EXAMPLES)


# the names of examples/ that a notebook may reuse for something of its own
GENERIC = {"main"}


def _shape(fn):
    """A function's body as a tree, without its name, docstring or positions: a copy renamed or
    re-decorated has the same shape."""
    body = fn.body[1:] if (fn.body and isinstance(fn.body[0], ast.Expr)
                           and isinstance(fn.body[0].value, ast.Constant)
                           and isinstance(fn.body[0].value.value, str)) else fn.body
    return ast.dump(ast.Module(body=body, type_ignores=[]), annotate_fields=False)


def _defs(tree):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _examples():
    names, shapes = {}, {}
    for p in sorted(glob.glob(os.path.join(EXAMPLES, "*.py"))):
        with open(p, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef) and fn.name not in GENERIC:
                where = f"examples/{os.path.basename(p)}::{fn.name}"
                names[fn.name] = where
                shapes.setdefault(_shape(fn), where)
    return names, shapes


def _is_kernel(fn):
    """@cuda.jit, @simgpu.jit, @jit, @cuda.jit(...) and the like."""
    for d in fn.decorator_list:
        d = d.func if isinstance(d, ast.Call) else d
        if (d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")).endswith("jit"):
            return True
    return False


def copies(source, examples=None):
    """What `source` (a notebook's code) defines again that examples/ already has: a function (a
    kernel, @jit-decorated or not, or a helper) of an example's name, or of the same body under
    another name."""
    names, shapes = examples or _examples()
    found = []
    for fn in _defs(ast.parse(source)):
        what = "kernel" if _is_kernel(fn) else "function"
        if fn.name in names:
            found.append(f"line {fn.lineno}: {what} {fn.name} is {names[fn.name]}: import it")
        elif _shape(fn) in shapes:
            found.append(f"line {fn.lineno}: {what} {fn.name} copies {shapes[_shape(fn)]}: import it")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_no_notebook_copies_a_kernel_of_the_examples(path):
    """Checked on the .py of the pair (percent format: magics are comments; the code is the
    .ipynb's, test_the_pair_is_in_sync), so the line numbers are that file's."""
    with open(path[:-6] + ".py", encoding="utf-8") as f:
        assert copies(f.read()) == [], f"{path[:-6]}.py"


def test_the_copy_guard_finds_a_copied_kernel():
    """The guard can fail: the lesson's kernel pasted back, renamed, under @cuda.jit, and its input
    builder renamed, are both found; a kernel of the notebook's own is not."""
    with open(os.path.join(EXAMPLES, "lesson_relu.py"), encoding="utf-8") as f:
        src = f.read()
    fns = {n.name: ast.get_source_segment(src, n) for n in ast.parse(src).body if isinstance(n, ast.FunctionDef)}
    pasted = ("@cuda.jit\n" + fns["relu_if"].replace("def relu_if", "def my_relu") + "\n\n"
              + fns["args_relu_if"].replace("def args_relu_if", "def make_args") + "\n\n"
              + fns["relu_mask"] + "\n\n"
              + textwrap.dedent("""
                  @simgpu.jit
                  def saxpy_of_my_own(a, x, y, out):
                      i = cuda.grid(1)
                      out[i] = a * x[i] + y[i]
                  """))
    found = copies(pasted)
    assert len(found) == 3, found
    assert "kernel my_relu copies examples/lesson_relu.py::relu_if" in found[0]
    assert "function make_args copies examples/lesson_relu.py::args_relu_if" in found[1]
    assert "function relu_mask is examples/lesson_relu.py::relu_mask" in found[2]


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if os.path.basename(p).startswith("lesson_")],
                         ids=os.path.basename)
def test_the_replay_steps_the_examples_kernel_named_relative_to_the_repository(path):
    """The committed replay ran the kernel of examples/<lesson>.py, and names it repo-relative
    (not by the absolute path of the checkout that executed it: see the sed line above)."""
    html = "".join("".join(o["data"]["text/html"]) for c in load(path)["cells"] if c["cell_type"] == "code"
                   for o in c.get("outputs", []) if "text/html" in o.get("data", {}))
    name = os.path.basename(path)[:-6]
    assert f"&quot;file&quot;: &quot;examples/{name}.py&quot;" in html
    assert f"/examples/{name}.py" not in html, "an absolute path: sed -i \"s#$PWD/##g\" notebooks/*.ipynb"
