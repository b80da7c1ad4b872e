"""MkDocs hooks for simgpu's site (mkdocs.yml: hooks).

* on_files: the gallery. docs/site/gallery.py runs the lecture examples into build/gallery
  (again when an example or the gallery script is newer than the last run); the figures join
  the site as gallery/<name>.
* on_config: a page in docs/ that mkdocs.yml's nav does not list joins the nav under "More"
  (a new page never breaks the strict build; give it a proper place in mkdocs.yml).
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
    """Two kinds of warning from reading the docstrings, neither a problem in the site, kept out
    of `--strict` (any other warning still fails the build):
    griffe cannot read simgpu.cuda's computed ``__all__`` (``[*STUBS, ...]``, simgpu's stand-in
    for numba.cuda); and simgpu's docstrings are plain text, not Markdown, so brackets in them
    (a doctest's printed ``[1, 4, 8, 16, 32, 32]``, ``times["fwd"]``) look to autorefs like
    reference links. Such a warning names a ``.py`` file and line; the pages' own links are
    checked by mkdocs (a warning without a ``.py`` source) and by tests/test_docs_site.py."""

    def filter(self, record):
        msg = record.getMessage()
        if "Unsupported item in simgpu.cuda.__all__: STUBS" in msg:
            return False
        if "Could not find cross-reference target" in msg and re.search(r"from \S+\.py:\d+: ", msg):
            return False
        return True


def _nav_pages(nav):
    out = set()
    for item in nav or []:
        v = list(item.values())[0] if isinstance(item, dict) else item
        if isinstance(v, list):
            out |= _nav_pages(v)
        elif isinstance(v, str):
            out.add(v)
    return out


def _title(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# "):
                return line[2:].strip()
    return os.path.splitext(os.path.basename(path))[0]


def on_config(config):
    # a page added to docs/ without a place in mkdocs.yml's nav still gets one, under "More"
    docs = config["docs_dir"]
    listed = _nav_pages(config["nav"])
    extra = []
    for path in sorted(glob.glob(os.path.join(docs, "**", "*.md"), recursive=True)):
        rel = os.path.relpath(path, docs).replace(os.sep, "/")
        if rel not in listed:
            extra.append({_title(path): rel})
    if extra and config["nav"] is not None:
        config["nav"].append({"More": extra})
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
