"""numba's on-disk cache of simgpu's compiled functions, kept in step with simgpu's source.

numba's cache (``@njit(cache=True)``) checks only the decorated function's own file: a function
that inlines or calls an njit function of another simgpu module keeps its compiled code when
that other module changes, with stale constants and record layouts -- up to a segmentation
fault (seen 2026-12-07: memory/cache.py's L2 record gained a pre-launch writer while
memory/model.py's cached code still ran the old `_l2_access`).  :func:`check`, run once at
``import simgpu``, compares a digest of every simgpu source file that holds ``cache=True`` with
the one stored beside numba's cache files; when it differs, simgpu's numba cache files are
removed (numba compiles them again once) and the new digest is stored.  When no file changed
since the last check (their sizes and modification times), it reads nothing but the stamps.
This module imports nothing of simgpu's: it is in the bottom layer.
"""
from __future__ import annotations

import hashlib
import os

_PKG = os.path.dirname(os.path.abspath(__file__))
_MARK = os.path.join(_PKG, "__pycache__", "simgpu_numba_sources.txt")


def _sources():
    out = []
    for root, dirs, files in os.walk(_PKG):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        out += [os.path.join(root, f) for f in sorted(files) if f.endswith(".py")]
    return out


def _cache_dirs():
    """simgpu's numba cache folders: the __pycache__ beside its sources, and under
    NUMBA_CACHE_DIR where that is set (numba mirrors the source path there)."""
    dirs = [os.path.join(r, d) for r, ds, _ in os.walk(_PKG) for d in ds if d == "__pycache__"]
    extra = os.environ.get("NUMBA_CACHE_DIR")
    if extra and os.path.isdir(extra):
        dirs += [r for r, _, _ in os.walk(extra) if "simgpu" in r]
    return dirs


def check():
    """Remove simgpu's numba cache files if any source holding ``cache=True`` changed since they
    were written; returns the number of files removed.  Never raises (a read-only install keeps
    its caches: numba then writes them to its user-wide folder, checked per file as usual)."""
    try:
        files = _sources()
        stamp = hashlib.sha256()
        for p in files:
            st = os.stat(p)
            stamp.update(f"{p}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        stamp = stamp.hexdigest()
        try:
            with open(_MARK) as f:
                old_stamp, old_digest = (f.read().split() + ["", ""])[:2]
        except OSError:
            old_stamp = old_digest = ""
        if stamp == old_stamp:
            return 0
        digest = hashlib.sha256()
        for p in files:
            with open(p, "rb") as f:
                src = f.read()
            if b"cache=True" in src:
                digest.update(os.path.relpath(p, _PKG).encode() + b"\0" + src)
        digest = digest.hexdigest()
        removed = 0
        if digest != old_digest:
            for d in _cache_dirs():
                for name in os.listdir(d):
                    if name.endswith((".nbi", ".nbc")):
                        try:
                            os.remove(os.path.join(d, name))
                            removed += 1
                        except OSError:
                            pass
        os.makedirs(os.path.dirname(_MARK), exist_ok=True)
        with open(_MARK, "w") as f:
            f.write(f"{stamp} {digest}\n")
        return removed
    except OSError:
        return 0
