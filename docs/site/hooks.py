"""MkDocs hooks for simgpu's site (mkdocs.yml: hooks).

* on_files: the gallery. docs/site/gallery.py runs the lecture examples into build/gallery
  (again when an example or the gallery script is newer than the last run); the figures join
  the site as gallery/<name>.
* on_page_markdown: links from docs/*.md to files outside docs/ (``../validation/README.md``,
  ``../examples/x.py``) become the path in code, or a link into the repository when
  ``repo_url`` is set in mkdocs.yml; the pages stay as they are in the repository.
"""
import glob
import logging
import os
import re
import subprocess
import sys

from mkdocs.structure.files import File

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GALLERY = os.path.join(ROOT, "build", "gallery")
OUTSIDE = re.compile(r"\[([^\]]+)\]\(((?:\.\./)+)([^)#\s]+)(#[^)\s]*)?\)")


class _KnownNoise(logging.Filter):
    """Two warnings from reading the docstrings, neither a problem in the site, kept out of
    `--strict` by their exact text (any other warning still fails the build):
    griffe cannot read simgpu.cuda's computed ``__all__`` (``[*STUBS, ...]``, simgpu's stand-in
    for numba.cuda), and a doctest's printed list (``[1, 4, 8, 16, 32, 32]``) looks to autorefs
    like a reference link."""

    def filter(self, record):
        msg = record.getMessage()
        if "Unsupported item in simgpu.cuda.__all__: STUBS" in msg:
            return False
        if "Could not find cross-reference target" in msg and re.search(r"target '[\d, ]+'", msg):
            return False
        return True


def on_config(config):
    noise = _KnownNoise()
    for h in logging.getLogger("mkdocs").handlers + logging.getLogger().handlers:   # the strict count is a handler
        if noise not in h.filters:
            h.addFilter(noise)
    return config


def _stale():
    stamp = os.path.join(GALLERY, ".done")
    if os.environ.get("SIMGPU_DOCS_REGALLERY") or not os.path.exists(stamp):
        return True
    t = os.path.getmtime(stamp)
    sources = glob.glob(os.path.join(ROOT, "examples", "*.py")) + [os.path.join(ROOT, "docs", "site", "gallery.py")]
    return any(os.path.getmtime(s) > t for s in sources)


def on_files(files, config):
    if _stale():
        subprocess.run([sys.executable, os.path.join(ROOT, "docs", "site", "gallery.py"), GALLERY], check=True)
        open(os.path.join(GALLERY, ".done"), "w").close()
    for name in sorted(os.listdir(GALLERY)):
        if name.startswith("."):
            continue
        files.append(File.generated(config, f"gallery/{name}", abs_src_path=os.path.join(GALLERY, name)))
    return files


def on_page_markdown(markdown, page, config, files):
    depth = page.file.src_uri.count("/")
    repo = (config.get("repo_url") or "").rstrip("/")

    def fix(m):
        text, ups, path, anchor = m.group(1), m.group(2), m.group(3), m.group(4) or ""
        if ups.count("../") <= depth:            # stays inside docs/: a normal link
            return m.group(0)
        if repo:
            return f"[{text}]({repo}/blob/main/{path}{anchor})"
        return text if f"`{path}`" in text or text.strip("`") == path else f"{text} (`{path}`)"

    return OUTSIDE.sub(fix, markdown)
