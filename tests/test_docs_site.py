"""The documentation site (mkdocs.yml) in headless Chromium: the home page renders, every image
on every page loads, no internal link is broken, and the search finds pages.

The site is the one CI built (`SIMGPU_SITE_DIR`), or this test builds it with
`mkdocs build --strict`. Skips without the docs tooling (`pip install -e '.[docs]'`) or
without Chromium (`apt-get install chromium`)."""
import functools
import http.server
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.parse

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name) or (f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else None)
        if p:
            return p
    return None


pytestmark = [
    pytest.mark.skipif(chromium() is None, reason="no headless Chromium here (apt-get install chromium to run it)"),
    pytest.mark.skipif(not all(importlib.util.find_spec(m) for m in ("mkdocs", "material", "mkdocstrings")),
                       reason="the docs tooling is not installed (pip install -e '.[docs]')"),
]

CHECKER = """<!doctype html><html><body><script>
const PAGES = %s;
const out = {pages: {}, search: null, errors: []};
function frame(url) {
  return new Promise(res => { const f = document.createElement('iframe');
    f.style.width = '1200px'; f.style.height = '900px';
    f.onload = () => res(f); f.src = url; document.body.appendChild(f); });
}
async function waitFor(fn, ms) {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) { const v = fn(); if (v) return v; await new Promise(r => setTimeout(r, 100)); }
  return null;
}
async function main() {
  for (const p of PAGES) {
    const f = await frame(p); const doc = f.contentDocument;
    await waitFor(() => [...doc.images].every(i => i.complete), 15000);
    out.pages[p] = {title: doc.title, h1: (doc.querySelector('article h1') || {}).textContent || null,
      nav: [...doc.querySelectorAll('nav.md-nav--primary a.md-nav__link')].length,
      images: [...doc.images].map(i => [i.currentSrc || i.src, i.complete && i.naturalWidth > 0]),
      links: [...doc.querySelectorAll('a[href]')].map(a => a.href)};
    f.remove();
  }
  const f = await frame('index.html'); const doc = f.contentDocument; const w = f.contentWindow;
  const input = doc.querySelector('input.md-search__input');
  await waitFor(() => { const m = doc.querySelector('.md-search-result__meta');
                        return m && !/Initializing/.test(m.textContent); }, 30000);
  input.focus(); input.value = 'dask'; 
  input.dispatchEvent(new w.Event('input', {bubbles: true}));
  input.dispatchEvent(new w.KeyboardEvent('keyup', {bubbles: true, key: 'k'}));
  await waitFor(() => doc.querySelectorAll('.md-search-result__item').length > 0, 30000);
  out.search = {meta: (doc.querySelector('.md-search-result__meta') || {}).textContent,
                results: [...doc.querySelectorAll('.md-search-result__item a')].map(a => a.href)};
}
main().catch(e => out.errors.push(String(e))).finally(() =>
  fetch('/__result__', {method: 'POST', body: JSON.stringify(out)}));
</script></body></html>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    built = os.environ.get("SIMGPU_SITE_DIR")
    if built:
        assert os.path.exists(os.path.join(built, "index.html")), f"SIMGPU_SITE_DIR={built} has no index.html"
        src = built
    else:
        src = str(tmp_path_factory.mktemp("site") / "site")
        env = dict(os.environ, NO_MKDOCS_2_WARNING="1",
                   PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
        r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", src], cwd=ROOT,
                           env=env, capture_output=True, text=True, timeout=1200)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    # served from a copy, with the checker page beside the site's pages (same origin)
    dst = str(tmp_path_factory.mktemp("served") / "site")
    shutil.copytree(src, dst)
    return dst


def pages_of(site):
    out = []
    for d, _, files in os.walk(site):
        for f in files:
            if f.endswith(".html") and f != "404.html" and "gallery" not in os.path.relpath(d, site).split(os.sep):
                out.append(os.path.relpath(os.path.join(d, f), site).replace(os.sep, "/"))
    return sorted(out)


@pytest.fixture(scope="module")
def browsed(site, tmp_path_factory):
    pages = pages_of(site)
    with open(os.path.join(site, "__check__.html"), "w") as f:
        f.write(CHECKER % json.dumps(pages))
    got, done = {}, threading.Event()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got["result"] = json.loads(body)
            self.send_response(204)
            self.end_headers()
            done.set()

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=site))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}/"
    profile = tmp_path_factory.mktemp("chromium-profile")
    proc = subprocess.Popen([chromium(), "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                             "--no-first-run", base + "__check__.html"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        finished = done.wait(timeout=240)
    finally:
        proc.kill()
        proc.wait()
        srv.shutdown()
    assert finished, "the checker page did not report back from Chromium in 240 s"
    return base, pages, got["result"]


def test_every_page_was_browsed_without_script_errors(browsed):
    base, pages, res = browsed
    assert res["errors"] == []
    assert sorted(res["pages"]) == pages
    assert len(pages) >= 20          # the guide, the accuracy pages, the gallery, the API reference


def test_the_home_page_renders(browsed):
    base, pages, res = browsed
    home = res["pages"]["index.html"]
    assert home["h1"] and home["h1"].strip().startswith("simgpu")
    assert "simgpu" in home["title"]
    assert home["nav"] >= 10                       # Material's navigation was drawn
    assert home["images"] and all(ok for _, ok in home["images"])


def test_every_image_loads(browsed):
    base, pages, res = browsed
    images = [(p, src, ok) for p, d in res["pages"].items() for src, ok in d["images"]]
    gallery = [src for p, src, ok in images if p == "gallery.html"]
    assert len(gallery) >= 7
    broken = [(p, src) for p, src, ok in images if not ok]
    assert broken == []


def test_no_internal_link_is_broken(browsed, site):
    base, pages, res = browsed
    broken, checked = [], 0
    for page, d in res["pages"].items():
        for href in d["links"]:
            if not href.startswith(base):
                continue
            u = urllib.parse.urlparse(href)
            path = urllib.parse.unquote(u.path[1:]) or "index.html"
            target = os.path.join(site, path)
            if os.path.isdir(target):
                target = os.path.join(target, "index.html")
            checked += 1
            if not os.path.isfile(target):
                broken.append((page, href))
            elif u.fragment and target.endswith(".html"):
                with open(target, encoding="utf-8") as f:
                    if not re.search(r'id="%s"' % re.escape(urllib.parse.unquote(u.fragment)), f.read()):
                        broken.append((page, href))
    assert checked > 200
    assert broken == []


def test_the_search_finds_the_sweep_page(browsed):
    base, pages, res = browsed
    s = res["search"]
    assert s and s["results"], f"no search results: {s}"
    assert any("sweep.html" in r for r in s["results"])
