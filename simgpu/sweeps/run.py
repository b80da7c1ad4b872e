"""simgpu.sweep: run one function over many parameter sets, on local worker processes or a
Dask cluster, with a progress bar and a cache directory to resume from.

Each case runs ``fn(params)`` on a worker. ``fn`` returns a `simgpu.Report` (its chosen
metrics become columns), a dict (its items become columns) or anything else (one ``result``
column). An exception in ``fn`` becomes that case's ``error``; the other cases go on.

Optional packages are imported with ``importlib`` when a sweep needs them: ``distributed``
(Dask), ``cloudpickle`` (ships lambdas and closures to local workers), ``tqdm`` (the bar).
"""
from __future__ import annotations

import concurrent.futures as cf
import hashlib
import importlib
import itertools
import json
import multiprocessing
import os
import sys
import time

from ..runtime import Report
from .ship import ship, unship
from .table import SweepTable

# column -> what to read from each case's Report: a metric name (Nsight Compute's), or
# "extras.<key>" for rep.extras[<key>]
DEFAULT_METRICS = {
    "time_us": "gpu__time_duration.sum",          # converted from ns below
    "bottleneck": "extras.bottleneck",
    "warp_inst": "smsp__inst_executed.sum",
    "dram_bytes": "dram__bytes.sum",
    "simt_eff_pct": "simgpu__simt_efficiency.pct",
    "waves": "launch__waves_per_multiprocessor",
    "registers": "launch__registers_per_thread",
}
_SCALE = {("time_us", "gpu__time_duration.sum"): 1e-3}


def _optional(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _plain(v):
    """Numpy scalars and other number types as plain Python values (for JSON, CSV, pandas)."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    item = getattr(v, "item", None)
    if callable(item):
        try:
            v2 = item()
            if isinstance(v2, (bool, int, float, str)):
                return v2
        except (TypeError, ValueError):
            pass
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return str(v)


def case_key(params):
    """A stable key for one parameter dict: the cache finds a finished case by it."""
    s = json.dumps({str(k): _plain(v) for k, v in params.items()}, sort_keys=True, default=repr)
    return hashlib.sha1(s.encode()).hexdigest()[:20]


def grid(**axes):
    """The cartesian product of the axes as a list of dicts:
    ``grid(n=[256, 512], gpu=["H200", "A100"])`` -> 4 cases."""
    names = list(axes)
    return [dict(zip(names, vals)) for vals in itertools.product(*(list(axes[n]) for n in names))]


def _normalise_metrics(metrics):
    if metrics is None:
        return {}
    if isinstance(metrics, dict):
        out = dict(metrics)
    elif isinstance(metrics, str):
        out = {metrics: metrics}
    else:
        out = {m: m for m in metrics}
    for col, spec in out.items():
        if not (isinstance(spec, str) or callable(spec)):
            raise TypeError(f"sweep metrics: column {col!r} must map to a metric name, 'extras.<key>' "
                            f"or a function of the Report, not {type(spec).__name__}")
    return out


def _extract(rep, metrics):
    row = {}
    for col, spec in metrics.items():
        if callable(spec):
            v = spec(rep)
        elif spec.startswith("extras."):
            v = rep.extras.get(spec[len("extras."):])
        else:
            v = rep.metrics.get(spec)
            if v is not None and (col, spec) in _SCALE:
                v = v * _SCALE[(col, spec)]
        row[col] = _plain(v)
    return row


def _error_text(e):
    msg = str(e).strip()
    return f"{type(e).__name__}: {msg}" if msg else type(e).__name__


_FN_CACHE = {}


def _load_fn(fn):
    if isinstance(fn, bytes):
        f = _FN_CACHE.get(fn)
        if f is None:
            f = unship(fn)
            _FN_CACHE.clear()
            _FN_CACHE[fn] = f
        return f
    return fn


def run_case(fn, params, metrics):
    """Run one case and return its row (never raises an Exception: a failure is the row's error;
    KeyboardInterrupt and SystemExit still stop the sweep)."""
    fn = _load_fn(fn)
    row = {str(k): _plain(v) for k, v in params.items()}
    t0 = time.perf_counter()
    try:
        out = fn(dict(params))
        if isinstance(out, Report):
            row.update(_extract(out, metrics))
        elif isinstance(out, dict):
            for k, v in out.items():
                if isinstance(v, Report):
                    row.update({f"{k}.{c}": x for c, x in _extract(v, metrics).items()})
                else:
                    row[str(k)] = _plain(v)
        elif out is not None:
            row["result"] = _plain(out)
        row["error"] = None
    except Exception as e:  # noqa: BLE001 - a failed case is data, not a crash of the sweep
        row["error"] = _error_text(e)
    row["case_s"] = time.perf_counter() - t0
    return row


def run_chunk(fn, chunk, metrics):
    """Run a list of (key, params) on one worker; returns [(key, row)]."""
    return [(k, run_case(fn, p, metrics)) for k, p in chunk]


# -- the cache ------------------------------------------------------------------------------
class _Cache:
    """rows.jsonl in the cache directory, one finished case a line, appended and flushed as
    cases finish; sweep.json says which function made it."""

    def __init__(self, path, fn, metrics):
        self.path = path
        self.rows = {}
        self.f = None
        if path is None:
            return
        os.makedirs(path, exist_ok=True)
        name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', type(fn).__name__)}"
        meta = {"fn": name, "columns": sorted(metrics)}
        mpath = os.path.join(path, "sweep.json")
        if os.path.exists(mpath):
            with open(mpath) as f:
                old = json.load(f)
            if old.get("columns") != meta["columns"]:
                raise ValueError(f"sweep cache {path!r} was made with metric columns {old.get('columns')}, "
                                 f"not {meta['columns']}: use another cache_dir, or delete this one")
        else:
            with open(mpath, "w") as f:
                json.dump(meta, f)
        rpath = os.path.join(path, "rows.jsonl")
        if os.path.exists(rpath):
            with open(rpath) as f:
                for line in f:
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        d = json.loads(line)
                    except json.JSONDecodeError:
                        continue        # a line cut short by a kill: that case runs again
                    self.rows[d["key"]] = d["row"]
        self.f = open(rpath, "a")

    def add(self, key, row):
        self.rows[key] = row
        if self.f:
            self.f.write(json.dumps({"key": key, "row": row}, default=repr) + "\n")
            self.f.flush()

    def close(self):
        if self.f:
            self.f.close()
            self.f = None


# -- backends ---------------------------------------------------------------------------------
def default_workers():
    """Worker processes for a local sweep: the CPU cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def _chunks(todo, size):
    for i in range(0, len(todo), size):
        yield todo[i:i + size]


def _auto_chunk(n, workers):
    return max(1, min(16, n // (8 * max(1, workers))))


def _local(fn, todo, metrics, workers, chunk, on_done, mp_context):
    if workers == 0:                                  # in this process, one case at a time
        for k, p in todo:
            on_done(k, run_case(fn, p, metrics))
        return
    if mp_context is None:
        mp_context = "fork" if sys.platform.startswith("linux") else "spawn"
    ctx = multiprocessing.get_context(mp_context)
    payload = ship(fn)
    ex = cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
    futs = []
    try:
        futs = [ex.submit(run_chunk, payload, c, metrics) for c in _chunks(todo, chunk)]
        for f in cf.as_completed(futs):
            for k, row in f.result():
                on_done(k, row)
    finally:
        for f in futs:
            f.cancel()
        ex.shutdown(wait=True, cancel_futures=True)


def _dask(fn, todo, metrics, client, chunk, retries, on_done):
    distributed = _optional("distributed")
    if distributed is None:
        raise ImportError("sweep(client=...) needs dask.distributed: pip install 'simgpu[dask]'")
    own = False
    if isinstance(client, str):
        client = distributed.Client(client)
        own = True
    payload = ship(fn)
    futs, chunk_of = [], {}
    try:
        for c in _chunks(todo, chunk):
            f = client.submit(run_chunk, payload, c, metrics, retries=retries, pure=False)
            futs.append(f)
            chunk_of[f.key] = c
        for f in distributed.as_completed(futs):
            if f.status == "error":              # the task failed outside fn: its worker died too often
                err = _error_text(f.exception())
                for k, p in chunk_of[f.key]:
                    row = {str(a): _plain(b) for a, b in p.items()}
                    row.update(error=err, case_s=None)
                    on_done(k, row, keep=False)  # not cached: a resumed sweep tries it again
                continue
            for k, row in f.result():
                on_done(k, row)
    finally:
        for f in futs:
            if not f.done():
                f.cancel()
        if own:
            client.close()


def _n_dask_workers(client):
    try:
        return len(client.scheduler_info()["workers"]) or None
    except Exception:  # noqa: BLE001
        return None


def sweep(fn, params, *, client=None, workers=None, progress=True, cache_dir=None,
          metrics=DEFAULT_METRICS, retries=2, chunk=None, mp_context=None):
    """Run ``fn(p)`` for every parameter dict ``p`` in ``params``; one row per case.

    Args:
        fn: builds and launches one case, e.g.
            ``lambda p: simgpu.launch(k, p["n"] // 256, 256, make_args(p["n"]), gpu=p["gpu"])``.
            Returns a Report (its ``metrics`` become columns), a dict (its items become
            columns) or another value (a ``result`` column).
        params: an iterable of dicts, or one dict of lists (their cartesian product, as
            `simgpu.sweeps.grid`).
        client: a ``dask.distributed.Client`` or a scheduler address (``"tcp://host:8786"``): run
            the cases on that cluster, results streamed back as they finish. ``None``: local
            worker processes.
        workers: local worker processes (default: this machine's cores, or none when there
            is one case to run); ``0`` runs the cases in this process, one after another.
        progress: a tqdm progress bar on stderr (when tqdm is installed).
        cache_dir: a directory; each finished case is appended there at once, and a sweep
            started again with the same directory skips the cases already in it (resume).
        metrics: which Report values become columns: a dict ``{column: metric name |
            "extras.<key>" | function(report)}`` or a list of metric names.
        retries: Dask only: how often a case is resubmitted when its worker dies (an exception
            in ``fn`` is not retried; it is that case's ``error``).
        chunk: cases per task (default: a few per worker, at most 16).
        mp_context: the multiprocessing start method for local workers (default ``fork`` on Linux).

    Returns:
        A `SweepTable`, rows in the order of ``params``.
    """
    if isinstance(params, dict):
        params = grid(**params)
    params = [dict(p) for p in params]
    for i, p in enumerate(params):
        if not all(isinstance(k, str) for k in p):
            raise TypeError(f"sweep: case {i} has a non-string parameter name: {list(p)}")
    metrics = _normalise_metrics(metrics)
    names = []
    for p in params:
        for k in p:
            if k not in names:
                names.append(k)
    keys = [case_key(p) for p in params]
    cache = _Cache(cache_dir, fn, metrics)
    done = dict(cache.rows)
    n_cached = sum(1 for k in set(keys) if k in done)
    todo, seen = [], set()
    for k, p in zip(keys, params):
        if k not in done and k not in seen:
            seen.add(k)
            todo.append((k, p))

    if client is not None:
        backend = "dask"
        nworkers = _n_dask_workers(client) if not isinstance(client, str) else None
    else:
        nworkers = default_workers() if workers is None else int(workers)
        if workers is None and len(todo) <= 1:
            nworkers = 0                      # one case: no worker process to start
        if nworkers < 0:
            raise ValueError(f"sweep: workers must be >= 0, not {workers}")
        nworkers = min(nworkers, len(todo)) if todo else nworkers
        backend = "this process" if nworkers == 0 else "local processes"
    size = chunk or _auto_chunk(len(todo), nworkers or 4)

    tqdm = _optional("tqdm") if progress else None
    bar = tqdm.tqdm(total=len(set(keys)), initial=n_cached, desc="sweep", unit="case",
                    file=sys.stderr, disable=not progress) if tqdm else None

    def on_done(k, row, keep=True):
        done[k] = row
        if keep:
            cache.add(k, row)
        if bar is not None:
            bar.update(1)

    t0 = time.perf_counter()
    try:
        if client is not None:
            _dask(fn, todo, metrics, client, size, retries, on_done)
        else:
            _local(fn, todo, metrics, nworkers, size, on_done, mp_context)
    finally:
        cache.close()
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - t0
    rows = [dict(done[k]) for k in keys]
    return SweepTable(rows, param_names=names, elapsed_s=elapsed, workers=nworkers or (1 if client is None else None),
                      backend=backend, n_cached=n_cached)


__all__ = ["sweep", "grid", "case_key", "run_case", "run_chunk", "default_workers", "DEFAULT_METRICS"]
