"""A disk cache of compile facts, as JSON files named by a sha256 key.

Location: ``$SIMGPU_CACHE_DIR`` (simgpu.settings' ``cache_dir``) if set, else ``~/.cache/simgpu``; entries live in its ``sass/``
folder as ``<kind>-<key>.json``.  ``make_key`` hashes any JSON-able parts (PTX text or a
function's source fingerprint, argument types, compute capability, tool versions, and
``SCHEMA`` - bump it when the stored records change shape).  Writes are atomic (temp file +
rename); an unreadable entry counts as a miss.  ``SIMGPU_NO_CACHE=1`` (``disk_cache=False``) turns the cache off.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from simgpu import settings

SCHEMA = 2                # 2: SassInstr.label (the branch labels, for sass/paths.py)


def cache_dir():
    """The folder holding this package's cache entries (not created here)."""
    root = settings.current().cache_dir or os.path.join(os.path.expanduser("~"), ".cache", "simgpu")
    return Path(root) / "sass"


def enabled():
    return settings.current().disk_cache


def make_key(*parts):
    """sha256 hex digest of ``parts`` (JSON-encoded, keys sorted) and the cache SCHEMA."""
    blob = json.dumps([SCHEMA, *parts], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _path(kind, key):
    return cache_dir() / f"{kind}-{key}.json"


def load(kind, key):
    """The dict stored under (kind, key), or None."""
    if not enabled():
        return None
    try:
        with open(_path(kind, key)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def store(kind, key, data):
    """Store JSON-able ``data`` under (kind, key); a failure to write is not an error."""
    if not enabled():
        return
    path = _path(kind, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        pass
