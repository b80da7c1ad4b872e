"""The project's metadata agrees with itself: CITATION.cff, CHANGELOG.md and setup.cfg name the
version simgpu.__version__ says; the README links the sweep guide, the site and the notebooks.
(A page of docs/ missing from mkdocs.yml's nav is added under "More" by docs/site/hooks.py.)"""
import ast
import configparser
import glob
import importlib.util
import os
import re
import subprocess
import sys

import pytest

import simgpu
from simgpu.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(name):
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        return f.read()


def test_citation_names_this_version():
    cff = read("CITATION.cff")
    assert re.search(r"^cff-version: 1\.2\.0$", cff, re.M)
    assert re.search(r"^version: %s$" % re.escape(simgpu.__version__), cff, re.M)
    assert re.search(r"^title: ", cff, re.M) and re.search(r"^authors:", cff, re.M)


def test_changelog_has_this_version():
    log = read("CHANGELOG.md")
    assert f"## [{simgpu.__version__}]" in log and "## [Unreleased]" in log


def test_setup_cfg_metadata_and_extras():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, "setup.cfg"))
    assert cfg["metadata"]["version"] == "attr: simgpu.__version__"
    classifiers = cfg["metadata"]["classifiers"]
    assert "License :: OSI Approved :: MIT License" in classifiers and "Development Status" in classifiers
    extras = cfg["options.extras_require"]
    for name, pkg in (("dask", "dask[distributed]"), ("docs", "mkdocs"), ("notebooks", "nbmake")):
        assert pkg in extras[name]


def test_readme_links_the_sweeps_the_site_and_the_notebooks():
    readme = read("README.md")
    for target in ("docs/sweep.md", "docs/index.md", "notebooks/"):
        assert f"]({target})" in readme, target
        assert os.path.exists(os.path.join(ROOT, target))


# -- issue 23: the docs a newcomer follows work -------------------------------------------------
DOCS = sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.md"), recursive=True))
NOTEBOOK_SOURCES = sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.py")) +
                          glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))


def test_no_install_from_a_package_index_simgpu_is_not_on():
    """`pip install simgpu` is on no index: the home page installs from a clone or a wheel, and the
    notebooks' first cell installs the clone it is in (or $SIMGPU_PIP), never the name."""
    index_install = re.compile(r"pip install (-q )?['\"]?simgpu(?![\w-])|\"install\", \"-q\", os\.environ\.get\(\"SIMGPU_PIP\", \"simgpu\"\)")
    for path in [os.path.join(ROOT, "README.md"), *DOCS, *NOTEBOOK_SOURCES]:
        with open(path, encoding="utf-8") as f:
            assert not index_install.search(f.read()), path
    home = read("docs/index.md")
    assert "pip install -e ." in home and ".whl" in home and "python -m build" in home


def test_the_setup_cell_installs_the_clone_it_is_in(monkeypatch):
    """With simgpu missing, the notebooks' first cell pip-installs the repository it is in."""
    with open(os.path.join(ROOT, "notebooks", "lesson_relu.py"), encoding="utf-8") as f:
        src = f.read()
    cell = src.split("# %%\n", 2)[1].split("# %% [markdown]", 1)[0]
    calls = []
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    monkeypatch.setattr(subprocess, "check_call", lambda args, **kw: calls.append(list(args)))
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv("SIMGPU_PIP", raising=False)
    monkeypatch.delenv("SIMGPU_EXAMPLES", raising=False)
    monkeypatch.chdir(os.path.join(ROOT, "notebooks"))
    exec(compile(cell, "setup-cell", "exec"), {})
    assert len(calls) == 1 and calls[0][1:5] == ["-m", "pip", "install", "-q"]
    assert os.path.samefile(calls[0][5], ROOT)
    monkeypatch.setenv("SIMGPU_PIP", "/tmp/simgpu-0.1.0-py3-none-any.whl")
    exec(compile(cell, "setup-cell", "exec"), {})
    assert calls[1][5] == "/tmp/simgpu-0.1.0-py3-none-any.whl"


def test_no_paths_of_the_authors_machines():
    machine = re.compile(r"(?<![\w.])/(work|home|Users|root|tmp/h\d)/\w")
    for path in [os.path.join(ROOT, "README.md"), *DOCS, *glob.glob(os.path.join(ROOT, "notebooks", "*.py"))]:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                assert not machine.search(line), f"{path}:{n}: {line.strip()}"


def test_every_extra_is_documented():
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, "setup.cfg"))
    home = read("docs/index.md")
    for name in cfg["options.extras_require"]:
        assert f"| `{name}` |" in home, f"the [{name}] extra is not in docs/index.md's table of extras"


def test_the_report_api_page_lists_its_members_with_docstrings():
    """mkdocstrings shows only members with docstrings (mkdocs.yml): the page names them, and each
    has one (a dataclass field's is the string after it)."""
    page = read("docs/api/report.md")
    members = re.search(r"members: \[([^\]]*)\]", page, re.S).group(1)
    listed = [m.strip() for m in members.replace("\n", " ").split(",")]
    for name in ("metrics", "simt_efficiency", "to_json", "per_thread", "by_line"):
        assert name in listed, name
    tree = ast.parse(read("simgpu/runtime/report.py"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Report")
    documented = set()
    for prev, node in zip(cls.body, cls.body[1:]):
        if isinstance(prev, ast.AnnAssign) and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            documented.add(prev.target.id)
    documented |= {n.name for n in cls.body if isinstance(n, ast.FunctionDef) and ast.get_docstring(n)}
    assert set(listed) <= documented, sorted(set(listed) - documented)


def test_simgpu_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"simgpu {simgpu.__version__}"
