"""Comparison: prediction beside measurement."""
from __future__ import annotations

import html
import json
import numbers

import numpy as np


def _rel(p, m):
    if m is None or p is None:
        return None
    if m == 0:
        return 0.0 if p == 0 else float("inf")
    return (p - m) / abs(m)


TOLERANCE = {"f2": (1e-2, 1e-2), "f4": (1e-4, 1e-5), "f8": (1e-10, 1e-12)}


def compare_results(sim, dev):
    """Per output argument: equal within a float tolerance chosen by dtype (ints exact)."""
    rows = []
    for k, (a, b) in enumerate(zip(sim, dev)):
        if not isinstance(a, np.ndarray):
            continue
        b = np.asarray(b)
        if a.dtype.kind == "f":
            rtol, atol = TOLERANCE.get(f"f{a.dtype.itemsize}", (1e-4, 1e-5))
            scale = float(np.max(np.abs(b))) if b.size else 1.0
            ok = bool(np.allclose(a, b, rtol=rtol, atol=atol * max(scale, 1.0), equal_nan=True))
            err = float(np.max(np.abs(a.astype(np.float64) - b))) if b.size else 0.0
        else:
            ok = bool(np.array_equal(a, b))
            err = int(np.count_nonzero(a != b))
        rows.append({"arg": k, "dtype": str(a.dtype), "equal": ok, "max_abs_diff" if a.dtype.kind == "f" else "n_diff": err})
    return rows


class Comparison:
    """For every metric both sides have: predicted, measured, relative error."""

    def __init__(self, report, measured, results=None, notes=None, device=None):
        self.report = report
        self.measured = dict(measured or {})
        self.results = results or []
        self.notes = list(notes or [])
        self.device = device
        self.rows = []
        for name, p in sorted(report.metrics.items()):
            if not isinstance(p, (int, float)) or name not in self.measured:
                continue
            m = self.measured[name]
            self.rows.append({"metric": name, "predicted": float(p), "measured": float(m),
                              "rel_error": _rel(float(p), float(m))})

    @property
    def results_match(self):
        return all(r["equal"] for r in self.results) if self.results else None

    def error(self, metric):
        for r in self.rows:
            if r["metric"] == metric:
                return r["rel_error"]
        return None

    @property
    def predicted_only(self):
        """Nothing was measured (no CUDA device, or the kernel did not run on it)."""
        return not self.measured

    def metric_rows(self):
        """The rows of the JSON's "metrics": predicted beside measured; with nothing measured,
        every predicted metric (measured and rel_error null)."""
        if not self.predicted_only:
            return self.rows
        return [{"metric": name, "predicted": float(p), "measured": None, "rel_error": None}
                for name, p in sorted(self.report.metrics.items())
                if isinstance(p, numbers.Real) and not isinstance(p, bool)]

    def to_dict(self):
        return {"kernel": self.report.kernel, "gpu_model": self.report.gpu.name, "device": self.device,
                "grid": list(self.report.grid), "block": list(self.report.block),
                "predicted_only": self.predicted_only, "metrics": self.metric_rows(),
                "results": self.results, "notes": self.notes}

    def to_json(self, path=None):
        s = json.dumps(self.to_dict(), indent=2, default=str)
        if path:
            with open(path, "w") as f:
                f.write(s)
        return s

    def __str__(self):
        head = f"simgpu validate: {self.report.kernel} — model {self.report.gpu.name}"
        head += f" vs {self.device}" if self.device else " (no device measurement)"
        out = [head]
        if self.rows:
            out.append(f"  {'metric':58s} {'predicted':>14s} {'measured':>14s} {'error':>8s}")
            for r in self.rows:
                e = r["rel_error"]
                es = "   n/a" if e is None else (f"{e * 100:+7.1f}%" if abs(e) < 100 else "   >100x")
                out.append(f"  {r['metric']:58s} {r['predicted']:14,.4g} {r['measured']:14,.4g} {es}")
        if self.results:
            ok = self.results_match
            out.append(f"  results: {'equal within tolerance' if ok else 'DIFFER'} "
                       f"({', '.join(('arg%d ok' % r['arg']) if r['equal'] else ('arg%d differs' % r['arg']) for r in self.results)})")
        for n in self.notes:
            out.append(f"  note: {n}")
        if self.predicted_only:             # the prediction in full: the report
            out += ["", str(self.report)]
        return "\n".join(out)

    __repr__ = __str__

    def _repr_html_(self):
        def err(r):
            return "" if r["rel_error"] is None else f"{r['rel_error'] * 100:+.1f}%"
        rows = "".join(
            f"<tr><td><code>{html.escape(r['metric'])}</code></td><td>{r['predicted']:,.4g}</td>"
            f"<td>{r['measured']:,.4g}</td><td>{err(r)}</td></tr>" for r in self.rows)
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        return (f"<div><b>simgpu validate: {html.escape(self.report.kernel)}</b>"
                f"<table><tr><th>metric</th><th>predicted</th><th>measured</th><th>error</th></tr>{rows}</table>"
                f"<ul>{notes}</ul></div>")


def compare(report, metrics):
    """Compare a simulation Report against a dict of measured metrics (e.g. from load_ncu_csv)."""
    return Comparison(report, metrics, notes=["measured metrics supplied by the caller"])
