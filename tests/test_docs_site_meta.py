"""The project's metadata agrees with itself: CITATION.cff, CHANGELOG.md and setup.cfg name the
version simgpu.__version__ says; the README links the sweep guide, the site and the notebooks.
(A page of docs/ missing from mkdocs.yml's nav is added under "More" by docs/site/hooks.py.)"""
import configparser
import os
import re

import simgpu

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
