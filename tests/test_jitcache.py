"""simgpu.jitcache: numba's cache files of simgpu's sources go when a source holding cache=True
changes (numba checks only the decorated function's own file; stale inlined code crashed)."""
import os

from simgpu import jitcache


def _pkg(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    (pkg / "sub" / "__pycache__").mkdir(parents=True)
    (pkg / "a.py").write_text("@njit(cache=True)\ndef f(): pass\n")
    (pkg / "sub" / "b.py").write_text("X = 1\n")
    monkeypatch.setattr(jitcache, "_PKG", str(pkg))
    monkeypatch.setattr(jitcache, "_MARK", str(pkg / "__pycache__" / "mark.txt"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    return pkg


def _cache_file(pkg):
    p = pkg / "sub" / "__pycache__" / "b.f-1.py311.nbi"
    p.write_bytes(b"x")
    return p


def test_removed_when_a_cache_true_source_changes_and_kept_otherwise(tmp_path, monkeypatch):
    pkg = _pkg(tmp_path, monkeypatch)
    c = _cache_file(pkg)
    assert jitcache.check() == 1 and not c.exists()          # no record yet: written with no stamp
    c = _cache_file(pkg)
    assert jitcache.check() == 0 and c.exists()              # nothing changed
    (pkg / "sub" / "b.py").write_text("X = 2\n")             # no cache=True in it: caches stay
    os.utime(pkg / "sub" / "b.py", ns=(1, 1))
    assert jitcache.check() == 0 and c.exists()
    (pkg / "a.py").write_text("@njit(cache=True)\ndef f(): return 1\n")
    assert jitcache.check() == 1 and not c.exists()


def test_the_package_itself_is_checked_at_import():
    import simgpu  # noqa: F401
    assert os.path.exists(jitcache._MARK)
    assert jitcache.check() == 0
